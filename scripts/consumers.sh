#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# consumers.sh [VARIANT]: boot VARIANT (default: on) and check in the guest
# that the standard tracing tools of the host root, Debian's perf, trace-cmd
# and bpftrace, consume the damon:damon_perf_* tracepoints while DAMON
# monitors a workload with the software page-faults perf event: perf list,
# perf record + perf script, trace-cmd record + report, and a bpftrace
# one-liner counting damon_perf_sample by reason.  The checks and their
# output are described in the header of the guest script
# (consumers-guest.sh).  A tool that is not installed is a SKIP, not a PASS.
#
# Exit: 0 if nothing failed and something passed, 4 if every check skipped,
# 1 otherwise.  Output: $BUILD/vm/consumers/{output.log,console.log} and the
# tools' logs and output heads in $BUILD/vm/consumers/consumers/.
# Env: CONSUMERS_SECONDS (3) recording time per tool; CONSUMERS_REQUIRE
# ("all", or e.g. "perf trace-cmd"): checks whose SKIP fails the run;
# CONSUMERS_GUEST: the guest script (its lib/ and consumers/ are taken from
# beside it if there, else from guest/); CONSUMERS_MEM (2048), in MiB;
# CONSUMERS_VM_TIMEOUT (1200) in s; VM_ACCEL as for vm-run.sh.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ -f "$here/lib.sh" ]; then
	# shellcheck source=lib.sh source-path=SCRIPTDIR
	. "$here/lib.sh"
else
	# shellcheck source=/dev/null
	. "${DAMON_PERF_TOP:-/work/main}/scripts/lib.sh"
fi

variant=${1:-on}
secs=${CONSUMERS_SECONDS:-3}
req=${CONSUMERS_REQUIRE:-}

# The guest script with its library and tool checks (guest/lib/,
# guest/consumers/), and the workload, under $BUILD (lib.sh)
stage_guest consumers consumers-guest.sh CONSUMERS_GUEST

for t in perf trace-cmd bpftrace; do
	command -v "$t" >/dev/null ||
		log "consumers: $t is not installed on the host: the guest will SKIP it (see scripts/deps.sh)"
done

out=$BUILD/vm/consumers
args="--seconds $secs --funnel $SRC/tools/mm/damon_perf_funnel.py"
[ -n "$req" ] && args+=" --require '$req'"
rc=0
bash "$TOP/scripts/vm-run.sh" --name consumers --mem "${CONSUMERS_MEM:-2048}" \
	--timeout "${CONSUMERS_VM_TIMEOUT:-1200}" "$variant" -- \
	"bash $stage/consumers-guest.sh $args $wl" || rc=$?
echo
cat "$out/output.log" 2>/dev/null || true
echo
case "$rc" in
0) log "consumers: passed (output: $out/output.log)" ;;
4) log "consumers: every check skipped (output: $out/output.log)"; exit 4 ;;
*) die "consumers $variant: failed (rc $rc): $(grep -E '^FAIL ' "$out/output.log" 2>/dev/null | cut -d: -f1 | paste -sd, -) (output: $out/output.log, tool logs: $out/consumers/)" ;;
esac
