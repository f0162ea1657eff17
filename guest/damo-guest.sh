#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# damo-guest.sh DAMO_PY WORKLOAD: run damo, DAMON's user space tool, in the
# guest, on a kernel with the series (scripts/damo.sh boots it):
#
#   plain  'damo start --target_pid' of a workload, 'damo report access' and
#          'damo stop' must exit 0, and the report must show regions of the
#          workload's address space;
#   perf   a kdamond that the DAMON sysfs interface set up with the software
#          page-faults perf event (a perf_event prep of probe 0,
#          monitoring_attrs/probes/0/preps/0/) monitors the workload:
#          damo 3.4.1 knows only the set_pgidle prep, so 'damo report
#          access' must fail and name the prep action it refuses; the
#          kdamond must still be on, with its event.
#
# damo caches what it learned of the kernel in ~/.damo.sysinfo; the guest's
# home is a fresh tmpfs, so every run probes the kernel anew.
# Exit: 0 if both passed, 1 otherwise.
# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"

damo_py=${1:?usage: damo-guest.sh DAMO_PY WORKLOAD}
workload=${2:?usage: damo-guest.sh DAMO_PY WORKLOAD}
admin=/sys/kernel/mm/damon/admin
kd=$admin/kdamonds/0
ctx=$kd/contexts/0
tmpdir=$(mktemp -d)
nr_fail=0

damo() { /usr/bin/python3 "$damo_py" "$@"; }

pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; nr_fail=$((nr_fail + 1)); }

# The regions of 'damo report access', one a line: "region START END RATE",
# the addresses in decimal (--raw_number)
report() {
	damo report access --raw_number \
		--format_region 'region <start address> <end address> <access rate>'
}

# overlaps START END FROM TO: whether [START, END) overlaps [FROM, TO)
overlaps() { [ "$1" -lt "$4" ] && [ "$2" -gt "$3" ]; }

# check_report NAME FILE: FILE, the output of report(), must show regions of
# the workload's buffers; prints how many of its regions do
check_report()
{
	local name=$1 file=$2 n=0 all=0 start end
	while read -r _ start end _
	do
		all=$((all + 1))
		if overlaps "$start" "$end" "$wl_hot_start" "$wl_hot_end" ||
			overlaps "$start" "$end" "$wl_cold_start" "$wl_cold_end"
		then
			n=$((n + 1))
		fi
	done < <(grep -E '^region [0-9]+ [0-9]+ ' "$file")
	if [ "$n" -gt 0 ]
	then
		pass "$name: the report shows $n of its $all regions in the workload's buffers"
	else
		fail "$name: the report shows none of its $all regions in the workload's buffers"
		head -n 20 "$file" | sed 's/^/    /'
	fi
}

trap 'kill "$wl_pid" 2> /dev/null; echo 0 > "$admin/kdamonds/nr_kdamonds" 2> /dev/null' EXIT
echo "damo $(damo version)"
workload_start "$workload" 16 64 || { echo "FAIL the workload did not start"; exit 1; }
echo "workload pid $wl_pid: $wl_line"

# plain: damo sets the kdamond up and starts it
if damo start --target_pid "$wl_pid" > "$tmpdir/start" 2>&1
then
	pass "plain: 'damo start --target_pid $wl_pid'"
	sleep 3
	if report > "$tmpdir/report" 2>&1
	then
		pass "plain: 'damo report access'"
		check_report plain "$tmpdir/report"
	else
		fail "plain: 'damo report access' exited $?"
		tail -n 5 "$tmpdir/report" | sed 's/^/    /'
	fi
	if damo stop > "$tmpdir/stop" 2>&1
	then
		pass "plain: 'damo stop'"
	else
		fail "plain: 'damo stop' exited $?"
		tail -n 5 "$tmpdir/stop" | sed 's/^/    /'
	fi
else
	fail "plain: 'damo start --target_pid $wl_pid' exited $?"
	tail -n 5 "$tmpdir/start" | sed 's/^/    /'
fi

# perf: the sysfs interface sets the kdamond up, damo reads it
wr() { printf '%s\n' "$2" > "$1" || { echo "FAIL writing '$2' to $1"; exit 1; }; }
wr "$admin/kdamonds/nr_kdamonds" 1
wr "$kd/contexts/nr_contexts" 1
wr "$ctx/operations" vaddr
wr "$ctx/targets/nr_targets" 1
wr "$ctx/targets/0/pid_target" "$wl_pid"
perf_preps "$ctx" 1 || { echo "FAIL $write_msg"; exit 1; }
wr "$preps/0/type" 1
wr "$preps/0/config" 2
wr "$preps/0/sample_period" 1
wr "$kd/state" on
sleep 3
# damo 3.4.1 knows no perf_event prep: it must refuse to read the kdamond,
# naming the prep action, rather than misreport it (the damo patches of
# damo/ teach it the prep: scripts/damo-patch.sh)
report_rc=0
report > "$tmpdir/report-perf" 2>&1 || report_rc=$?
if [ "$report_rc" -ne 0 ] &&
	grep -q 'wrong prep action (perf_event)' "$tmpdir/report-perf"
then
	pass "perf: 'damo report access' refuses the perf_event prep (exit $report_rc, 'wrong prep action (perf_event)')"
else
	fail "perf: 'damo report access' exited $report_rc without refusing the perf_event prep"
	tail -n 5 "$tmpdir/report-perf" | sed 's/^/    /'
fi
if [ "$(cat "$kd/state")" = on ] && [ "$(cat "$preps/nr_preps")" = 1 ] &&
	[ "$(cat "$preps/0/prep_action" 2> /dev/null)" = perf_event ]
then
	pass "perf: the kdamond is still on, with its perf event"
else
	fail "perf: the kdamond is $(cat "$kd/state"), nr_preps $(cat "$preps/nr_preps"), prep_action $(cat "$preps/0/prep_action" 2> /dev/null)"
fi
wr "$kd/state" off

echo "damo: $nr_fail failed"
[ "$nr_fail" -eq 0 ]
