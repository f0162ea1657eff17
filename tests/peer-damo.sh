#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# peer-damo.sh [VARIANT]: in one boot of VARIANT (default on), replay the
# sysfs writes of the peer damo (ravis-opensrc/damo, unmodified) for the
# perf_event preps of its PEBS and IBS presets, and its switch of a prep
# from perf_event to set_pgidle and back (guest/peer-damo-writes.py, on the
# helpers of the series' selftest sysfs_perf_preps.py).  Each must stage and
# turn on and off; a skip (exit 4: the kernel lacks the preps) fails here.
. "$(dirname "$0")/../scripts/lib.sh"

variant=${1:-on}
name=peer-damo-$variant
st=$SRC/tools/testing/selftests/damon
[ -f "$st/sysfs_perf_preps.py" ] || die "$name: no $st/sysfs_perf_preps.py (run scripts/expand.sh)"
stage_guest peer-damo peer-damo-writes.py PEER_DAMO_GUEST
rc=0
bash "$TOP/scripts/vm-run.sh" --name "$name" --timeout 600 "$variant" -- \
	"cd /tmp && python3 $stage/peer-damo-writes.py $st" || rc=$?
grep -E '^(ok|FAIL|# SKIP|PASS)' "$BUILD/vm/$name/output.log" || true
[ "$rc" -eq 0 ] || die "$name: failed (rc $rc; output: $BUILD/vm/$name/output.log)"
log "$name: the peer damo's writes stage, turn on and off"
