#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# stress-all.sh ('make stress', issue #7): everything that proves the series
# under load and faults, beyond the fast subset of make check:
#   1. the 'debug' variant (kconfig/observe-debug.config: KASAN,
#      PROVE_LOCKING, DEBUG_ATOMIC_SLEEP, KMEMLEAK, UBSAN, DEBUG_LIST,
#      DEBUG_OBJECTS): build, all KUnit suites, every DAMON kselftest that
#      check runs, and the full stress test (100 CPU hotplug cycles, 200
#      start/stop cycles then a kmemleak scan, a flood into 4-entry rings,
#      two contexts at once), with no report on the console; and the test
#      PMU's runs (scripts/testpmu.sh) on a debug kernel with the test PMU,
#      whose late-* runs hold an overflow handler open across a commit and
#      a stop: KASAN would report a use-after-free of the handler's context;
#   2. the 'kcsan' variant (kconfig/observe-kcsan.config: the Kernel
#      Concurrency Sanitizer, which excludes KASAN): build, all KUnit
#      suites and the fast stress test, with no KCSAN report on the console
#      (vm-run.sh fails on one);
#   3. the full stress test on the 'on' variant.
# Ends with one line "N passed, N failed", like check.
. "$(dirname "$0")/lib.sh"
set +e
passed=0 failed=0
run() {	# run NAME CMD...
	local name=$1 start=$SECONDS
	shift
	log "=== $name: $*"
	if "$@" >"$LOGS/stress-$name.log" 2>&1; then
		passed=$((passed + 1))
		log "=== $name: PASS in $((SECONDS - start)) s"
	else
		failed=$((failed + 1))
		tail -n 30 "$LOGS/stress-$name.log" | sed 's/^/    /'
		log "=== $name: FAIL in $((SECONDS - start)) s ($LOGS/stress-$name.log)"
	fi
}
run build-debug bash "$TOP/scripts/build.sh" debug
run kunit-debug bash "$TOP/scripts/kunit.sh" debug
# per test: DAMON's 7.3 sysfs.sh ran out of the default 900 s on the debug
# kernel (2026-12-02: TIMEOUT after 900 s, two vCPUs on one TCG thread)
run kselftest-debug env KSELFTEST_VM_TIMEOUT=7200 KSELFTEST_TIMEOUT=${KSELFTEST_TIMEOUT:-3000} \
	bash "$TOP/scripts/kselftest.sh" debug
# a 4-vCPU KASAN guest on one TCG thread: the hotplug subtest alone took
# 1208 s on 2026-12-01, so the 1800 s default would cut the run
run stress-debug env STRESS_VM_TIMEOUT=${STRESS_VM_TIMEOUT:-7200} bash "$TOP/scripts/stress.sh" debug
run testpmu-debug env TESTPMU_VARIANT=debug TESTPMU_VM_TIMEOUT=3000 \
	bash "$TOP/scripts/testpmu.sh"
run build-kcsan bash "$TOP/scripts/build.sh" kcsan
run kunit-kcsan bash "$TOP/scripts/kunit.sh" kcsan
run stress-kcsan bash "$TOP/scripts/stress.sh" kcsan fast
# make stress may be the first thing run in a clone: build 'on' (a no-op
# after make check)
run build-on bash "$TOP/scripts/build.sh" on
run stress-on bash "$TOP/scripts/stress.sh" on
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
