#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Stress test of DAMON's perf event based access checks, kselftest style
# (KTAP on stdout, exit 0 pass, 1 fail, 4 all skipped).  Runs as root in a
# guest with several CPUs and the software page-faults event (PERF_TYPE_SOFTWARE
# 1, PERF_COUNT_SW_PAGE_FAULTS 2, sample_period 1).  Subtests:
#
#   hotplug  CPU offline/online cycles (--hotplug N in total, round robin over
#            the hotpluggable CPUs) while a kdamond monitors a refaulting
#            workload: the per-CPU states of perf_stats, the counters of an
#            offline CPU frozen, the conservation laws on the deltas, a clean
#            stop, and no DAMON leak in kmemleak (when built).
#   churn    --churn N cycles of 'on'/'off' with a perf event, every 5th with a
#            'commit' of a changed sample_period while on; a clean stop every
#            cycle; the laws on the deltas; no DAMON leak in kmemleak.
#   flood    damon_core.report_ring_order = 2 (4-entry rings), a refaulting
#            workload per CPU, --flood-secs S: overflow > 0, every drop
#            counted (valid = enqueue + overflow, enqueue = dequeue), the
#            damon_perf_drain trace consistent with the counters, and no
#            drain taking more than 4 reports per ring.
#   two_ctx  two kdamonds with a perf event each, each monitoring its own
#            workload, --two-ctx-secs S: each context sees accesses in its
#            own target's hot buffer only, and drops the other's samples as
#            miss_tgid (counters, and damon_perf_report_missed per kdamond).
#
# The perf_stats format (debugfs, CONFIG_DAMON_PERF_OBSERVE) is for debugging
# and may change; like damon_perf_obs_test.sh, this test is updated with it.
# Without perf_stats, the subtests check what they can and say what they did
# not check.
#
# Options: --hotplug N (100) --churn N (200) --flood-secs S (5)
#          --two-ctx-secs S (5) --only LIST (comma separated subtest names)
#          --workload PATH (guest/workload.c built; default
#          $DP_BUILD/guest/workload, or built from $DP_TOP/guest/workload.c)

ksft_skip=4

set -u

damon_sysfs=/sys/kernel/mm/damon/admin
kdamonds_dir=$damon_sysfs/kdamonds
debugfs=/sys/kernel/debug
perf_stats=$debugfs/damon/perf_stats
kmemleak=$debugfs/kmemleak
ring_order_param=/sys/module/damon_core/parameters/report_ring_order
cpu_sysfs=/sys/devices/system/cpu

all_subtests="hotplug churn flood two_ctx"

# Options
nr_hotplug=100
nr_churn=200
flood_secs=5
two_ctx_secs=5
only=""
workload=""

# Workload buffer sizes, in MiB
hot_mb=4
cold_mb=16

# State
tmpdir=""
tracefs=""
have_stats=false
write_err=""
nfail=0
declare -A deltas=()

usage()
{
	cat << EOF
Usage: $0 [--hotplug N] [--churn N] [--flood-secs S] [--two-ctx-secs S]
          [--only LIST] [--workload PATH]
Subtests (for --only, comma separated): ${all_subtests// /,}
EOF
}

say()
{
	echo "# $*"
}

# Within a subtest (a subshell): count a failure, and go on
fail()
{
	say "FAIL: $*"
	nfail=$((nfail + 1))
}

pass()
{
	say "ok: $*"
}

# Within a subtest: fail it now
abort()
{
	fail "$*"
	exit 1
}

# Within a subtest: skip it now
skip_subtest()
{
	say "SKIP: $*"
	echo "$*" > "$tmpdir/directive"
	exit $ksft_skip
}

# Within a subtest: the comment of its result line
set_directive()
{
	echo "$*" > "$tmpdir/directive"
}

# Writes $2 to $1.  Retries while the file answers EBUSY: the DAMON sysfs
# files take damon_sysfs_lock with mutex_trylock() (mm/damon/sysfs.c:2234),
# which the kdamonds' callbacks also take for a moment in every sampling
# interval (sysfs.c:1992), and hold across intervals while the tried regions
# are updated (sysfs.c:2019).  The error message is left in $write_err.
try_write()
{
	local i

	for ((i = 0; i < 200; i++))
	do
		if { printf '%s\n' "$2" > "$1"; } 2> "$tmpdir/werr"
		then
			write_err=""
			return 0
		fi
		write_err=$(tail -n 1 "$tmpdir/werr")
		write_err=${write_err##*: }
		case "$write_err" in
		*"resource busy"*) sleep 0.05;;
		*) return 1;;
		esac
	done
	return 1
}

# Writes $2 to $1, or fails the subtest
wr()
{
	try_write "$1" "$2" || abort "writing '$2' to $1 failed: $write_err"
}

# Reads the first line of $2 into the variable $1, retrying on EBUSY (the
# state and pid files trylock damon_sysfs_lock too, sysfs.c:1643,2256)
rd()
{
	local __i __v=""

	for ((__i = 0; __i < 200; __i++))
	do
		if IFS= read -r __v < "$2" 2> "$tmpdir/rerr"
		then
			printf -v "$1" '%s' "$__v"
			return 0
		fi
		if ! grep -q 'resource busy' "$tmpdir/rerr"
		then
			break
		fi
		sleep 0.05
	done
	printf -v "$1" '%s' ""
	return 1
}

# Expands a CPU list like '0-3,5' into '0 1 2 3 5'
expand_cpulist()
{
	local range i

	for range in ${1//,/ }
	do
		for ((i = ${range%-*}; i <= ${range#*-}; i++))
		do
			echo "$i"
		done
	done
}

online_cpus()
{
	local list

	rd list "$cpu_sysfs/online"
	expand_cpulist "$list"
}

nr_possible_cpus()
{
	local list

	rd list "$cpu_sysfs/possible"
	expand_cpulist "$list" | wc -l
}

#
# perf_stats
#

# Copies perf_stats to $tmpdir/stats.$1 (an empty file without perf_stats)
snap()
{
	if $have_stats
	then
		cat "$perf_stats" > "$tmpdir/stats.$1"
	else
		: > "$tmpdir/stats.$1"
	fi
}

# Prints the fields $3... (st, cb, enq, deq, ovf, match, miss, upd) of the
# line of CPU $2 in the snapshot $1, space separated.  A CPU without a line is
# UNINIT with zero counters (observe.c:688-697 prints only the other CPUs).
cpu_get()
{
	local f=$1 c

	c=$(printf 'CPU%02d:' "$2")
	shift 2
	awk -v c="$c" -v keys="$*" '
		$1 == c {
			for (i = 2; i <= NF; i++) {
				split($i, kv, "=")
				v[kv[1]] = kv[2]
			}
			found = 1
		}
		END {
			n = split(keys, k, " ")
			for (i = 1; i <= n; i++) {
				if (!found)
					x = k[i] == "st" ? "UNINIT" : 0
				else
					x = v[k[i]]
				printf "%s%s", x, i < n ? " " : "\n"
			}
		}' "$tmpdir/stats.$f"
}

# Prints 'name delta' for the table rows of the snapshots $1 to $2 (the rows
# have a name and a value between box-drawing characters)
stats_deltas()
{
	awk '
		FNR == 1 {
			sign = FILENAME == ARGV[1] ? -1 : 1
			table = 1
		}
		/^Per-CPU/ { table = 0 }
		table {
			line = $0
			gsub(/[^A-Za-z0-9_]+/, " ", line)
			if (split(line, f, " ") == 2 && f[2] ~ /^[0-9]+$/)
				d[f[1]] += sign * f[2]
		}
		END {
			for (k in d)
				print k, d[k]
		}' "$tmpdir/stats.$1" "$tmpdir/stats.$2"
}

compute_deltas()
{
	local name val

	deltas=()
	for name in callback valid null addr_zero kernel inv_phys enqueue \
		dequeue overflow match miss_tgid miss_region miss_bound \
		discarded update
	do
		deltas[$name]=0
	done
	while read -r name val
	do
		deltas[$name]=$val
	done < <(stats_deltas "$1" "$2")
}

# Prints the CPUs of the snapshots $1 (before) and $2 (after) whose deltas
# break the per-CPU laws.  The per-CPU lines show cb, not valid, and miss, not
# discarded, so two of the laws are inequalities there.
cpu_law_violations()
{
	awk '
		FNR == 1 { after = FILENAME != ARGV[1] }
		/^CPU[0-9]+: / {
			cpu = substr($1, 4) + 0
			delete v
			for (i = 2; i <= NF; i++) {
				split($i, kv, "=")
				v[kv[1]] = kv[2]
			}
			if (!after) {
				for (k in v)
					b[cpu, k] = v[k]
				next
			}
			for (k in v)
				d[k] = v[k] - b[cpu, k]
			if (d["cb"] < d["enq"] + d["ovf"])
				printf " CPU%d:cb<enq+ovf", cpu
			if (d["enq"] != d["deq"])
				printf " CPU%d:enq!=deq", cpu
			if (d["deq"] < d["match"] + d["miss"])
				printf " CPU%d:deq<match+miss", cpu
			if (d["upd"] > d["match"])
				printf " CPU%d:upd>match", cpu
		}' "$tmpdir/stats.$1" "$tmpdir/stats.$2"
}

law()
{
	local ok=false

	case "$3" in
	==) [ "$2" -eq "$4" ] && ok=true;;
	\<=) [ "$2" -le "$4" ] && ok=true;;
	esac
	if $ok
	then
		pass "$1 ($2 $3 $4)"
	else
		fail "$1 ($2 $3 $4 does not hold)"
	fi
}

# Checks the conservation laws (perf.h, perf-observability.rst) on the deltas
# from the snapshot $1 to $2, both taken while no context with perf events
# runs: the kdamond drains all rings and counts their drops when it stops
# (core.c:1443-1458, after the events are closed, core.c:1487-1491), so no
# report is left in a ring or uncounted.
check_laws()
{
	local v

	if ! $have_stats
	then
		say "conservation laws: not checked (no $perf_stats)"
		return
	fi
	compute_deltas "$1" "$2"
	say "deltas: callback=${deltas[callback]} valid=${deltas[valid]}" \
		"null=${deltas[null]} addr_zero=${deltas[addr_zero]}" \
		"kernel=${deltas[kernel]} inv_phys=${deltas[inv_phys]}" \
		"enqueue=${deltas[enqueue]} overflow=${deltas[overflow]}" \
		"dequeue=${deltas[dequeue]} match=${deltas[match]}" \
		"miss_tgid=${deltas[miss_tgid]} miss_region=${deltas[miss_region]}" \
		"miss_bound=${deltas[miss_bound]} discarded=${deltas[discarded]}" \
		"update=${deltas[update]}"
	law "callback == valid + null + addr_zero + kernel + inv_phys" \
		"${deltas[callback]}" == \
		"$((deltas[valid] + deltas[null] + deltas[addr_zero] +
		deltas[kernel] + deltas[inv_phys]))"
	law "valid == enqueue + overflow" "${deltas[valid]}" == \
		"$((deltas[enqueue] + deltas[overflow]))"
	law "enqueue == dequeue" "${deltas[enqueue]}" == "${deltas[dequeue]}"
	law "dequeue == match + miss_tgid + miss_region + miss_bound + discarded" \
		"${deltas[dequeue]}" == \
		"$((deltas[match] + deltas[miss_tgid] + deltas[miss_region] +
		deltas[miss_bound] + deltas[discarded]))"
	law "update <= match" "${deltas[update]}" "<=" "${deltas[match]}"
	v=$(cpu_law_violations "$1" "$2")
	if [ -z "$v" ]
	then
		pass "per-CPU laws (cb >= enq + ovf, enq == deq, deq >= match + miss, upd <= match)"
	else
		fail "per-CPU laws do not hold:$v"
	fi
}

# After every context stopped, each online CPU shows BOUND: the stop disables
# the events (core.c:700-701, BOUND) and then closes them, and closing
# doesn't reset the state of the CPU (observe.c:191-198).
check_all_bound()
{
	local cpu st bad=""

	$have_stats || return
	for cpu in $(online_cpus)
	do
		st=$(cpu_get "$1" "$cpu" st)
		[ "$st" = BOUND ] || bad+=" CPU$cpu=$st"
	done
	if [ -z "$bad" ]
	then
		pass "after the stop, every online CPU is BOUND"
	else
		fail "after the stop, CPUs not BOUND:$bad"
	fi
}

#
# Kernel log
#

kmsg_mark()
{
	kmsg_marker="damon_perf_stress: $1 (pid $$, $SECONDS)"
	echo "$kmsg_marker" > /dev/kmsg 2> /dev/null || kmsg_marker=""
}

# The kernel log lines since kmsg_mark that mention DAMON or perf
kmsg_damon()
{
	[ -n "${kmsg_marker:-}" ] || return 0
	dmesg 2> /dev/null | awk -v m="$kmsg_marker" '
		found && tolower($0) ~ /damon|perf event/ &&
			!index($0, "damon_perf_stress:") { print }
		index($0, m) { found = 1 }'
}

# Fails if the kernel log since kmsg_mark shows that opening an event failed
# (core.c:607) or a DAMON warning
check_kmsg()
{
	local lines l

	lines=$(kmsg_damon)
	if [ -z "$lines" ]
	then
		pass "no DAMON message in the kernel log"
		return
	fi
	while read -r l
	do
		say "  kernel: $l"
	done <<< "$lines"
	if grep -qiE 'cannot open|warn|bug|error' <<< "$lines"
	then
		fail "the kernel log shows DAMON errors"
	fi
}

#
# Workloads
#

# Starts the workload, refaulting its hot buffer, pinned to CPU $1 if given
# and taskset exists.  Sets wl_pid, wl_hot_start, wl_hot_end, wl_cold_start
# and wl_cold_end (decimal).
start_workload()
{
	local cpu=${1:-} out line="" i

	out=$(mktemp "$tmpdir/wl.XXXXXX")
	if [ -n "$cpu" ] && command -v taskset > /dev/null
	then
		taskset -c "$cpu" "$workload" 3600 "$hot_mb" "$cold_mb" \
			refault > "$out" 2>&1 &
	else
		"$workload" 3600 "$hot_mb" "$cold_mb" refault > "$out" 2>&1 &
	fi
	wl_pid=$!
	echo "$wl_pid" >> "$tmpdir/pids"
	for ((i = 0; i < 200; i++))
	do
		read -r line < "$out"
		[[ "$line" == hot=* ]] && break
		kill -0 "$wl_pid" 2> /dev/null || break
		sleep 0.1
	done
	if ! [[ "$line" =~ ^hot=(0x[0-9a-f]+)-(0x[0-9a-f]+)\ cold=(0x[0-9a-f]+)-(0x[0-9a-f]+) ]]
	then
		abort "the workload ($workload) did not start: $(head -c 300 "$out")"
	fi
	wl_hot_start=$((BASH_REMATCH[1]))
	wl_hot_end=$((BASH_REMATCH[2]))
	wl_cold_start=$((BASH_REMATCH[3]))
	wl_cold_end=$((BASH_REMATCH[4]))
	say "workload pid $wl_pid${cpu:+ (cpu $cpu)}: $line"
}

need_workload()
{
	if [ -z "$workload" ] || [ ! -x "$workload" ]
	then
		skip_subtest "no workload binary (--workload PATH)"
	fi
}

#
# DAMON sysfs
#

# Makes $1 kdamonds, each with one context: the sysfs interface takes one
# context per kdamond (mm/damon/sysfs.c:1470-1472)
reset_kdamonds()
{
	local k

	wr "$kdamonds_dir/nr_kdamonds" 0
	wr "$kdamonds_dir/nr_kdamonds" "$1"
	for ((k = 0; k < $1; k++))
	do
		wr "$kdamonds_dir/$k/contexts/nr_contexts" 1
	done
}

# setup_ctx K PERIOD AGGR_US SCHEME PID...: the context of kdamond K monitors
# the PIDs (vaddr) with the page-faults event of sample_period PERIOD.  With
# SCHEME 1, a stat scheme for every region, to read the regions through
# update_schemes_tried_regions.
setup_ctx()
{
	local k=$1 period=$2 aggr=$3 scheme=$4
	local c=$kdamonds_dir/$1/contexts/0 ev i=0 pid s

	shift 4
	ev=$c/monitoring_attrs/sample/perf_events
	[ -d "$ev" ] || skip_subtest "no perf_events directory ($ev)"
	wr "$c/operations" vaddr
	wr "$c/monitoring_attrs/intervals/sample_us" 5000
	wr "$c/monitoring_attrs/intervals/aggr_us" "$aggr"
	wr "$c/monitoring_attrs/intervals/update_us" 1000000
	wr "$c/monitoring_attrs/nr_regions/min" 10
	wr "$c/monitoring_attrs/nr_regions/max" 100
	wr "$ev/nr_perf_events" 1
	wr "$ev/0/type" 1
	wr "$ev/0/config" 2
	wr "$ev/0/freq" N
	wr "$ev/0/sample_period" "$period"
	wr "$ev/0/exclude_kernel" N
	wr "$ev/0/sample_phys_addr" N
	wr "$c/targets/nr_targets" "$#"
	for pid in "$@"
	do
		wr "$c/targets/$i/regions/nr_regions" 0
		wr "$c/targets/$i/pid_target" "$pid"
		i=$((i + 1))
	done
	if [ "$scheme" != 1 ]
	then
		wr "$c/schemes/nr_schemes" 0
		return
	fi
	wr "$c/schemes/nr_schemes" 1
	s=$c/schemes/0
	wr "$s/action" stat
	wr "$s/access_pattern/sz/min" 0
	try_write "$s/access_pattern/sz/max" 18446744073709551615 ||
		wr "$s/access_pattern/sz/max" 4294967295
	wr "$s/access_pattern/nr_accesses/min" 0
	wr "$s/access_pattern/nr_accesses/max" 1000
	wr "$s/access_pattern/age/min" 0
	wr "$s/access_pattern/age/max" 4294967295
}

# Turns kdamond $1 on, and sets kd_pid to its pid
kdamond_on()
{
	local dir=$kdamonds_dir/$1 st

	kd_pid=""
	if ! try_write "$dir/state" on
	then
		fail "kdamond $1: writing 'on' failed: $write_err"
		kmsg_damon | tail -n 5 | sed 's/^/#   kernel: /'
		return 1
	fi
	rd st "$dir/state"
	rd kd_pid "$dir/pid"
	if [ "$st" != on ] || ! [ "${kd_pid:-0}" -gt 0 ] 2> /dev/null
	then
		fail "kdamond $1: state '$st', pid '$kd_pid' after 'on'"
		return 1
	fi
}

kthread_alive()
{
	local comm

	[ -n "$1" ] && [ "$1" != -1 ] &&
		read -r comm < "/proc/$1/comm" 2> /dev/null &&
		[[ "$comm" == kdamond* ]]
}

# Turns kdamond $1 off, and checks that it stopped cleanly: 'off' succeeded
# (damon_stop() returns after the thread exited, kthread_stop_put() at
# core.c:2212), the state is off, the pid file says -1 (the kdamond clears
# ctx->kdamond as it exits, core.c:3253), and the thread is gone.
kdamond_off()
{
	local dir=$kdamonds_dir/$1 pid st="" p2="" i

	rd pid "$dir/pid"
	if ! try_write "$dir/state" off
	then
		fail "kdamond $1: writing 'off' failed: $write_err"
		return 1
	fi
	for ((i = 0; i < 100; i++))
	do
		rd st "$dir/state"
		rd p2 "$dir/pid"
		if [ "$st" = off ] && [ "$p2" = -1 ] && ! kthread_alive "$pid"
		then
			return 0
		fi
		sleep 0.1
	done
	fail "kdamond $1 did not stop cleanly in 10 s (state '$st', pid" \
		"'$p2', thread $pid $(kthread_alive "$pid" && echo alive)"
	return 1
}

kdamond_state()
{
	local st

	rd st "$kdamonds_dir/$1/state"
	echo "$st"
}

#
# Tracing
#

# Makes the trace instance $1, with $2 KiB of buffer per CPU, and prints its
# directory
trace_instance()
{
	local inst=$tracefs/instances/damon_perf_stress_$1_$$

	[ -n "$tracefs" ] && [ -d "$tracefs/instances" ] || return 1
	mkdir "$inst" 2> /dev/null || return 1
	echo "$inst" >> "$tmpdir/instances"
	echo "$2" > "$inst/buffer_size_kb" 2> /dev/null
	echo "$inst"
}

# trace_event INST EVENT 0|1: disables or enables damon:EVENT in INST
trace_event()
{
	[ -f "$1/events/damon/$2/enable" ] && echo "$3" > "$1/events/damon/$2/enable"
}

# Number of the events that were overwritten in the buffers of INST $1
trace_overrun()
{
	cat "$1"/per_cpu/cpu*/stats 2> /dev/null |
		awk '$1 == "overrun:" { n += $2 } END { print n + 0 }'
}

#
# kmemleak
#

# Scans for leaks, and fails if a report that no former call showed mentions
# DAMON.  Sets kml_status to what was checked.
kmemleak_check()
{
	local counts total newd old other

	if [ ! -e "$kmemleak" ]
	then
		kml_status="kmemleak not built"
		say "leaks: NOT checked ($kmemleak not found: CONFIG_DEBUG_KMEMLEAK is not set)"
		return
	fi
	# An object is reported only if it is older than 5 s at the scan
	# (MSECS_MIN_AGE, mm/kmemleak.c:110, :348-353), and unchanged since the
	# previous scan: the first scan of a new object records its checksum
	# and greys it (mm/kmemleak.c:1816-1838).  Hence two scans.
	say "leaks: waiting 6 s, then two kmemleak scans"
	sleep 6
	if ! try_write "$kmemleak" scan
	then
		kml_status="kmemleak disabled"
		say "leaks: NOT checked (kmemleak scan: $write_err)"
		return
	fi
	sleep 1
	try_write "$kmemleak" scan
	cat "$kmemleak" > "$tmpdir/kmemleak.out"
	: > "$tmpdir/kmemleak.damon"
	: > "$tmpdir/kmemleak.others"
	touch "$tmpdir/kmemleak.seen"
	counts=$(awk -v seen="$tmpdir/kmemleak.seen" \
		-v out="$tmpdir/kmemleak.damon" \
		-v others="$tmpdir/kmemleak.others" '
		BEGIN {
			while ((getline l < seen) > 0)
				s[l] = 1
			close(seen)
		}
		function flush() {
			if (hdr == "")
				return
			total++
			if (tolower(body) ~ /damon/) {
				if (hdr in s)
					old++
				else {
					newd++
					printf "%s", body > out
				}
			} else {
				other++
				print hdr > others
			}
			print hdr >> seen
		}
		/^unreferenced object/ {
			flush()
			hdr = $0
			body = ""
		}
		hdr != "" { body = body $0 "\n" }
		END {
			flush()
			print total + 0, newd + 0, old + 0, other + 0
		}' "$tmpdir/kmemleak.out")
	read -r total newd old other <<< "$counts"
	say "leaks: kmemleak lists $total objects: $newd new of DAMON," \
		"$old of DAMON already reported, $other others"
	if [ "$other" -gt 0 ]
	then
		say "leaks: not DAMON's (not failed here; vm-run.sh fails on" \
			"any 'new suspected' console line):"
		head -n 5 "$tmpdir/kmemleak.others" | sed 's/^/#   /'
	fi
	if [ "$newd" -gt 0 ]
	then
		sed 's/^/#   /' "$tmpdir/kmemleak.damon"
		fail "kmemleak reports $newd DAMON leaks"
	else
		pass "kmemleak: no new leak mentions DAMON"
	fi
	kml_status="kmemleak checked"
}

#
# Cleanup
#

# Stops everything that a subtest started.  Idempotent.
cleanup_state()
{
	local p k st cpu inst orig

	for k in "$kdamonds_dir"/[0-9]*
	do
		[ -f "$k/state" ] || continue
		rd st "$k/state"
		[ "$st" = on ] && try_write "$k/state" off
	done
	[ -f "$kdamonds_dir/nr_kdamonds" ] &&
		try_write "$kdamonds_dir/nr_kdamonds" 0
	if [ -s "$tmpdir/pids" ]
	then
		while read -r p
		do
			kill "$p" 2> /dev/null
		done < "$tmpdir/pids"
		while read -r p
		do
			wait "$p" 2> /dev/null
		done < "$tmpdir/pids"
		: > "$tmpdir/pids"
	fi
	if [ -s "$tmpdir/ring_order.orig" ]
	then
		read -r orig < "$tmpdir/ring_order.orig"
		try_write "$ring_order_param" "$orig" ||
			say "cleanup: restoring report_ring_order $orig failed"
		rm -f "$tmpdir/ring_order.orig"
	fi
	if [ -s "$tmpdir/offlined" ]
	then
		while read -r cpu
		do
			try_write "$cpu_sysfs/cpu$cpu/online" 1 ||
				say "cleanup: onlining CPU $cpu failed"
		done < "$tmpdir/offlined"
		: > "$tmpdir/offlined"
	fi
	if [ -s "$tmpdir/instances" ]
	then
		while read -r inst
		do
			rmdir "$inst" 2> /dev/null
		done < "$tmpdir/instances"
		: > "$tmpdir/instances"
	fi
}

#
# Subtest: CPU hotplug
#
# What perf_stats shows for a CPU, per the code:
# - Offline: damon_perf_cpu_offline() (core.c:624-637) releases the event of
#   the CPU and calls damon_perf_observe_event_destroyed(), which resets only
#   the per-event state (&damon_perf_event->cpu_state) to UNINIT.  The state
#   of the CPU, which perf_stats shows, is last-writer-wins and is NOT reset
#   by a release (observe.c:81-86, :191-198), so an offlined CPU keeps the
#   state it had: ENABLED, or RUNNING once a sample came.  Nothing writes it
#   while the CPU is offline (set_armed() skips CPUs without an event,
#   core.c:692-696; samples come only from the CPU itself), and its producer
#   counters (cb, enq) are frozen.  perf_stats keeps printing the CPU
#   (for_each_possible_cpu, observe.c:688).
# - Online: damon_perf_cpu_online() (core.c:583-621) goes CREATED, BOUND and,
#   as the kdamond armed the event, ENABLED before the write of 1 to
#   cpuN/online returns; the first sample on the CPU makes it RUNNING
#   (observe.c:220-236).  ERROR if opening failed (a failure that doesn't
#   fail the onlining, core.c:606-613).
# - Stop: the events are disabled (BOUND, core.c:700-701), then closed.
#
subtest_hotplug()
{
	local cpus=() d n i cpu st st2 cb cb2 enq enq2 resumed="" kd
	declare -A on_cb=()

	[ -r "$cpu_sysfs/online" ] || skip_subtest "no $cpu_sysfs/online"
	n=$(online_cpus | wc -l)
	[ "$n" -ge 2 ] || skip_subtest "fewer than 2 online CPUs ($n)"
	for d in "$cpu_sysfs"/cpu[0-9]*
	do
		n=${d##*/cpu}
		# the boot CPU stays; x86 has no cpu0/online since 6.5
		[ "$n" = 0 ] && continue
		[ -w "$d/online" ] || continue
		rd st "$d/online"
		[ "$st" = 1 ] && cpus+=("$n")
	done
	[ ${#cpus[@]} -gt 0 ] ||
		skip_subtest "CPU hotplug not available (no writable cpuN/online)"
	need_workload
	$have_stats || say "per-CPU states and laws: NOT checked (no $perf_stats)"
	say "$nr_hotplug offline/online cycles over CPUs ${cpus[*]}"

	start_workload
	reset_kdamonds 1
	setup_ctx 0 1 100000 0 "$wl_pid"
	snap before
	kmsg_mark hotplug
	kdamond_on 0 || exit 1
	kd=$kd_pid
	sleep 1
	if $have_stats
	then
		snap armed
		for cpu in $(online_cpus)
		do
			st=$(cpu_get armed "$cpu" st)
			case "$st" in
			ENABLED|RUNNING) ;;
			*) abort "CPU$cpu is $st after the start, not ENABLED/RUNNING";;
			esac
		done
		pass "every online CPU ENABLED or RUNNING after the start"
	fi

	for ((i = 0; i < nr_hotplug; i++))
	do
		cpu=${cpus[i % ${#cpus[@]}]}
		if ! try_write "$cpu_sysfs/cpu$cpu/online" 0
		then
			fail "cycle $i: offlining CPU$cpu failed: $write_err"
			break
		fi
		echo "$cpu" >> "$tmpdir/offlined"
		rd st "$cpu_sysfs/cpu$cpu/online"
		if [ "$st" != 0 ]
		then
			fail "cycle $i: CPU$cpu/online reads '$st' after offlining"
			break
		fi
		if $have_stats
		then
			snap off1
			read -r st cb enq < <(cpu_get off1 "$cpu" st cb enq)
			case "$st" in
			ENABLED|RUNNING) ;;
			*)
				fail "cycle $i: offline CPU$cpu shows st=$st; a" \
					"release keeps the state of the CPU" \
					"(ENABLED or RUNNING)"
				break;;
			esac
			sleep 0.1
			snap off2
			read -r st2 cb2 enq2 < <(cpu_get off2 "$cpu" st cb enq)
			if [ "$st2" != "$st" ] || [ "$cb2" != "$cb" ] ||
				[ "$enq2" != "$enq" ]
			then
				fail "cycle $i: offline CPU$cpu changed:" \
					"st $st->$st2 cb $cb->$cb2 enq $enq->$enq2"
				break
			fi
		fi
		if ! try_write "$cpu_sysfs/cpu$cpu/online" 1
		then
			fail "cycle $i: onlining CPU$cpu failed: $write_err"
			break
		fi
		sed -i "/^$cpu\$/d" "$tmpdir/offlined"
		if $have_stats
		then
			snap on1
			read -r st cb < <(cpu_get on1 "$cpu" st cb)
			case "$st" in
			ENABLED|RUNNING) ;;
			*)
				fail "cycle $i: onlined CPU$cpu shows st=$st," \
					"not ENABLED/RUNNING"
				kmsg_damon | tail -n 3 | sed 's/^/#   kernel: /'
				break;;
			esac
			on_cb[$cpu]=$cb
		fi
		st=$(kdamond_state 0)
		if [ "$st" != on ]
		then
			fail "cycle $i: the kdamond is '$st'"
			break
		fi
		if ! kill -0 "$wl_pid" 2> /dev/null
		then
			fail "cycle $i: the workload died"
			break
		fi
		if (((i + 1) % 20 == 0))
		then
			say "$((i + 1))/$nr_hotplug cycles"
		fi
	done
	[ "$i" -eq "$nr_hotplug" ] && pass "$nr_hotplug offline/online cycles" \
		"(per-CPU states as expected after each)"

	sleep 1
	if $have_stats
	then
		snap end
		for cpu in "${!on_cb[@]}"
		do
			cb=$(cpu_get end "$cpu" cb)
			[ "$cb" -gt "${on_cb[$cpu]}" ] && resumed+=" $cpu"
		done
		if [ -n "$resumed" ]
		then
			pass "samples resumed on re-onlined CPUs:$resumed"
		elif [ ${#on_cb[@]} -gt 0 ]
		then
			fail "no re-onlined CPU counted a sample after its last online"
		fi
	fi
	kdamond_off 0 && pass "the kdamond (pid $kd) stopped cleanly"
	snap after
	check_all_bound after
	check_laws before after
	if $have_stats
	then
		[ "${deltas[callback]}" -gt 0 ] || fail "no sample counted"
		[ "${deltas[match]}" -gt 0 ] || fail "no report matched the workload"
	fi
	check_kmsg
	kmemleak_check
	if [ "$kml_status" != "kmemleak checked" ]
	then
		say "checked: the hotplug cycles$($have_stats && echo ", states, laws");" \
			"NOT checked: leaks ($kml_status)"
		set_directive "$kml_status"
	fi
	exit $((nfail > 0))
}

#
# Subtest: on/off churn
#
# 'on' opens the events and allocates the rings (core.c:2137, :1471-1484),
# 'off' closes the events and drains and frees the rings (core.c:3239,
# :1487-1491), and the next 'on' frees the old context (sysfs.c:2130-2132,
# damon_destroy_perf_event(), observe.c:206 frees the per-event states).  A
# 'commit' of a changed sample_period opens new events and closes the old ones
# in the running kdamond (core.c:1503-1560).
#
subtest_churn()
{
	local i period=1 commits=0 kd pid st cycles=0

	need_workload
	start_workload
	reset_kdamonds 1
	setup_ctx 0 "$period" 50000 0 "$wl_pid"
	snap before
	kmsg_mark churn
	for ((i = 0; i < nr_churn; i++))
	do
		kdamond_on 0 || break
		kd=$kd_pid
		if ((i % 5 == 4))
		then
			period=$((period == 1 ? 2 : 1))
			wr "$kdamonds_dir/0/contexts/0/monitoring_attrs/sample/perf_events/0/sample_period" "$period"
			if ! try_write "$kdamonds_dir/0/state" commit
			then
				fail "cycle $i: commit failed: $write_err"
				break
			fi
			rd st "$kdamonds_dir/0/state"
			rd pid "$kdamonds_dir/0/pid"
			if [ "$st" != on ] || [ "$pid" != "$kd" ]
			then
				fail "cycle $i: after the commit, state '$st'" \
					"pid '$pid' (was $kd)"
				break
			fi
			commits=$((commits + 1))
		elif ((i % 7 == 6))
		then
			# let samples flow for a while
			sleep 0.2
		fi
		kdamond_off 0 || break
		cycles=$((cycles + 1))
		if ((cycles % 50 == 0))
		then
			say "$cycles/$nr_churn cycles"
		fi
	done
	if [ "$cycles" -eq "$nr_churn" ]
	then
		pass "$cycles on/off cycles with a clean stop each," \
			"$commits commits of a new sample_period"
	else
		fail "churn stopped after $cycles of $nr_churn cycles"
	fi
	kill -0 "$wl_pid" 2> /dev/null || fail "the workload died"
	snap after
	check_all_bound after
	check_laws before after
	check_kmsg
	kmemleak_check
	if [ "$kml_status" != "kmemleak checked" ]
	then
		say "checked: the churn, clean stops$($have_stats && echo ", laws");" \
			"NOT checked: leaks ($kml_status)"
		set_directive "$kml_status"
	fi
	exit $((nfail > 0))
}

#
# Subtest: ring overflow flood
#
# - Rings of 4 entries: damon_report_rings_alloc() sizes the rings from the
#   knob when the context starts (core.c:1021-1046); rings that exist keep
#   their size (core.c:970-973), so the knob is restored right after 'on'.
# - A push fails when the ring has mask + 1 = 4 reports (core.c:1056), and a
#   drain takes the reports that were in the ring when it started, storing
#   the tail once at the end (core.c:1356-1378): a drain dequeues at most 4
#   reports per ring, so damon_perf_drain's total <= 4 * possible CPUs.
# - Drops: a full ring (core.c:1106, with the damon_perf_ring_overflow
#   tracepoint), a nested report (core.c:1100), both counted in the ring and
#   added to 'overflow' when kdamond drains the ring (core.c:1384-1401,
#   observe.c:415); a context without rings (core.c:1095, counted at once).
#   The last drain at the stop counts the remaining drops (core.c:1454)
#   after the events are closed (core.c:1489), so valid = enqueue + overflow
#   exactly on the deltas.
# - damon_perf_drain's dropped= is the drops counted by the drains in the
#   sampling intervals (core.c:3135-3139); the drain at the stop and the
#   no-ring drops are not traced, and a drain that cannot build its snapshot
#   leaves the drops to the next one (core.c:3131).  Hence
#   0 < sum(dropped) <= overflow delta, not equality.
# - damon_perf_ring_overflow fires once per full-ring drop, so its count (the
#   lines kept in the buffer) is <= the overflow delta.
#
subtest_flood()
{
	local orig cpus cpu p pids=() inst_drain="" inst_ovf="" max_total
	local n_drain=0 sum_dropped=0 n_ovf=0 ovr possible line cb1 cb2 ovf1 ovf2

	[ -e "$ring_order_param" ] ||
		skip_subtest "no report_ring_order knob ($ring_order_param)"
	need_workload
	if ! $have_stats && { [ -z "$tracefs" ] ||
		[ ! -d "$tracefs/events/damon/damon_perf_ring_overflow" ]; }
	then
		skip_subtest "neither $perf_stats nor the damon_perf_ring_overflow tracepoint"
	fi
	rd orig "$ring_order_param"
	echo "$orig" > "$tmpdir/ring_order.orig"
	cpus=$(online_cpus)
	possible=$(nr_possible_cpus)
	command -v taskset > /dev/null ||
		say "no taskset: one workload per CPU, not pinned"
	for cpu in $cpus
	do
		start_workload "$cpu"
		pids+=("$wl_pid")
	done
	reset_kdamonds 1
	setup_ctx 0 1 100000 0 "${pids[@]}"

	wr "$ring_order_param" 2
	rd line "$ring_order_param"
	[ "$line" = 2 ] || abort "report_ring_order reads '$line' after writing 2"
	if inst_drain=$(trace_instance flood_drain 1024) &&
		! trace_event "$inst_drain" damon_perf_drain 1
	then
		inst_drain=""
	fi
	if inst_ovf=$(trace_instance flood_ovf 64) &&
		! trace_event "$inst_ovf" damon_perf_ring_overflow 1
	then
		inst_ovf=""
	fi
	snap before
	kmsg_mark flood
	kdamond_on 0 || exit 1
	wr "$ring_order_param" "$orig"
	rm -f "$tmpdir/ring_order.orig"
	say "flooding for $flood_secs s: ${#pids[@]} workloads, 4-entry rings" \
		"(report_ring_order restored to $orig while running)"
	sleep "$flood_secs"
	[ "$(kdamond_state 0)" = on ] || fail "the kdamond stopped by itself"
	kdamond_off 0 && pass "the kdamond stopped cleanly"
	snap after
	[ -n "$inst_drain" ] && trace_event "$inst_drain" damon_perf_drain 0
	[ -n "$inst_ovf" ] && trace_event "$inst_ovf" damon_perf_ring_overflow 0
	for p in "${pids[@]}"
	do
		kill "$p" 2> /dev/null
	done

	if $have_stats
	then
		check_all_bound after
		check_laws before after
		if [ "${deltas[overflow]}" -gt 0 ]
		then
			pass "overflow > 0 (${deltas[overflow]} of ${deltas[valid]} valid samples dropped)"
		else
			fail "no overflow with 4-entry rings"
		fi
		line=""
		for cpu in $cpus
		do
			read -r cb1 ovf1 < <(cpu_get before "$cpu" cb ovf)
			read -r cb2 ovf2 < <(cpu_get after "$cpu" cb ovf)
			line+=" CPU$cpu:cb=$((cb2 - cb1)),ovf=$((ovf2 - ovf1))"
		done
		say "per-CPU deltas:$line"
	else
		say "conservation laws and overflow counts: NOT checked (no $perf_stats)"
	fi

	if [ -n "$inst_drain" ]
	then
		read -r n_drain sum_dropped max_total < <(grep ' damon_perf_drain: ' \
			"$inst_drain/trace" | awk '
			{
				for (i = 1; i <= NF; i++)
					if (split($i, kv, "=") == 2)
						v[kv[1]] = kv[2]
				n++
				dropped += v["dropped"]
				if (v["total"] + 0 > max)
					max = v["total"] + 0
			}
			END { print n + 0, dropped + 0, max + 0 }')
		ovr=$(trace_overrun "$inst_drain")
		say "damon_perf_drain: $n_drain drains, sum(dropped)=$sum_dropped," \
			"max(total)=$max_total, $ovr overwritten"
		[ "$n_drain" -gt 0 ] || fail "no damon_perf_drain traced"
		if [ "$sum_dropped" -gt 0 ]
		then
			pass "damon_perf_drain: sum(dropped) > 0"
		else
			fail "damon_perf_drain: no drop traced"
		fi
		if $have_stats
		then
			law "damon_perf_drain sum(dropped) <= overflow delta (stop-time and no-ring drops are not traced)" \
				"$sum_dropped" "<=" "${deltas[overflow]}"
		fi
		law "damon_perf_drain max(total) <= 4 entries * $possible possible CPUs" \
			"$max_total" "<=" "$((4 * possible))"
	else
		say "damon_perf_drain: NOT checked (tracepoint or trace instances not available)"
	fi
	if [ -n "$inst_ovf" ]
	then
		n_ovf=$(grep -c ' damon_perf_ring_overflow: ' "$inst_ovf/trace")
		ovr=$(trace_overrun "$inst_ovf")
		say "damon_perf_ring_overflow: $n_ovf lines kept, $ovr overwritten"
		if [ "$n_ovf" -gt 0 ]
		then
			pass "damon_perf_ring_overflow fired"
		else
			fail "damon_perf_ring_overflow never fired"
		fi
		if $have_stats
		then
			law "damon_perf_ring_overflow lines <= overflow delta" \
				"$n_ovf" "<=" "${deltas[overflow]}"
		fi
	else
		say "damon_perf_ring_overflow: NOT checked (trace instances not available)"
	fi
	check_kmsg
	exit $((nfail > 0))
}

#
# Subtest: two contexts
#
# The sysfs interface takes one context per kdamond (sysfs.c:1470-1472), so
# two kdamonds, started separately (damon_start(.., false), non-exclusive,
# core.c:2178).  Each context has its own rings (ctx->report_rings,
# core.c:1021-1046) and its own events, which sample every task on each CPU:
# each context's handler reports the other workload's faults too, and its
# drain drops those as miss_tgid since no target has their tgid
# (core.c:1322-1346).  The damon_perf_report_missed events fire in the
# kdamond (common_pid), so they tell which context dropped what.
#
# check_regions DIR HOT_S HOT_E COLD_S COLD_E OHOT_S OHOT_E: the tried
# regions in the scheme DIR show an accessed region in the own hot buffer,
# an unaccessed region in the own cold buffer, and no accessed region in the
# other workload's hot buffer range (outside the own hot buffer).  Sets
# regions_desc and other_seen.
check_regions()
{
	local d s e n hot_found=false cold_found=false cold_acc=false
	local other_acc=false

	regions_desc=""
	other_seen=false
	for d in "$1"/tried_regions/[0-9]*
	do
		[ -d "$d" ] || continue
		read -r s < "$d/start"
		read -r e < "$d/end"
		read -r n < "$d/nr_accesses"
		regions_desc+="#   $s-$e: $n"$'\n'
		if [ "$s" -lt "$3" ] && [ "$e" -gt "$2" ] &&
			{ [ "$e" -le "$4" ] || [ "$s" -ge "$5" ]; } &&
			[ "$n" -gt 0 ]
		then
			hot_found=true
		fi
		if [ "$s" -lt "$7" ] && [ "$e" -gt "$6" ] &&
			{ [ "$e" -le "$2" ] || [ "$s" -ge "$3" ]; }
		then
			other_seen=true
			[ "$n" -gt 0 ] && other_acc=true
		fi
		if [ "$s" -lt "$5" ] && [ "$e" -gt "$4" ]
		then
			if [ "$e" -le "$2" ] || [ "$s" -ge "$3" ]
			then
				cold_found=true
				[ "$n" -ne 0 ] && cold_acc=true
			elif [ "$n" -eq 0 ]
			then
				cold_found=true
			fi
		fi
	done
	$hot_found && $cold_found && ! $cold_acc && ! $other_acc
}

subtest_two_ctx()
{
	local k i w inst="" filter="" weak=false pids=() kds=() t
	local hs=() he=() cs=() ce=() ok n other

	need_workload
	for w in 0 1
	do
		start_workload
		pids[w]=$wl_pid
		hs[w]=$wl_hot_start
		he[w]=$wl_hot_end
		cs[w]=$wl_cold_start
		ce[w]=$wl_cold_end
	done
	reset_kdamonds 2
	setup_ctx 0 1 100000 1 "${pids[0]}"
	setup_ctx 1 1 100000 1 "${pids[1]}"
	snap before
	kmsg_mark two_ctx
	kdamond_on 0 || exit 1
	kds[0]=$kd_pid
	kdamond_on 1 || exit 1
	kds[1]=$kd_pid
	[ "${kds[0]}" != "${kds[1]}" ] || abort "both kdamonds have pid ${kds[0]}"
	say "kdamond 0 (pid ${kds[0]}) monitors pid ${pids[0]}, kdamond 1" \
		"(pid ${kds[1]}) monitors pid ${pids[1]}, both running"

	t=$((two_ctx_secs > 2 ? two_ctx_secs - 2 : 0))
	sleep "$t"
	if [ -n "$tracefs" ] &&
		[ -d "$tracefs/events/damon/damon_perf_report_missed" ] &&
		inst=$(trace_instance two_ctx 256)
	then
		# the misses of each kdamond in the other workload's hot buffer
		filter="reason == 1 && ((common_pid == ${kds[0]} && addr >= ${hs[1]} && addr < ${he[1]})"
		filter+=" || (common_pid == ${kds[1]} && addr >= ${hs[0]} && addr < ${he[0]}))"
		if ! echo "$filter" > \
			"$inst/events/damon/damon_perf_report_missed/filter" 2> /dev/null
		then
			say "the event filter was refused; counting all reason 1 misses per kdamond"
			weak=true
		fi
		trace_event "$inst" damon_perf_report_missed 1
	else
		inst=""
	fi
	sleep $((two_ctx_secs - t))
	[ -n "$inst" ] && trace_event "$inst" damon_perf_report_missed 0
	for k in 0 1
	do
		[ "$(kdamond_state "$k")" = on ] ||
			fail "kdamond $k stopped by itself"
	done

	for k in 0 1
	do
		other=$((1 - k))
		ok=false
		for ((i = 0; i < 10; i++))
		do
			if ! try_write "$kdamonds_dir/$k/state" update_schemes_tried_regions
			then
				fail "kdamond $k: update_schemes_tried_regions: $write_err"
				break
			fi
			if check_regions "$kdamonds_dir/$k/contexts/0/schemes/0" \
				"${hs[k]}" "${he[k]}" "${cs[k]}" "${ce[k]}" \
				"${hs[other]}" "${he[other]}"
			then
				ok=true
				break
			fi
			sleep 1
		done
		if $ok
		then
			pass "context $k: accesses in its own hot buffer only" \
				"(other's hot buffer range: $($other_seen &&
				echo "covered by its regions, not accessed" ||
				echo "not in its regions"))"
		else
			say "context $k: hot ${hs[k]}-${he[k]} cold ${cs[k]}-${ce[k]}" \
				"other's hot ${hs[other]}-${he[other]}; regions (start-end: nr_accesses):"
			printf '%s' "$regions_desc"
			fail "context $k: no accessed region in its hot buffer," \
				"or an accessed region in its cold buffer or in the other's hot buffer"
		fi
	done

	ok=true
	kdamond_off 0 || ok=false
	kdamond_off 1 || ok=false
	$ok && pass "both kdamonds stopped cleanly"
	snap after
	if [ -n "$inst" ]
	then
		for k in 0 1
		do
			other=$((1 - k))
			n=$(grep ' damon_perf_report_missed: ' "$inst/trace" |
				grep -c -- "-${kds[k]} .*reason=1")
			if [ "$n" -gt 0 ]
			then
				pass "kdamond $k dropped $n samples as miss_tgid" \
					"$($weak && echo "(any address)" ||
					echo "in workload $other's hot buffer") (traced)"
			else
				fail "kdamond $k: no miss_tgid of workload $other's" \
					"samples traced"
			fi
		done
	else
		say "per-context misses: NOT checked (no damon_perf_report_missed or trace instances)"
	fi
	if $have_stats
	then
		check_all_bound after
		check_laws before after
		if [ "${deltas[miss_tgid]}" -gt 0 ]
		then
			pass "miss_tgid > 0 (${deltas[miss_tgid]})"
		else
			fail "no miss_tgid although each context samples the other's workload"
		fi
		[ "${deltas[match]}" -gt 0 ] || fail "no report matched"
	fi
	check_kmsg
	exit $((nfail > 0))
}

#
# Main
#

parse_options()
{
	local t

	while [ $# -gt 0 ]
	do
		case "$1" in
		-h|--help)
			usage
			exit 0;;
		--hotplug|--churn|--flood-secs|--two-ctx-secs|--only|--workload)
			if [ $# -lt 2 ]
			then
				echo "$0: $1 needs a value" >&2
				exit 1
			fi;;
		*)
			echo "$0: unknown option '$1'" >&2
			usage >&2
			exit 1;;
		esac
		case "$1" in
		--hotplug) nr_hotplug=$2;;
		--churn) nr_churn=$2;;
		--flood-secs) flood_secs=$2;;
		--two-ctx-secs) two_ctx_secs=$2;;
		--only) only=${2//-/_};;
		--workload) workload=$2;;
		esac
		shift 2
	done
	for t in "$nr_hotplug" "$nr_churn" "$flood_secs" "$two_ctx_secs"
	do
		if ! [[ "$t" =~ ^[0-9]+$ ]]
		then
			echo "$0: '$t' is not a number" >&2
			exit 1
		fi
	done
	for t in ${only//,/ }
	do
		if [[ " $all_subtests " != *" $t "* ]]
		then
			echo "$0: unknown subtest '$t' (${all_subtests// /,})" >&2
			exit 1
		fi
	done
}

# Finds or builds the workload
find_workload()
{
	local src

	[ -n "$workload" ] && return
	workload=${DP_BUILD:+$DP_BUILD/guest/workload}
	[ -n "$workload" ] && [ -x "$workload" ] && return
	workload=$(dirname "$(readlink -f "$0")")/workload
	[ -x "$workload" ] && return
	workload=""
	src=${DP_TOP:-/nonexistent}/guest/workload.c
	if [ -f "$src" ] && command -v gcc > /dev/null &&
		gcc -O2 -o "$tmpdir/workload" "$src" 2> /dev/null
	then
		workload=$tmpdir/workload
	fi
}

# With KCSAN built (kconfig/kcsan.config: not enabled at boot), report only
# data races in the functions of the perf sampling pipeline, and enable it.
# An empty whitelist would report everything (kernel/kcsan/debugfs.c:108),
# and functions that were inlined have no symbol, so count the accepted ones.
kcsan_setup()
{
	local f n=0

	[ -w "$debugfs/kcsan" ] || return 0
	echo whitelist > "$debugfs/kcsan" || return 0
	for f in damon_report_access damon_report_ring_push \
		damon_report_ring_drain damon_report_ring_count_drops \
		damon_drain_reports damon_report_match damon_apply_reports \
		damon_report_rings_alloc damon_report_rings_release \
		kdamond_check_reported_accesses damon_perf_vaddr_overflow \
		damon_perf_paddr_overflow damon_perf_cpu_online \
		damon_perf_cpu_offline damon_perf_event_set_armed \
		damon_perf_event_setup damon_perf_event_teardown \
		damon_perf_events_replace damon_commit_perf_events \
		damon_perf_set_event_state damon_perf_observe_event_running \
		damon_perf_observe_perf_sample damon_perf_observe_ring_enqueue \
		damon_perf_observe_ring_peak damon_perf_observe_ring_overflow \
		damon_perf_observe_ring_drops damon_perf_stats_snapshot
	do
		echo "!$f" > "$debugfs/kcsan" 2> /dev/null && n=$((n + 1))
	done
	if [ "$n" -gt 0 ] && echo on > "$debugfs/kcsan"
	then
		say "KCSAN: on, reporting races in $n DAMON functions only"
	else
		say "KCSAN: built, but no DAMON function could be listed: left as is"
	fi
}

# Prints why nothing can run, if so
global_skip_reason()
{
	local st comm

	if [ "$EUID" -ne 0 ]
	then
		echo "run as root"
		return
	fi
	if [ ! -d "$kdamonds_dir" ]
	then
		echo "no DAMON sysfs interface ($damon_sysfs)"
		return
	fi
	for st in "$kdamonds_dir"/*/state
	do
		[ -f "$st" ] || continue
		rd comm "$st"
		if [ "$comm" = on ]
		then
			echo "a kdamond is running ($st)"
			return
		fi
	done
	comm=$(grep -l '^kdamond' /proc/[0-9]*/comm 2> /dev/null | head -n 1)
	if [ -n "$comm" ]
	then
		echo "a kdamond is running (${comm%/comm})"
		return
	fi
}

global_cleanup()
{
	cleanup_state
	rm -rf "$tmpdir"
}

main()
{
	local selected=() t n=0 rc start dir npass=0 nskip=0 nfails=0 reason

	parse_options "$@"
	for t in $all_subtests
	do
		if [ -z "$only" ] || [[ ",$only," == *",$t,"* ]]
		then
			selected+=("$t")
		fi
	done
	echo "TAP version 13"
	echo "1..${#selected[@]}"
	if ! tmpdir=$(mktemp -d /tmp/damon_perf_stress.XXXXXX)
	then
		for t in "${selected[@]}"
		do
			n=$((n + 1))
			echo "ok $n $t # SKIP cannot make a temporary directory"
		done
		exit $ksft_skip
	fi
	touch "$tmpdir/pids" "$tmpdir/offlined" "$tmpdir/instances"
	trap global_cleanup EXIT
	grep -q " $debugfs debugfs " /proc/mounts ||
		mount -t debugfs none "$debugfs" 2> /dev/null
	for tracefs in /sys/kernel/tracing /sys/kernel/debug/tracing ""
	do
		[ -n "$tracefs" ] && [ -d "$tracefs/events" ] && break
	done
	[ -r "$perf_stats" ] && have_stats=true
	find_workload
	say "kernel $(uname -r), CPUs online $(rd t "$cpu_sysfs/online"; echo "$t")," \
		"possible $(nr_possible_cpus); perf_stats: $($have_stats &&
		echo yes || echo "no (CONFIG_DAMON_PERF_OBSERVE off?)");" \
		"tracefs: ${tracefs:-none}; kmemleak: $([ -e "$kmemleak" ] &&
		echo yes || echo no); workload: ${workload:-none}"
	say "options: --hotplug $nr_hotplug --churn $nr_churn" \
		"--flood-secs $flood_secs --two-ctx-secs $two_ctx_secs"

	reason=$(global_skip_reason)
	[ -z "$reason" ] && kcsan_setup
	for t in "${selected[@]}"
	do
		n=$((n + 1))
		if [ -n "$reason" ]
		then
			echo "ok $n $t # SKIP $reason"
			nskip=$((nskip + 1))
			continue
		fi
		say "$t: start"
		start=$SECONDS
		: > "$tmpdir/directive"
		(
			trap cleanup_state EXIT
			"subtest_$t"
		)
		rc=$?
		cleanup_state
		dir=$(tr -d '#\n' < "$tmpdir/directive")
		say "$t: $((SECONDS - start)) s"
		case "$rc" in
		0)
			echo "ok $n $t${dir:+ # $dir}"
			npass=$((npass + 1));;
		"$ksft_skip")
			echo "ok $n $t # SKIP ${dir:-skipped}"
			nskip=$((nskip + 1));;
		*)
			echo "not ok $n $t${dir:+ # $dir}"
			nfails=$((nfails + 1));;
		esac
	done
	say "$npass passed, $nfails failed, $nskip skipped"
	[ "$nfails" -gt 0 ] && exit 1
	[ "$npass" -eq 0 ] && [ "$nskip" -gt 0 ] && exit $ksft_skip
	exit 0
}

# Sourcing the file (for tests of the helpers) runs nothing
if [ "${BASH_SOURCE[0]}" = "$0" ]
then
	main "$@"
fi
