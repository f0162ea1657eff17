# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154 # consumers-guest.sh sets the globals it uses
# consumers-guest.sh, check trace-cmd: trace-cmd record + report get the
# damon:damon_perf_* events with every field.  Sourced by consumers-guest.sh,
# which calls run_trace_cmd while DAMON runs; uses its pass/fail/skip, keep,
# evidence, recorded, as_text and judge_lines.

run_trace_cmd() {
	local t0 rc
	if ! command -v trace-cmd >/dev/null; then
		skip trace-cmd "not installed (Debian package trace-cmd)"
		return
	fi
	echo "consumers: trace-cmd: $(trace-cmd --version 2>&1 | grep -m1 version)"
	damon_running
	t0=$SECONDS
	# with a command, trace-cmd records (all tasks) while the command runs
	(cd "$W" && timeout -k 10 $((secs + 180)) trace-cmd record -b 4096 \
		-o "$W/trace.dat" -e 'damon:damon_perf_*' sleep "$secs") \
		>"$W/trace-cmd-record.log" 2>&1
	recorded trace-cmd trace-cmd "$W/trace-cmd-record.log" "$W/trace.dat" $? ||
		return
	as_text "$W/trace-cmd-report.txt" "$W/trace-cmd-report.err" \
		trace-cmd report -i "$W/trace.dat"
	rc=$?
	echo "consumers: trace-cmd record + report: $((SECONDS - t0)) s, $(wc -l <"$W/trace-cmd-report.txt") lines, report exited $rc"
	judge_lines trace-cmd "$W/trace-cmd-report.txt" "$W/trace-cmd-report.err"
	rm -f "$W/trace.dat" "$W"/trace.dat.* "$W/trace-cmd-report.txt"
}
