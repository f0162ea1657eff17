#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# damon-tests-guest.sh PRISTINE PATCHED: runs the regression tests of
# damon-tests corr (the "simple regression tests" of corr/tests/Makefile),
# as corr/run.sh runs them (root, panic_on_warn=1, each from a copy of
# corr/tests), first of PRISTINE (the snapshot: failures printed, not
# counted), then of PATCHED (with damon-tests/series).  Each test of
# PATCHED must pass or skip with its reason (exit 4 and what it printed);
# where the kernel has perf_stats, huge_count_read_write.sh must have run
# on it and passed.  scripts/damon-tests.sh says why.
# Exit: 0 if that holds, 1 if not.
set -u
export LC_ALL=C

pristine=$1 patched=$2
perf_stats=/sys/kernel/debug/damon/perf_stats
nfail=0

say() { echo "# $*"; }
fail() { echo "FAIL $*"; nfail=$((nfail + 1)); }

# regression_tests DIR: the tests of DIR/corr/tests/Makefile's "simple
# regression tests" section
regression_tests()
{
	sed -n '/^# simple regression tests/,/^# /s/^TEST_PROGS += //p' \
		"$1/corr/tests/Makefile" | tr ' ' '\n' | grep -v '^$'
}

# run_copy NAME DIR: runs DIR's regression tests from a copy in /tmp, and
# prints "ok|not ok|skip TEST" lines and each test's output; sets results[]
run_copy()
{
	local name=$1 dir=$2 t rc work=/tmp/damon-tests-$1

	rm -rf "$work"
	cp -a "$dir/corr/tests" "$work" || { fail "$name: cannot copy $dir"; return; }
	[ -n "$(regression_tests "$dir")" ] ||
		{ fail "$name: no regression test in $dir/corr/tests/Makefile"; return; }
	echo 1 > /proc/sys/kernel/panic_on_warn
	say "=== damon-tests corr, $name: $(regression_tests "$dir" | paste -sd' ' -)"
	for t in $(regression_tests "$dir")
	do
		rc=0
		(cd "$work" && timeout 300 "./$t") > "$work/$t.out" 2>&1 || rc=$?
		case "$rc" in
		0) echo "ok $name/$t" ;;
		4) echo "skip $name/$t: $(tail -n 1 "$work/$t.out" | grep . || echo '(no reason printed)')" ;;
		*) echo "not ok $name/$t (rc $rc)" ;;
		esac
		results["$name/$t"]=$rc
		sed 's/^/#   /' "$work/$t.out" | tail -n 8
	done
}

declare -A results
[ "$(id -u)" -eq 0 ] || { echo "FAIL not root"; exit 1; }
say "kernel $(uname -r); /sys/kernel/debug/damon: $(ls /sys/kernel/debug/damon 2>/dev/null | paste -sd' ' - || true)"
run_copy unpatched "$pristine"
run_copy patched "$patched"

say "=== verdict"
unpatched_failed=""
for t in $(regression_tests "$pristine")
do
	case "${results[unpatched/$t]:-none}" in 0|4) ;; *) unpatched_failed+=" $t" ;; esac
done
say "unpatched damon-tests, failed (not counted):${unpatched_failed:- none}"
for t in $(regression_tests "$patched")
do
	case "${results[patched/$t]:-none}" in
	0|4) ;;
	*) fail "patched/$t: rc ${results[patched/$t]:-none}" ;;
	esac
done
if [ -e "$perf_stats" ]
then
	if [ "${results[patched/huge_count_read_write.sh]:-}" = 0 ]
	then
		say "huge_count_read_write.sh read $perf_stats with its huge count and passed"
	else
		fail "patched/huge_count_read_write.sh did not pass on a kernel with $perf_stats"
	fi
fi
say "not run: damo_tests.sh and masim-record.sh (need damo's git tree and masim, which this machine cannot fetch); kunit.sh and build_*.sh (the kunit-* and cross-* stages' work)"
if [ "$nfail" -eq 0 ]
then
	say "PASS: every regression test of the patched damon-tests passed or skipped"
	exit 0
fi
say "$nfail failure(s)"
exit 1
