#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# uses-guest.sh DAMO_PY WORKLOAD: in the guest, the three uses of perf_event
# probe preps, each set up with DAMON sysfs writes (printed, as a user would
# type them) and read back with 'damo report access' of the patched damo
# (printed), on guest/workload.c's hot and cold buffers.  KTAP on stdout:
#
#   perf        perf instead of the Accessed bits: a vaddr context whose one
#               probe has the software page-faults event as perf_event prep
#               (the workload refaults its hot buffer), and a DAMOS stat
#               scheme for regions with nr_accesses >= 1.  Passes if a region
#               of the hot buffer has an access rate and probe hits, no
#               region of the cold buffer alone has either, and the scheme
#               tried regions (stats/nr_tried > 0).
#   both        both sources side by side: a paddr context, probe 0 the
#               Accessed bits (a set_pgidle prep and a pgidle_unset filter),
#               probe 1 the page-faults event (the workload's writes fault on
#               write-protected, mapped pages: "cow" mode).  Passes if a
#               region that holds a frame of the hot buffer (from
#               /proc/PID/pagemap) has hits of both probes.
#   attrs-only  a probe weight: the vaddr context of 'perf' with weight 1 on
#               its probe.  Passes if a region of the hot buffer has probe
#               hits, and no region has an access rate (attributes-only
#               monitoring leaves nr_accesses alone).
#
# Exit: 0 if all passed, 1 if one failed, 4 if the kernel has no
# perf_event or set_pgidle prep.  DAMON is turned off and the workloads
# killed at exit.
# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"

damo_py=${1:?usage: uses-guest.sh DAMO_PY WORKLOAD}
workload=${2:?usage: uses-guest.sh DAMO_PY WORKLOAD}
admin=/sys/kernel/mm/damon/admin
kd=$admin/kdamonds/0
ctx=$kd/contexts/0
probes=$ctx/monitoring_attrs/probes
tmpdir=$(mktemp -d)
page_size=$(getconf PAGESIZE)
nr_tests=3
test_nr=0
nr_fail=0

damo() { /usr/bin/python3 "$damo_py" "$@"; }
ok() { test_nr=$((test_nr + 1)); echo "ok $test_nr $*"; }
not_ok() { test_nr=$((test_nr + 1)); echo "not ok $test_nr $*"; nr_fail=$((nr_fail + 1)); }

cleanup()
{
	[ -f "$kd/state" ] && echo off > "$kd/state" 2> /dev/null
	echo 0 > "$admin/kdamonds/nr_kdamonds" 2> /dev/null
	[ -s "$tmpdir/pids" ] && xargs kill < "$tmpdir/pids" 2> /dev/null
	rm -rf "$tmpdir"
}
trap cleanup EXIT

# w FILE VALUE: writes VALUE to FILE, a path under the context directory, and
# prints the write as a KTAP comment; a failed write ends the run
w()
{
	echo "#   echo $2 > ${1#"$ctx"/}"
	try_write "$1" "$2" || { echo "Bail out! writing $2 to $1: $write_err"; exit 1; }
}

# new_ctx OPS: kdamond 0 with one context of OPS, no target, probe, scheme
new_ctx()
{
	try_write "$admin/kdamonds/nr_kdamonds" 1 &&
		try_write "$kd/contexts/nr_contexts" 1 ||
		{ echo "Bail out! no kdamond: $write_err"; exit 1; }
	echo "# cd $ctx"
	w "$ctx/operations" "$1"
}

# page_faults_prep PREP: the software page-faults event, every fault sampled
page_faults_prep()
{
	w "$1/prep_action" perf_event
	w "$1/type" software
	w "$1/config" 2
	w "$1/sample_period" 1
}

# report FILE: 'damo report access' into FILE, printed; one line a region:
# "region START END RATE HITS...", addresses in decimal, RATE the access
# rate, HITS the hits of each probe
report()
{
	local rc=0

	echo "# \$ damo report access --raw_number --format_region 'region <start address> <end address> <access rate> <probe hits>'"
	damo report access --raw_number --format_region \
		'region <start address> <end address> <access rate> <probe hits>' \
		> "$1" 2>&1 || rc=$?
	# the heatmap line is colored, and of no use here
	grep -v -e '^heatmap:' -e '^# min/max temperatures' "$1" | sed 's/^/#   /'
	return "$rc"
}

# overlaps START END FROM TO: whether [START, END) overlaps [FROM, TO)
overlaps() { [ "$1" -lt "$4" ] && [ "$2" -gt "$3" ]; }

# nonzero RATE: whether the access rate RATE (e.g. "10.000000") is not zero
nonzero() { [[ "$1" =~ ^[0-9.]+$ ]] && ! [[ "$1" =~ ^0*\.?0*$ ]]; }

# judge_vaddr FILE: counts, of the regions in the report FILE, those of the
# hot buffer with an access rate (hot_rate) and with probe 0 hits
# (hot_hits), those of the cold buffer alone with either (cold_seen), those
# with any access rate (any_rate), and all (n_regions)
judge_vaddr()
{
	local start end rate hits

	hot_rate=0 hot_hits=0 cold_seen=0 any_rate=0 n_regions=0
	while read -r _ start end rate hits _
	do
		n_regions=$((n_regions + 1))
		nonzero "$rate" && any_rate=$((any_rate + 1))
		if overlaps "$start" "$end" "$wl_hot_start" "$wl_hot_end"
		then
			nonzero "$rate" && hot_rate=$((hot_rate + 1))
			[ "${hits:-0}" -gt 0 ] && hot_hits=$((hot_hits + 1))
		elif overlaps "$start" "$end" "$wl_cold_start" "$wl_cold_end"
		then
			{ nonzero "$rate" || [ "${hits:-0}" -gt 0 ]; } &&
				cold_seen=$((cold_seen + 1))
		fi
	done < <(grep -E '^region +[0-9]+ +[0-9]+ ' "$1")
}

# run_vaddr WEIGHT FILE: the 'perf' context (probe weight WEIGHT) on the
# refaulting workload for a while, then its report into FILE
run_vaddr()
{
	new_ctx vaddr
	w "$ctx/targets/nr_targets" 1
	w "$ctx/targets/0/pid_target" "$wl_pid"
	w "$probes/nr_probes" 1
	w "$probes/0/weight" "$1"
	w "$probes/0/preps/nr_preps" 1
	page_faults_prep "$probes/0/preps/0"
	w "$ctx/schemes/nr_schemes" 1
	w "$ctx/schemes/0/action" stat
	w "$ctx/schemes/0/access_pattern/nr_accesses/min" 1
	w "$ctx/schemes/0/access_pattern/nr_accesses/max" 4294967295
	w "$ctx/schemes/0/access_pattern/age/max" 4294967295
	w "$ctx/schemes/0/access_pattern/sz/max" 18446744073709551615
	w "$kd/state" on
	sleep 5
	try_write "$kd/state" update_schemes_stats
	rd nr_tried "$ctx/schemes/0/stats/nr_tried" || nr_tried=0
	report "$2" || return 1
	judge_vaddr "$2"
}

echo "TAP version 13"
echo "# damo $(damo version) from $damo_py"
rm -f "$HOME/.damo.sysinfo"
# damo learns the kernel's features by staging kdamonds, which it cannot while
# DAMON runs: let it learn (and cache) them now
damo features supported > "$tmpdir/features" 2>&1
if [ ! -d "$admin" ]
then
	echo "1..0 # SKIP no DAMON sysfs interface"
	exit 4
fi
try_write "$admin/kdamonds/nr_kdamonds" 1 &&
	try_write "$kd/contexts/nr_contexts" 1 &&
	try_write "$probes/nr_probes" 1 &&
	try_write "$probes/0/preps/nr_preps" 1 2> /dev/null
if ! try_write "$probes/0/preps/0/prep_action" perf_event 2> /dev/null ||
	! try_write "$probes/0/preps/0/prep_action" set_pgidle 2> /dev/null
then
	echo "1..0 # SKIP the kernel has no perf_event or no set_pgidle probe prep"
	exit 4
fi
echo "1..$nr_tests"

# perf: perf instead of Accessed bits, with a DAMOS scheme on its hotness
workload_start "$workload" 16 64 || { echo "Bail out! the workload did not start"; exit 1; }
echo "# perf: workload pid $wl_pid ($wl_line), refaulting its hot buffer"
if run_vaddr 0 "$tmpdir/perf"
then
	echo "# perf: $n_regions regions; hot buffer: $hot_rate with an access rate, $hot_hits with probe hits; cold buffer: $cold_seen with either; stat scheme (nr_accesses >= 1): nr_tried $nr_tried"
	if [ "$hot_rate" -gt 0 ] && [ "$hot_hits" -gt 0 ] &&
		[ "$cold_seen" -eq 0 ] && [ "${nr_tried:-0}" -gt 0 ]
	then
		ok "perf: the hot buffer's samples make its access rate and probe hits, and DAMOS acts on them"
	else
		not_ok "perf: hot $hot_rate/$hot_hits, cold $cold_seen, nr_tried $nr_tried"
	fi
else
	not_ok "perf: damo report access failed"
fi
w "$kd/state" off

# attrs-only: the same with a probe weight
echo "# attrs-only: the perf context with weight 1 on its probe"
if run_vaddr 1 "$tmpdir/attrs"
then
	echo "# attrs-only: $n_regions regions; hot buffer: $hot_hits with probe hits; $any_rate with an access rate"
	if [ "$hot_hits" -gt 0 ] && [ "$any_rate" -eq 0 ]
	then
		ok "attrs-only: the hot buffer's regions have probe hits, and no region an access rate"
	else
		not_ok "attrs-only: hot hits $hot_hits, regions with an access rate $any_rate"
	fi
else
	not_ok "attrs-only: damo report access failed"
fi
w "$kd/state" off
xargs kill < "$tmpdir/pids" 2> /dev/null
: > "$tmpdir/pids"

# both: Accessed bits and page faults, two probes of one paddr context
workload_start "$workload" 16 64 "" cow || { echo "Bail out! the workload did not start"; exit 1; }
echo "# both: workload pid $wl_pid ($wl_line), writing its write-protected hot buffer"
sleep 1
frames "$wl_pid" "$wl_hot_start" "$wl_hot_end" | sort -n > "$tmpdir/hot_pfns"
echo "# both: $(wc -l < "$tmpdir/hot_pfns") frames of the hot buffer"
# the physical span of the hot buffer's frames, and 16 MiB around it
read -r lo hi < <(awk -v ps="$page_size" 'NR == 1 { lo = $1 } { hi = $1 }
	END { m = 4096; printf "%.0f %.0f\n", (lo > m ? lo - m : 0) * ps, (hi + 1 + m) * ps }' \
	"$tmpdir/hot_pfns")
new_ctx paddr
w "$ctx/targets/nr_targets" 1
w "$ctx/targets/0/regions/nr_regions" 1
w "$ctx/targets/0/regions/0/start" "$lo"
w "$ctx/targets/0/regions/0/end" "$hi"
w "$probes/nr_probes" 2
w "$probes/0/preps/nr_preps" 1
w "$probes/0/preps/0/prep_action" set_pgidle
w "$probes/0/filters/nr_filters" 1
w "$probes/0/filters/0/type" pgidle_unset
w "$probes/0/filters/0/matching" Y
w "$probes/0/filters/0/allow" Y
w "$probes/1/preps/nr_preps" 1
page_faults_prep "$probes/1/preps/0"
w "$probes/1/preps/0/sample_phys_addr" 1
w "$kd/state" on
sleep 8
if report "$tmpdir/both"
then
	# regions holding a hot frame, with hits of probe 0 and of probe 1
	read -r n_hot both0 both1 both < <(grep -E '^region +[0-9]+ +[0-9]+ ' "$tmpdir/both" |
		awk -v ps="$page_size" 'NR == FNR { pfn[NR] = $1; n = NR; next }
		{
			s = $2 / ps; e = $3 / ps; hot = 0
			for (i = 1; i <= n && !hot; i++)
				hot = pfn[i] >= s && pfn[i] < e
			if (!hot)
				next
			nhot++
			if ($5 > 0) h0++
			if ($6 > 0) h1++
			if ($5 > 0 && $6 > 0) hb++
		}
		END { print nhot + 0, h0 + 0, h1 + 0, hb + 0 }' "$tmpdir/hot_pfns" -)
	echo "# both: $n_hot regions hold hot frames; $both0 with Accessed-bit probe hits, $both1 with page-fault probe hits, $both with both"
	if [ "$both" -gt 0 ]
	then
		ok "both: regions of the hot buffer's frames have hits of both probes"
	else
		not_ok "both: no region of the hot buffer's frames has hits of both probes"
	fi
else
	not_ok "both: damo report access failed"
fi
if [ "$nr_fail" -gt 0 ]
then
	rd st "$kd/state" || st="?"
	echo "# the kdamond is $st"
	dmesg | grep -i damon | tail -n 5 | sed 's/^/# dmesg: /'
fi
w "$kd/state" off

echo "# uses: $((test_nr - nr_fail)) passed, $nr_fail failed"
[ "$nr_fail" -eq 0 ]
