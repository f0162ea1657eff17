# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154 # consumers-guest.sh sets the globals it uses
# consumers-guest.sh, check funnel: damon_perf_funnel.py record, live.
# Sourced by consumers-guest.sh, which calls run_funnel while DAMON runs;
# uses its pass/fail/skip, keep and evidence.
#
# The series' pipeline summary (tools/testing/selftests/damon), live through
# tracefs: every stage must have counted something, in funnel order.
run_funnel() {
	local py=/usr/bin/python3 out rc
	if [ -z "$funnel" ] || [ ! -f "$funnel" ]; then
		skip funnel "damon_perf_funnel.py not given or not found (${funnel:-none})"
		return
	fi
	[ -x "$py" ] || { skip funnel "no $py"; return; }
	damon_running
	# Reports in flight at either end of the trace sit in the context's
	# rings: at most report_ring_order entries on each possible CPU.
	local order cpus
	order=$(cat /sys/module/damon_core/parameters/report_ring_order 2>/dev/null)
	cpus=$(awk -F, '{ for (i = 1; i <= NF; i++) { n = split($i, r, "-");
		c += n == 2 ? r[2] - r[1] + 1 : 1 } } END { print c }' \
		/sys/devices/system/cpu/possible 2>/dev/null)
	if ! [[ "$order" =~ ^[0-9]+$ && "$cpus" =~ ^[0-9]+$ ]]; then
		fail funnel "cannot read the ring bound: report_ring_order '$order', possible CPUs '$cpus'"
		return
	fi
	# a buffer for all events of the run: a lost event fails the check
	out=$("$py" "$funnel" record --duration "$secs" --buffer-size-kb 32768 \
		--json 2>"$W/funnel.err")
	rc=$?
	printf '%s\n' "$out" >"$W/funnel.json"
	keep "$W/funnel.json"
	keep "$W/funnel.err"
	if [ "$rc" -ne 0 ]; then
		fail funnel "exit $rc"
		tail -n 4 "$W/funnel.err" | evidence 4
		return
	fi
	if res=$(RING_BOUND=$((cpus << order)) "$py" -c '
import json, os, sys
d = json.load(sys.stdin)
bound = int(os.environ["RING_BOUND"])
s, loss = d["stages"], d["trace_loss"]
order = ["callback", "valid", "enqueued", "drained", "matched"]
c = [s[k] for k in order]
print(" -> ".join("%s %d" % (k, s[k]) for k in order + ["region_updates"]))
if loss["lost_events"] or loss["lost_unknown"] or loss["entries_overwritten"]:
    print("the trace lost events: %s" % loss)
    sys.exit(1)
# drained and enqueued differ by the reports in flight at the start of the
# trace (in the rings, drained in it) and at its end (in the rings, or in
# the untraced last drain): each side at most what the rings hold, possible
# CPUs times ring entries; the other stages only shrink
if abs(c[2] - c[3]) > bound:
    print("enqueued and drained differ by %d, more than the rings hold (%d)" %
          (abs(c[2] - c[3]), bound))
ok = min(c) > 0 and s["region_updates"] > 0 and \
    c[0] >= c[1] >= c[2] and c[3] >= c[4] and abs(c[2] - c[3]) <= bound
sys.exit(0 if ok else 1)' <<<"$out" 2>&1); then
		pass funnel "$res"
	else
		fail funnel "not a funnel with counts at every stage: $res"
	fi
}
