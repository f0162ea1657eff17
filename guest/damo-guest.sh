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
#          kdamond must still be on, with its event;
#   pgidle 'damo start --ops paddr --regions ... --probe_prep set_pgidle
#          --probe_filter allow pgidle_unset' (the Accessed-bit probe of
#          mm.git's preps, which damo 3.4.1 speaks; paddr, as the kernel
#          applies probes there) around the frames of a workload that
#          writes its hot buffer, write-protected by a fork each round (a
#          buffer written through cached TLB entries keeps its Accessed
#          bits clear under TCG once DAMON cleared them): 'damo report
#          access' must show probe hits in regions that hold those frames;
#   features  'damo features supported' must list the five features that
#          damo 3.4.1 turns on when it sees probes/0/preps (probe_preps,
#          probe_prep_set_pgidle, probe_type_pgidle_unset,
#          probe_type_pgidle_set, damos_filter_probe_hits_wsum), and the
#          kernel must take each: the prep action, both probe filter types
#          and the DAMOS filter type written and read back.
#
# damo caches what it learned of the kernel in ~/.damo.sysinfo; the guest's
# home is a fresh tmpfs, so every run probes the kernel anew.
# Exit: 0 if all passed, 1 otherwise.
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
wr "$admin/kdamonds/nr_kdamonds" 0

# pgidle: damo 3.4.1's Accessed-bit probe, which the kernel has for paddr
# (ops->apply_probes): a paddr context around the frames of a workload that
# writes its write-protected hot buffer; the regions of those frames have
# probe hits
kill "$wl_pid" 2> /dev/null
workload_start "$workload" 16 64 "" cow || { echo "FAIL the workload did not start"; exit 1; }
page_size=$(getconf PAGESIZE)
sleep 1
frames "$wl_pid" "$wl_hot_start" "$wl_hot_end" | sort -n > "$tmpdir/hot_pfns"
# the physical span of the hot buffer's frames, and 16 MiB around it
read -r lo hi < <(awk -v ps="$page_size" 'NR == 1 { lo = $1 } { hi = $1 }
	END { m = 4096; printf "%.0f %.0f\n", (lo > m ? lo - m : 0) * ps, (hi + 1 + m) * ps }' \
	"$tmpdir/hot_pfns")
if damo start --ops paddr --regions "$lo-$hi" --probe_prep set_pgidle \
	--probe_filter allow pgidle_unset > "$tmpdir/start-pgidle" 2>&1
then
	pass "pgidle: 'damo start --ops paddr --regions $lo-$hi --probe_prep set_pgidle --probe_filter allow pgidle_unset'"
	sleep 8
	damo report access --raw_number --format_region \
		'region <start address> <end address> <access rate> <probe hits>' \
		> "$tmpdir/report-pgidle" 2>&1
	# the frames at the report (khugepaged may have moved some)
	frames "$wl_pid" "$wl_hot_start" "$wl_hot_end" | sort -n > "$tmpdir/hot_pfns.now"
	echo "# pgidle: $(wc -l < "$tmpdir/hot_pfns") hot frames at the start, $(wc -l < "$tmpdir/hot_pfns.now") at the report, $(comm -12 "$tmpdir/hot_pfns" "$tmpdir/hot_pfns.now" | wc -l) the same"
	mv "$tmpdir/hot_pfns.now" "$tmpdir/hot_pfns"
	# regions that hold a frame of the hot buffer, and those with hits
	read -r n_hot hits < <(awk -v ps="$page_size" '
		NR == FNR { pfn[NR] = $1; n = NR; next }
		$1 == "region" {
			s = $2 / ps; e = $3 / ps; hot = 0
			for (i = 1; i <= n && !hot; i++)
				hot = pfn[i] >= s && pfn[i] < e
			if (!hot)
				next
			nhot++
			if ($5 > 0) h++
		}
		END { print nhot + 0, h + 0 }' "$tmpdir/hot_pfns" "$tmpdir/report-pgidle")
	if [ "$hits" -gt 0 ]
	then
		pass "pgidle: $hits of the $n_hot regions that hold the hot buffer's frames have probe hits"
		grep -E '^ *region' "$tmpdir/report-pgidle" | sed 's/^/    /'
	else
		fail "pgidle: none of the $n_hot regions that hold the hot buffer's frames has probe hits"
		grep -E '^ *region' "$tmpdir/report-pgidle" | head -n 20 | sed 's/^/    /'
	fi
	damo stop > /dev/null 2>&1 || fail "pgidle: 'damo stop' exited $?"
else
	fail "pgidle: 'damo start' with a set_pgidle prep exited $?"
	tail -n 5 "$tmpdir/start-pgidle" | sed 's/^/    /'
fi

# features: what damo says of the kernel, and what the kernel takes
damo features supported > "$tmpdir/features" 2>&1
missing=""
for f in probe_preps probe_prep_set_pgidle probe_type_pgidle_unset \
	probe_type_pgidle_set damos_filter_probe_hits_wsum
do
	grep -qx "sysfs/$f" "$tmpdir/features" || missing+=" sysfs/$f"
done
if [ -z "$missing" ]
then
	pass "features: damo lists the five prep features as supported"
else
	fail "features: damo does not list$missing"
fi
# takes VALUE FILE: VALUE written to FILE reads back
takes() { printf '%s\n' "$1" > "$2" 2> /dev/null && [ "$(cat "$2")" = "$1" ]; }
wr "$admin/kdamonds/nr_kdamonds" 1
wr "$kd/contexts/nr_contexts" 1
probe=$ctx/monitoring_attrs/probes/0
wr "$ctx/monitoring_attrs/probes/nr_probes" 1
wr "$probe/preps/nr_preps" 1
wr "$probe/filters/nr_filters" 2
wr "$ctx/schemes/nr_schemes" 1
wr "$ctx/schemes/0/core_filters/nr_filters" 1
untrue=""
takes set_pgidle "$probe/preps/0/prep_action" || untrue+=" prep_action set_pgidle"
takes pgidle_unset "$probe/filters/0/type" || untrue+=" probe filter pgidle_unset"
takes pgidle_set "$probe/filters/1/type" || untrue+=" probe filter pgidle_set"
takes probe_hits_wsum "$ctx/schemes/0/core_filters/0/type" ||
	untrue+=" DAMOS filter probe_hits_wsum"
if [ -z "$untrue" ]
then
	pass "features: the kernel takes each (set_pgidle, pgidle_unset, pgidle_set, probe_hits_wsum)"
else
	fail "features: the kernel does not take:$untrue"
fi
wr "$admin/kdamonds/nr_kdamonds" 0

echo "damo: $nr_fail failed"
[ "$nr_fail" -eq 0 ]
