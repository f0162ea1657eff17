# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154 # consumers-guest.sh sets the globals it uses
# consumers-guest.sh, checks perf-list and perf-script: perf list shows the
# damon:damon_perf_* events, and perf record + perf script get them with
# every field.  Sourced by consumers-guest.sh, which calls run_perf while
# DAMON runs; uses its pass/fail/skip, keep, evidence, recorded, as_text and
# judge_lines.
#
# Debian's /usr/bin/perf may be the wrapper of linux-base: a script that
# execs perf_<major.minor of the running kernel>, which fails for our 7.3
# guest kernel ("linux-perf-7.3 is not installed") as only perf_6.1 or so
# is installed.  Debian 12's single linux-perf package (6.1) instead installs
# the real binary as /usr/bin/perf and diverts the wrapper to
# /usr/bin/perf.wrapper; older releases have /usr/bin/perf_X.Y.  So take the
# first candidate that runs "perf version": $PERF, perf, then the newest
# perf_X.Y.  A perf older than the kernel is fine here: perf_event_attr
# carries its size, and the tracepoint formats are read from tracefs.
find_perf() {
	local c p
	: >"$W/perf-tried"
	for c in ${PERF:-} perf $(ls -d /usr/bin/perf_[0-9]* 2>/dev/null | sort -rV); do
		p=$(command -v "$c") || continue
		if timeout 60 "$p" version >/dev/null 2>"$W/perf-version.err"; then
			echo "$p"
			return 0
		fi
		echo "$p ($(head -n 1 "$W/perf-version.err"))" >>"$W/perf-tried"
	done
	return 1
}

run_perf() {
	local perf t0 missing="" e rc why
	if ! perf=$(find_perf); then
		why="not installed (Debian package linux-perf)"
		[ -s "$W/perf-tried" ] &&
			why="no perf runs \"perf version\": $(paste -sd';' "$W/perf-tried" | sanitize)"
		skip perf-list "$why"
		skip perf-script "$why"
		return
	fi
	echo "consumers: perf: $perf ($("$perf" version 2>&1 | head -n 1))"

	t0=$SECONDS
	timeout -k 5 180 "$perf" --no-pager list tracepoint >"$W/perf-list.txt" 2>"$W/perf-list.err"
	rc=$?
	keep "$W/perf-list.err"
	for e in $EVENTS; do
		grep -qE "(^|[[:space:]])damon:$e([[:space:]]|$)" "$W/perf-list.txt" ||
			missing+=" $e"
	done
	if [ -z "$missing" ]; then
		pass perf-list "all four damon:damon_perf_* events listed ($((SECONDS - t0)) s)"
		grep -E 'damon:damon_perf_' "$W/perf-list.txt" | evidence 4
	else
		fail perf-list "not listed:$missing (perf list exited $rc)"
		grep -E 'damon:' "$W/perf-list.txt" | evidence 6
		tail -n 4 "$W/perf-list.err" | evidence 4
	fi

	damon_running
	t0=$SECONDS
	# -a: the samples come from every CPU; -N -B: no build-id cache or
	# build-id collection (they read every DSO over 9p, slowly under TCG);
	# -o: the root is read-only, /tmp is tmpfs.
	(cd "$W" && timeout -k 10 $((secs + 180)) "$perf" record -a -N -B -m 1024 \
		-e 'damon:damon_perf_*' -o "$W/perf.data" -- sleep "$secs") \
		>"$W/perf-record.log" 2>&1
	recorded perf-script perf "$W/perf-record.log" "$W/perf.data" $? ||
		return
	as_text "$W/perf-script.txt" "$W/perf-script.err" \
		"$perf" --no-pager script -i "$W/perf.data"
	rc=$?
	echo "consumers: perf record + script: $((SECONDS - t0)) s, $(wc -l <"$W/perf-script.txt") lines, perf.data $(du -k "$W/perf.data" | cut -f1) KiB, script exited $rc"
	# perf's recursion guard hides the page-faults samples (see the header):
	# what must come through are the control event's samples and the drains
	judge_lines perf-script "$W/perf-script.txt" "$W/perf-record.log" \
		"$([ "$control" = 1 ] && echo sample || echo none)"
	rm -f "$W/perf.data" "$W/perf-script.txt"
}
