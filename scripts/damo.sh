#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# damo.sh [VARIANT]: boot VARIANT (default: on) and run damo, DAMON's user
# space tool (Debian's damo package, unpacked by deps.sh into $DAMO_ROOT), in
# the guest on the series' kernel: damo start, report access and stop of a
# workload, and damo report access of a kdamond with a perf event that the
# sysfs interface set up (guest/damo-guest.sh says what each check asserts).
# Output: $BUILD/vm/damo/{output.log,console.log}.
. "$(dirname "$0")/lib.sh"

variant=${1:-on}
damo_py=$DAMO_ROOT/usr/lib/python3/dist-packages/damo/damo.py
[ -f "$damo_py" ] || die "damo: $damo_py missing: run scripts/deps.sh"
stage_guest damo damo-guest.sh DAMO_GUEST
# under $BUILD, which the guest sees wherever the cache is (guest/init.sh)
cp -r "$(dirname "$damo_py")" "$stage/damo-py" || die "damo: staging $damo_py failed"
out=$BUILD/vm/damo
rc=0
bash "$TOP/scripts/vm-run.sh" --name damo --timeout "${DAMO_VM_TIMEOUT:-600}" \
	"$variant" -- "bash $stage/damo-guest.sh $stage/damo-py/damo.py $wl" || rc=$?
cat "$out/output.log" 2>/dev/null || true
[ "$rc" -eq 0 ] || die "damo $variant: failed (rc $rc): $(grep -E '^FAIL ' "$out/output.log" 2>/dev/null | head -n 3 | paste -sd';' -) (output: $out/output.log)"
log "damo $(deb_version "$DAMO_PKG") on $variant: passed (output: $out/output.log)"
