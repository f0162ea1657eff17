#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# accuracy-guest.sh: runs in the eval guest (bench/eval/eval.sh accuracy),
# as root, on the test PMU kernel of variant "eval", one vCPU, with
# -icount shift=0 (guest time counts instructions).  For each workload
# (evalwl hotcold, zipf), each access source (abit: DAMON vaddr's Accessed
# bits, and DAMON flushes the TLB entry of a page whose bit it clears where
# the kernel has testpmu/0007 (the eval config); abit-noflush: the same
# without the flush, as before 0007; insn:PERIOD: a perf_event prep of the
# damon_test PMU in insn mode, testpmu/README.md section 8; none: no DAMON
# context at all, no kdamond and no perf event, the same workload, seconds
# and seed: the unmonitored baseline of the workload's throughput) and each
# run, DAMON monitors the workload and a stat scheme applied every second
# traces every region (damos_before_apply, trace clock mono).  Sampling is
# every 5 ms; aggregation every 100 ms with the Accessed bits (DAMON's
# default) and every second with samples, whose few hundred a second would
# leave most regions without one in 100 ms (measured: coverage 0.04-0.09 at
# 100 ms).
# The run directory gets:
#   layout, events, zipf_weights   the workload's ground truth (evalwl.c)
#   snapshots   "T START END NR_ACCESSES AGE" per region, T the snapshot's
#               CLOCK_MONOTONIC ns, regions of one snapshot in address order
#   meta        "key value": workload source period run regions
#               kdamond_ns (the kdamond's CPU time over the window: with one
#               vCPU and icount, instructions), sampling_ns (the test PMU's
#               overflow_ns: time in perf_event_overflow(), DAMON's handler),
#               window_ns, samples (the PMU's records), overflows and the
#               skip_* of the PMU, nr_regions_max, trace_lost, seconds,
#               accesses (evalwl's "done N": the accesses the workload made
#               in its SECS of guest time, which every instruction that
#               monitoring costs takes from it).  none: kdamond_ns 0,
#               period, aggr_us and nr_regions_max 0, the PMU's deltas as
#               for the others (0 unless something else uses the PMU)
#
# usage: accuracy-guest.sh OUT EVALWL RUNS "WORKLOAD:SECS ..." REGIONS \
#        "SOURCE ..." [AGGR_US]
#   SOURCE: abit, abit-noflush, insn:PERIOD or none
#   AGGR_US: one aggregation interval for every source, instead of the
#   defaults above (so that both sources can run with the same knobs)
#   e.g. accuracy-guest.sh /tmp/out/acc /x/evalwl 5 "hotcold:10 zipf:6" \
#        10000 "none abit insn:4000 insn:1008 insn:256"
# Exit: 0, 1 if a run failed (it is reported and the others go on), 4 if
# this is not a kernel with the test PMU's insn mode.
set -u
export LC_ALL=C

out=$1 wl=$2 runs=$3 workloads=$4 regions=$5 sources=$6 aggr_all=${7:-}
# EVAL_TRACE=0: no damos_before_apply events, so no snapshots and no
# precision, but a kdamond cost without the cost of the measurement
trace=${EVAL_TRACE:-1}
# EVAL_PROFILE=1: perf record the guest (cpu-clock, which counts
# instructions under icount) over each window, and write the run
# directory's profile.txt (perf report by task and symbol, with callers)
# and profile-kdamond.txt (the kdamond's symbols, with their callers)
profile=${EVAL_PROFILE:-0}
admin=/sys/kernel/mm/damon/admin/kdamonds
pmu=/sys/bus/event_source/devices/damon_test
dtp_stats=/sys/kernel/debug/damon_test_pmu/stats
tracefs=/sys/kernel/tracing
inst=$tracefs/instances/eval
rc=0

die() { echo "accuracy: $*" >&2; exit 1; }
w() { echo "$2" > "$1" 2> /dev/null || die "writing '$2' to $1 failed"; }

if [ ! -r "$pmu/format/insn" ]; then
	echo "accuracy: SKIP: no insn mode in the damon_test PMU ($pmu/format/insn)"
	exit 4
fi
read -r pmu_type < "$pmu/type"
[ -d "$tracefs/events/damon" ] || die "no damon trace events in $tracefs"
mkdir -p "$out"

# dtp_total KEY...: the test PMU's cpu=total counters, "v1 v2 ..."
dtp_total()
{
	local line k v

	read -r line < "$dtp_stats"
	for k in "$@"; do
		v=${line#* "$k"=}
		printf '%s ' "${v%% *}"
	done
}

is_abit() { [ "${1%-noflush}" = abit ]; }

# check_source SOURCE: one of the usage's, before any run
check_source()
{
	case "$1" in
	none|abit|abit-noflush) ;;
	insn:*)
		case ${1#insn:} in
		'' | *[!0-9]*) die "source $1: PERIOD is not a number" ;;
		esac ;;
	*) die "source $1: not abit, abit-noflush, insn:PERIOD or none" ;;
	esac
}

# mkold_flush SOURCE: DAMON flushes the TLB entry of a page whose Accessed
# bit it clears for abit, not for abit-noflush (testpmu/0007's parameter);
# abit-noflush on a kernel without it is abit
mkold_flush()
{
	local f=/sys/module/ops_common/parameters/mkold_flush

	if [ ! -w "$f" ]; then
		[ "$1" = abit ] || die "$1: no $f (testpmu/0007, eval config)"
		return 0
	fi
	w "$f" "$([ "$1" = abit ] && echo Y || echo N)"
}

# aggr_of SOURCE: its aggregation interval in us (0: none)
aggr_of()
{
	if [ "$1" = none ]; then
		echo 0
	elif [ -n "$aggr_all" ]; then
		echo "$aggr_all"
	elif is_abit "$1"; then
		echo 100000
	else
		echo 1000000
	fi
}

# ctx_setup PID SOURCE: one kdamond, one vaddr context of PID with SOURCE
ctx_setup()
{
	local pid=$1 src=$2 c s p aggr

	aggr=$(aggr_of "$src")

	w "$admin/nr_kdamonds" 0
	w "$admin/nr_kdamonds" 1
	w "$admin/0/contexts/nr_contexts" 1
	c=$admin/0/contexts/0
	w "$c/operations" vaddr
	w "$c/monitoring_attrs/intervals/sample_us" 5000
	w "$c/monitoring_attrs/intervals/aggr_us" "$aggr"
	w "$c/monitoring_attrs/intervals/update_us" 1000000
	w "$c/monitoring_attrs/nr_regions/min" "$regions"
	w "$c/monitoring_attrs/nr_regions/max" $((regions * 2))
	if is_abit "$src"; then
		mkold_flush "$src"
	else
		# one probe of weight 0 with one perf_event prep: the samples
		# are the accesses (guest/lib/common.sh perf_preps)
		p=$c/monitoring_attrs/probes
		w "$p/nr_probes" 1
		w "$p/0/preps/nr_preps" 1
		p=$p/0/preps/0
		w "$p/prep_action" perf_event
		w "$p/type" "$pmu_type"
		# the ibs shape (0) with insn (bit 6); every task, as IBS
		w "$p/config" 64
		w "$p/freq" 0
		w "$p/sample_period" "${src#insn:}"
		w "$p/exclude_kernel" 0
		w "$p/sample_phys_addr" 0
	fi
	w "$c/targets/nr_targets" 1
	w "$c/targets/0/pid_target" "$pid"
	w "$c/schemes/nr_schemes" 1
	s=$c/schemes/0
	w "$s/action" stat
	w "$s/apply_interval_us" 1000000
	w "$s/access_pattern/sz/min" 0
	w "$s/access_pattern/sz/max" 18446744073709551615
	w "$s/access_pattern/nr_accesses/min" 0
	w "$s/access_pattern/nr_accesses/max" 4294967295
	w "$s/access_pattern/age/min" 0
	w "$s/access_pattern/age/max" 4294967295
}

# trace_to_snapshots FILE: damos_before_apply lines to "T START END NR AGE",
# a new snapshot where the addresses start again
trace_to_snapshots()
{
	awk '
		/ damos_before_apply: / {
			for (i = 1; i <= NF; i++)
				if ($i == "damos_before_apply:")
					break
			ts = $(i - 1)
			sub(/:$/, "", ts)
			split(ts, p, ".")
			split($(i + 5), r, "-")
			sub(/:$/, "", r[2])
			if (r[1] + 0 < last || t == "") {
				t = p[1] (substr(p[2] "000000000", 1, 9))
				sub(/^0+/, "", t)
			}
			last = r[1] + 0
			printf "%s %s %s %s %s\n", t, r[1], r[2], $(i + 6), $(i + 7)
		}' "$1"
}

# profile_start DIR: perf record every CPU in the background (a kernel
# thread's own recording stays empty), into the guest's /tmp (perf's
# writes to the shared output directory fail with EFAULT).  The period
# is prime: under icount a period that divides the sampling interval
# (5 ms) samples the kdamond at the same point of every interval
perf_data=/tmp/eval-perf.data
profile_start()
{
	perf record -e cpu-clock -c 99991 -g -a -o "$perf_data" \
		> "$1/perf.log" 2>&1 &
	perf_pid=$!
}

# profile_stop DIR: stop the recording, and report it in DIR/profile.txt, by
# task name and symbol
profile_stop()
{
	kill -TERM "$perf_pid" 2> /dev/null
	wait "$perf_pid"
	perf report -i "$perf_data" --stdio --no-children --sort comm,sym \
		-g caller,0.5,callee --percent-limit 0.3 > "$1/profile.txt" 2>> "$1/perf.log" ||
		echo "accuracy: $1: perf report failed (perf.log)"
	# the kdamond alone, by symbol, shares of its own samples
	perf report -i "$perf_data" --stdio --no-children --comms kdamond.0 \
		--percentage relative --sort sym -g caller,0.5,callee,function,percent \
		--percent-limit 0.3 \
		> "$1/profile-kdamond.txt" 2>> "$1/perf.log" ||
		echo "accuracy: $1: perf report failed (perf.log)"
	rm -f "$perf_data"
}

# one_run WORKLOAD SECS SOURCE RUN
one_run()
{
	local wlname=$1 secs=$2 src=$3 run=$4 dir pid kpid line i
	local k0 k1 t0 t1 d0 d1 period=0 lost nrmax=0 acc

	is_abit "$src" || [ "$src" = none ] || period=${src#insn:}
	[ "$src" = none ] || nrmax=$((regions * 2))
	dir=$out/$wlname-${src/:/-}-r$regions-$run
	rm -rf "$dir"
	mkdir -p "$dir"
	"$wl" "$wlname" "$secs" "$dir" --seed "$run" --wait-start > "$dir/wl.out" 2>&1 &
	pid=$!
	for ((i = 0; i < 600; i++)); do
		grep -q '^evalwl: ready' "$dir/wl.out" 2> /dev/null && break
		sleep 0.1
	done
	grep -q '^evalwl: ready' "$dir/wl.out" || { kill "$pid"; echo "accuracy: $dir: the workload did not start"; return 1; }

	if [ "$src" = none ]; then
		# no kdamond (none left of an earlier run) and no perf event
		w "$admin/nr_kdamonds" 0
	else
		ctx_setup "$pid" "$src"
	fi
	[ -d "$inst" ] || mkdir "$inst"
	w "$inst/tracing_on" 0
	w "$inst/trace_clock" mono
	w "$inst/buffer_size_kb" 98304
	w "$inst/trace" ""
	[ "$trace" = 0 ] || w "$inst/events/damon/damos_before_apply/enable" 1
	w "$inst/tracing_on" 1

	k0=0 kpid=
	if [ "$src" != none ]; then
		w "$admin/0/state" on
		read -r kpid < "$admin/0/pid"
		read -r k0 _ < "/proc/$kpid/schedstat"
	fi
	read -r d0 r0 o0 < <(dtp_total overflow_ns records overflows)
	t0=$(date +%s%N)
	# the workload starts its accesses now, as DAMON runs (--wait-start),
	# and waits again after them, so that its kdamond is still there
	kill -USR1 "$pid"
	[ "$profile" = 0 ] || profile_start "$dir"
	while ! grep -q '^evalwl: done' "$dir/wl.out"; do
		sleep 0.1
		kill -0 "$pid" 2> /dev/null || break
	done
	t1=$(date +%s%N)
	[ "$profile" = 0 ] || profile_stop "$dir"
	k1=$k0
	[ -z "$kpid" ] || read -r k1 _ < "/proc/$kpid/schedstat" || k1=$k0
	read -r d1 r1 o1 < <(dtp_total overflow_ns records overflows)
	[ "$src" = none ] || w "$admin/0/state" off
	kill -USR1 "$pid" 2> /dev/null
	wait "$pid"
	w "$inst/tracing_on" 0
	w "$inst/events/damon/damos_before_apply/enable" 0
	read -r lost < <(awk '/^overrun:/ { s += $2 } END { print s + 0 }' "$inst"/per_cpu/cpu*/stats)
	trace_to_snapshots "$inst/trace" > "$dir/snapshots"
	w "$inst/trace" ""
	acc=$(sed -n 's/^evalwl: done \([0-9]*\)$/\1/p' "$dir/wl.out")
	[ -n "$acc" ] || echo "accuracy: $dir: no 'evalwl: done N' in wl.out"
	{
		echo "workload $wlname"
		echo "source ${src%%:*}"
		echo "trace $trace"
		echo "mkold_flush $(cat /sys/module/ops_common/parameters/mkold_flush 2> /dev/null || echo none)"
		echo "period $period"
		echo "run $run"
		echo "regions $regions"
		echo "aggr_us $(aggr_of "$src")"
		echo "nr_regions_max $nrmax"
		echo "kdamond_ns $((k1 - k0))"
		echo "sampling_ns $((d1 - d0))"
		echo "window_ns $((t1 - t0))"
		echo "samples $((r1 - r0))"
		echo "overflows $((o1 - o0))"
		echo "trace_lost $lost"
		echo "seconds $secs"
		echo "accesses $acc"
		line=$(head -n 1 "$dtp_stats")
		echo "pmu_total ${line#cpu=total }"
	} > "$dir/meta"
	echo "accuracy: $(basename "$dir"): $(wc -l < "$dir/snapshots") region lines," \
		"kdamond $(((k1 - k0) / 1000000)) M insn in $(((t1 - t0) / 1000000)) ms," \
		"$((r1 - r0)) samples, $((o1 - o0)) interrupts, $acc accesses, trace lost $lost"
}

echo "accuracy: kernel $(uname -r), $(nproc) CPU(s), damon_test type $pmu_type," \
	"regions $regions, runs $runs, workloads '$workloads', sources '$sources'"
for src in $sources; do
	check_source "$src"
done
for spec in $workloads; do
	for src in $sources; do
		for ((run = 1; run <= runs; run++)); do
			one_run "${spec%%:*}" "${spec#*:}" "$src" "$run" || rc=1
		done
	done
done
rmdir "$inst" 2> /dev/null
exit $rc
