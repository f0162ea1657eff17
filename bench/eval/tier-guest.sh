#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2034,SC2154,SC2317 # namerefs, printf -v, trap
#
# The tiering loop, in a two-node guest whose node 1 is CPU-less and, by
# ACPI HMAT, slower than node 0, so that Linux puts it in a lower memory
# tier: how fast and how well does a tiering mechanism put the hot set of a
# workload (bench/eval/tierwl.c) on the fast node 0?  Runs as root in the
# guest.
#
# usage: tier-guest.sh OUTDIR WORKLOAD_BIN MODE SECONDS [PERIOD]
#   OUTDIR        results (created): share and summary (tierwl), meta,
#                 trace, output of the workload
#   WORKLOAD_BIN  tierwl, built static
#   MODE          damon-abit  DAMON paddr, page table Accessed bits
#                 damon-perf  DAMON paddr, the samples of a perf event: the
#                             test PMU damon_test in insn mode (config 64:
#                             bit 6, the interrupted instruction's memory
#                             operand; shape 0, ibs: physical addresses),
#                             sample_period PERIOD (us of its clock; a
#                             multiple of 16), sample_phys_addr 1,
#                             exclude_kernel 1
#                 numab       NUMA balancing's tiering mode
#                             (kernel.numa_balancing=2, demotion_enabled=1)
#                 none        nothing moves the pages
#   SECONDS       how long the workload runs after the mode is on
#   PERIOD        damon-perf's sample_period (64)
#
# Exit: 0 done, 1 a failure, 2 usage, 3 the mode cannot run on this kernel
# (e.g. damon_test without insn mode: 'on' fails), 4 the guest's topology
# does not fit (not nodes 0 and 1, node 1 not in a lower memory tier than
# node 0, too little free memory on node 1).  The reason is on stderr and
# in OUTDIR/error.
#
# vCPUs: run the guest with one.  Under -icount shift=0 with two vCPUs
# (QEMU 7.2, single-threaded TCG), the timers of a vCPU that idles while
# the other is busy fire late, by seconds: a 0.1 s 'read -t' of this script
# took 0.4-3.2 s, a 1 s one 1.8-6 s, and 'sleep 1' once did not return in a
# minute of guest time ("clocksource: Watchdog remote CPU 1 read timed
# out"); a kdamond there would sample every few hundred ms instead of 5 ms.
# With one vCPU every timer is on time, and the kdamond's CPU time is its
# own instruction count.  With two or more, the workload is pinned to CPU 0
# and this script and the kdamond to CPU 1.
#
# One run a boot: a run leaves node 1's free memory fragmented (the pages
# that the workload freed, that migrations freed and that NUMA balancing's
# kswapd demoted there), so the next workload's hot and cold frames
# interleave, and a paddr scheme, which migrates physical ranges, drags
# cold pages along with hot ones (seen: damon-perf after a numab run in the
# same boot promoted 14146 cold pages with 6258 hot ones in 12 s; in a
# fresh boot 2136 cold with 15972 hot in 10 s).  tierwl's summary has the
# layout it got (hot_pfn_runs, hot_cold_boundaries); TIER_TOUCH_CHUNK gives
# a chosen interleaving instead.
#
# The run: every mode starts from NUMA balancing off and demotion off (the
# eval kernel has CONFIG_NUMA_BALANCING_DEFAULT_ENABLED).  The workload
# places its hot and cold sets on node 1 and prints
# "ready"; then the mode is switched on, and the workload is told so
# (SIGUSR1, "the mark": tierwl's time axis and its SECONDS count from
# there).  While it runs, OUTDIR/trace gets a line a second (below).  When
# it has exited, the kdamond's CPU time, /proc/vmstat and /proc/stat deltas
# since the mark and the DAMOS stats go to OUTDIR/meta, and the kdamond is
# stopped (a failed stop fails the run).
#
# DAMON (both damon-* modes, the same schemes; only the access check
# differs): one kdamond, paddr over the biggest System RAM range (both
# nodes), sampling 5 ms, aggregation 100 ms, 10..1000 regions.  Two
# schemes:
#
#   0 promote: migrate_hot to node 0, of the regions with nr_accesses >=
#     HOT_MIN (of 20 a 100 ms aggregation) and any age; a core addr filter
#     allows only node 1's physical range (a hot region already on node 0
#     would spend quota on a migration to where it is).  Quota: TIER_QUOTA_MB
#     (16 MiB) per TIER_RESET_MS (100 ms), i.e. up to 160 MiB/s, no time
#     quota (TIER_QUOTA_MS, 0); tuner TIER_TUNER (temporal); goal
#     node_eligible_mem_bp, nid 0, target TIER_GOAL_BP (9900).  The quota
#     bounds how fast the hot set can move: with 8 MiB the first 0.8 s were
#     quota-bound in both damon modes (12.5 % of the hot set a 100 ms), and
#     damon-perf reached 90 % at 1.81 s against NUMA balancing's 1.72 s;
#     with 16 MiB, at 0.9 s (one run each; in the same 20 s, 13 % and 8.5 %
#     of the cold set was promoted along).
#
#     node_eligible_mem_bp (mm/damon/core.c, damos_get_node_eligible_mem_bp()
#     and damos_calc_eligible_bytes()): at each quota reset, over the
#     regions that match the scheme's access pattern (__damos_valid_target():
#     size, nr_accesses, age; not the filters), the bytes of the LRU folios
#     (damon_get_folio(): free, kernel and other non-LRU pages count
#     nowhere) that are on node nid, in 1/10000 of the bytes of all such
#     folios on any node.  With the promote pattern, that is "the share of
#     the memory DAMON sees hot that is on the fast node", the quantity the
#     tiering loop is about; the goal of 99 % says: pull hot memory up until
#     99 % of it is on node 0.  Not 100 %: with the temporal tuner, a goal
#     that is met sets the quota to 0 (damos_goal_tune_esz_bp_temporal()),
#     and the 1 % slack lets the scheme go idle instead of chasing the last
#     regions that flicker between hot and warm; a goal that is missed gives
#     the full 16 MiB per 100 ms at once, which is what "how fast" measures
#     (the consist tuner would start from a quota of 1 byte and double it
#     per reset while nothing is on node 0: 12 resets before its first
#     page, 26 before 64 MiB).  The workload's own measure (its hot pages on
#     node 0) differs from DAMON's where DAMON's hot regions and the hot
#     set differ: that difference is what tiering.py's offset shows.
#
#   1 demote: migrate_cold to node 1, of the regions with nr_accesses 0 for
#     at least TIER_COLD_AGE (30) aggregations (3 s); a core addr filter
#     allows only node 0's range.  Quota: TIER_COLD_QUOTA_MB (8 MiB) per
#     1000 ms, temporal.  Its goal (TIER_DEMOTE_GOAL):
#       free (default): node_mem_free_bp, nid 0, target 1000: demote cold
#         memory only while node 0 has less than 10 % free: room for the
#         promotions when the fast node fills up, as kswapd's demotion does
#         for NUMA balancing.  In this benchmark node 0 has plenty of room,
#         so the scheme stays idle unless something fills node 0.
#       eligible: node_eligible_mem_bp, nid 1, target 9000: keep 90 % of the
#         memory DAMON sees cold on the slow node.  Its eligible memory is
#         every idle LRU folio, including node 0's page cache from boot, so
#         it demotes that whatever the pressure, and walks every cold
#         region's folios at each reset (a cost in kdamond_ns).  Seen: the
#         goal stayed missed (full quota), but in 20 s no node 0 region
#         was idle for 3 s; with TIER_COLD_AGE 0 or 5 it tried 50-67 MiB
#         of node 0 in 8 s, free and kernel memory, and migrated nothing
#         (the quota is charged by the bytes tried).
#
# HOT_MIN (TIER_HOT_MIN) defaults by access check.  damon-abit 10: a region
# whose sampled page was accessed in half the 5 ms sampling intervals; a
# hot page is accessed every ~0.4 ms, a cold one (~1/97 of that rate) in
# ~12 % of the intervals, so a cold region reaching 10 of 20 is rare.
# damon-perf 4: a region counts accessed in an interval if any sample of
# the interval hit it, so its nr_accesses grows with its size as well as
# with its access density, and a large cold region collects hits too.  At
# PERIOD 64 the workload's CPU makes ~1000 records a second (the test PMU
# in insn mode: ~15,600 interrupts a second, 7 % of them on an instruction
# with a memory operand in user mode), ~5 a sampling interval.  Measured,
# 20 s runs (hot share on node 0 at the end, cold pages promoted):
#   PERIOD 256, HOT_MIN 2: hot 100 %, cold 21 %: node 1's large cold
#     regions were eligible every few aggregations, which kept the goal
#     missed, and the scheme promoted them 8 MiB at a time;
#   PERIOD 256, HOT_MIN 4: hot 93 %, cold 0: the last hot pages on node 1,
#     in small leftover regions, got too few hits to be eligible, so the
#     metric said the goal was met while the workload's share was not;
#   PERIOD 64, HOT_MIN 8: hot 91 %, cold 0 (the same);
#   PERIOD 64, HOT_MIN 4: hot 98.6 %, cold 2 %.
# (Those runs had a quota of 8 MiB per 100 ms.)
#
# OUTDIR/meta, "key value" lines: mode, period, goal_bp, hot_min, the
# scheme parameters, node ranges and tiers, the HMAT attributes of node 1
# (access0), window_ns (mark to the workload's exit, $EPOCHREALTIME),
# kdamond_ns (kdamond's CPU time over the window, /proc/PID/schedstat
# field 1; under -icount shift=0 a ns is an instruction, though a slice of
# the other busy vCPU that runs while the kdamond is on its CPU counts too,
# as the vCPUs take turns), vmstat_* deltas, cpu_* /proc/stat deltas
# (USER_HZ ticks), s0_*/s1_* DAMOS stats and effective_bytes at the end.
#
# OUTDIR/trace, a line a second (damon modes: after update_schemes_stats and
# update_schemes_effective_quotas):
#   T_US KDAMOND_NS S0_SZ_APPLIED S0_ESZ S1_SZ_APPLIED S1_ESZ PGPROMOTE
#   PGDEMOTE NUMA_PAGES_MIGRATED PGMIGRATE_SUCCESS
# with T_US since the mark, the counters cumulative since the mark (-1: not
# in this mode).
#
# Environment: TIER_HOT_MB (64), TIER_COLD_MB (192), TIER_HOT_PERMILLE (970),
# TIER_REPORT_MS (250) and TIER_STRIDE (8): tierwl's query interval and
# stride (a query of all 65536 pages costs 44 ms of the guest's time; every
# 8th page every 250 ms, 2 %, gives time to 90 % a 250 ms resolution, where
# 1 s could not tell damon-perf from numab), TIER_TOUCH_CHUNK (0: tierwl's
# --touch-chunk, the physical interleaving of the sets),
# TIER_TLB_FLUSH_US (1000: tierwl's
# --tlb-flush-us, a TLB flush a ms, for every mode: without it QEMU's large
# software TLB keeps the Accessed bits that DAMON clears clear for seconds;
# see tierwl.c), TIER_GOAL_BP, TIER_HOT_MIN,
# TIER_QUOTA_MB, TIER_QUOTA_MS, TIER_RESET_MS, TIER_TUNER, TIER_COLD_AGE,
# TIER_COLD_QUOTA_MB, TIER_DEMOTE_GOAL, TIER_PMU (damon_test),
# TIER_CONFIG (64).

set -u

usage()
{
	echo "usage: tier-guest.sh OUTDIR WORKLOAD_BIN MODE SECONDS [PERIOD]" >&2
	echo "  MODE: damon-abit damon-perf numab none" >&2
	exit 2
}

[ $# -ge 4 ] && [ $# -le 5 ] || usage
outdir=$1 wl_bin=$2 mode=$3 secs=$4 period=${5:-64}
case "$mode" in
damon-abit|damon-perf|numab|none) ;;
*) usage ;;
esac
[[ "$secs" =~ ^[0-9]+(\.[0-9]+)?$ ]] && [[ "$period" =~ ^[0-9]+$ ]] || usage

hot_mb=${TIER_HOT_MB:-64}
cold_mb=${TIER_COLD_MB:-192}
hot_permille=${TIER_HOT_PERMILLE:-970}
report_ms=${TIER_REPORT_MS:-250}
stride=${TIER_STRIDE:-8}
tlb_flush_us=${TIER_TLB_FLUSH_US:-1000}
touch_chunk=${TIER_TOUCH_CHUNK:-0}
goal_bp=${TIER_GOAL_BP:-9900}
quota_mb=${TIER_QUOTA_MB:-16}
quota_ms=${TIER_QUOTA_MS:-0}
reset_ms=${TIER_RESET_MS:-100}
tuner=${TIER_TUNER:-temporal}
cold_age=${TIER_COLD_AGE:-30}
cold_quota_mb=${TIER_COLD_QUOTA_MB:-8}
demote_goal=${TIER_DEMOTE_GOAL:-free}
pmu=${TIER_PMU:-damon_test}
ev_config=${TIER_CONFIG:-64}
case "$mode" in
damon-abit) hot_min=${TIER_HOT_MIN:-10} ;;
damon-perf) hot_min=${TIER_HOT_MIN:-4} ;;
*) hot_min=${TIER_HOT_MIN:-0} ;;
esac
fast=0 slow=1
page_size=4096
sample_us=5000 aggr_us=100000

kdamonds=/sys/kernel/mm/damon/admin/kdamonds
kd=$kdamonds/0
ctx=$kd/contexts/0
node_sys=/sys/devices/system/node

mkdir -p "$outdir" || exit 1
tmpdir=$(mktemp -d /tmp/tier.XXXXXX) || exit 1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# try_write, write_attrs, rd, perf_preps, kdamond_stop, kthread_alive
# shellcheck source=../../guest/lib/common.sh
. "$here/../../guest/lib/common.sh"

wl_pid=""
kd_on=false
numa_set=false		# this script wrote the NUMA balancing and demotion knobs

cleanup()
{
	if [ -n "$wl_pid" ] && kill -0 "$wl_pid" 2> /dev/null
	then
		kill "$wl_pid" 2> /dev/null
		wait "$wl_pid" 2> /dev/null
	fi
	if $kd_on
	then
		try_write "$kd/state" off
		try_write "$kdamonds/nr_kdamonds" 0
	fi
	if $numa_set
	then
		[ -w /proc/sys/kernel/numa_balancing ] &&
			echo 0 > /proc/sys/kernel/numa_balancing
		[ -w /sys/kernel/mm/numa/demotion_enabled ] &&
			echo 0 > /sys/kernel/mm/numa/demotion_enabled
	fi
	rm -rf "$tmpdir"
}
trap cleanup EXIT

# quit STATUS MESSAGE
quit()
{
	echo "tier-guest: $2" >&2
	echo "$2" > "$outdir/error"
	exit "$1"
}

# w DIR FILE VALUE...: write_attrs, or quit
w()
{
	write_attrs "$@" || quit 1 "$write_msg"
}

# A sleep without a fork (a fork and exec cost ms of the guest's time)
mkfifo "$tmpdir/fifo" && exec {sleep_fd}<> "$tmpdir/fifo" ||
	quit 1 "cannot make the sleep fifo"
nap()
{
	read -r -t "$1" -u "$sleep_fd" _
}

# now_us VAR: the time in us ($EPOCHREALTIME: no fork)
now_us()
{
	printf -v "$1" '%s' "${EPOCHREALTIME/./}"
}

# node_range NODE: "START END", the byte range that NODE's zones span, from
# /proc/zoneinfo (start_pfn and spanned of each zone of the node)
node_range()
{
	awk -v n="$1" -v ps="$page_size" '
		/^Node/ { node = $2; sub(",", "", node); sp = 0 }
		$1 == "spanned" { sp = $2 }
		$1 == "start_pfn:" && node == n && sp > 0 {
			if (lo == "" || $2 < lo) lo = $2
			if ($2 + sp > hi) hi = $2 + sp
		}
		END { if (lo != "") printf "%.0f %.0f\n", lo * ps, hi * ps }
	' /proc/zoneinfo
}

# The biggest System RAM range of /proc/iomem, "START END" (end exclusive),
# as damo picks the paddr target by default
biggest_ram()
{
	local range rest s e best=0 bs=0 be=0

	while read -r range rest
	do
		[ "$rest" = ": System RAM" ] || continue
		s=$((16#${range%-*}))
		e=$((16#${range#*-} + 1))
		if ((e - s > best))
		then
			best=$((e - s)) bs=$s be=$e
		fi
	done < /proc/iomem
	((best)) && echo "$bs $be"
}

# tier_of NODE: the memory tier (its id; a larger one is slower) that NODE
# is in, from /sys/devices/virtual/memory_tiering
tier_of()
{
	local d list id

	for d in /sys/devices/virtual/memory_tiering/memory_tier*
	do
		[ -f "$d/nodelist" ] || continue
		read -r list < "$d/nodelist"
		id=${d##*memory_tier}
		if expand_cpulist "$list" | grep -qx "$1"
		then
			echo "$id"
			return 0
		fi
	done
	return 1
}

# vmstat_snap ARRAY: the /proc/vmstat counters that the modes move
vmstat_snap()
{
	local -n vs=$1
	local _vk _vv

	vs=()
	while read -r _vk _vv
	do
		case "$_vk" in
		pgpromote_success|pgpromote_candidate|pgdemote_kswapd|\
		pgdemote_direct|pgdemote_khugepaged|pgdemote_proactive|\
		numa_pages_migrated|numa_hint_faults|numa_hint_faults_local|\
		numa_pte_updates|pgmigrate_success|pgmigrate_fail|\
		pgpromote_demoted|numa_huge_pte_updates)
			vs[$_vk]=$_vv ;;
		esac
	done < /proc/vmstat
}

# demoted ARRAY: the pages demoted, of a vmstat_snap
demoted()
{
	local -n dv=$1

	echo $((${dv[pgdemote_kswapd]:-0} + ${dv[pgdemote_direct]:-0} +
		${dv[pgdemote_khugepaged]:-0} + ${dv[pgdemote_proactive]:-0}))
}

# cpu_snap ARRAY: the "cpu" line of /proc/stat
cpu_snap()
{
	local -n cs=$1
	local _c u n s i io irq sirq

	read -r _c u n s i io irq sirq _ < /proc/stat
	cs=([user]=$((u + n)) [sys]=$s [idle]=$((i + io)) [irq]=$irq
		[softirq]=$sirq)
}

# kd_ns VAR: the kdamond's CPU time so far (schedstat field 1), or 0
kd_ns()
{
	local _t=0

	[ -n "${kd_pid:-}" ] &&
		read -r _t _ < "/proc/$kd_pid/schedstat" 2> /dev/null
	printf -v "$1" '%s' "${_t:-0}"
}

meta()
{
	echo "$1 $2" >> "$outdir/meta"
}

#
# Topology
#
: > "$outdir/meta"
rm -f "$outdir/error"
read -r online < "$node_sys/online" 2> /dev/null ||
	quit 4 "no NUMA nodes in sysfs (a kernel without CONFIG_NUMA?)"
[ "$(expand_cpulist "$online" | tr '\n' ' ')" = "0 1 " ] ||
	quit 4 "the guest's online nodes are '$online', not 0 and 1"
read -r n1cpus < "$node_sys/node1/cpulist"
[ -z "$n1cpus" ] || quit 4 "node 1 has CPUs ($n1cpus): not a CPU-less memory node"
t0=$(tier_of 0) && t1=$(tier_of 1) ||
	quit 4 "a node is in no memory tier (/sys/devices/virtual/memory_tiering): $(ls /sys/devices/virtual/memory_tiering 2> /dev/null | tr '\n' ' ')"
[ "$t1" -gt "$t0" ] ||
	quit 4 "node 1 is in memory tier $t1, node 0 in $t0: not a lower tier (no HMAT, or HMAT says node 1 is as fast)"
free_kb=$(awk '$3 == "MemFree:" { print $4 }' "$node_sys/node1/meminfo")
[ "${free_kb:-0}" -ge $(((hot_mb + cold_mb + 16) * 1024)) ] ||
	quit 4 "node 1 has ${free_kb:-?} KiB free, the workload needs $(((hot_mb + cold_mb) * 1024)) KiB and some"
read -r r0s r0e <<< "$(node_range 0)"
read -r r1s r1e <<< "$(node_range 1)"
[ -n "${r0e:-}" ] && [ -n "${r1e:-}" ] || quit 1 "no node ranges in /proc/zoneinfo"
read -r ram_s ram_e <<< "$(biggest_ram)"
[ -n "${ram_e:-}" ] || quit 1 "no System RAM in /proc/iomem"

meta mode "$mode"
meta period "$([ "$mode" = damon-perf ] && echo "$period" || echo 0)"
meta goal_bp "$goal_bp"
meta seconds "$secs"
meta hot_mb "$hot_mb"
meta cold_mb "$cold_mb"
meta hot_permille "$hot_permille"
meta tlb_flush_us "$tlb_flush_us"
meta touch_chunk "$touch_chunk"
meta nr_cpus "$(nproc)"
meta tier_node0 "$t0"
meta tier_node1 "$t1"
meta node0_range "$r0s-$r0e"
meta node1_range "$r1s-$r1e"
meta node1_free_kb "$free_kb"
for f in read_latency write_latency read_bandwidth write_bandwidth
do
	for n in 0 1
	do
		v=-
		read -r v < "$node_sys/node$n/access0/initiators/$f" 2> /dev/null
		meta "hmat_node${n}_$f" "$v"
	done
done

#
# A clean start: no NUMA balancing, no demotion, no kdamond
#
numa_set=true
[ -w /proc/sys/kernel/numa_balancing ] && echo 0 > /proc/sys/kernel/numa_balancing
[ -w /sys/kernel/mm/numa/demotion_enabled ] &&
	echo 0 > /sys/kernel/mm/numa/demotion_enabled
if [ -d "$kdamonds" ]
then
	if st=$(running_kdamond "$kdamonds")
	then
		try_write "$st" off
	fi
	w "$kdamonds" nr_kdamonds 0
elif [[ "$mode" == damon-* ]]
then
	quit 3 "no DAMON sysfs interface ($kdamonds)"
fi
if [ "$mode" = numab ] && [ ! -w /proc/sys/kernel/numa_balancing ]
then
	quit 3 "no NUMA balancing (/proc/sys/kernel/numa_balancing)"
fi
# The script's own work goes to CPU 1, the workload gets CPU 0
have_taskset=false
if command -v taskset > /dev/null && [ -d /sys/devices/system/cpu/cpu1 ]
then
	have_taskset=true
	taskset -p -c 1 $$ > /dev/null
fi

#
# The workload
#
wl_args=(--hot-mb "$hot_mb" --cold-mb "$cold_mb" --hot-permille "$hot_permille"
	--seconds "$secs" --report-ms "$report_ms" --stride "$stride"
	--slow-node "$slow" --fast-node "$fast" --tlb-flush-us "$tlb_flush_us"
	--touch-chunk "$touch_chunk" --wait-mark "$outdir")
if $have_taskset
then
	taskset -c 0 "$wl_bin" "${wl_args[@]}" > "$outdir/workload.out" 2>&1 &
else
	"$wl_bin" "${wl_args[@]}" > "$outdir/workload.out" 2>&1 &
fi
wl_pid=$!
line=""
: >> "$outdir/workload.out"
for ((i = 0; i < 1200; i++))
do
	read -r line < "$outdir/workload.out"
	[[ "$line" == "tierwl: ready "* ]] && break
	kill -0 "$wl_pid" 2> /dev/null || break
	nap 0.1
done
[[ "$line" == "tierwl: ready "* ]] ||
	quit 1 "the workload did not get ready: $(head -c 300 "$outdir/workload.out")"
echo "tier-guest: $mode: workload $wl_pid ready, ${hot_mb}+${cold_mb} MiB on node $slow"

#
# The mode
#
damon_setup()
{
	local s0=$ctx/schemes/0 s1=$ctx/schemes/1 type maxsz=18446744073709551615
	local rc

	w "$kdamonds" nr_kdamonds 1
	w "$kd/contexts" nr_contexts 1
	if [ "$mode" = damon-perf ]
	then
		[ -r "/sys/bus/event_source/devices/$pmu/type" ] ||
			quit 3 "no PMU $pmu (/sys/bus/event_source/devices/$pmu)"
		read -r type < "/sys/bus/event_source/devices/$pmu/type"
		perf_preps "$ctx" 1
		rc=$?
		[ "$rc" -eq 2 ] && quit 3 "$write_msg"
		[ "$rc" -eq 0 ] || quit 1 "$write_msg"
		w "$preps/0" type "$type" config "$ev_config" freq 0 \
			sample_period "$period" sample_phys_addr 1 exclude_kernel 1
		meta pmu_type "$type"
		meta pmu_config "$ev_config"
	fi
	w "$ctx" operations paddr \
		monitoring_attrs/intervals/sample_us "$sample_us" \
		monitoring_attrs/intervals/aggr_us "$aggr_us" \
		monitoring_attrs/intervals/update_us 1000000 \
		monitoring_attrs/nr_regions/min 10 \
		monitoring_attrs/nr_regions/max 1000 \
		targets/nr_targets 1
	w "$ctx/targets/0" regions/nr_regions 1 \
		regions/0/start "$ram_s" regions/0/end "$ram_e"
	w "$ctx" schemes/nr_schemes 2
	try_write "$s0/access_pattern/sz/max" "$maxsz" || maxsz=4294967295

	# 0: promote the hot memory of node 1 to node 0
	w "$s0" action migrate_hot target_nid "$fast" apply_interval_us 0 \
		access_pattern/sz/min "$page_size" access_pattern/sz/max "$maxsz" \
		access_pattern/nr_accesses/min "$hot_min" \
		access_pattern/nr_accesses/max 4294967295 \
		access_pattern/age/min 0 access_pattern/age/max 4294967295 \
		quotas/ms "$quota_ms" quotas/bytes $((quota_mb << 20)) \
		quotas/reset_interval_ms "$reset_ms" quotas/goal_tuner "$tuner" \
		quotas/goals/nr_goals 1 \
		core_filters/nr_filters 1
	w "$s0/quotas/goals/0" target_metric node_eligible_mem_bp \
		target_value "$goal_bp" nid "$fast"
	w "$s0/core_filters/0" type addr addr_start "$r1s" addr_end "$r1e" \
		matching Y allow Y

	# 1: demote the cold memory of node 0 to node 1
	w "$s1" action migrate_cold target_nid "$slow" apply_interval_us 0 \
		access_pattern/sz/min "$page_size" access_pattern/sz/max "$maxsz" \
		access_pattern/nr_accesses/min 0 access_pattern/nr_accesses/max 0 \
		access_pattern/age/min "$cold_age" \
		access_pattern/age/max 4294967295 \
		quotas/ms "$quota_ms" quotas/bytes $((cold_quota_mb << 20)) \
		quotas/reset_interval_ms 1000 quotas/goal_tuner "$tuner" \
		quotas/goals/nr_goals 1 \
		core_filters/nr_filters 1
	case "$demote_goal" in
	free)
		w "$s1/quotas/goals/0" target_metric node_mem_free_bp \
			target_value 1000 nid "$fast"
		meta demote_goal "node_mem_free_bp nid $fast 1000"
		;;
	eligible)
		w "$s1/quotas/goals/0" target_metric node_eligible_mem_bp \
			target_value 9000 nid "$slow"
		meta demote_goal "node_eligible_mem_bp nid $slow 9000"
		;;
	*) quit 2 "TIER_DEMOTE_GOAL must be free or eligible" ;;
	esac
	w "$s1/core_filters/0" type addr addr_start "$r0s" addr_end "$r0e" \
		matching Y allow Y

	meta hot_min "$hot_min"
	meta promote_goal "node_eligible_mem_bp nid $fast $goal_bp"
	meta quota_bytes $((quota_mb << 20))
	meta quota_ms "$quota_ms"
	meta reset_ms "$reset_ms"
	meta tuner "$tuner"
	meta cold_age "$cold_age"
	meta cold_quota_bytes $((cold_quota_mb << 20))
	meta sample_us "$sample_us"
	meta aggr_us "$aggr_us"
	meta damon_region "$ram_s-$ram_e"

	if ! try_write "$kd/state" on
	then
		quit 3 "kdamond 'on' failed: $write_err; kernel: $(dmesg 2> /dev/null | tail -n 3 | tr '\n' ' ')"
	fi
	kd_on=true
	rd kd_pid "$kd/pid"
	kthread_alive "$kd_pid" || quit 1 "no kdamond after 'on' (pid '$kd_pid')"
	$have_taskset && taskset -p -c 1 "$kd_pid" > /dev/null 2>&1
	meta kdamond_pid "$kd_pid"
}

declare -A vm0 vm1 cpu0 cpu1
kd_pid=""
case "$mode" in
damon-*) damon_setup ;;
numab)
	echo 1 > /sys/kernel/mm/numa/demotion_enabled ||
		quit 3 "cannot enable demotion"
	echo 2 > /proc/sys/kernel/numa_balancing ||
		quit 3 "kernel.numa_balancing=2 (tiering mode) refused"
	for f in numa_balancing numa_balancing_promote_rate_limit_MBps
	do
		v=-
		read -r v < "/proc/sys/kernel/$f" 2> /dev/null
		meta "sysctl_$f" "$v"
	done
	for f in hot_threshold_ms scan_delay_ms scan_period_min_ms \
		scan_period_max_ms scan_size_mb
	do
		v=-
		read -r v < "/sys/kernel/debug/sched/numa_balancing/$f" 2> /dev/null
		meta "numab_$f" "$v"
	done
	;;
esac
vmstat_snap vm0
cpu_snap cpu0
kd_ns kd0
now_us mark_us
kill -USR1 "$wl_pid" || quit 1 "the workload is gone before the mark"
echo "tier-guest: $mode on, marked; running $secs s"

#
# The run: a trace line a second until the workload exits
#
trace_line()
{
	local t kn=-1 a0=-1 e0=-1 a1=-1 e1=-1
	local -A vt

	now_us t
	t=$((t - mark_us))
	if $kd_on
	then
		kd_ns kn
		kn=$((kn - kd0))
		if try_write "$kd/state" update_schemes_stats &&
			try_write "$kd/state" update_schemes_effective_quotas
		then
			rd a0 "$ctx/schemes/0/stats/sz_applied"
			rd e0 "$ctx/schemes/0/quotas/effective_bytes"
			rd a1 "$ctx/schemes/1/stats/sz_applied"
			rd e1 "$ctx/schemes/1/quotas/effective_bytes"
		fi
	fi
	vmstat_snap vt
	echo "$t $kn $a0 $e0 $a1 $e1" \
		"$((${vt[pgpromote_success]:-0} - ${vm0[pgpromote_success]:-0}))" \
		"$(($(demoted vt) - $(demoted vm0)))" \
		"$((${vt[numa_pages_migrated]:-0} - ${vm0[numa_pages_migrated]:-0}))" \
		"$((${vt[pgmigrate_success]:-0} - ${vm0[pgmigrate_success]:-0}))" \
		>> "$outdir/trace"
}

: > "$outdir/trace"
while kill -0 "$wl_pid" 2> /dev/null
do
	nap 1
	kill -0 "$wl_pid" 2> /dev/null || break
	trace_line
	if $kd_on && ! kthread_alive "$kd_pid"
	then
		quit 1 "the kdamond ($kd_pid) died during the run"
	fi
done
now_us end_us
kd_ns kd1
vmstat_snap vm1
cpu_snap cpu1
wait "$wl_pid"
wl_rc=$?
wl_pid=""
[ "$wl_rc" -eq 0 ] ||
	quit 1 "the workload exited $wl_rc: $(tail -c 300 "$outdir/workload.out")"
trace_line

meta window_ns $(((end_us - mark_us) * 1000))
meta kdamond_ns $((kd1 - kd0))
for k in pgpromote_success pgpromote_candidate pgdemote_kswapd pgdemote_direct \
	pgdemote_khugepaged pgdemote_proactive numa_pages_migrated \
	numa_hint_faults numa_hint_faults_local numa_pte_updates \
	pgmigrate_success pgmigrate_fail
do
	meta "vmstat_$k" $((${vm1[$k]:-0} - ${vm0[$k]:-0}))
done
for k in user sys idle irq softirq
do
	meta "cpu_$k" $((cpu1[$k] - cpu0[$k]))
done

if $kd_on
then
	try_write "$kd/state" update_schemes_stats &&
		try_write "$kd/state" update_schemes_effective_quotas ||
		quit 1 "updating the DAMOS stats failed: $write_err"
	for s in 0 1
	do
		for f in nr_tried sz_tried nr_applied sz_applied \
			sz_ops_filter_passed qt_exceeds
		do
			rd v "$ctx/schemes/$s/stats/$f"
			meta "s${s}_$f" "$v"
		done
		rd v "$ctx/schemes/$s/quotas/effective_bytes"
		meta "s${s}_effective_bytes" "$v"
	done
	kdamond_stop "$kd" || quit 1 "kdamond: $stop_err"
	kd_on=false
	try_write "$kdamonds/nr_kdamonds" 0
fi

read -r last < <(tail -n 1 "$outdir/share")
read -r _ hf ht cf ct <<< "$last"
echo "tier-guest: $mode done: hot on node $fast $hf/$ht, cold $cf/$ct," \
	"kdamond $((kd1 - kd0)) ns in $(((end_us - mark_us) / 1000)) ms"
exit 0
