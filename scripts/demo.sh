#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# demo.sh: the main job, from a bare machine: install what is needed, expand
# the series, build the guest kernel (observe on), boot it and let DAMON
# monitor a workload with a known hot and cold buffer, first with page-table
# Accessed bits, then with the software page-faults perf event; print what
# DAMON saw each time, perf_stats, a trace excerpt, and the layer report of
# the observe selftest.
. "$(dirname "$0")/lib.sh"

t0=$SECONDS
log "demo 1/4: dependencies (apt-get)"
bash "$TOP/scripts/deps.sh"
log "demo 2/4: base tree and series"
bash "$TOP/scripts/expand.sh"
log "demo 3/4: kernel build (observe on; ~10 min cold, seconds warm)"
bash "$TOP/scripts/build.sh" on
mkdir -p "$BUILD/guest"
gcc -O2 -Wall -o "$BUILD/guest/workload" "$TOP/guest/workload.c"
ks=$BUILD/demo-kselftest
rm -rf "$ks"
run_logged demo-kselftest make -C "$SRC/tools/testing/selftests" TARGETS=damon \
	O="$BUILD/kselftest-obj" INSTALL_PATH="$ks" install ||
	die "demo: building the damon selftests failed"
obs=""
[ -x "$ks/damon/damon_perf_obs_test.sh" ] &&
	obs=" && echo && echo '=== damon_perf_obs_test.sh --pmu software (layer report)' && cp -a $ks /tmp/ks && cd /tmp/ks/damon && ./damon_perf_obs_test.sh --pmu software"
log "demo 4/4: boot the guest and monitor the workload with DAMON"
rc=0
secs=${DEMO_SECONDS:-4}
# Without the KUnit suites (kunit.enable=0): they inject reports of their
# own, which perf_stats, cumulative since boot, would show beside the demo's
# (enqueue above callback, per-CPU dequeue unlike enqueue), read as broken
# laws.  perf_stats then shows only what the demo did.
bash "$TOP/scripts/vm-run.sh" --name demo --timeout 400 --append kunit.enable=0 on -- \
	"echo '=== DAMON with page-table Accessed bits'; bash $TOP/guest/demo.sh $BUILD/guest/workload $secs && echo && echo '=== DAMON with the software page-faults perf event (type 1, config 2, period 1)' && bash $TOP/guest/demo.sh $BUILD/guest/workload $secs perf$obs" || rc=$?
echo
cat "$BUILD/vm/demo/output.log" 2>/dev/null || true
echo
log "demo: done in $((SECONDS - t0)) s (guest console: $BUILD/vm/demo/console.log)"
exit "$rc"
