#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench.sh ('make bench'): the cost of the series (issue #6), measured in one
# run and printed as one table, ratios within the run:
#   1. observe=n costs nothing: scripts/bloat-check.sh, rerun as it is
#   2. handler cost, 3. end to end, 4. drain throughput, 5. ring sizing:
#      observe=n ('off') and observe=y ('on') kernels with the benchmark hook
#      (bench/0001-bench-hook.patch: /sys/kernel/debug/damon_perf_bench),
#      each booted in QEMU to run bench/bench-guest.sh
#
# The benchmark kernels are built in their own tree, a local clone of
# build/linux reset to its "series" branch with the hook applied, so that
# build/linux is never touched (bloat-check.sh aside, which checks out
# commits there as it always does):
#   build/bench/linux            the tree (DAMON_PERF_BUILD=build/bench for
#                                the harness scripts, so objdirs are its
#                                children .out-on and .out-off: ccache hits)
#   build/bench/logs             build and bloat logs
#   build/bench/vm/bench-V-N/    guest output of boot N of variant V
#   build/bench/results.txt      the table
#
# Env: BENCH_BOOTS (1): boots of each variant, alternating their order; the
#      boots after the first run only the end-to-end phase, whose runs all
#      count.  BENCH_ENV: environment for bench-guest.sh, e.g.
#      BENCH_ENV="RUNS=9 STORM_ARGS='-m 64 -r 8'".  BENCH_TIMEOUT (1800):
#      seconds per boot.  BENCH_SKIP_BLOAT=1: skip step 1.
#      VM_ACCEL: as for scripts/vm-run.sh (default tcg).
#      BENCH_ONLY=icount: only the deterministic table (6.), no bloat
#      check, no timed boots.  BENCH_DISTRO=1: kernels with the options of
#      bench/distro.config (static keys, preemption count, mitigations),
#      in build/bench-distro.
#
# 6. instructions: the micro phase (handler, drain) again, in
#    BENCH_ICOUNT_BOOTS (2) boots of each variant under VM_ICOUNT=1 (see
#    scripts/vm-run.sh) on one vCPU, where the guest's nanosecond is one
#    instruction: the same figures as 2. and 4., as instruction counts,
#    printed once per boot, with how far the boots agree.
top=$(cd "$(dirname "$0")/.." && pwd)
main_build=${DAMON_PERF_BUILD:-$top/build}
# BENCH_DISTRO=1: the bench kernels get bench/distro.config, in a tree of
# their own (build/bench-distro), so that the two configs don't rebuild
# each other's objects
export DAMON_PERF_BUILD=$main_build/bench${BENCH_DISTRO:+-distro}
if [ -n "${BENCH_DISTRO:-}" ]; then
	export EXTRA_FRAGMENTS="${EXTRA_FRAGMENTS:-} $top/bench/distro.config"
fi
. "$top/scripts/lib.sh"

main_src=$main_build/linux
bench=$TOP/bench
boots=${BENCH_BOOTS:-1}
accel=${VM_ACCEL:-tcg}
results=$BUILD/results.txt
t0=$SECONDS

hook_files="perf-bench.h perf-bench-handlers.h perf-bench-interval.h perf-bench-aux.h perf-bench-rings.h"
for f in 0001-bench-hook.patch $hook_files bench-guest.sh faultstorm.c; do
	[ -f "$bench/$f" ] || die "bench: missing $bench/$f"
done
[ -d "$main_src/.git" ] || die "bench: no expanded tree at $main_src: run 'make expand'"

only=${BENCH_ONLY:-}
case "$only" in "" | icount) ;; *) die "bench: BENCH_ONLY must be icount or unset" ;; esac
icount_boots=${BENCH_ICOUNT_BOOTS:-2}

# 1. observe=n against the base-only series
bloat="skipped (BENCH_SKIP_BLOAT)"
[ -z "$only" ] || bloat="skipped (BENCH_ONLY=$only)"
if [ -z "${BENCH_SKIP_BLOAT:-}" ] && [ -z "$only" ]; then
	log "bench 1/5: bloat-o-meter, observe=n against the base-only series"
	rc=0
	DAMON_PERF_BUILD=$main_build EXTRA_FRAGMENTS= bash "$TOP/scripts/bloat-check.sh" \
		>"$LOGS/bench-bloat.log" 2>&1 || rc=$?
	bloat=$(grep -E '^(bloat-o-meter|bloat-check:)' "$LOGS/bench-bloat.log" | tail -n 1) || true
	[ "$rc" -eq 0 ] || bloat="FAILED (rc $rc): ${bloat:-see $LOGS/bench-bloat.log}"
fi

# 2. the benchmark tree: series + the hook
log "bench 2/5: tree $SRC = series of $main_src + bench/0001-bench-hook.patch"
if [ ! -d "$SRC/.git" ]; then
	mkdir -p "$BUILD"
	git clone -q --no-checkout "$main_src" "$SRC" || die "bench: clone failed"
fi
git -C "$SRC" fetch -q "$main_src" "+refs/heads/series:refs/heads/bench-series" ||
	die "bench: fetching the series branch failed"
rev=$(git -C "$SRC" rev-parse --verify bench-series)
git -C "$SRC" checkout -q -f --detach "$rev" || die "bench: checkout failed"
git -C "$SRC" clean -fdq -- mm/damon
git -C "$SRC" apply "$bench/0001-bench-hook.patch" ||
	die "bench: bench/0001-bench-hook.patch does not apply on the series"
# the hook patch includes it; kept as files of their own, not in the patch
for f in $hook_files; do
	cp "$bench/$f" "$SRC/mm/damon/tests/" || die "bench: copying $f failed"
done

log "bench 3/5: build the on and off kernels with the hook, and the workload"
for v in off on; do
	bash "$TOP/scripts/build.sh" "$v" || die "bench: build $v failed"
done
mkdir -p "$BUILD/guest"
gcc -O2 -Wall -pthread -o "$BUILD/guest/faultstorm" "$bench/faultstorm.c" ||
	die "bench: building faultstorm failed"

rm -rf "$BUILD"/vm/bench-*
failed=0
[ -z "$only" ] || boots=0
[ "$boots" -eq 0 ] || log "bench 4/5: $boots boot(s) of each variant ($accel)"
for b in $(seq "$boots"); do
	phase=all
	[ "$b" -eq 1 ] || phase=e2e
	order="off on"
	[ $((b % 2)) -eq 1 ] || order="on off"
	for v in $order; do
		# kunit.enable=0: the KUnit suites would fill rings before ring_peak
		bash "$TOP/scripts/vm-run.sh" --name "bench-$v-$b" \
			--timeout "${BENCH_TIMEOUT:-1800}" --append "kunit.enable=0" "$v" -- \
			"${BENCH_ENV:-} bash $bench/bench-guest.sh $BUILD/guest/faultstorm $phase" ||
			{ log "bench: boot $b of $v failed ($BUILD/vm/bench-$v-$b)"; failed=$((failed + 1)); }
	done
done

# 6. the deterministic boots: one vCPU, so that no other vCPU's instructions
# fall into a measured interval
log "bench 4/5: $icount_boots boot(s) of each variant counting instructions (-icount shift=0)"
for b in $(seq "$icount_boots"); do
	order="off on"
	[ $((b % 2)) -eq 1 ] || order="on off"
	for v in $order; do
		VM_ICOUNT=1 bash "$TOP/scripts/vm-run.sh" --name "bench-icount-$v-$b" --cpus 1 \
			--timeout "${BENCH_TIMEOUT:-1800}" --append "kunit.enable=0" "$v" -- \
			"${BENCH_ENV:-} bash $bench/bench-guest.sh $BUILD/guest/faultstorm micro" ||
			{ log "bench: icount boot $b of $v failed ($BUILD/vm/bench-icount-$v-$b)"; failed=$((failed + 1)); }
	done
done

# and one boot of each variant of BENCH_CPUS (8: the guest config's NR_CPUS)
# vCPUs for the report rings against the CPUs: QEMU 7.2 marks no offline
# CPU online-capable, so possible CPUs are vCPUs.  The other vCPUs are idle:
# the medians of five rounds leave out their ticks.
for v in off on; do
	VM_ICOUNT=1 bash "$TOP/scripts/vm-run.sh" --name "bench-icount-cpus-$v" \
		--cpus "${BENCH_CPUS:-8}" --timeout "${BENCH_TIMEOUT:-1800}" \
		--append "kunit.enable=0" "$v" -- \
		"${BENCH_ENV:-} bash $bench/bench-guest.sh $BUILD/guest/faultstorm cpus" ||
		{ log "bench: icount boot of $v with ${BENCH_CPUS:-8} vCPUs failed"; failed=$((failed + 1)); }
done

log "bench 5/5: results"
# The table shows what is there: missing figures are "-", not an exit
set +e +o pipefail
# res VARIANT [PATTERN]: RESULT lines of VARIANT's timed boots (all: of
# both variants') that match the extended regular expression PATTERN.
# RES_BOOTS, if set, names the boots instead (a glob under vm/, by variant:
# "bench-icount-%s-1" for the first deterministic boot).
res() {
	local pat=${RES_BOOTS:-bench-%s-*} v logs=()

	for v in $([ "$1" = all ] && echo off on || echo "$1"); do
		# shellcheck disable=SC2059
		logs+=("$BUILD"/vm/$(printf "$pat" "$v")/output.log)
	done
	cat "${logs[@]}" 2>/dev/null | grep -E "^RESULT ${2:-}" || true
}
# kv KEY: the value of KEY in each line on stdin
kv() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
median() {
	sort -n | awk '{ v[NR] = $1 } END {
		if (!NR) exit
		if (NR % 2) print v[(NR + 1) / 2]
		else printf "%.0f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# f FORMAT EXPR [A [B [C [D]]]]: printf FORMAT of the awk EXPR of a, b, c
# and d, the values A to D; "-" if a value is missing or a divisor is zero
f() {
	local fmt=$1 expr=$2 v

	shift 2
	for v in "$@"; do
		[ -n "$v" ] || { echo -; return; }
	done
	awk -v a="${1:-0}" -v b="${2:-0}" -v c="${3:-0}" -v d="${4:-0}" \
		"BEGIN { printf \"$fmt\", $expr }" 2>/dev/null || echo -
}
# handler V TRACE NAME KEY: KEY of handler benchmark NAME of variant V
handler() { res "$1" "handler trace=$2 .*name=$3 " | kv "$4" | median; }
# e2e V MODE: median wall time (ns) of the storm in MODE on variant V
e2e() { res "$1" "e2e mode=$2 " | kv elapsed_ns | median; }
# drain V NAME R KEY
drain() { res "$1" "drain .*name=$2 regions=$3 " | kv "$4" | median; }
# aux V NAME LAYOUT OPS R KEY: of the AUX drain benchmark NAME, records of
# LAYOUT (perf-bench-aux.h), OPS vaddr or paddr
aux() { res "$1" "aux name=$2 layout=$3 ops=$4 regions=$5 " | kv "$6" | median; }

# 2. to 5.: the timed boots' figures
timed_tables() {
	n=$(res off "handler trace=off .*name=handler_vaddr " | kv iters | head -n 1)
	echo "2. handler cost, ns per sample: median of 5 interleaved rounds of $(f %d 'a / 5' "$n") calls"
	echo "   on one CPU, net of an empty indirect call (the 'empty' row, gross)"
	printf '   %-22s %10s %10s %9s %12s %9s\n' handler observe=n observe=y y-n "y,tp=on" tp/off
	for h in vaddr paddr empty; do
		key=net_ps_per_op
		[ "$h" = empty ] && key=ps_per_op
		hn=$(handler off off "handler_$h" "$key")
		hy=$(handler on off "handler_$h" "$key")
		ht=$(handler on on "handler_$h" "$key")
		label=$h
		[ "$h" = vaddr ] && label="vaddr (page-faults)"
		[ "$h" = paddr ] && label="paddr (IBS-like)"
		[ "$h" = empty ] && label="empty indirect call"
		printf '   %-22s %10s %10s %9s %12s %9s\n' "$label" \
			"$(f %.1f 'a / 1000' "$hn")" "$(f %.1f 'a / 1000' "$hy")" \
			"$(f %.1f '(b - a) / 1000' "$hn" "$hy")" \
			"$(f %.1f 'a / 1000' "$ht")" "$(f %.2f 'b / a' "$hy" "$ht")"
	done
	echo "   goal: y-n <= 5 ns per sample with the tracepoints off (TCG-inflated here)"
	echo
	args=$(res all "e2e " | sed -n 's/.* threads=\([^ ]*\) mib=\([^ ]*\) rounds=\([^ ]*\) faults=\([^ ]*\).*/\1 threads x \2 MiB x \3 rounds = \4 faults/p' | head -n 1)
	runs=$(res on "e2e mode=none " | wc -l)
	[ "$runs" -gt 0 ] || runs=$(res off "e2e mode=none " | wc -l)
	echo "3. end to end: faultstorm, ${args:-?}, median of $runs"
	echo "   interleaved runs per mode and variant (wall ms; page-faults event: type 1,"
	echo "   config 2, period 1, on all CPUs; sampling interval 5 ms)"
	printf '   %-30s %10s %10s %8s\n' mode observe=n observe=y y/n
	for m in none vaddr perf; do
		en=$(e2e off "$m")
		ey=$(e2e on "$m")
		[ -n "$en$ey" ] || continue
		label=$m
		[ "$m" = none ] && label="no DAMON"
		[ "$m" = vaddr ] && label="DAMON vaddr, Accessed bits"
		[ "$m" = perf ] && label="DAMON vaddr, page-faults p=1"
		printf '   %-30s %10s %10s %8s\n' "$label" "$(f %.1f 'a / 1e6' "$en")" \
			"$(f %.1f 'a / 1e6' "$ey")" "$(f %.3f 'b / a' "$en" "$ey")"
	done
	pn=$(e2e off perf) py=$(e2e on perf) nn=$(e2e off none) ny=$(e2e on none)
	printf '   %-30s %10s %10s %8s\n' "page-faults p=1 / no DAMON" \
		"$(f %.3f 'a / b' "$pn" "$nn")" "$(f %.3f 'a / b' "$py" "$ny")" \
		"$(f %.3f '(c / d) / (a / b)' "$pn" "$nn" "$py" "$ny")"
	echo "   goal: y/n <= 1.01 for page-faults p=1.  observe=n and =y are separate"
	echo "   boots; the last row divides out the speed of each boot"
	echo
	echo "4. drain throughput: random reports over R regions of one vaddr target,"
	echo "   drains of $(res all "drain .*name=drain_total " | kv reports_per_drain | head -n 1) reports (a ring);"
	echo "   total = kdamond_check_reported_accesses(), match = drain+match only,"
	echo "   fixed = regions snapshot + access rate update, per drain"
	printf '   %7s %9s %9s %9s %9s %9s %11s %10s\n' regions "n Mrep/s" "y Mrep/s" "n ns/rep" "y ns/rep" "y match" "match/lg R" "y fixed us"
	for R in 10 100 1000 10000; do
		rn=$(drain off drain_total "$R" reports_per_sec)
		ry=$(drain on drain_total "$R" reports_per_sec)
		tn=$(drain off drain_total "$R" ps_per_op)
		ty=$(drain on drain_total "$R" ps_per_op)
		my=$(drain on drain_match "$R" ps_per_op)
		fy=$(drain on drain_fixed "$R" ns_per_op)
		[ -n "$rn$ry" ] || continue
		printf '   %7s %9s %9s %9s %9s %9s %11s %10s\n' "$R" \
			"$(f %.2f 'a / 1e6' "$rn")" "$(f %.2f 'a / 1e6' "$ry")" \
			"$(f %.1f 'a / 1000' "$tn")" "$(f %.1f 'a / 1000' "$ty")" \
			"$(f %.1f 'a / 1000' "$my")" \
			"$(f %.2f 'a / 1000 / (log(b) / log(2))' "$my" "$R")" \
			"$(f %.1f 'a / 1000' "$fy")"
	done
	echo "   goals: >= 10 M reports/s at 1k regions; match ns/report ~ log2(R)"
	echo "   (a flat 'match/lg R' column)"
	echo
	echo "5. ring sizing (observe=y): the storm above with the page-faults event"
	s=$(res on "ring_summary " | head -n 1)
	if [ -z "$s" ] || [[ $s == *skipped* ]]; then
		echo "   no data (${s:-no ring_summary line})"
	else
		echo "   ring: $(kv ring_size <<<"$s") reports per CPU; drains: $(kv drains <<<"$s"), interval mean $(kv gap_mean_us <<<"$s") us, max $(kv gap_max_us <<<"$s") us"
		echo "   measured: $(res on "ring cpu=" | sed -n 's/.* cpu=\([^ ]*\) .*rate_per_s=\([^ ]*\).*/cpu\1 \2/p' | tr '\n' ' ')samples/s;"
		echo "   ring_peak $(kv ring_peak <<<"$s"), overflows $(res on "ring cpu=" | kv overflow | awk '{ s += $1 } END { print s + 0 }'), most reports in one drain $(kv max_reports_per_drain <<<"$s")"
		ring=$(kv ring_size <<<"$s")
		mean=$(kv gap_mean_us <<<"$s")
		max=$(kv gap_max_us <<<"$s")
		echo "   overflow begins at ring / interval = $(kv threshold_mean_per_s <<<"$s") samples/s per CPU"
		echo "   ($(kv threshold_worst_per_s <<<"$s") at the longest interval).  At 100k samples/s per CPU a"
		echo "   ring holds $(f %.0f '1e5 * a / 1e6' "$mean") entries after a mean interval, $(f %.0f '1e5 * a / 1e6' "$max") after the longest:"
		echo "   $(f %s '(1e5 * a / 1e6 < b) ? "no overflow" : "OVERFLOW"' "$max" "$ring") at the default ring size (goal: no overflow)"
	fi
	if [ -n "$(res on "ring_order ")" ]; then
		echo "   the same storm with smaller rings (damon_core.report_ring_order):"
		printf '   %7s %10s %10s %12s %18s\n' ring overflows ppm "max rate/s" "rate x mean int."
		res on "ring_order " | while read -r line; do
			rate=$(kv rate_max_per_s <<<"$line")
			printf '   %7s %10s %10s %12s %18s\n' "$(kv ring <<<"$line")" \
				"$(kv overflow <<<"$line")" "$(kv overflow_ppm <<<"$line")" "$rate" \
				"$(f %.0f 'a * b / 1e6' "$rate" "${mean:-}")"
		done
		echo "   (overflows should begin where 'rate x mean int.' nears the ring size)"
	fi
	echo
}

# icount_table B: the instruction figures of deterministic boot B
icount_table() {
	local RES_BOOTS="bench-icount-%s-$1" h hn hy R tn ty my cp

	printf '   %-22s %10s %10s %9s\n' "handler, per sample" observe=n observe=y y-n
	for h in vaddr paddr empty; do
		key=net_ps_per_op
		[ "$h" = empty ] && key=ps_per_op
		hn=$(handler off off "handler_$h" "$key")
		hy=$(handler on off "handler_$h" "$key")
		printf '   %-22s %10s %10s %9s\n' "$h" "$(f %.1f 'a / 1000' "$hn")" \
			"$(f %.1f 'a / 1000' "$hy")" "$(f %.1f '(b - a) / 1000' "$hn" "$hy")"
	done
	printf '   %-22s %10s %10s %9s %10s %11s %9s\n' "drain, per report" observe=n observe=y y/n "y match" "match/lg R" "slope"
	pm="" pr=""
	for R in 10 100 1000 10000; do
		tn=$(drain off drain_total "$R" ps_per_op)
		ty=$(drain on drain_total "$R" ps_per_op)
		my=$(drain on drain_match "$R" ps_per_op)
		# slope: match instructions added per doubling of the regions
		# since the row above, constant if match grows as log2(R)
		printf '   %-22s %10s %10s %9s %10s %11s %9s\n' "$R regions" \
			"$(f %.1f 'a / 1000' "$tn")" "$(f %.1f 'a / 1000' "$ty")" \
			"$(f %.3f 'b / a' "$tn" "$ty")" "$(f %.1f 'a / 1000' "$my")" \
			"$(f %.2f 'a / 1000 / (log(b) / log(2))' "$my" "$R")" \
			"$([ -n "$pm" ] && f %.1f '(a - b) / 1000 / (log(c / d) / log(2))' "$my" "$pm" "$R" "$pr" || echo -)"
		pm=$my pr=$R
	done
	printf '   %-22s %10s %10s %9s %10s %10s %9s %8s %6s %6s %7s\n' "AUX drain, per record" observe=n observe=y y-n "n +rings" "y +rings" matched "parse" "fast" "copy" "y-copy"
	for l in bench spe testpmu mix; do
		for ops in vaddr paddr; do
			for R in 10 1000; do
				tn=$(aux off aux_decode "$l" "$ops" "$R" ps_per_op)
				ty=$(aux on aux_decode "$l" "$ops" "$R" ps_per_op)
				[ -n "$tn$ty" ] || continue
				cp=$(aux on aux_parse "$l" "$ops" "$R" copy_ps_per_op)
				printf '   %-22s %10s %10s %9s %10s %10s %9s %8s %6s %6s %7s\n' "$l $ops, $R reg." \
					"$(f %.1f 'a / 1000' "$tn")" "$(f %.1f 'a / 1000' "$ty")" \
					"$(f %.1f '(b - a) / 1000' "$tn" "$ty")" \
					"$(f %.1f 'a / 1000' "$(aux off aux_total "$l" "$ops" "$R" ps_per_op)")" \
					"$(f %.1f 'a / 1000' "$(aux on aux_total "$l" "$ops" "$R" ps_per_op)")" \
					"$(f %.3f 'a / b' "$(aux on aux_decode "$l" "$ops" "$R" matched)" "$(aux on aux_decode "$l" "$ops" "$R" iters)")" \
					"$(f %.1f 'a / 1000' "$(aux on aux_parse "$l" "$ops" "$R" ps_per_op)")" \
					"$(f %.1f 'a / 1000' "$(aux on aux_parse "$l" "$ops" "$R" fast_ps_per_op)")" \
					"$(f %.1f 'a / 1000' "$cp")" \
					"$(f %.1f '(a - b) / 1000' "$ty" "$cp")"
			done
		done
	done
	printf '   %-22s %10s %10s %10s %12s %12s\n' "report rings" "possible" "entries" "MiB/ctx" "idle drain" "per CPU"
	for v in off on; do
		{ res "$v" "rings name=rings "; RES_BOOTS=bench-icount-cpus-%s res "$v" "rings name=rings "; } |
		while read -r line; do
			dl=$({ res "$v" "rings name=drain_idle "; RES_BOOTS=bench-icount-cpus-%s res "$v" "rings name=drain_idle "; } |
				grep " possible_cpus=$(kv possible_cpus <<<"$line") " | head -n 1)
			printf '   %-22s %10s %10s %10s %12s %12s\n' \
				"obs=$([ "$v" = on ] && echo y || echo n), guest" \
				"$(kv possible_cpus <<<"$line")" "$(kv entries <<<"$line")" \
				"$(f %.2f 'a / 1048576' "$(kv bytes <<<"$line")")" \
				"$(f %.1f 'a / 1000' "$(kv ps_per_op <<<"$dl")")" \
				"$(f %.1f 'a / 1000 / b' "$(kv ps_per_op <<<"$dl")" "$(kv possible_cpus <<<"$dl")")"
		done
	done
	for v in off on; do
		d1=$(res "$v" "rings name=drain_idle " | head -n 1)
		dn=$(RES_BOOTS=bench-icount-cpus-%s res "$v" "rings name=drain_idle " | head -n 1)
		printf '   %-22s %10s %10s %10s %12s %12s\n' \
			"obs=$([ "$v" = on ] && echo y || echo n), per added CPU" \
			"$(kv possible_cpus <<<"$d1")-$(kv possible_cpus <<<"$dn")" - - - \
			"$(f %.1f '(b - a) / 1000 / (d - c)' "$(kv ps_per_op <<<"$d1")" \
				"$(kv ps_per_op <<<"$dn")" "$(kv possible_cpus <<<"$d1")" \
				"$(kv possible_cpus <<<"$dn")")"
	done
	res on "rings name=rings_auto " | while read -r line; do
		printf '   %-22s %10s %10s %10s %12s %12s\n' "default order" \
			"$(kv cpus <<<"$line")" "$((1 << $(kv order <<<"$line")))" \
			"$(f %.2f 'a / 1048576' "$(kv bytes <<<"$line")")" - -
	done
	printf '   %-22s %12s %12s %12s %11s %9s\n' "per sampling interval" "Accessed bit" "(prepare" "check)" "perf" "perf/A"
	for v in off on; do
		res "$v" "interval " | while read -r line; do
			printf '   %-22s %12s %12s %12s %11s %9s\n' \
				"obs=$([ "$v" = on ] && echo y || echo n) $(kv regions <<<"$line")r $(kv reports <<<"$line")rep" \
				"$(kv accessbit_ns <<<"$line")" "$(kv prepare_ns <<<"$line")" \
				"$(kv check_ns <<<"$line")" "$(kv perf_ns <<<"$line")" \
				"$(f %.3f 'b / a' "$(kv accessbit_ns <<<"$line")" "$(kv perf_ns <<<"$line")")"
		done
	done
}

# icount_figures B: every figure of deterministic boot B, one per line
icount_figures() {
	local RES_BOOTS="bench-icount-%s-$1" v

	for v in off on; do
		res "$v" "handler trace=off " | sed -n 's/.* name=\([^ ]*\) .*net_ps_per_op=\([^ ]*\).*/'"$v"' \1 \2/p'
		res "$v" "drain " | sed -n 's/.* name=\([^ ]*\) regions=\([^ ]*\) .* ps_per_op=\([^ ]*\) .*/'"$v"' \1-\2 \3/p'
		res "$v" "aux name=" | sed -n 's/.* name=\([^ ]*\) layout=\([^ ]*\) ops=\([^ ]*\) regions=\([^ ]*\) .* ps_per_op=\([^ ]*\).*/'"$v"' \1-\2-\3-\4 \5/p'
		res "$v" "interval " | sed -n 's/.* regions=\([^ ]*\) reports=\([^ ]*\) .* accessbit_ns=\([^ ]*\) .* perf_ns=\([^ ]*\) .*/'"$v"' accessbit-\1-\2 \3\n'"$v"' perf-\1-\2 \4/p'
		res "$v" "rings name=drain_idle " | sed -n 's/.* possible_cpus=\([^ ]*\) .* ps_per_op=\([^ ]*\) .*/'"$v"' drain_idle-\1 \2/p'
	done
}

# 6.: the deterministic boots' tables, and how far they agree
icount_tables() {
	local b spread

	echo "6. instructions per operation: QEMU -icount shift=0, one vCPU, where a"
	echo "   guest nanosecond is one instruction (so these are counts, not times;"
	echo "   handler net of an empty indirect call, tracepoints off; drain total ="
	echo "   kdamond_check_reported_accesses(), match = drain + match only)"
	for b in $(seq "$icount_boots"); do
		echo "   boot $b of each variant:"
		icount_table "$b"
	done
	if [ "$icount_boots" -ge 2 ]; then
		# the largest relative difference of a figure between boots 1 and 2
		spread=$(join <(icount_figures 1 | awk '{ print $1 "/" $2, $3 }' | sort) \
			<(icount_figures 2 | awk '{ print $1 "/" $2, $3 }' | sort) |
			awk '$2 > 0 { d = ($3 - $2) / $2; if (d < 0) d = -d; if (d > m) { m = d; w = $1 } n++ }
				END { if (n) printf "%.2f%% (%s; %d figures)", 100 * m, w, n; else print "-" }')
		echo "   boots 1 and 2: largest difference of a figure ${spread} (goal <= 1%)"
	fi
	local RES_BOOTS="bench-icount-%s-1" i
	echo "   AUX drain: SPE records (bench: $(res on "aux name=aux_decode layout=bench " | kv record_sz | head -n 1) bytes; spe, testpmu, mix: perf-bench-aux.h) copied out in reads of the drain's size,"
	echo "   decoded and reported (+rings: and the report ring drain after each"
	echo "   half ring of records); matched = records matched to a region / records;"
	echo "   parse = damon_spe_decode_record() alone, fast = damon_spe_decode() with the"
	echo "   layouts that the drain learns, alone, copy = the copy out in reads alone"
	echo "   (observe=y), y-copy = observe=y without the copy: the decode and the"
	echo "   report.  The copy is memcpy's rep movsb, which icount counts once per"
	echo "   byte and a CPU retires as one instruction"
	echo "   goals: handler y-n <= 10 instructions; drain y/n <= 1.05; perf/A <= 0.1"
	echo "   at 100k regions (perf/A: the perf path's instructions per sampling"
	echo "   interval over the Accessed-bit path's, same regions, $(res on "interval " | kv reports | head -n 1) reports per interval);"
	echo "   report rings <= 4 MiB per context at 256 possible CPUs by default; the"
	echo "   drain of idle rings <= 100 instructions per CPU; AUX decode <= 300"
	echo "   instructions per record with observe=y, without the copy (y-copy)"
	i=$(res on "info ")
	[ -z "$i" ] || echo "   ring memory per context (observe=y): $(kv entry_size <<<"$i") bytes an entry; $(f %.0f '2^a * b / 1024' "$(kv ring_order_default <<<"$i")" "$(kv entry_size <<<"$i")") KiB per possible CPU at 2^$(kv ring_order_default <<<"$i") entries (the default up to 25 possible CPUs; fewer beyond: report rings above), $(f %.1f '2^a * b / 1048576' "$(kv ring_order_max <<<"$i")" "$(kv entry_size <<<"$i")") MiB at the largest order ($(kv ring_order_max <<<"$i"))"
}

{
	echo "damon-perf bench $(date -u +%Y-%m-%d), series $(git -C "$SRC" log -1 --format='%h %s' "$rev")"
	echo "reproduce: make bench   (bash bench/bench.sh; BENCH_BOOTS=$boots${only:+ BENCH_ONLY=$only}${BENCH_DISTRO:+ BENCH_DISTRO=1}${BENCH_ENV:+ BENCH_ENV=\"$BENCH_ENV\"})"
	echo "kernels: tinyconfig guest + observe=n/y${BENCH_DISTRO:+ + bench/distro.config ($(grep -h '^CONFIG_' "$bench/distro.config" | paste -sd' ' -))}"
	if [ -z "$only" ]; then
		echo "guest: QEMU $accel, $(res all 'info' | kv possible_cpus | head -n 1) vCPUs, on a shared 2-core host.  Under TCG"
		echo "the CPU is emulated: absolute times are many times native; read the ratios,"
		echo "which are taken within this run."
	else
		echo "guest: QEMU TCG, -icount shift=0, 1 vCPU (deterministic mode only)"
	fi
	echo
	echo "1. observe=n costs nothing: $bloat"
	echo
	[ -n "$only" ] || timed_tables
	icount_tables
	echo "raw: $BUILD/vm/bench-*/output.log; $failed failed boot(s); $((SECONDS - t0)) s"
} | tee "$results"
[ "$failed" -eq 0 ]
