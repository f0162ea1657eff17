#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# obs-negative.sh [VARIANT]: issue #5's negative cases of
# damon_perf_obs_test.sh, in one boot of VARIANT (default on):
#   - a PMU type that does not exist (--pmu-type 9999) must fail at the
#     event creation layer, with perf's error, quickly and without a hang;
#   - a PMU whose samples carry no data address (the software cpu-clock
#     event, --pmu-type 1 --config 0) must show addr_zero and fail the ring
#     layer with that diagnosis.
# Both must exit 1 (kselftest fail); a pass or a skip fails this test.
. "$(dirname "$0")/../scripts/lib.sh"

variant=${1:-on}
name=obs-negative-$variant
stage=$BUILD/obs-negative
mkdir -p "$stage"
obs=$SRC/tools/testing/selftests/damon/damon_perf_obs_test.sh
[ -f "$obs" ] || die "$name: no $obs (run scripts/expand.sh)"
cat >"$stage/guest.sh" <<GUEST
#!/bin/bash
# runs in the guest; the test writes only under /tmp
cd /tmp || exit 1
rc=0
run() {	# run NAME EXPECTED_REGEX ARGS...
	local n=\$1 want=\$2 out r
	shift 2
	out=\$(timeout 300 bash $obs --duration 3 "\$@" 2>&1)
	r=\$?
	printf '%s\n' "\$out" | sed "s/^/\$n| /"
	if [ "\$r" -ne 1 ]; then
		echo "FAIL \$n: exit \$r, want 1 (a failed layer)"
		rc=1
	elif ! printf '%s\n' "\$out" | grep -qE "\$want"; then
		echo "FAIL \$n: no line matching '\$want'"
		rc=1
	else
		echo "PASS \$n: exit 1 with: \$(printf '%s\n' "\$out" | grep -m1 -E "\$want")"
	fi
}
run no-such-pmu '^\[FAIL\] Event Create: writing .on. failed: .*No such file or directory' --pmu-type 9999 --config 0
run cpu-clock '^\[FAIL\] Ring: no enqueue: .*addr_zero=[1-9]' --pmu-type 1 --config 0 --period 100000
exit \$rc
GUEST
bash "$TOP/scripts/vm-run.sh" --name "$name" --timeout 900 "$variant" -- \
	"bash $stage/guest.sh" || rc=$?
grep -E '^(PASS|FAIL) ' "$BUILD/vm/$name/output.log" || true
[ "${rc:-0}" -eq 0 ] || die "$name: failed (output: $BUILD/vm/$name/output.log)"
log "$name: both negative cases fail at the right layer"
