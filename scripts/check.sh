#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# check.sh: everything that gates a change of the series, stage by stage,
# each with its time; ends with one line "N passed, N failed".
# Logs: build/logs/check-STAGE.log; VM runs: build/vm/NAME/.
. "$(dirname "$0")/lib.sh"
# A failing stage must not end the run: every stage runs and is counted.
set +e

passed=0 failed=0
summary=()
t0=$SECONDS

stage() {	# stage NAME CMD...
	local name=$1 start=$SECONDS rc=0 logf=$LOGS/check-$1.log
	shift
	log "=== $name: $*"
	"$@" >"$logf" 2>&1 || rc=$?
	sed 's/^/    /' "$logf" | tail -n 40
	local dt=$((SECONDS - start))
	if [ "$rc" -eq 0 ]; then
		passed=$((passed + 1))
		summary+=("$(printf '%-14s PASS %5d s' "$name" "$dt")")
	else
		failed=$((failed + 1))
		summary+=("$(printf '%-14s FAIL %5d s  (%s)' "$name" "$dt" "$logf")")
		# The cause, in the table: a CI report may keep only its end.
		summary+=("$(grep -E 'ERROR|\[(FAILED|CRASHED)\]' "$logf" |
			tail -n 3 | cut -c1-160 | sed 's/^/    /')")
	fi
	log "=== $name: $([ "$rc" -eq 0 ] && echo PASS || echo "FAIL (rc $rc)") in $dt s"
	return "$rc"
}

finish() {
	echo
	echo "stage          result  time"
	printf '%s\n' "${summary[@]}"
	echo "total time: $((SECONDS - t0)) s"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

stage deps bash "$TOP/scripts/deps.sh" || finish
stage expand bash "$TOP/scripts/expand.sh" || finish
stage checkpatch bash "$TOP/scripts/checkpatch.sh"
stage get-maintainer bash "$TOP/scripts/get-maintainer.sh" --check
stage docs bash "$TOP/scripts/docs-check.sh"
stage roundtrip bash "$TOP/tests/export-roundtrip.sh"
stage funnel-unit env FUNNEL_DIR="$SRC/tools/testing/selftests/damon" \
	python3 "$TOP/tests/test_funnel.py" -v
for v in $(variants); do
	stage "build-$v" bash "$TOP/scripts/build.sh" "$v"
done
stage per-patch bash "$TOP/scripts/per-patch.sh"
stage vm-selftest bash "$TOP/tests/vm-selftest.sh" on
for v in $(variants); do
	stage "kunit-$v" bash "$TOP/scripts/kunit.sh" "$v"
done
stage kselftest-on bash "$TOP/scripts/kselftest.sh" on
stage obs-negative bash "$TOP/tests/obs-negative.sh" on
stage consumers bash "$TOP/scripts/consumers.sh" on
stage stress-fast bash "$TOP/scripts/stress.sh" on fast
for v in $(variants); do
	stage "static-$v" bash "$TOP/scripts/static-check.sh" "$v"
done
stage bloat-off bash "$TOP/scripts/bloat-check.sh"
for a in arm64 i386; do
	for v in $(variants); do
		stage "cross-$a-$v" bash "$TOP/scripts/cross-check.sh" "$a" "$v"
	done
done
finish
