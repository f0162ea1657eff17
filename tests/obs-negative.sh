#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# obs-negative.sh [VARIANT]: the negative cases of damon_perf_obs_test.sh,
# in one boot of VARIANT (default on).  Each must fail at its layer, with
# the reason that the counters show, and exit 1 (kselftest fail):
#   - a PMU type that does not exist (--pmu-type 9999) fails at the event
#     creation layer, with perf's error, quickly and without a hang, and
#     perf_stats shows every online CPU as st=UNCOVERED (no PMU covers it);
#   - a PMU whose samples carry no data address (the software cpu-clock
#     event, --pmu-type 1 --config 0) shows addr_zero and fails the ring
#     layer with that diagnosis, and in a paddr context, which asks for
#     physical addresses, inv_phys;
# and one that may pass: in a paddr context, the software page faults event
# gives faulting addresses whose pages of a first touch are not mapped yet,
# which must be counted as xlate_fail.
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
out=""
run() {	# run NAME RC ARGS...: the test, which must exit RC ('any': any)
	local n=\$1 want=\$2 r
	shift 2
	out=\$(timeout 300 bash $obs --duration 3 "\$@" 2>&1)
	r=\$?
	printf '%s\n' "\$out" | sed "s/^/\$n| /"
	if [ "\$want" != any ] && [ "\$r" -ne "\$want" ]; then
		echo "FAIL \$n: exit \$r, want \$want"
		rc=1
	fi
}
has() {	# has NAME REGEX: the last run printed a line matching REGEX
	if printf '%s\n' "\$out" | grep -qE "\$2"; then
		echo "PASS \$1: \$(printf '%s\n' "\$out" | grep -m1 -E "\$2")"
	else
		echo "FAIL \$1: no line matching '\$2'"
		rc=1
	fi
}
run no-such-pmu 1 --pmu-type 9999 --config 0
has no-such-pmu '^\[FAIL\] Event Create: writing .on. failed: .*No such file or directory'
for cpu in \$(seq 0 \$((\$(getconf _NPROCESSORS_ONLN) - 1))); do
	has no-such-pmu "perf_stats: CPU0*\$cpu: st=UNCOVERED "
done
run cpu-clock 1 --pmu-type 1 --config 0 --period 100000
has cpu-clock '^\[FAIL\] Ring: no enqueue: .*addr_zero=[1-9]'
run cpu-clock-paddr 1 --ops paddr --pmu-type 1 --config 0 --period 1000000
has cpu-clock-paddr '^\[FAIL\] Ring: no enqueue: samples carry no physical address \(inv_phys=[1-9]'
run page-faults-paddr any --ops paddr
has page-faults-paddr '^ +Callback breakdown: .*xlate_fail=[1-9]'
exit \$rc
GUEST
bash "$TOP/scripts/vm-run.sh" --name "$name" --timeout 900 "$variant" -- \
	"bash $stage/guest.sh" || rc=$?
grep -E '^(PASS|FAIL) ' "$BUILD/vm/$name/output.log" || true
[ "${rc:-0}" -eq 0 ] || die "$name: failed (output: $BUILD/vm/$name/output.log)"
log "$name: the negative cases fail at their layers"
