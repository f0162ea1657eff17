#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# eval.sh [all|build|accuracy|tiering|report] ('make eval'): does DAMON with
# perf samples find the memory a workload really uses, and tier it?  Not
# part of 'make check' (about an hour on two host CPUs).
#
#   build     the kernel: the series with the test PMUs (testpmu/0001-0004,
#             scripts/testpmu.sh) in config variant "eval": "on" plus two
#             NUMA nodes with HMAT and NUMA balancing
#             (kconfig/observe-eval.config), in build/testpmu/linux/.out-eval;
#             and the workloads bench/eval/evalwl.c, tierwl.c (static)
#   accuracy  one guest (1 vCPU, -icount shift=0: guest time counts
#             instructions and the test PMU's timer lands on any
#             instruction) runs bench/eval/accuracy-guest.sh: workloads of
#             known heat (evalwl hotcold: hot/warm/cold buffers whose hot and
#             cold swap halfway; zipf over shuffled pages), DAMON vaddr with
#             the Accessed bits against DAMON with the insn test PMU at
#             several sampling periods, EVAL_RUNS runs each; then
#             bench/eval/accuracy.py: precision, coverage, recovery, cost
#   tiering   a guest with two NUMA nodes (node 1 CPU-less, HMAT: a lower
#             memory tier), one boot per mode and run, runs
#             bench/eval/tier-guest.sh: the
#             workload's hot set starts on node 1; DAMON paddr
#             (migrate_hot to node 0 with a node goal, migrate_cold to node
#             1) with the Accessed bits and with perf samples, NUMA
#             balancing's tiering mode, and nothing; then
#             bench/eval/tiering.py: share on node 0 over time, time to 90%,
#             offset and deviation against the goal, ping-pong, cost
#   report    only the analysis of the last runs' output
#   all       build, accuracy, tiering, report (default); without any of
#             EVAL_REGIONS, EVAL_SOURCES, EVAL_TAG, accuracy runs two sets:
#             r1000 (1000 regions: abit insn:256 insn:64) and r10000 (10000
#             regions: abit insn:4000 insn:1008 insn:256)
#
# Output: $EVAL_OUT (build/eval): accuracy/TAG/ and tiering/ (one directory
# per run), results/{accuracy,tiering}.{md,json,png}, precision-time.png.
# The report takes every run under accuracy/: EVAL_TAG (default) names the
# set of runs that 'accuracy' makes (and replaces), so that sets of other
# settings add up.
# Env: EVAL_RUNS (5); EVAL_REGIONS (10000: DAMON's min_nr_regions, max is
# twice; a list makes one set of runs per value); EVAL_SOURCES ("abit insn:4000 insn:1008 insn:256": insn:PERIOD in
# microseconds of the test PMU's access clock, a multiple of 16; abit,
# abit-noflush; none: no DAMON at all, the workload's unmonitored
# throughput, against which accuracy.py's cost table puts the others);
# EVAL_WORKLOADS ("hotcold:16 zipf:8": WORKLOAD:SECONDS of guest time);
# EVAL_AGGR_US (the aggregation interval of every source; default: 100 ms
# with the Accessed bits, 1 s with samples); EVAL_TRACE=0 (no region
# snapshots: the kdamond's cost without that of tracing every region);
# EVAL_PROFILE=1 (a perf profile of the kdamond per run: profile.txt);
# EVAL_TIER_MODES ("none numab damon-abit damon-perf"), EVAL_TIER_SECS (20),
# EVAL_TIER_PERIOD (64), EVAL_TIER_RUNS (1: one boot per mode and run); EVAL_TIMEOUT (host seconds
# per guest, 7200).
top=$(cd "$(dirname "$0")/../.." && pwd)
main_build=${DAMON_PERF_BUILD:-$top/build}
# shellcheck source=../../scripts/lib.sh
. "$top/scripts/lib.sh"

what=${1:-all}
case "$what" in
all|build|accuracy|tiering|report) ;;
*) die "usage: eval.sh [all|build|accuracy|tiering|report]" ;;
esac
EVAL_OUT=${EVAL_OUT:-$main_build/eval}
runs=${EVAL_RUNS:-5}
regions=${EVAL_REGIONS:-10000}
sources=${EVAL_SOURCES:-abit insn:4000 insn:1008 insn:256}
workloads=${EVAL_WORKLOADS:-hotcold:16 zipf:8}
tier_modes=${EVAL_TIER_MODES:-none numab damon-abit damon-perf}
tier_secs=${EVAL_TIER_SECS:-20}
tier_period=${EVAL_TIER_PERIOD:-64}
tier_runs=${EVAL_TIER_RUNS:-1}
timeout=${EVAL_TIMEOUT:-7200}
tag=${EVAL_TAG:-default}
aggr_us=${EVAL_AGGR_US:-}
bin=$EVAL_OUT/bin
results=$EVAL_OUT/results
tp_build=$main_build/testpmu
kernel=$tp_build/linux/.out-eval/arch/x86/boot/bzImage

build() {
	bash "$top/scripts/deps.sh" || die "eval: deps failed"
	[ -d "$main_build/linux/.git" ] || bash "$top/scripts/expand.sh" ||
		die "eval: expand failed"
	DAMON_PERF_BUILD=$main_build TESTPMU_VARIANT=eval \
		bash "$top/scripts/testpmu.sh" build || die "eval: kernel build failed"
	mkdir -p "$bin"
	for w in evalwl tierwl; do
		gcc -O2 -Wall -static -o "$bin/$w" "$top/bench/eval/$w.c" -lm ||
			die "eval: building $w failed"
	done
	log "eval: kernel $kernel, workloads in $bin"
}

# guest NAME CPUS MEM CMD: boots the eval kernel with icount; the guest's
# /tmp/out is $tp_build/vm/NAME
guest() {
	local name=$1 cpus=$2 mem=$3

	shift 3
	[ -f "$kernel" ] || die "eval: no kernel $kernel (eval.sh build)"
	DAMON_PERF_BUILD=$tp_build VM_ICOUNT=1 \
		bash "$top/scripts/vm-run.sh" --name "$name" --cpus "$cpus" \
		--mem "$mem" --timeout "$timeout" --append "kunit.enable=0" eval -- "$*"
}

accuracy() {
	local t0=$SECONDS

	rm -rf "$tp_build/vm/eval-accuracy/acc"
	local cmd="rc=0; " r

	for r in $regions; do
		cmd+="EVAL_TRACE=${EVAL_TRACE:-1} EVAL_PROFILE=${EVAL_PROFILE:-0} bash $top/bench/eval/accuracy-guest.sh /tmp/out/acc $bin/evalwl $runs '$workloads' $r '$sources' $aggr_us || rc=1; "
	done
	guest eval-accuracy 1 2048 "$cmd exit \$rc" ||
		log "eval: the accuracy guest reported a failure (output: $tp_build/vm/eval-accuracy/output.log)"
	rm -rf "$EVAL_OUT/accuracy/$tag"
	mkdir -p "$EVAL_OUT/accuracy"
	cp -r "$tp_build/vm/eval-accuracy/acc" "$EVAL_OUT/accuracy/$tag" ||
		die "eval: no accuracy output"
	log "eval: accuracy runs took $((SECONDS - t0)) s"
}

# Two nodes: node 0 of 256 MiB with the vCPU, node 1 of 512 MiB without
# one, with 2.5 times the latency and 0.4 times the bandwidth of node 0 in
# the HMAT, so Linux puts it in a lower memory tier (memory_tier28 against
# node 0's memory_tier4), the demotion target of node 0.  One vCPU: with two
# under -icount, the timers of an idle vCPU fire seconds late while the
# other is busy (tier-guest.sh's header)
tier_qemu_args="-object memory-backend-ram,id=m0,size=256M"
tier_qemu_args+=" -object memory-backend-ram,id=m1,size=512M"
tier_qemu_args+=" -numa node,nodeid=0,cpus=0,memdev=m0"
tier_qemu_args+=" -numa node,nodeid=1,memdev=m1,initiator=0"
tier_qemu_args+=" -numa dist,src=0,dst=1,val=20"
tier_qemu_args+=" -numa hmat-lb,initiator=0,target=0,hierarchy=memory,data-type=access-latency,latency=100"
tier_qemu_args+=" -numa hmat-lb,initiator=0,target=0,hierarchy=memory,data-type=access-bandwidth,bandwidth=20G"
tier_qemu_args+=" -numa hmat-lb,initiator=0,target=1,hierarchy=memory,data-type=access-latency,latency=250"
tier_qemu_args+=" -numa hmat-lb,initiator=0,target=1,hierarchy=memory,data-type=access-bandwidth,bandwidth=8G"

# One boot a run: a run leaves node 1's free memory fragmented, and the next
# workload's hot and cold frames would interleave (tier-guest.sh's header)
tiering() {
	local t0=$SECONDS m r d

	rm -rf "$EVAL_OUT/tiering"
	mkdir -p "$EVAL_OUT/tiering"
	for ((r = 1; r <= tier_runs; r++)); do
		for m in $tier_modes; do
			d=$tp_build/vm/eval-tier-$m-$r
			rm -rf "$d/run"
			VM_MACHINE=q35,hmat=on VM_QEMU_ARGS=$tier_qemu_args \
				guest "eval-tier-$m-$r" 1 768 \
				"bash $top/bench/eval/tier-guest.sh /tmp/out/run $bin/tierwl $m $tier_secs $tier_period" ||
				log "eval: tiering $m run $r failed (output: $d/output.log)"
			cp -r "$d/run" "$EVAL_OUT/tiering/$m-$r" ||
				log "eval: no output of tiering $m run $r"
		done
	done
	log "eval: tiering runs took $((SECONDS - t0)) s"
}

report() {
	mkdir -p "$results"
	if [ -d "$EVAL_OUT/accuracy" ]; then
		/usr/bin/python3 "$top/bench/eval/accuracy.py" "$EVAL_OUT/accuracy" \
			--out "$results" --goal-regions 1000 ||
			die "eval: accuracy.py failed"
	fi
	if [ -d "$EVAL_OUT/tiering" ]; then
		/usr/bin/python3 "$top/bench/eval/tiering.py" -o "$results" \
			"$EVAL_OUT/tiering" || die "eval: tiering.py failed"
	fi
	log "eval: results in $results"
}

mkdir -p "$EVAL_OUT"
case "$what" in
build) build ;;
accuracy) accuracy; report ;;
tiering) tiering; report ;;
report) report ;;
all)
	build
	# the two sets of docs/eval.md's tables, unless the env gives one
	if [ -n "${EVAL_REGIONS:-}${EVAL_SOURCES:-}${EVAL_TAG:-}" ]; then
		accuracy
	else
		tag=r1000 regions=1000 sources="abit insn:256 insn:64" accuracy
		tag=r10000 regions=10000 sources="abit insn:4000 insn:1008 insn:256" accuracy
	fi
	tiering
	report ;;
esac
