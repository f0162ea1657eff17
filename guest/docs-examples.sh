#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# docs-examples.sh: runs in the test guest, as root (scripts/docs-examples.sh
# boots it).  Produces, from ONE run of damon_perf_obs_test.sh, every example
# output that Documentation/admin-guide/mm/damon/perf-observability.rst
# quotes, so that their numbers agree (issue #12), and checks that they do.
#
# usage: docs-examples.sh KSELFTEST_DAMON_DIR [OBS_TEST_OPTION...]
#   KSELFTEST_DAMON_DIR  the installed damon kselftests (damon/ of the
#                        kselftest install dir); copied to /tmp/ks first
#   OBS_TEST_OPTION      options of damon_perf_obs_test.sh
#                        (default: --pmu software)
# Env: DOCS_BUFFER_KB (65536) tracefs buffer per CPU; DOCS_LINES (3) trace
# lines kept per event.
#
# Output, in /tmp/out (build/vm/docs-examples/ on the host):
#   obs-test.txt          the obs test's full output (and obs-test.rc)
#   perf_stats-before.txt perf_stats before the obs test (the delta base)
#   perf_stats.txt        `cat perf_stats` right after the obs test exits
#   trace-sample.txt, trace-overflow.txt, trace-missed.txt, trace-drain.txt
#                         the first DOCS_LINES lines of damon_perf_sample,
#                         _ring_overflow, _report_missed and _drain of the
#                         main run (an empty file: the event never fired)
#   trace.txt             the trace of the main run (the funnel's input)
#   trace-full.txt        the whole trace, controls included; trace-stats.txt
#                         the per-CPU buffer stats (overrun, dropped events)
#   funnel.txt            damon_perf_funnel.py parse trace.txt
#   checks.txt            the consistency checks (also printed); manifest.txt
# Exit: 0 if the obs test passed and every check passed, 1 otherwise.
#
# Why the trace is taken this way: the obs test does enable the damon_perf_*
# tracepoints itself, but in two trace instances of its own
# (instances/damon_perf_obs_{samples,drain}_PID) that it removes at exit,
# together with its temporary directory, and it has no option to keep them.
# It clears the top level buffer only when it cannot create instances (and
# then uses that buffer).  So this script enables the four events in the top
# level buffer (a big one, not overwriting: a full buffer drops the newest
# events and counts them, rather than losing the start) before the obs test
# starts, and stops tracing right after it exits: the top level buffer sees
# every event that the obs test's instances see.  It would also see samples
# from before the obs test's kdamond starts, which the obs test's own trace
# numbers leave out.  To cut them off, the obs test's output is read line by
# line, and at its "workload: " line (printed before the kdamond starts:
# start_workload, then setup_damon, then run_damon) a marker is written to
# trace_marker.  trace.txt is the trace after the marker (all '#' header
# lines kept, so that the funnel still sees buffer losses); it is the window
# of the obs test's numbers, which the checks verify: its damon_perf_drain
# lines must sum to exactly what the obs test reports for its own trace.
# (The marker races with setup_damon's ~20 sysfs writes before 'on'; a late
# marker would show as a failed "same window" check, not as wrong examples.)
# perf_stats is cumulative since boot; the host boots with kunit.enable=0 so
# that the KUnit tests count nothing, and the delta of perf_stats-before.txt
# and perf_stats.txt covers the whole trace.  So perf_stats.txt also counts
# the controls (e.g. callback, inv_phys and xlate_fail of the paddr controls), which the
# obs test's deltas leave out: the docs text must say so, or quote deltas.
set -u -o pipefail
export LC_ALL=C

ksdir=${1:?usage: docs-examples.sh KSELFTEST_DAMON_DIR [OBS_TEST_OPTION...]}
shift
obs_args=("$@")
[ ${#obs_args[@]} -gt 0 ] || obs_args=(--pmu software)
bufkb=${DOCS_BUFFER_KB:-65536}
nlines=${DOCS_LINES:-3}
O=/tmp/out
T=/sys/kernel/tracing
PS=/sys/kernel/debug/damon/perf_stats
MARK="docs-examples: the obs test's main run starts"
EVENTS="damon_perf_sample damon_perf_ring_overflow damon_perf_report_missed damon_perf_drain"

die() { echo "docs-examples: ERROR: $*"; exit 1; }

[ -d "$O" ] || die "no result dir $O"
[ -f "$ksdir/damon_perf_obs_test.sh" ] || die "no damon_perf_obs_test.sh in $ksdir"
[ -f "$ksdir/damon_perf_funnel.py" ] || die "no damon_perf_funnel.py in $ksdir"
[ -r "$PS" ] || die "no $PS (observe off?)"
for ev in $EVENTS; do
	[ -f "$T/events/damon/$ev/enable" ] || die "no tracepoint damon:$ev in $T"
done
rm -rf /tmp/ks
cp -a "$ksdir" /tmp/ks || die "cannot copy $ksdir to /tmp/ks"

# Leave tracing as the guest found it, also on failure.
restore() {
	echo 0 >"$T/tracing_on"
	for ev in $EVENTS; do echo 0 >"$T/events/damon/$ev/enable"; done
	echo 1 >"$T/options/overwrite"
	echo 1 >"$T/tracing_on"
}
trap restore EXIT

{
	echo "boot_id: $(cat /proc/sys/kernel/random/boot_id)"
	echo "kernel: $(uname -r) ($(uname -v))"
	echo "cpus: $(nproc), cmdline: $(cat /proc/cmdline)"
	echo "obs test: damon_perf_obs_test.sh ${obs_args[*]}"
	echo "tracefs: top level buffer, ${bufkb} KB per CPU, overwrite off"
	echo "started: $(date -u '+%F %T') UTC"
} >"$O/manifest.txt"

echo 0 >"$T/tracing_on"
echo 0 >"$T/options/overwrite"
echo "$bufkb" >"$T/buffer_size_kb" || die "cannot set buffer_size_kb to $bufkb"
echo >"$T/trace"
for ev in $EVENTS; do echo 1 >"$T/events/damon/$ev/enable"; done
cat "$PS" >"$O/perf_stats-before.txt"
echo 1 >"$T/tracing_on"

echo "docs-examples: running damon_perf_obs_test.sh ${obs_args[*]}"
(cd /tmp/ks && ./damon_perf_obs_test.sh "${obs_args[@]}") 2>&1 | {
	marked=false
	while IFS= read -r l; do
		printf '%s\n' "$l"
		case "$l" in
		*"workload: "*)
			$marked || echo "$MARK" >"$T/trace_marker"
			marked=true
			;;
		esac
	done
} | tee "$O/obs-test.txt"
obs_rc=${PIPESTATUS[0]}
cat "$PS" >"$O/perf_stats.txt"
echo 0 >"$T/tracing_on"
echo "$obs_rc" >"$O/obs-test.rc"
echo "docs-examples: the obs test exited $obs_rc; saving the trace"

for c in "$T"/per_cpu/cpu*; do
	echo "${c##*/}:"
	cat "$c/stats"
done >"$O/trace-stats.txt"
cat "$T/trace" >"$O/trace-full.txt"
if grep -qF "tracing_mark_write: $MARK" "$O/trace-full.txt"; then
	window="after the marker"
	awk -v m="tracing_mark_write: $MARK" '/^#/ { print; next }
		index($0, m) { on = 1; next } on' "$O/trace-full.txt" >"$O/trace.txt"
else
	# The obs test cleared the top level buffer (no trace instances):
	# what is left is its own window.
	window="the whole trace: no marker (the obs test cleared the buffer?)"
	cp "$O/trace-full.txt" "$O/trace.txt"
fi
for ev in sample:damon_perf_sample overflow:damon_perf_ring_overflow \
	missed:damon_perf_report_missed drain:damon_perf_drain; do
	grep -m "$nlines" " ${ev#*:}: " "$O/trace.txt" >"$O/trace-${ev%%:*}.txt"
done
python3 /tmp/ks/damon_perf_funnel.py parse "$O/trace.txt" >"$O/funnel.txt" 2>&1 ||
	echo "(damon_perf_funnel.py exited $?)" >>"$O/funnel.txt"

# --- consistency checks -----------------------------------------------------
nfail=0
res() {	# res PASS|FAIL|INFO TEXT
	[ "$1" = FAIL ] && nfail=$((nfail + 1))
	printf '%s %s\n' "$1" "$2" | tee -a "$O/checks.txt"
}
law() {	# law TEXT A OP B: OP is == or <=
	local ok=false
	case "$3" in
	==) [ "$2" = "$4" ] && ok=true ;;
	"<=") [ "$2" -le "$4" ] && ok=true ;;
	esac
	if $ok; then res PASS "$1 ($2 $3 $4)"; else res FAIL "$1 ($2 $3 $4 does not hold)"; fi
}
# ps_row NAME FILE: the value of the row NAME of a perf_stats table
ps_row() {
	awk -v n="$1" '{ for (i = 1; i < NF; i++) if ($i == n)
		for (j = i + 1; j <= NF; j++) if ($j ~ /^[0-9]+$/) { print $j; exit } }' "$2"
}
# drains FILE: "N total matched updated dropped" of its damon_perf_drain lines
drains() {
	awk '/ damon_perf_drain: / { n++
		for (i = 1; i <= NF; i++) if (split($i, kv, "=") == 2) s[kv[1]] += kv[2] }
		END { printf "%d %d %d %d %d\n", n, s["total"], s["matched"], s["updated"], s["dropped"] }' "$1"
}
: >"$O/checks.txt"
res INFO "boot $(cat /proc/sys/kernel/random/boot_id): every file is of this one run; trace window: $window"
if [ "$obs_rc" -eq 0 ]; then
	res PASS "damon_perf_obs_test.sh ${obs_args[*]} exited 0 ($(tail -n 1 "$O/obs-test.txt"))"
else
	res FAIL "damon_perf_obs_test.sh ${obs_args[*]} exited $obs_rc: not an example for the docs"
fi
lost=$(awk '/^(overrun|commit overrun|dropped events): / { s += $NF } END { print s + 0 }' \
	"$O/trace-stats.txt")
law "the trace buffer lost no event (overrun, commit overrun, dropped events: trace-stats.txt)" "$lost" == 0

upd=$(ps_row update "$O/perf_stats.txt")
upd0=$(ps_row update "$O/perf_stats-before.txt")
if [ -z "$upd" ] || [ -z "$upd0" ]; then
	res FAIL "perf_stats has no 'update' row: the format changed, see ps_row() here"
	upd=0 upd0=0
fi
read -r _ _ _ all_upd _ < <(drains "$O/trace-full.txt")
law "sum of updated= of all traced damon_perf_drain lines <= perf_stats update" "$all_upd" "<=" "$upd"
law "... <= the delta of perf_stats update over the run (perf_stats-before.txt)" "$all_upd" "<=" "$((upd - upd0))"

read -r n tot mat wupd dro < <(drains "$O/trace.txt")
res INFO "trace.txt: $n damon_perf_drain lines (total=$tot matched=$mat updated=$wupd dropped=$dro)"
obs=$(sed -n 's/.*damon_perf_drain trace: \([0-9]*\) drains (total=\([0-9]*\) matched=\([0-9]*\) updated=\([0-9]*\) dropped=\([0-9]*\)).*/\1 \2 \3 \4 \5/p' \
	"$O/obs-test.txt" | head -n 1)
if [ -n "$obs" ]; then
	law "same window: drains, total, matched, updated, dropped of trace.txt == the obs test's drain trace" \
		"'$n $tot $mat $wupd $dro'" == "'$obs'"
else
	res FAIL "the obs test printed no 'damon_perf_drain trace: N drains (...)' line to compare with"
fi
obs_upd=$(sed -n 's/.*\] Update: \([0-9]*\) region updates.*/\1/p' "$O/obs-test.txt" | head -n 1)
if [ -n "$obs_upd" ]; then
	law "the obs test's Update delta <= the delta of perf_stats update" "$obs_upd" "<=" "$((upd - upd0))"
	law "sum of updated= of trace.txt <= the obs test's Update delta" "$wupd" "<=" "$obs_upd"
else
	res FAIL "the obs test printed no 'Update: N region updates' line"
fi
obs_cb=$(sed -n 's/.*\] Sampling: \([0-9]*\) callbacks received.*/\1/p' "$O/obs-test.txt" | head -n 1)
res INFO "damon_perf_sample lines of trace.txt: $(grep -c ' damon_perf_sample: ' "$O/trace.txt");\
 the obs test's callback delta: ${obs_cb:-none}; perf_stats callback: $(ps_row callback "$O/perf_stats.txt")"
for f in sample overflow missed drain; do
	res INFO "trace-$f.txt: $(wc -l <"$O/trace-$f.txt") lines"
done
res INFO "funnel.txt: $(head -n 1 "$O/funnel.txt")"
echo "finished: $(date -u '+%F %T') UTC" >>"$O/manifest.txt"
echo "docs-examples: $nfail check(s) failed"
[ "$nfail" -eq 0 ] || exit 1
