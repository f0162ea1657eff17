#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest for bench/bench.sh (through scripts/vm-run.sh): the cost
# of the series (issue #6).  Prints one "RESULT <kind> key=value..." line per
# figure, for bench.sh to collect; everything else is for humans.
#
# usage: bench-guest.sh FAULTSTORM [all|ring|e2e|micro|cpus]...
#   ring   ring sizing: one storm monitored with the software page-faults
#          event at period 1; samples/s and overflows per CPU and ring_peak
#          from /sys/kernel/debug/damon/perf_stats, the drain intervals from
#          the damon_perf_drain trace (observe=y only).  Then, if the ring
#          size is a parameter, the same storm with smaller rings, to see
#          where overflows begin at the storm's rate.
#   e2e    wall time of the storm, RUNS interleaved runs of each of MODES:
#          none (no DAMON), vaddr (DAMON with page-table Accessed bits),
#          perf (DAMON with the page-faults event, period 1, on all CPUs)
#   micro  /sys/kernel/debug/damon_perf_bench (bench/0001-bench-hook.patch):
#          handler cost with the tracepoints off, and with damon_perf_sample
#          on if it exists; drain throughput for DRAIN_REGIONS regions; and
#          kdamond's work per sampling interval for IV_REGIONS regions, with
#          Accessed bits and with IV_REPORTS access reports; the AUX drain
#          per Arm SPE record (AUX_K records over each of AUX_REGIONS
#          regions, vaddr and paddr, then of each of the AUX_LAYOUTS
#          record layouts over the last of AUX_REGIONS: 1 spe, 2 testpmu,
#          3 mix, see perf-bench-aux.h); the report rings (cpus, below)
#   cpus   the report rings of a context on this boot's possible CPUs: their
#          memory, and the drain of idle rings (the 'rings' benchmark)
#   all    ring, e2e, micro.  Ring first: perf_stats's ring_peak is the
#          maximum since boot, and the micro benchmarks fill rings.
# Env: RUNS (5), MODES ("none vaddr perf"), STORM_ARGS ("-m 32 -r 8", see
#      faultstorm.c; threads default to the online CPUs), HANDLER_N (102400),
#      DRAIN_K (81920), DRAIN_REGIONS ("10 100 1000 10000"), IV_REGIONS
#      ("1000 10000 100000"), IV_REPORTS (1024), AUX_REGIONS ("10 1000"),
#      AUX_K (40960), AUX_LAYOUTS ("1 2 3"), RING_ORDERS
#      ("10 8 7 6 5 4": ring sizes, as log2, of the ring phase's sweep, if
#      the kernel has the damon_core.report_ring_order parameter).
set -u
storm=${1:?usage: bench-guest.sh FAULTSTORM [all|ring|e2e|micro]...}
shift
phases=${*:-all}
RUNS=${RUNS:-5}
MODES=${MODES:-none vaddr perf}
STORM_ARGS=${STORM_ARGS:--m 32 -r 8}
HANDLER_N=${HANDLER_N:-102400}
DRAIN_K=${DRAIN_K:-81920}
DRAIN_REGIONS=${DRAIN_REGIONS:-10 100 1000 10000}
IV_REGIONS=${IV_REGIONS:-1000 10000 100000}
IV_REPORTS=${IV_REPORTS:-1024}
AUX_REGIONS=${AUX_REGIONS:-10 1000}
AUX_K=${AUX_K:-40960}
AUX_LAYOUTS=${AUX_LAYOUTS:-1 2 3}
RING_ORDERS=${RING_ORDERS:-10 8 7 6 5 4}

A=/sys/kernel/mm/damon/admin/kdamonds
C=$A/0/contexts/0
P=$C/monitoring_attrs/probes
B=/sys/kernel/debug/damon_perf_bench
S=/sys/kernel/debug/damon/perf_stats
T=/sys/kernel/tracing
RO=/sys/module/damon_core/parameters/report_ring_order
failed=0

# Messages go to stderr, so that command substitutions don't take them
note() { echo "bench-guest: $*" >&2; }
fail() { echo "bench-guest: FAIL: $*" >&2; failed=$((failed + 1)); }
# w VALUE FILE: write VALUE to FILE, or fail.  DAMON's sysfs files answer
# EBUSY while another user holds their lock, so retry for a while.
w() {
	local i

	for i in $(seq 20); do
		echo "$1" 2>/dev/null >"$2" && return 0
		sleep 0.05
	done
	echo "$1" >"$2" && return 0
	fail "writing '$1' to $2"
	return 1
}

[ -x "$storm" ] || { echo "bench-guest: no faultstorm binary $storm"; exit 1; }
note "kernel $(uname -r), $(nproc) CPUs, phases: $phases"

damon_setup() {
	[ -d "$A" ] || { fail "no DAMON sysfs interface"; return 1; }
	w 1 "$A/nr_kdamonds" && w 1 "$A/0/contexts/nr_contexts" &&
		w vaddr "$C/operations" &&
		w 5000 "$C/monitoring_attrs/intervals/sample_us" &&
		w 100000 "$C/monitoring_attrs/intervals/aggr_us" &&
		w 0 "$C/schemes/nr_schemes" && w 1 "$C/targets/nr_targets"
}

# damon_start MODE PID: monitor PID, with the page-faults event if MODE is
# perf (a perf_event prep of probe 0; without probes, no perf event)
damon_start() {
	w "$2" "$C/targets/0/pid_target" || return 1
	if [ "$1" = perf ]; then
		w 1 "$P/nr_probes" && w 1 "$P/0/preps/nr_preps" &&
			w perf_event "$P/0/preps/0/prep_action" &&
			w 1 "$P/0/preps/0/type" && w 2 "$P/0/preps/0/config" &&
			w 1 "$P/0/preps/0/sample_period" || return 1
	else
		w 0 "$P/nr_probes" || return 1
	fi
	w on "$A/0/state"
}

# The kdamond stops by itself once its target has exited
damon_stop() {
	local i

	if [ "$(cat "$A/0/state")" = on ]; then
		echo off >"$A/0/state" 2>/dev/null
	fi
	for i in $(seq 100); do
		[ "$(cat "$A/0/state")" = off ] && return 0
		sleep 0.1
	done
	fail "kdamond did not stop"
	return 1
}

# storm_run MODE: one storm, monitored as MODE says; prints faultstorm's line
storm_run() {
	local mode=$1 pid i

	"$storm" -w $STORM_ARGS >/tmp/storm.out 2>&1 &
	pid=$!
	for i in $(seq 200); do
		grep -q '^ready' /tmp/storm.out && break
		sleep 0.05
	done
	if ! grep -q '^ready' /tmp/storm.out; then
		kill "$pid" 2>/dev/null
		fail "faultstorm did not start: $(cat /tmp/storm.out)"
		return 1
	fi
	if [ "$mode" != none ] && ! damon_start "$mode" "$pid"; then
		kill "$pid"
		wait "$pid" 2>/dev/null
		return 1
	fi
	# let kdamond arm the perf events; outside of the storm's timing
	sleep 0.2
	kill -USR1 "$pid"
	if ! wait "$pid"; then
		fail "faultstorm: $(cat /tmp/storm.out)"
		return 1
	fi
	[ "$mode" = none ] || damon_stop || return 1
	grep '^faultstorm ' /tmp/storm.out
}

# Value of KEY in the key=value line on stdin
kv() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" | head -n 1; }

# Ring size and build options, from the benchmark hook
ring_size=4096
if [ -w "$B" ] && echo info >"$B"; then
	sed 's/^bench /RESULT info /' "$B"
	ring_size=$(kv ring_size <"$B")
else
	note "no $B: is bench/0001-bench-hook.patch applied?"
fi

# Per-CPU "cpu samples overflows" of the perf_stats file $1
per_cpu_stats() {
	awk '/^CPU[0-9]+:/ {
		cpu = $1; sub(/^CPU0*/, "", cpu); sub(/:$/, "", cpu)
		if (cpu == "") cpu = 0
		cb = ovf = 0
		for (i = 2; i <= NF; i++) {
			split($i, kv, "=")
			if (kv[1] == "cb") cb = kv[2]
			if (kv[1] == "ovf") ovf = kv[2]
		}
		print cpu, cb, ovf
	}' "$1"
}

phase_ring() {
	local inst=$T/instances/damon_bench_ring line elapsed peak

	note "ring sizing: faultstorm $STORM_ARGS, page-faults event period 1, sampling interval 5 ms"
	if [ ! -r "$S" ] || [ ! -d "$T/events/damon/damon_perf_drain" ]; then
		echo "RESULT ring_summary skipped=observe_off"
		return 0
	fi
	damon_setup || return 1
	mkdir "$inst" 2>/dev/null || inst=$T
	w 0 "$inst/tracing_on"
	echo >"$inst/trace"
	w 1024 "$inst/buffer_size_kb"
	# kdamond may move between CPUs: one clock for all of them
	echo global >"$inst/trace_clock" 2>/dev/null
	w 1 "$inst/events/damon/damon_perf_drain/enable"
	cp "$S" /tmp/stats.before
	w 1 "$inst/tracing_on"
	line=$(storm_run perf) || return 1
	w 0 "$inst/tracing_on"
	w 0 "$inst/events/damon/damon_perf_drain/enable"
	cp "$S" /tmp/stats.after
	grep 'damon_perf_drain:' "$inst/trace" >/tmp/drain.trace
	[ "$inst" = "$T" ] || rmdir "$inst"
	echo "RESULT ring_storm ${line#faultstorm }"
	elapsed=$(kv elapsed_ns <<<" $line")

	per_cpu_stats /tmp/stats.before >/tmp/cpus.before
	per_cpu_stats /tmp/stats.after >/tmp/cpus.after
	awk -v el="$elapsed" 'NR == FNR { cb[$1] = $2; ovf[$1] = $3; next }
		{ printf "RESULT ring cpu=%s samples=%.0f overflow=%.0f rate_per_s=%.0f\n",
			$1, $2 - cb[$1], $3 - ovf[$1], ($2 - cb[$1]) * 1e9 / el }' \
		/tmp/cpus.before /tmp/cpus.after | sort -t= -k2 -n
	peak=$(awk '/ ring_peak / { print $(NF - 1) }' /tmp/stats.after)

	# drain timestamps (s) and totals -> intervals between drains
	awk -v ring="$ring_size" -v peak="$peak" '{
		for (i = 2; i <= NF; i++) {
			if ($i == "damon_perf_drain:") { ts = $(i - 1); sub(/:$/, "", ts) }
			if ($i ~ /^total=/) { total = substr($i, 7) + 0 }
			if ($i ~ /^dropped=/) { dropped += substr($i, 9) }
		}
		if (n) {
			gap = (ts - prev) * 1e6
			sum += gap
			if (gap > max) max = gap
		}
		if (total > max_total) max_total = total
		prev = ts; n++
	} END {
		mean = n > 1 ? sum / (n - 1) : 0
		printf "RESULT ring_summary ring_size=%d ring_peak=%s drains=%d gap_mean_us=%.0f gap_max_us=%.0f max_reports_per_drain=%d dropped=%d threshold_mean_per_s=%.0f threshold_worst_per_s=%.0f reports_per_drain_at_100k=%.0f\n",
			ring, peak, n, mean, max, max_total, dropped,
			mean ? ring * 1e6 / mean : 0, max ? ring * 1e6 / max : 0,
			100000 * mean / 1e6
	}' /tmp/drain.trace
	ring_sweep
}

# The storm with rings of 2^order entries for each of RING_ORDERS
ring_sweep() {
	local orig o line el

	if [ ! -w "$RO" ]; then
		note "no $RO: no ring size sweep"
		return 0
	fi
	orig=$(cat "$RO")
	for o in $RING_ORDERS; do
		w "$o" "$RO" || break
		per_cpu_stats "$S" >/tmp/cpus.before
		line=$(storm_run perf) || break
		per_cpu_stats "$S" >/tmp/cpus.after
		el=$(kv elapsed_ns <<<" $line")
		awk -v el="$el" -v o="$o" 'NR == FNR { cb[$1] = $2; ovf[$1] = $3; next }
			{
				n = $2 - cb[$1]; d = $3 - ovf[$1]
				samples += n; overflow += d
				if (n * 1e9 / el > rate) rate = n * 1e9 / el
			} END {
				printf "RESULT ring_order order=%d ring=%d samples=%.0f overflow=%.0f overflow_ppm=%.0f rate_max_per_s=%.0f\n",
					o, 2 ^ o, samples, overflow,
					samples ? overflow * 1e6 / samples : 0, rate
			}' /tmp/cpus.before /tmp/cpus.after
	done
	w "$orig" "$RO"
}

phase_e2e() {
	local modes n r i m line

	read -ra modes <<<"$MODES"

	note "end to end: faultstorm $STORM_ARGS, $RUNS interleaved runs of: $MODES"
	damon_setup || return 1
	storm_run none >/dev/null || return 1	# warm-up, not counted
	n=${#modes[@]}
	for r in $(seq "$RUNS"); do
		# rotate the order, so that no mode always runs first
		for i in $(seq 0 $((n - 1))); do
			m=${modes[$(((i + r) % n))]}
			line=$(storm_run "$m") || return 1
			echo "RESULT e2e mode=$m run=$r ${line#faultstorm }"
		done
	done
}

# bench CMD PREFIX: run CMD of the benchmark hook, print its results
bench() {
	if ! echo "$1" >"$B"; then
		fail "'$1' >$B"
		return 1
	fi
	sed "s/^bench /RESULT $2 /" "$B"
}

phase_micro() {
	local inst=$T/instances/damon_bench_tp ev R

	[ -w "$B" ] || { fail "no $B"; return 1; }
	note "handler cost: $HANDLER_N calls per handler and round"
	for ev in "$T"/events/damon/*/enable; do
		[ -f "$ev" ] && echo 0 >"$ev"
	done
	bench "handler $HANDLER_N" "handler trace=off"
	if [ -d "$T/events/damon/damon_perf_sample" ]; then
		mkdir "$inst" 2>/dev/null || inst=$T
		w 64 "$inst/buffer_size_kb"
		w 1 "$inst/events/damon/damon_perf_sample/enable"
		w 1 "$inst/tracing_on"
		bench "handler $HANDLER_N" "handler trace=on"
		w 0 "$inst/events/damon/damon_perf_sample/enable"
		echo "RESULT trace_check damon_perf_sample_lines=$(grep -c 'damon_perf_sample:' "$inst/trace")"
		[ "$inst" = "$T" ] || rmdir "$inst"
	fi
	note "drain throughput: $DRAIN_K reports for each of $DRAIN_REGIONS regions"
	for R in $DRAIN_REGIONS; do
		bench "drain $R $DRAIN_K" drain
	done
	note "kdamond per sampling interval: Accessed bits against $IV_REPORTS reports, for $IV_REGIONS regions"
	for R in $IV_REGIONS; do
		bench "interval $R $IV_REPORTS" interval
	done
	# an interval in which nothing was sampled, at the most regions
	for R in $IV_REGIONS; do :; done
	bench "interval $R 0" interval
	note "AUX drain: $AUX_K Arm SPE records for each of $AUX_REGIONS regions"
	for R in $AUX_REGIONS; do
		bench "aux $R $AUX_K" aux
	done
	for L in $AUX_LAYOUTS; do
		bench "aux $R $AUX_K $L" aux
	done
	phase_cpus
}

phase_cpus() {
	[ -w "$B" ] || { fail "no $B"; return 1; }
	note "report rings: their memory, and drains of idle rings, on possible CPUs $(cat /sys/devices/system/cpu/possible)"
	bench "rings" rings
}

for ph in $phases; do
	case "$ph" in
	all) set -- ring e2e micro ;;
	ring | e2e | micro | cpus) set -- "$ph" ;;
	*) fail "unknown phase $ph"; continue ;;
	esac
	for p in "$@"; do
		"phase_$p" || fail "phase $p"
	done
done
if [ -r "$S" ]; then
	echo "--- perf_stats at the end (cumulative since boot, includes the micro benchmarks)"
	cat "$S"
fi
note "done, $failed failure(s)"
[ "$failed" -eq 0 ]
