#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest: start the workload, monitor it with DAMON (vaddr,
# through sysfs), and print the regions DAMON found with their nr_accesses,
# marking those inside the workload's hot and cold buffers.
# usage: demo.sh WORKLOAD_BINARY [seconds] [perf]
# With "perf", DAMON takes its access checks from the software page-faults
# perf event (type 1, config 2, every fault sampled) instead of page-table
# Accessed bits.  Both runs use the same workload, which re-faults its hot
# buffer each round (MADV_DONTNEED, then writes).  Without the re-faults,
# DAMON's Accessed-bit checks see no access of the hot buffer under QEMU TCG
# (measured: max nr_accesses 0, against 3 with them, 4 s each): DAMON clears
# the Accessed bit without a TLB flush, as x86 allows, and a translation
# that stays in QEMU's software TLB is never walked again, so the bit is not
# set again.  On hardware the TLB misses soon and sets it.  MADV_DONTNEED
# zaps the pages and flushes the TLB, so every round walks the page table.
set -eu
wl=$1 secs=${2:-4} mode=${3:-}
A=/sys/kernel/mm/damon/admin/kdamonds
[ -d "$A" ] || { echo "demo: no DAMON sysfs interface"; exit 1; }

"$wl" $((secs + 120)) 16 64 refault >/tmp/workload.out &
pid=$!
for _ in $(seq 50); do grep -q hot= /tmp/workload.out && break; sleep 0.1; done
read -r hot cold < <(sed -n 's/^hot=\(.*\) cold=\(.*\)$/\1 \2/p' /tmp/workload.out)
echo "workload pid $pid: hot buffer $hot (dropped and re-faulted each round), cold buffer $cold"

echo 1 >$A/nr_kdamonds
C=$A/0/contexts
echo 1 >$C/nr_contexts
echo vaddr >$C/0/operations
echo 1 >$C/0/targets/nr_targets
echo "$pid" >$C/0/targets/0/pid_target
# A "stat" scheme that matches every region exposes the regions.
echo 1 >$C/0/schemes/nr_schemes
echo stat >$C/0/schemes/0/action
AP=$C/0/schemes/0/access_pattern
echo 18446744073709551615 >$AP/sz/max
echo 4294967295 >$AP/nr_accesses/max
echo 4294967295 >$AP/age/max
if [ "$mode" = perf ]; then
	# the event: a perf_event prep of probe 0, new and so without the
	# filters that such a probe must not have
	echo 1 >$C/0/monitoring_attrs/probes/nr_probes
	P=$C/0/monitoring_attrs/probes/0/preps
	echo 1 >$P/nr_preps
	echo perf_event >$P/0/prep_action
	echo 1 >$P/0/type		# PERF_TYPE_SOFTWARE
	echo 2 >$P/0/config		# PERF_COUNT_SW_PAGE_FAULTS
	echo 1 >$P/0/sample_period
	echo "DAMON: access checks from perf event type $(cat $P/0/type) config $(cat $P/0/config) period $(cat $P/0/sample_period)"
fi
T=/sys/kernel/tracing
if [ "$mode" = perf ] && [ -d $T/events/damon/damon_perf_sample ]; then
	echo 0 >$T/tracing_on
	echo >$T/trace
	echo 4096 >$T/buffer_size_kb
	echo 1 >$T/events/damon/damon_perf_sample/enable
	echo 1 >$T/events/damon/damon_perf_drain/enable
	echo 1 >$T/tracing_on
fi
echo on >$A/0/state
echo "DAMON: kdamond pid $(cat $A/0/pid), sampling $(cat $C/0/monitoring_attrs/intervals/sample_us) us, aggregation $(cat $C/0/monitoring_attrs/intervals/aggr_us) us; monitoring for $secs s"
sleep "$secs"
echo update_schemes_tried_regions >$A/0/state

hex() { printf '%d' "$1"; }
hs=$(hex "${hot%-*}") he=$(hex "${hot#*-}")
cs=$(hex "${cold%-*}") ce=$(hex "${cold#*-}")
printf '%-16s %-16s %10s %12s %5s  %s\n' start end size nr_accesses age where
hot_max=0 cold_max=0 n=0
for r in $(ls -d $C/0/schemes/0/tried_regions/[0-9]* | sort -V); do
	s=$(cat "$r/start") e=$(cat "$r/end")
	a=$(cat "$r/nr_accesses") g=$(cat "$r/age")
	where=""
	if [ "$s" -ge "$hs" ] && [ "$e" -le "$he" ]; then
		where=hot; [ "$a" -gt "$hot_max" ] && hot_max=$a
	elif [ "$s" -ge "$cs" ] && [ "$e" -le "$ce" ]; then
		where=cold; [ "$a" -gt "$cold_max" ] && cold_max=$a
	fi
	printf '%-16x %-16x %9dK %12d %5d  %s\n' "$s" "$e" $(((e - s) >> 10)) "$a" "$g" "$where"
	n=$((n + 1))
done
echo off >$A/0/state
kill "$pid"
wait "$pid" 2>/dev/null || true
echo "DAMON saw $n regions; max nr_accesses: hot buffer $hot_max, cold buffer $cold_max"
if [ "$mode" = perf ] && [ -r /sys/kernel/debug/damon/perf_stats ]; then
	echo 0 >$T/tracing_on
	echo
	echo "--- /sys/kernel/debug/damon/perf_stats (cumulative since boot)"
	cat /sys/kernel/debug/damon/perf_stats
	echo
	echo "--- trace excerpt: damon_perf_sample"
	grep -m 5 'damon_perf_sample:' $T/trace || true
	echo "--- trace excerpt: damon_perf_drain"
	grep -m 5 'damon_perf_drain:' $T/trace || true
	echo 0 >$T/events/damon/enable
fi
