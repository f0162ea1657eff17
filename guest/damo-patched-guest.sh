#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# damo-patched-guest.sh DAMO_PY WORKLOAD: in the guest, damo with the damo
# patch series of damo/ (scripts/damo-patch.sh builds and stages it) drives
# the series' perf_event probe prep: a vaddr context on the workload's
# address space, its one probe with the software page-faults event as prep
# (PERF_TYPE_SOFTWARE 1, PERF_COUNT_SW_PAGE_FAULTS 2, every fault sampled).
# The workload refaults its hot buffer all the time and wrote its cold
# buffer once, before damo started.  KTAP on stdout:
#
#   start    'damo start --target_pid PID --probe_prep perf_event
#            type=software config=2 sample_period=1' exits 0
#   sysfs    the kdamond's probe 0 has that prep in sysfs: nr_preps 1,
#            prep_action perf_event, type 1 (the software PMU's number, as
#            the kernel resolved the name), config 2, sample_period 1
#   report   'damo report access' exits 0 and shows the probe hits of the
#            regions (tried_regions/<R>/probes/0/hits)
#   hot      a region of the hot buffer has probe hits > 0
#   cold     the regions of the cold buffer (not also of the hot one) have
#            no probe hit
#   stop     'damo stop' exits 0 and the kdamond is off
#
# The report is taken again, up to 5 times 2 s apart, until the hot buffer
# shows hits: under TCG a few aggregation intervals (100 ms) can take long.
# A kernel without the perf_event prep (damo's feature
# sysfs/probe_prep_perf_event) is a SKIP of everything, exit 4.
# Exit: 0 if all passed, 1 if one failed, 4 if skipped.  DAMON is turned
# off and the workload killed at exit.
# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"

damo_py=${1:?usage: damo-patched-guest.sh DAMO_PY WORKLOAD}
workload=${2:?usage: damo-patched-guest.sh DAMO_PY WORKLOAD}
admin=/sys/kernel/mm/damon/admin
ctx=$admin/kdamonds/0/contexts/0
probe=$ctx/monitoring_attrs/probes/0
tmpdir=$(mktemp -d)
nr_tests=6
test_nr=0
nr_fail=0

damo() { /usr/bin/python3 "$damo_py" "$@"; }

ok() { test_nr=$((test_nr + 1)); echo "ok $test_nr $*"; }
not_ok() { test_nr=$((test_nr + 1)); echo "not ok $test_nr $*"; nr_fail=$((nr_fail + 1)); }
# evidence FILE: the head of FILE as KTAP comment lines
evidence() { head -n "${2:-20}" "$1" | sed 's/^/# /'; }

cleanup()
{
	local st

	for st in "$admin"/kdamonds/*/state
	do
		[ -f "$st" ] && [ "$(cat "$st" 2> /dev/null)" = on ] &&
			echo off > "$st" 2> /dev/null
	done
	echo 0 > "$admin/kdamonds/nr_kdamonds" 2> /dev/null
	[ -s "$tmpdir/pids" ] && xargs kill < "$tmpdir/pids" 2> /dev/null
	rm -rf "$tmpdir"
}
trap cleanup EXIT

# The regions of 'damo report access', one a line: "region START END HITS",
# the addresses in decimal, HITS the hits of probe 0 (empty if none shown)
report()
{
	damo report access --raw_number \
		--format_region 'region <start address> <end address> <probe hits>'
}

# overlaps START END FROM TO: whether [START, END) overlaps [FROM, TO)
overlaps() { [ "$1" -lt "$4" ] && [ "$2" -gt "$3" ]; }

# judge FILE: the output of report(); counts the regions with probe hits
# shown (n_shown), of the hot buffer (n_hot) and those of them with hits
# (n_hot_hit), of the cold buffer alone (n_cold) and those with hits
# (n_cold_hit)
judge()
{
	local start end hits

	n_all=0 n_shown=0 n_hot=0 n_hot_hit=0 n_cold=0 n_cold_hit=0
	while read -r _ start end hits _
	do
		n_all=$((n_all + 1))
		[[ "$hits" =~ ^[0-9]+$ ]] || continue
		n_shown=$((n_shown + 1))
		if overlaps "$start" "$end" "$wl_hot_start" "$wl_hot_end"
		then
			n_hot=$((n_hot + 1))
			[ "$hits" -gt 0 ] && n_hot_hit=$((n_hot_hit + 1))
		elif overlaps "$start" "$end" "$wl_cold_start" "$wl_cold_end"
		then
			n_cold=$((n_cold + 1))
			[ "$hits" -gt 0 ] && n_cold_hit=$((n_cold_hit + 1))
		fi
	done < <(grep -E '^region [0-9]+ [0-9]+' "$1")
}

echo "TAP version 13"
echo "# damo $(damo version) from $damo_py"
# what damo finds in this kernel, not in a cache of another damo's findings
rm -f "$HOME/.damo.sysinfo"
damo features supported > "$tmpdir/features" 2>&1
if ! grep -qx 'sysfs/probe_prep_perf_event' "$tmpdir/features"
then
	echo "1..0 # SKIP the kernel has no perf_event probe prep (damo features: no sysfs/probe_prep_perf_event$(grep -qx 'sysfs/probe_preps' "$tmpdir/features" || echo ', no sysfs/probe_preps'))"
	evidence "$tmpdir/features" 5
	exit 4
fi
echo "1..$nr_tests"

workload_start "$workload" 16 64 || { echo "Bail out! the workload did not start: $(head -c 200 "$wl_out")"; exit 1; }
echo "# workload pid $wl_pid: $wl_line"

# the software PMU by its name, which damo passes through and the kernel
# resolves: its type number, 1 (PERF_TYPE_SOFTWARE), reads back
prep="perf_event type=software config=2 sample_period=1"
# shellcheck disable=SC2086 # the prep's words
if damo start --target_pid "$wl_pid" --probe_prep $prep > "$tmpdir/start" 2>&1
then
	ok "start: damo start --target_pid $wl_pid --probe_prep $prep"
else
	not_ok "start: damo start --target_pid $wl_pid --probe_prep $prep exited $?"
	evidence "$tmpdir/start"
	echo "Bail out! no kdamond to test"
	exit 1
fi

sysfs_prep=""
for f in "$probe/preps/nr_preps" "$probe/preps/0/prep_action" \
	"$probe/preps/0/type" "$probe/preps/0/config" "$probe/preps/0/sample_period"
do
	rd v "$f" || v="?"
	sysfs_prep+="${sysfs_prep:+ }$(basename "$f")=$v"
done
if [ "$sysfs_prep" = "nr_preps=1 prep_action=perf_event type=1 config=2 sample_period=1" ]
then
	ok "sysfs: probe 0 has the prep ($sysfs_prep)"
else
	not_ok "sysfs: probe 0 has $sysfs_prep"
fi

n_all=0 n_shown=0 n_hot=0 n_hot_hit=0 n_cold=0 n_cold_hit=0
for ((try = 1; ; try++))
do
	sleep 2
	report_rc=0
	report > "$tmpdir/report" 2>&1 || report_rc=$?
	[ "$report_rc" -eq 0 ] && judge "$tmpdir/report"
	[ "$n_hot_hit" -gt 0 ] || [ "$try" -ge 5 ] && break
done
echo "# report $try: $n_all regions, $n_shown with probe hits shown; hot buffer: $n_hot regions, $n_hot_hit hit; cold buffer: $n_cold regions, $n_cold_hit hit"
if [ "$report_rc" -ne 0 ]
then
	not_ok "report: damo report access exited $report_rc"
	evidence "$tmpdir/report"
elif [ "$n_shown" -eq 0 ] || [ "$n_shown" -ne "$n_all" ]
then
	not_ok "report: probe hits shown for $n_shown of $n_all regions"
	evidence "$tmpdir/report"
else
	ok "report: damo report access shows the probe hits of its $n_all regions"
fi

if [ "$n_hot_hit" -gt 0 ]
then
	ok "hot: $n_hot_hit of the $n_hot regions of the hot buffer have probe hits"
else
	not_ok "hot: none of the $n_hot regions of the hot buffer has probe hits"
	evidence "$tmpdir/report"
fi

if [ "$n_cold" -gt 0 ] && [ "$n_cold_hit" -eq 0 ]
then
	ok "cold: none of the $n_cold regions of the cold buffer has probe hits"
elif [ "$n_cold" -eq 0 ]
then
	not_ok "cold: no region of the cold buffer alone in the report"
	evidence "$tmpdir/report"
else
	not_ok "cold: $n_cold_hit of the $n_cold regions of the cold buffer have probe hits"
	evidence "$tmpdir/report"
fi

if damo stop > "$tmpdir/stop" 2>&1
then
	rd st "$admin/kdamonds/0/state" || st="?"
	if [ "$st" = off ]
	then
		ok "stop: damo stop, the kdamond is off"
	else
		not_ok "stop: damo stop exited 0, but the kdamond is $st"
	fi
else
	not_ok "stop: damo stop exited $?"
	evidence "$tmpdir/stop"
fi

echo "# damo-patched: $((test_nr - nr_fail)) passed, $nr_fail failed"
[ "$nr_fail" -eq 0 ]
