#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# stress.sh VARIANT [fast]: boot VARIANT with 4 vCPUs and run the DAMON perf
# stress test (damon_perf_stress.sh: CPU hotplug, on/off churn with a
# kmemleak scan, ring overflow flood, two contexts at once) in the guest, then
# judge its KTAP output with the kernel's own parser (kunit.py parse), like
# scripts/kselftest.sh.  "fast" runs fewer cycles and shorter floods
# (--hotplug 10 --churn 20 --flood-secs 3 --two-ctx-secs 3), for make check;
# without it, the defaults of the guest script run (make stress).
#
# Exit: 0 if no subtest failed and one passed, 4 if every subtest skipped,
# 1 otherwise, including a kernel warning, KASAN/UBSAN/lockdep/kmemleak report
# on the console or no clean reboot (vm-run.sh).  Output:
# $BUILD/vm/stress-VARIANT/{output.log,console.log,stress.txt,stress.json}.
# Env: STRESS_ARGS, options appended to the guest script's (e.g. "--only
# flood" or "--hotplug 50"); STRESS_GUEST, the guest script (its lib/ and
# stress/ are taken from beside it if there, else from guest/); STRESS_CPUS (4);
# STRESS_MEM (2048), in MiB; STRESS_VM_TIMEOUT (1800, 900 for fast) in s;
# VM_ACCEL as for vm-run.sh.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ -f "$here/lib.sh" ]; then
	# shellcheck source=lib.sh source-path=SCRIPTDIR
	. "$here/lib.sh"
else
	# shellcheck source=/dev/null
	. "${DAMON_PERF_TOP:-/work/main}/scripts/lib.sh"
fi

variant=${1:?usage: stress.sh VARIANT [fast]}
case "${2:-}" in
"") preset="" timeout=${STRESS_VM_TIMEOUT:-1800} ;;
fast) preset="--hotplug 10 --churn 20 --flood-secs 3 --two-ctx-secs 3"
	timeout=${STRESS_VM_TIMEOUT:-900} ;;
*) die "usage: stress.sh VARIANT [fast]" ;;
esac

# The guest script with its library and subtests (guest/lib/, guest/stress/),
# and the workload, under $BUILD (lib.sh)
stage_guest stress damon_perf_stress.sh STRESS_GUEST

name=stress-$variant
out=$BUILD/vm/$name
args="$preset ${STRESS_ARGS:-} --workload $wl"
rc=0
bash "$TOP/scripts/vm-run.sh" --name "$name" --cpus "${STRESS_CPUS:-4}" \
	--mem "${STRESS_MEM:-2048}" --timeout "$timeout" "$variant" -- \
	"bash $stage/damon_perf_stress.sh $args" || rc=$?
[ -s "$out/output.log" ] || die "stress $variant: no output from the guest (rc $rc; console: $out/console.log)"

prc=0
python3 "$SRC/tools/testing/kunit/kunit.py" parse --json="$out/stress.json" \
	"$out/output.log" >"$out/stress.txt" 2>&1 || prc=$?
grep -E '\[(PASSED|FAILED|SKIPPED|CRASHED)\]|Testing complete' "$out/stress.txt" || true
# kunit.py parse fails a run whose tests all skipped: the guest's 4 tells it
if [ "$rc" -eq 4 ] && grep -q 'Testing complete' "$out/stress.txt" &&
	! grep -qE '\[(FAILED|CRASHED)\]' "$out/stress.txt"; then
	log "stress $variant: every subtest skipped (output: $out/output.log)"
	exit 4
fi
if [ "$prc" -eq 0 ]; then
	[ "$rc" -eq 0 ] && { log "stress $variant: passed (output: $out/output.log)"; exit 0; }
	# KTAP is fine, so vm-run.sh failed the run: see its message above
	die "stress $variant: the subtests passed, but the VM run failed (rc $rc: a kernel report on the console, e.g. kmemleak or a WARN, no clean reboot, or a timeout; console: $out/console.log)"
fi
# Show what each failed subtest printed last, so that a CI log names the cause.
awk '/^# [a-z_]+: start$/ { n = 0; delete buf }
     { buf[n++ % 40] = $0 }
     /^not ok [0-9]+ / {
	print "---- " $0
	for (i = (n > 40 ? n - 40 : 0); i < n - 1; i++) print "    " buf[i % 40]
     }' "$out/output.log" >&2
failed=$(grep -oE '^not ok [0-9]+ [a-z_]+' "$out/output.log" | awk '{ print $4 }' | paste -sd' ' || true)
die "stress $variant: failed: ${failed:-see log} (output: $out/output.log)"
