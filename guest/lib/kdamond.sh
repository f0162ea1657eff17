# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154 # the sourcing script sets the globals it uses
#
# kdamonds and workloads of the subtests of damon_perf_stress.sh, through the
# DAMON sysfs interface: make kdamonds, set a context up to monitor workloads
# with the page-faults perf event, turn a kdamond on and off (a subtest fails
# on an unclean stop), start the workload, and stop all a subtest started
# (cleanup_state).  Sourced, never run.
#
# Uses: tmpdir, kdamonds_dir, workload, hot_mb, cold_mb, ring_order_param,
# and lib/common.sh and lib/ktap.sh.

# Starts the workload, refaulting its hot buffer (or in the MODE $2 of
# workload_start), pinned to CPU $1 if given and taskset exists.  Sets
# wl_pid, wl_hot_start, wl_hot_end, wl_cold_start and wl_cold_end (decimal).
start_workload()
{
	local cpu=${1:-} mode=${2:-refault}

	workload_start "$workload" "$hot_mb" "$cold_mb" "$cpu" "$mode" ||
		abort "the workload ($workload) did not start: $(head -c 300 "$wl_out")"
	say "workload pid $wl_pid${cpu:+ (cpu $cpu)}, $mode: $wl_line"
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
# the PIDs (vaddr) with the page-faults event of sample_period PERIOD (or
# the event of ev_type, ev_config and ev_period, where the caller sets them:
# damon_perf_stress.sh --pmu, --period), the perf_event prep $preps/0 of
# probe 0 (perf_preps, lib/common.sh).  With
# SCHEME 1, a stat scheme for every region, to read the regions through
# update_schemes_tried_regions.
setup_ctx()
{
	local k=$1 period=$2 aggr=$3 scheme=$4
	local c=$kdamonds_dir/$1/contexts/0 i=0 pid s rc

	shift 4
	perf_preps "$c" 1
	rc=$?
	[ "$rc" -eq 2 ] && skip_subtest "$write_msg"
	[ "$rc" -eq 0 ] || abort "$write_msg"
	write_attrs "$c" operations vaddr \
		monitoring_attrs/intervals/sample_us 5000 \
		monitoring_attrs/intervals/aggr_us "$aggr" \
		monitoring_attrs/intervals/update_us 1000000 \
		monitoring_attrs/nr_regions/min 10 \
		monitoring_attrs/nr_regions/max 100 || abort "$write_msg"
	write_attrs "$preps/0" type "${ev_type:-1}" \
		config "${ev_config:-2}" freq 0 \
		sample_period "${ev_period:-$period}" exclude_kernel 0 \
		sample_phys_addr 0 || abort "$write_msg"
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

# tried_regions SCHEME_DIR: the tried regions of the scheme (after an
# update_schemes_tried_regions), "start end nr_accesses" a line, in address
# order (their directories are numbered so, which a glob does not sort)
tried_regions()
{
	local d s e n

	for d in "$1"/tried_regions/[0-9]*
	do
		[ -d "$d" ] || continue
		read -r s < "$d/start"
		read -r e < "$d/end"
		read -r n < "$d/nr_accesses"
		echo "$s $e $n"
	done | sort -n -k1,1
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

# Turns kdamond $1 off, and fails the subtest unless it stopped cleanly
# (kdamond_stop)
kdamond_off()
{
	kdamond_stop "$kdamonds_dir/$1" && return 0
	fail "kdamond $1: $stop_err"
	return 1
}

kdamond_state()
{
	local st

	rd st "$kdamonds_dir/$1/state"
	echo "$st"
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
