#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# testpmu-guest.sh: runs in the test guest, as root, on a kernel with the
# harness-only test sampling PMU "damon_test" (testpmu/0001-damon-test-pmu.patch,
# testpmu/README.md).  DAMON monitors a workload (guest/workload.c: a hot
# buffer written continuously, a cold buffer touched once) with one perf
# event per run, and every stage from the PMU's records to DAMON's regions is
# accounted for:
#
#   SHAPE-OPS  SHAPE ibs (config shape 0, sample_period 1008: a multiple of
#              16), pebs (1) or pebs_large (2, precise_ip 1 for both pebs
#              shapes, wakeup_events 0: the attr of issue #14), the range
#              config1/config2 = the hot buffer and the tgid filter (config
#              bits 32-63) = the workload; or page_faults, the software
#              page-faults event (type 1, config 2, period 1, the workload
#              refaulting its hot buffer): the reference path.  OPS vaddr
#              (the workload's pid) or paddr (sample_phys_addr; the target's
#              regions are the 2 MiB blocks of the workload's frames, which
#              transparent huge pages keep in place (thp_stable), or for
#              page_faults, whose hot frames change, the biggest System
#              RAM).  Checks, on deltas read with DAMON off (the counters are
#              exact only quiescent):
#     records    the PMU made records (test PMU shapes)
#     pmu-laws   PMU: Δoverflows == Δ(skip_* + records)
#     handover   Δto_output == 0 and pending == 0 after the stop: every record
#                went to perf_event_overflow(), none to perf_event_output()
#                (lost for a kernel counter) or left in a batch
#     lost       Δrecords == Δcallback: nothing lost before DAMON's handler
#     laws       perf_stats: callback == sum of the reasons, valid == enqueue
#                + overflow, enqueue == dequeue, dequeue == match + misses +
#                discarded, update <= match, and per CPU (lib/perf_stats.sh:
#                the rows a newer perf_stats adds are summed too)
#     events     while DAMON runs, the PMU's events file lists an event per
#                online CPU and none with large=1 (DAMON's attr keeps large
#                PEBS off); none is left after the stop
#     hardirq    every damon_perf_sample traced has context=2 (hardirq), and
#                as many were traced as perf_stats counts callbacks
#     samples    page_faults: callbacks came
#     hotcold    vaddr: a tried region (stat scheme) of the hot buffer has
#                nr_accesses > 0, and the cold buffer's regions have none
#                (sysfs_perf_events.sh's logic).  paddr: the frames of the
#                hot and cold buffers from /proc/PID/pagemap; a region has
#                nr_accesses > 0, every such region holds a hot frame, and
#                regions holding cold frames only have none
#   negative   pebs_large with force_large (config bit 4), vaddr: the loss
#              mechanism exists and this test sees it: large=1 in events,
#              Δto_output > 0 and Δcallback == Δto_overflow < Δrecords
#   late-HOW   the lifetime of an event's handler context against a
#              handler that runs late, as a software event's may: an IPI
#              can remove the event from its CPU between perf_sw_event()
#              finding it and calling its overflow handler.  The test PMU's
#              late shape (config 3) samples nothing by itself; the
#              debugfs file damon_test_pmu/late, written on the last CPU,
#              holds that window open (preemption disabled, interrupts on,
#              under rcu_read_lock()) until the event is deleted from the
#              CPU and then until it is destroyed, late_ms each at most,
#              and then calls perf_event_overflow() with an empty sample.
#              Meanwhile, from another CPU (this script and the kdamond are
#              pinned there), HOW = commit: 'commit' of no perf event, which
#              closes the running ones; HOW = off: 'off'.  Checks:
#     late       the late overflow was handed over (Δlate 1)
#     deleted    the event was deleted from the CPU before that (Δlate_del
#                1): the window really held the IPI
#     lifetime   it was not destroyed before that (Δlate_destroy 0): DAMON
#                releases a CPU's event on that CPU's hotplug thread, which
#                runs only after the handler returns, so the DAMON event
#                (its overflow_handler_context) is still allocated when the
#                handler reads it.  A release that did not wait would show
#                Δlate_destroy 1 here, and a use-after-free to KASAN
#                (TESTPMU_VARIANT=debug of scripts/testpmu.sh)
#     callback   DAMON's handler counted it: Δcallback == Δaddr_zero == 1,
#                and the perf_stats laws hold
#     state      commit: the kdamond still runs
#   late-control  the negative control of lifetime: the same window held
#              open on a kernel counter of the late shape that the test
#              PMU opens on the last CPU and, 2 s later, releases with
#              perf_event_release_kernel() from the writing task on
#              another CPU (damon_test_pmu/late_control), as an owner that
#              does not wait for the handlers would: the check must see
#              Δlate_del 1 and Δlate_destroy 1.  (perf record's own events
#              are no such control: unmapping its buffer waits for an RCU
#              grace period, which the window holds back.)
#   obs-OPS    damon_perf_obs_test.sh --pmu damon_test --period 1008 (the
#              ibs shape, no range: records at the interrupted task's stack
#              pointer), vaddr and paddr: exits 0
#   kmsg       no DAMON error in the kernel log during the runs above (before
#              the obs tests, whose negative controls log errors)
#
# Expected on a kernel whose paddr handler does not translate virtual-only
# samples (the series before its paddr translation): pebs-paddr,
# pebs_large-paddr and page_faults-paddr FAIL hotcold (every sample counted
# as inv_phys, no region accessed); seen so on 2026-11-30.
#
# Output: "PASS RUN/CHECK: detail", "FAIL RUN/CHECK: reason", "SKIP
# RUN/CHECK: reason", "# " comments, and one line per run
#   RESULT shape=S ops=O generated=N callback=N valid=N matched=N updated=N
#          inv_phys=N xlate_fail=N hot_regions=N cold_accessed=N
# (generated: Δrecords of the test PMU, '-' for page_faults).  Exit status: 0
# if nothing failed, 1 if a check failed, 4 if everything was skipped (e.g.
# no damon_test PMU).
#
# usage: testpmu-guest.sh [options] WORKLOAD [SELFTESTS_DIR]
#   WORKLOAD        guest/workload.c built (scripts/lib.sh stage_guest)
#   SELFTESTS_DIR   has damon_perf_obs_test.sh (and perf_fault_workload);
#                   without it the obs-* runs SKIP
#   --only LIST     runs to do, comma separated shell patterns, e.g.
#                   'ibs-*,negative' (runs: ibs-vaddr ibs-paddr pebs-vaddr
#                   pebs-paddr pebs_large-vaddr pebs_large-paddr
#                   page_faults-vaddr page_faults-paddr negative late-commit
#                   late-off late-control obs-vaddr obs-paddr)
#   --secs S        seconds of monitoring before the regions are read (4)
#   --obs-secs S    --duration of damon_perf_obs_test.sh (5)
#
# Files (beside this one, as scripts/testpmu.sh stages them): lib/common.sh,
# lib/ktap.sh, lib/kdamond.sh and lib/perf_stats.sh of guest/.
set -u
export LC_ALL=C

damon_sysfs=/sys/kernel/mm/damon/admin
kdamonds_dir=$damon_sysfs/kdamonds
debugfs=/sys/kernel/debug
perf_stats=$debugfs/damon/perf_stats
kmemleak=$debugfs/kmemleak
ring_order_param=/sys/module/damon_core/parameters/report_ring_order
pmu_dir=/sys/bus/event_source/devices/damon_test
dtp_stats=$debugfs/damon_test_pmu/stats
dtp_events=$debugfs/damon_test_pmu/events
dtp_late=$debugfs/damon_test_pmu/late

all_runs="ibs-vaddr ibs-paddr pebs-vaddr pebs-paddr pebs_large-vaddr"
all_runs+=" pebs_large-paddr page_faults-vaddr page_faults-paddr negative"
all_runs+=" late-commit late-off late-control"
all_runs+=" obs-vaddr obs-paddr"

# Workload buffers (MiB): at most ~250 records/s per CPU (HZ=250, no
# high-resolution timers in the guest) cover a small hot buffer
hot_mb=2
cold_mb=8
aggr_us=1000000
secs=4
obs_secs=5
late_ms=3000
only=""
workload=""
selftests=""

# State (and in lib/: write_err, deltas, reason_rows, miss_rows)
tmpdir=""
tracefs=""
have_stats=false
pmu_type=""
ncpus=""
wl_cpu=""
cur=""
chk=""

testpmu_dir=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
unreadable()
{
	echo "testpmu: cannot read $testpmu_dir/$1" >&2
	exit 1
}
# shellcheck source-path=SCRIPTDIR source-path=SCRIPTDIR/../guest
{
	. "$testpmu_dir/lib/common.sh" || unreadable lib/common.sh
	. "$testpmu_dir/lib/ktap.sh" || unreadable lib/ktap.sh
	. "$testpmu_dir/lib/kdamond.sh" || unreadable lib/kdamond.sh
	. "$testpmu_dir/lib/perf_stats.sh" || unreadable lib/perf_stats.sh
}

# The verdicts of lib/ (law, check_laws, kdamond_on, ...) and of this file
# are lines named by the run ($cur) and the check ($chk).  Runs are
# subshells: the tally is a file.
pass()
{
	echo "PASS $cur/$chk: $*"
	echo p >> "$tmpdir/tally"
}

fail()
{
	echo "FAIL $cur/$chk: $*"
	echo f >> "$tmpdir/tally"
}

skip()
{
	echo "SKIP $cur/$chk: $*"
	echo s >> "$tmpdir/tally"
}

# verdict CHECK STATUS DETAIL [REASON]: PASS CHECK with DETAIL if STATUS
# (of the test before) is 0, else FAIL it with REASON (default: DETAIL)
verdict()
{
	chk=$1
	if [ "$2" -eq 0 ]
	then
		pass "$3"
	else
		fail "${4:-$3}"
	fi
}

usage()
{
	sed -n '3,/^set -u/{/^set -u/d;p}' "$0" | sed 's/^# \{0,1\}//'
}

#
# The test PMU's counters
#

# dtp_deltas: fills pd with the deltas of the counters of the cpu=total line
# from the stats snapshot before to the one after, and pd[now:KEY] with the
# values after (one awk: an exec costs tens of ms in the TCG guest)
declare -A pd=()
dtp_deltas()
{
	local k v

	pd=()
	while read -r k v
	do
		pd[$k]=$v
	done < <(awk '
		$1 == "cpu=total" {
			for (i = 2; i <= NF; i++) {
				split($i, kv, "=")
				if (FILENAME == ARGV[1])
					b[kv[1]] = kv[2]
				else
					a[kv[1]] = kv[2]
			}
		}
		END {
			for (k in a) {
				print k, a[k] - b[k]
				print "now:" k, a[k]
			}
		}' "$tmpdir/dtp.before" "$tmpdir/dtp.after")
}

dtp_snap()
{
	cat "$dtp_stats" > "$tmpdir/dtp.$1" 2> /dev/null || : > "$tmpdir/dtp.$1"
}

#
# Frames and regions
#

# frames PID START END: the PFNs of the present pages of [START, END) in the
# address space of PID, from /proc/PID/pagemap (bit 63 present, bits 0-54 the
# PFN, which root sees), one a line.  Hexadecimal, as awk's numbers are
# doubles: a present entry starts with a digit of 8 or more, the PFN is the
# last 14 digits without bit 55.
frames()
{
	dd if="/proc/$1/pagemap" bs=8 skip=$(($2 / page_size)) \
		count=$((($3 - $2) / page_size)) 2> /dev/null |
		od -An -v -tx8 -w8 | awk '
		$1 ~ /^[89a-f]/ {
			v = 0
			for (i = 3; i <= 16; i++) {
				d = index("0123456789abcdef", substr($1, i, 1)) - 1
				v = v * 16 + (i == 3 ? d % 8 : d)
			}
			printf "%.0f\n", v
		}'
}

# Judges $tmpdir/regions of a vaddr target: prints "hot_regions cold_seen
# cold_accessed" (regions of the hot buffer but not of the cold one that have
# accesses; regions that show the cold buffer monitored: of the cold buffer
# only, or of both with no access; of the cold buffer only with accesses)
judge_vaddr()
{
	awk -v hs="$wl_hot_start" -v he="$wl_hot_end" \
		-v cs="$wl_cold_start" -v ce="$wl_cold_end" '
		{
			hot = $1 < he && $2 > hs
			cold = $1 < ce && $2 > cs
			if (hot && !cold && $3 > 0)
				nhot++
			if (cold && !hot) {
				seen++
				if ($3 > 0)
					acc++
			} else if (cold && $3 == 0) {
				seen++
			}
		}
		END { print nhot + 0, seen + 0, acc + 0 }' "$tmpdir/regions"
}

# Judges $tmpdir/regions of a paddr target against the frames in
# $tmpdir/hot_pfns and $tmpdir/cold_pfns: prints "accessed hot_regions
# stray cold_only cold_accessed" (regions with accesses; of those, regions
# that hold a hot frame, and that do not; regions that hold cold frames and
# no hot one; of those, regions with accesses)
judge_paddr()
{
	awk -v ps="$page_size" '
		FILENAME == ARGV[1] {
			s[NR] = $1; e[NR] = $2; n[NR] = $3; nr = NR
			next
		}
		{
			a = $1 * ps
			lo = 1; hi = nr
			while (lo <= hi) {
				mid = int((lo + hi) / 2)
				if (a < s[mid])
					hi = mid - 1
				else if (a >= e[mid])
					lo = mid + 1
				else
					break
			}
			if (lo > hi)
				next
			if (FILENAME == ARGV[2])
				hot[mid] = 1
			else
				cold[mid] = 1
		}
		END {
			for (i = 1; i <= nr; i++) {
				if (n[i] > 0) {
					acc++
					if (i in hot)
						nhot++
					else
						stray++
				}
				if ((i in cold) && !(i in hot)) {
					conly++
					if (n[i] > 0)
						cacc++
				}
			}
			print acc + 0, nhot + 0, stray + 0, conly + 0, cacc + 0
		}' "$tmpdir/regions" "$tmpdir/hot_pfns" "$tmpdir/cold_pfns"
}

# Adds the frames of the workload's hot buffer to $tmpdir/hot_pfns (a union:
# a refaulting hot buffer changes frames) and takes those of the cold buffer
take_frames()
{
	frames "$wl_pid" "$wl_hot_start" "$wl_hot_end" >> "$tmpdir/hot_pfns"
	sort -un -o "$tmpdir/hot_pfns" "$tmpdir/hot_pfns"
	frames "$wl_pid" "$wl_cold_start" "$wl_cold_end" | sort -un \
		> "$tmpdir/cold_pfns"
}

# hot_cold OPS: reads the tried regions of scheme 0 until they show the
# access pattern of the workload (up to 3 times, a second apart), and sets
# hc_ok, hc_desc (the counts), hot_regions and cold_accessed
hot_cold()
{
	local ops=$1 i acc stray seen conly

	hc_ok=false
	say "phase: reading the regions ($((SECONDS - hc_t0)) s after 'on')"
	for ((i = 0; i < 3; i++))
	do
		[ "$i" -eq 0 ] || sleep 1
		if ! try_write "$kdamonds_dir/0/state" update_schemes_tried_regions
		then
			hc_desc="update_schemes_tried_regions: $write_err"
			return
		fi
		if [ "$ops" = paddr ]
		then
			take_frames
		fi
		tried_regions "$kdamonds_dir/0/contexts/0/schemes/0" > "$tmpdir/regions"
		if [ "$ops" = vaddr ]
		then
			read -r hot_regions seen cold_accessed < <(judge_vaddr)
			hc_desc="$hot_regions accessed regions of the hot buffer,"
			hc_desc+=" $seen showing the cold one, $cold_accessed of"
			hc_desc+=" the cold one only accessed"
			[ "$hot_regions" -gt 0 ] && [ "$seen" -gt 0 ] &&
				[ "$cold_accessed" -eq 0 ] && hc_ok=true
		else
			read -r acc hot_regions stray conly cold_accessed < <(judge_paddr)
			hc_desc="$acc accessed regions: $hot_regions holding hot"
			hc_desc+=" frames, $stray holding none; $conly regions of"
			hc_desc+=" cold frames only, $cold_accessed of them accessed"
			hc_desc+=" ($(wc -l < "$tmpdir/hot_pfns") hot and"
			hc_desc+=" $(wc -l < "$tmpdir/cold_pfns") cold frames)"
			[ "$acc" -gt 0 ] && [ "$stray" -eq 0 ] && hc_ok=true
		fi
		hc_desc+=" of $(wc -l < "$tmpdir/regions") regions (read $((i + 1))"
		hc_desc+=" times, after $((SECONDS - hc_t0)) s of monitoring)"
		$hc_ok && return
	done
	{
		say "hot $wl_hot_start-$wl_hot_end cold $wl_cold_start-$wl_cold_end;" \
			"last tried regions (start-end: nr_accesses):"
		awk '{ printf "#   %s-%s: %s\n", $1, $2, $3 }' "$tmpdir/regions" |
			head -n 40
	}
}

# paddr_regions: prints the initial regions of the paddr target, "start end"
# a line: the 2 MiB blocks that hold the workload's frames, adjacent ones
# merged, so that DAMON's regions hold the hot frames or the cold ones (the
# buffers are transparent huge pages, see main); more than 64 ranges of
# scattered frames, one range from the lowest frame to the highest
paddr_regions()
{
	sort -nu "$tmpdir/hot_pfns" "$tmpdir/cold_pfns" |
		awk -v ps="$page_size" -v b=$((2 << 20)) '
		{
			blk = int($1 * ps / b)
			if (n && blk <= e[n])
				next
			if (n && blk == e[n] + 1) {
				e[n] = blk
				next
			}
			n++
			s[n] = blk
			e[n] = blk
		}
		END {
			if (n > 64) {
				e[1] = e[n]
				n = 1
			}
			for (i = 1; i <= n; i++)
				printf "%.0f %.0f\n", s[i] * b, (e[i] + 1) * b
		}'
}

# system_ram: prints "start end" of the biggest System RAM in /proc/iomem
system_ram()
{
	local r s e best=0 range=""

	while read -r r
	do
		s=$((16#${r%-*}))
		e=$((16#${r#*-} + 1))
		if [ $((e - s)) -gt "$best" ]
		then
			best=$((e - s))
			range="$s $e"
		fi
	done < <(sed -n 's/^\([0-9a-f]*-[0-9a-f]*\) : System RAM$/\1/p' /proc/iomem)
	[ -n "$range" ] && echo "$range"
}

#
# Tracing
#

# The damon_perf_sample lines of the trace instance $1: prints "lines
# context=2-lines other-contexts overrun"
sample_trace()
{
	awk '
		/ damon_perf_sample: / {
			n++
			if ($0 ~ / context=2 /)
				hard++
			else if (match($0, / context=[0-9]+/))
				other[substr($0, RSTART + 9, RLENGTH - 9)]++
		}
		END {
			o = ""
			for (c in other)
				o = o (o == "" ? "" : ",") c ":" other[c]
			print n + 0, hard + 0, (o == "" ? "-" : o)
		}' "$1/trace"
}

#
# One run
#

# run_pmu SHAPE OPS [FORCE]: one run with the event of SHAPE (ibs, pebs,
# pebs_large, page_faults) and the operations set OPS; FORCE 1 sets
# force_large (the negative control).  Runs in a subshell.
run_pmu()
{
	local shape=$1 ops=$2 force=${3:-0}
	local type=$pmu_type config period precise=0 mode=keep testpmu=true
	local c ev inst="" i s e nev nlarge nleft tr_n tr_hard tr_other
	local overrun=0 dr dov du dc pend gen

	chk=setup
	case "$shape" in
	ibs) config=0 period=1008;;
	pebs) config=1 period=1000 precise=1;;
	pebs_large) config=2 period=1000 precise=1;;
	page_faults) type=1 config=2 period=1 mode=refault testpmu=false;;
	esac
	if [ "$mode" = keep ]
	then
		thp_stable
	else
		thp_restore
	fi
	start_workload "$wl_cpu" "$mode"
	: > "$tmpdir/hot_pfns"
	[ "$ops" = paddr ] && take_frames
	if $testpmu
	then
		config=$((config | force << 4 | wl_pid << 32))
	fi

	reset_kdamonds 1
	if [ "$ops" = vaddr ]
	then
		setup_ctx 0 "$period" "$aggr_us" 1 "$wl_pid"
	else
		# the frames of a refaulting hot buffer change: all the memory
		setup_ctx 0 "$period" "$aggr_us" 1
		if [ "$mode" = refault ]
		then
			system_ram > "$tmpdir/target" || abort "no System RAM in /proc/iomem"
		else
			paddr_regions > "$tmpdir/target"
		fi
		[ -s "$tmpdir/target" ] ||
			abort "no frame of the workload in /proc/$wl_pid/pagemap"
		c=$kdamonds_dir/0/contexts/0
		write_attrs "$c" operations paddr targets/nr_targets 1 \
			targets/0/regions/nr_regions "$(wc -l < "$tmpdir/target")" ||
			abort "$write_msg"
		i=0
		while read -r s e
		do
			write_attrs "$c/targets/0/regions/$i" start "$s" end "$e" ||
				abort "$write_msg"
			i=$((i + 1))
		done < "$tmpdir/target"
		say "paddr target: $(awk '{ printf "%s%s-%s", (NR > 1 ? ", " : ""), $1, $2 }' \
			"$tmpdir/target") ($([ "$mode" = refault ] &&
			echo "the biggest System RAM" || echo "the 2 MiB blocks of the workload's frames"))"
	fi
	ev=$kdamonds_dir/0/contexts/0/monitoring_attrs/sample/perf_events/0
	write_attrs "$ev" type "$type" config "$config" precise_ip "$precise" \
		wakeup_events 0 || abort "$write_msg"
	if $testpmu
	then
		write_attrs "$ev" config1 "$wl_hot_start" \
			config2 $((wl_hot_end - wl_hot_start)) || abort "$write_msg"
	fi
	if [ "$ops" = paddr ]
	then
		write_attrs "$ev" sample_phys_addr Y || abort "$write_msg"
	fi
	say "event: type $type config $(printf '%#x' "$config") period $period" \
		"precise_ip $precise, $ops, aggregation ${aggr_us} us"

	if $testpmu && [ -n "$tracefs" ] && inst=$(trace_instance testpmu 2048)
	then
		trace_event "$inst" damon_perf_sample 1 || inst=""
	fi
	snap before
	dtp_snap before

	chk=on
	kdamond_on 0 || exit 1
	hc_t0=$SECONDS
	sleep 2
	cat "$dtp_events" > "$tmpdir/events.running" 2> /dev/null
	sleep $((secs > 2 ? secs - 2 : 0))
	hot_regions=- cold_accessed=-
	[ "$force" = 1 ] || hot_cold "$ops"
	[ "$(kdamond_state 0)" = on ] || fail "the kdamond stopped by itself"
	chk=off
	say "phase: stopping ($((SECONDS - hc_t0)) s after 'on')"
	kdamond_off 0
	say "phase: stopped ($((SECONDS - hc_t0)) s after 'on')"
	snap after
	dtp_snap after
	[ -n "$inst" ] && trace_event "$inst" damon_perf_sample 0
	nleft=$(grep -c '^cpu=' "$dtp_events" 2> /dev/null)

	# the PMU
	dtp_deltas
	dr=${pd[records]:-0}
	dov=${pd[to_overflow]:-0}
	du=${pd[to_output]:-0}
	pend=${pd[now:pending]:-0}
	if $testpmu
	then
		say "PMU deltas:$(for k in overflows missed skip_mode skip_task \
			skip_tgid skip_unmapped records to_overflow to_output \
			throttled drain_pmi drain_sched drain_stop adds dels
			do
				printf ' %s=%s' "$k" "${pd[$k]:-?}"
			done) pending=$pend"
		[ "$dr" -gt 0 ]
		verdict records $? "$dr records" \
			"the PMU made no record"
		chk=pmu-laws
		law "overflows == skip_* + records" "${pd[overflows]:-0}" == \
			$((pd[skip_mode] + pd[skip_task] + pd[skip_tgid] +
			pd[skip_unmapped] + dr))
	fi

	# DAMON
	chk=laws
	check_laws before after
	dc=${deltas[callback]}

	if [ "$force" = 1 ]
	then
		nlarge=$(grep -c 'large=1' "$tmpdir/events.running")
		[ "$nlarge" -gt 0 ]
		verdict large $? \
			"$nlarge events with large=1 (force_large batches)" \
			"no event with large=1 in $dtp_events although force_large is set"
		[ "$du" -gt 0 ]
		verdict loss $? \
			"Δto_output $du > 0: records lost to perf_event_output()" \
			"Δto_output is 0: the loss is not visible"
		[ "$dc" -eq "$dov" ] && [ "$dov" -lt "$dr" ]
		verdict overflow-calls $? \
			"Δcallback $dc == Δto_overflow $dov < Δrecords $dr" \
			"Δcallback $dc == Δto_overflow $dov < Δrecords $dr does not hold"
		[ "$pend" -eq 0 ]
		verdict handover $? "pending 0 after the stop" \
			"pending $pend after the stop"
	elif $testpmu
	then
		[ "$du" -eq 0 ] && [ "$pend" -eq 0 ]
		verdict handover $? \
			"Δto_output 0, pending 0 after the stop" \
			"Δto_output $du, pending $pend after the stop (records lost or left in a batch)"
		[ "$dr" -eq "$dc" ]
		verdict lost $? \
			"Δrecords $dr == Δcallback $dc (Δto_overflow $dov)" \
			"Δrecords $dr != Δcallback $dc (Δto_overflow $dov): records lost before DAMON's handler"
		nev=$(grep -c "^cpu=[0-9]* shape=$shape " "$tmpdir/events.running")
		nlarge=$(grep -c 'large=1' "$tmpdir/events.running")
		[ "$nev" -eq "$ncpus" ] && [ "$nlarge" -eq 0 ] && [ "$nleft" -eq 0 ]
		verdict events $? \
			"$nev events of shape $shape while running ($ncpus CPUs), none with large=1; none left after the stop" \
			"$nev events of shape $shape while running ($ncpus CPUs), $nlarge with large=1, $nleft left after the stop"
		if [ "$nlarge" -gt 0 ]
		then
			grep 'large=1' "$tmpdir/events.running" | head -n 2 |
				sed 's/^/#   /'
		fi
		chk=hardirq
		if [ -z "$inst" ]
		then
			skip "no tracefs instance for damon_perf_sample"
		else
			read -r tr_n tr_hard tr_other < <(sample_trace "$inst")
			overrun=$(trace_overrun "$inst")
			if [ "$tr_n" -gt 0 ] && [ "$tr_hard" -eq "$tr_n" ] &&
				{ [ "$tr_n" -eq "$dc" ] || [ "$overrun" -gt 0 ]; }
			then
				pass "$tr_n damon_perf_sample, all context=2" \
					"(callback $dc, $overrun overwritten)"
			else
				fail "$tr_n damon_perf_sample, $tr_hard with" \
					"context=2, others (context:count) $tr_other;" \
					"callback $dc, $overrun overwritten"
			fi
		fi
	else
		[ "$dc" -gt 0 ]
		verdict samples $? "$dc callbacks" \
			"no callback: the page-faults event did not fire"
	fi

	if [ "$force" != 1 ]
	then
		chk=hotcold
		if $hc_ok
		then
			pass "$hc_desc"
		else
			fail "$hc_desc; callback=$dc$(for k in $reason_rows
				do
					[ "${deltas[$k]}" -eq 0 ] ||
						printf ' %s=%s' "$k" "${deltas[$k]}"
				done) match=${deltas[match]} update=${deltas[update]}"
		fi
	fi

	gen=-
	$testpmu && gen=$dr
	echo "RESULT shape=$shape$([ "$force" = 1 ] && echo +force_large)" \
		"ops=$ops generated=$gen callback=$dc valid=${deltas[valid]}" \
		"matched=${deltas[match]} updated=${deltas[update]}" \
		"inv_phys=${deltas[inv_phys]} xlate_fail=${deltas[xlate_fail]}" \
		"hot_regions=$hot_regions" \
		"cold_accessed=$cold_accessed"
}

# run_late HOW: an overflow handed over late while 'commit' (HOW commit) or
# 'off' (HOW off) closes the event (see the header).  Runs in a subshell.
run_late()
{
	local how=$1 c ev late_cpu other_cpu late_pid late_rc=0 t0 st
	local dl dd dD dc dz

	chk=setup
	late_cpu=$(online_cpus | tail -n 1)
	other_cpu=$(online_cpus | head -n 1)
	if [ "$ncpus" -lt 2 ] || ! command -v taskset > /dev/null
	then
		skip "needs 2 CPUs and taskset ($ncpus CPUs)"
		return
	fi
	[ -w "$dtp_late" ] || { skip "no $dtp_late (an older test PMU)"; return; }
	# this script (and what it forks) and the kdamond run on other_cpu,
	# which the spinning writer on late_cpu does not block
	taskset -pc "$other_cpu" "$BASHPID" > /dev/null ||
		abort "cannot pin the script to cpu $other_cpu"
	start_workload "$other_cpu" keep
	reset_kdamonds 1
	setup_ctx 0 1000 100000 0 "$wl_pid"
	c=$kdamonds_dir/0/contexts/0
	ev=$c/monitoring_attrs/sample/perf_events
	write_attrs "$ev/0" type "$pmu_type" config 3 precise_ip 0 \
		wakeup_events 0 || abort "$write_msg"
	snap before
	dtp_snap before

	chk=on
	kdamond_on 0 || exit 1
	taskset -pc "$other_cpu" "$kd_pid" > /dev/null ||
		abort "cannot pin the kdamond $kd_pid to cpu $other_cpu"
	sleep 1
	t0=$SECONDS
	taskset -c "$late_cpu" sh -c "echo $late_ms > $dtp_late" \
		2> "$tmpdir/late.err" &
	late_pid=$!
	# the writer is spinning on late_cpu by then
	sleep 1
	chk=$how
	case "$how" in
	commit)
		write_attrs "$ev" nr_perf_events 0 || abort "$write_msg"
		try_write "$kdamonds_dir/0/state" commit ||
			fail "writing 'commit' failed: $write_err"
		;;
	off)
		kdamond_off 0
		;;
	esac
	wait "$late_pid" || late_rc=$?
	say "the late writer returned $late_rc after $((SECONDS - t0)) s" \
		"$(head -c 200 "$tmpdir/late.err")"
	st=$(kdamond_state 0)
	[ "$how" = off ] || kdamond_off 0
	snap after
	dtp_snap after

	dtp_deltas
	dl=${pd[late]:-0}
	dd=${pd[late_del]:-0}
	dD=${pd[late_destroy]:-0}
	say "PMU deltas: late=$dl late_del=$dd late_destroy=$dD" \
		"adds=${pd[adds]:-?} dels=${pd[dels]:-?}"
	chk=late
	[ "$late_rc" -eq 0 ] && [ "$dl" -eq 1 ]
	verdict late $? "one overflow handed over late" \
		"Δlate $dl, the writer returned $late_rc"
	[ "$dd" -eq 1 ]
	verdict deleted $? \
		"the event was deleted from cpu $late_cpu (an IPI) inside the window" \
		"Δlate_del $dd: the $how did not delete the event within $late_ms ms"
	[ "$dD" -eq 0 ]
	verdict lifetime $? \
		"the event was not destroyed before its late handler returned" \
		"Δlate_destroy $dD: the event (and DAMON's context of its handler) was released while its handler could still run"
	chk=laws
	check_laws before after
	dc=${deltas[callback]}
	dz=${deltas[addr_zero]}
	[ "$dc" -eq "$dl" ] && [ "$dz" -eq "$dl" ]
	verdict callback $? "Δcallback $dc == Δaddr_zero $dz == Δlate $dl" \
		"Δcallback $dc, Δaddr_zero $dz, Δlate $dl"
	if [ "$how" = commit ]
	then
		[ "$st" = on ]
		verdict state $? "the kdamond runs after the commit" \
			"the kdamond is '$st' after the commit"
	fi
	echo "RESULT shape=late ops=$how generated=$dl callback=$dc" \
		"valid=${deltas[valid]} matched=${deltas[match]}" \
		"updated=${deltas[update]} inv_phys=${deltas[inv_phys]}" \
		"xlate_fail=${deltas[xlate_fail]} hot_regions=- cold_accessed=-"
}

# run_late_control: the window of run_late on a kernel counter that its
# owner releases from another CPU without waiting for the handlers:
# Δlate_destroy must be 1.  Runs in a subshell.
run_late_control()
{
	local late_cpu other_cpu late_pid ctl_pid late_rc=0 ctl_rc=0 dl dd dD
	local ctl=$debugfs/damon_test_pmu/late_control

	chk=setup
	late_cpu=$(online_cpus | tail -n 1)
	other_cpu=$(online_cpus | head -n 1)
	if [ "$ncpus" -lt 2 ] || ! command -v taskset > /dev/null
	then
		skip "needs 2 CPUs and taskset ($ncpus CPUs)"
		return
	fi
	if [ ! -w "$dtp_late" ] || [ ! -w "$ctl" ]
	then
		skip "no $dtp_late or $ctl (an older test PMU)"
		return
	fi
	taskset -pc "$other_cpu" "$BASHPID" > /dev/null ||
		abort "cannot pin the script to cpu $other_cpu"
	dtp_snap before
	sh -c "echo '$late_cpu 2000' > $ctl" 2> "$tmpdir/ctl.err" &
	ctl_pid=$!
	sleep 0.5
	taskset -c "$late_cpu" sh -c "echo $late_ms > $dtp_late" \
		2> "$tmpdir/late.err" &
	late_pid=$!
	wait "$ctl_pid" || ctl_rc=$?
	wait "$late_pid" || late_rc=$?
	dtp_snap after
	dtp_deltas
	dl=${pd[late]:-0}
	dd=${pd[late_del]:-0}
	dD=${pd[late_destroy]:-0}
	say "PMU deltas: late=$dl late_del=$dd late_destroy=$dD" \
		"adds=${pd[adds]:-?} dels=${pd[dels]:-?}; writers returned" \
		"$ctl_rc (control) and $late_rc (late)" \
		"$(cat "$tmpdir/ctl.err" "$tmpdir/late.err" | head -c 200)"
	[ "$ctl_rc" -eq 0 ] && [ "$late_rc" -eq 0 ] && [ "$dl" -eq 1 ] &&
		[ "$dd" -eq 1 ] && [ "$dD" -eq 1 ]
	verdict lifetime-seen $? \
		"the control counter was deleted and destroyed inside the window (Δlate_destroy 1): the lifetime check sees an early release" \
		"Δlate $dl, Δlate_del $dd, Δlate_destroy $dD (want 1, 1, 1): the lifetime check might not see an early release"
}

# run_obs OPS: damon_perf_obs_test.sh on the test PMU's ibs shape
run_obs()
{
	local ops=$1 out rc=0

	chk=obs-test
	if [ -z "$selftests" ] || [ ! -f "$selftests/damon_perf_obs_test.sh" ]
	then
		skip "no damon_perf_obs_test.sh (selftests dir '${selftests:-}')"
		return
	fi
	out=$tmpdir/obs-$ops.log
	bash "$selftests/damon_perf_obs_test.sh" --pmu damon_test --period 1008 \
		--ops "$ops" --duration "$obs_secs" > "$out" 2>&1 || rc=$?
	[ -d /tmp/out ] && [ -w /tmp/out ] && cp "$out" "/tmp/out/testpmu-obs-$ops.log"
	grep -E '^\[FAIL\]|^=== |context=count|Callback breakdown' "$out" |
		sed 's/^ */#   /'
	case "$rc" in
	0) pass "damon_perf_obs_test.sh --pmu damon_test --period 1008 --ops $ops:" \
		"$(grep '^=== ' "$out" | tail -n 1 | tr -d '=' | xargs)";;
	4) skip "damon_perf_obs_test.sh skipped: $(grep -m 1 '^\[SKIP\]' "$out")";;
	*) fail "damon_perf_obs_test.sh --ops $ops exited $rc:" \
		"$(grep '^\[FAIL\]' "$out" | head -n 3 | paste -sd';')";;
	esac
}

#
# Main
#

# Transparent huge pages for the workloads that keep their hot buffer:
# always, and without the huge zero page.  The workload's first access to its
# hot buffer is a read, which would map the huge zero page, whose copy on
# write falls back to small pages, which khugepaged collapses into a huge page
# some seconds later: new frames in the middle of a run.  Without it, each
# buffer is made of huge pages from its first fault on, and the paddr runs'
# frames are a few 2 MiB blocks that do not move.  The refaulting workload of
# the page_faults runs gets the settings of the boot (thp_restore), under
# which it faults on every small page of its hot buffer in every round.
thp_dir=/sys/kernel/mm/transparent_hugepage
thp_save()
{
	local f

	: > "$tmpdir/thp"
	for f in enabled use_zero_page
	do
		[ -w "$thp_dir/$f" ] || continue
		echo "$f $(sed -n 's/.*\[\(.*\)\].*/\1/p; /^[0-9]*$/p' "$thp_dir/$f")" \
			>> "$tmpdir/thp"
	done
	[ -s "$tmpdir/thp" ] &&
		say "transparent huge pages: $(paste -sd' ' "$tmpdir/thp")"
}

thp_stable()
{
	[ -s "$tmpdir/thp" ] || return 0
	try_write "$thp_dir/enabled" always
	try_write "$thp_dir/use_zero_page" 0
}

# shellcheck disable=SC2317 # the EXIT trap calls it
thp_restore()
{
	local f v

	[ -s "$tmpdir/thp" ] || return 0
	while read -r f v
	do
		try_write "$thp_dir/$f" "$v"
	done < "$tmpdir/thp"
}

selected()
{
	local p

	[ -z "$only" ] && return 0
	for p in ${only//,/ }
	do
		# shellcheck disable=SC2053 # a pattern
		[[ "$1" == $p ]] && return 0
	done
	return 1
}

# Prints why nothing can run, if so
global_skip_reason()
{
	local st

	if [ "$EUID" -ne 0 ]
	then
		echo "run as root"
	elif [ ! -r "$pmu_dir/type" ]
	then
		echo "no damon_test PMU ($pmu_dir: not a kernel of scripts/testpmu.sh?)"
	elif [ ! -r "$dtp_stats" ] || [ ! -r "$dtp_events" ]
	then
		echo "no $dtp_stats or $dtp_events (debugfs not mounted?)"
	elif [ ! -d "$kdamonds_dir" ]
	then
		echo "no DAMON sysfs interface ($damon_sysfs)"
	elif [ ! -r "$perf_stats" ]
	then
		echo "no $perf_stats (CONFIG_DAMON_PERF_OBSERVE not set?)"
	elif [ -z "$workload" ] || [ ! -x "$workload" ]
	then
		echo "no workload binary ('$workload')"
	elif st=$(running_kdamond "$kdamonds_dir")
	then
		echo "a kdamond is running ($st)"
	fi
}

finish()
{
	local np nf ns

	np=$(grep -c p "$tmpdir/tally")
	nf=$(grep -c f "$tmpdir/tally")
	ns=$(grep -c s "$tmpdir/tally")
	echo "testpmu: $np passed, $nf failed, $ns skipped"
	[ "$nf" -gt 0 ] && exit 1
	[ "$np" -eq 0 ] && exit 4
	exit 0
}

main()
{
	local run reason t0=$SECONDS

	while [ $# -gt 0 ]
	do
		case "$1" in
		-h|--help) usage; exit 0;;
		--only) only=$2; shift 2;;
		--secs) secs=$2; shift 2;;
		--obs-secs) obs_secs=$2; shift 2;;
		-*) echo "testpmu: unknown option $1" >&2; exit 2;;
		*)
			if [ -z "$workload" ]
			then
				workload=$1
			else
				selftests=$1
			fi
			shift;;
		esac
	done
	tmpdir=$(mktemp -d /tmp/testpmu.XXXXXX) || exit 1
	: > "$tmpdir/tally"
	trap 'cleanup_state; thp_restore; rm -rf "$tmpdir"' EXIT
	trap 'echo "testpmu: interrupted"; exit 130' INT TERM HUP
	page_size=$(getconf PAGESIZE)

	reason=$(global_skip_reason)
	if [ -n "$reason" ]
	then
		for run in $all_runs
		do
			selected "$run" || continue
			cur=$run chk=all
			skip "$reason"
		done
		finish
	fi
	have_stats=true
	read -r pmu_type < "$pmu_dir/type"
	# shellcheck disable=SC2119 # no extra directory
	tracefs=$(find_tracefs) || tracefs=""
	ncpus=$(online_cpus | wc -l)
	wl_cpu=$(online_cpus | tail -n 1)
	command -v taskset > /dev/null || wl_cpu=""
	echo "testpmu: kernel $(uname -r), $ncpus CPUs," \
		"damon_test PMU type $pmu_type, workload $workload" \
		"(hot $hot_mb MiB, cold $cold_mb MiB${wl_cpu:+, cpu $wl_cpu})"

	thp_save
	kmsg_mark testpmu
	for run in $all_runs
	do
		# the obs tests come after the kmsg check
		[[ "$run" == obs-* ]] && continue
		selected "$run" || continue
		cur=$run
		echo "# --- $run ($((SECONDS - t0)) s)"
		case "$run" in
		negative) (run_pmu pebs_large vaddr 1);;
		late-control) (run_late_control);;
		late-*) (run_late "${run#late-}");;
		*) (run_pmu "${run%-*}" "${run##*-}");;
		esac
		cleanup_state
	done
	cur=all chk=kmsg
	check_kmsg
	for run in obs-vaddr obs-paddr
	do
		selected "$run" || continue
		cur=$run
		echo "# --- $run ($((SECONDS - t0)) s)"
		run_obs "${run#obs-}"
		cleanup_state
	done
	echo "testpmu: $((SECONDS - t0)) s"
	finish
}

main "$@"
