#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# export-roundtrip.sh: expand then export with no edits must give
# byte-identical patch files, for the real queue and for a scratch queue with
# one extra commit; and export must refuse to run over uncommitted work.
#
# It works in a tree of its own ($BUILD/roundtrip/linux, kept between runs)
# and on copies of the queue: build/linux, its timestamps and O= dirs,
# patches/ and send/ are left as they were.
. "$(dirname "$0")/../scripts/lib.sh"

rt=$BUILD/roundtrip
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export DAMON_PERF_BUILD=$rt
RSRC=$rt/linux
fails=0
ok()  { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expand_q QUEUE: expand QUEUE into the roundtrip tree, applying every patch
# (the stamp that lets expand.sh leave an up-to-date tree alone is dropped).
expand_q() {
	rm -f "$RSRC/.git/damon-perf-queue"
	PATCHES=$1 bash "$TOP/scripts/expand.sh"
}
sent() { sha256sum "$TOP/send/get_maintainer.txt" 2>/dev/null; }
sent0=$(sent)

# 1. The real queue.
cp -a "$TOP/patches" "$scratch/real"
cp -a "$TOP/patches" "$scratch/q0"
expand_q "$scratch/q0"
PATCHES=$scratch/q0 bash "$TOP/scripts/export.sh"
if diff -r "$scratch/real" "$scratch/q0"; then
	ok "expand + export of patches/ is byte-identical ($(grep -c . "$TOP/patches/series" || true) patches)"
else
	bad "expand + export changed the queue (diff above)"
fi

# 2. A scratch queue: the real one plus a commit made here.
q1=$scratch/q1
cp -a "$scratch/real" "$q1"
echo "roundtrip probe $$" >>"$RSRC/Documentation/mm/damon/index.rst"
git -C "$RSRC" commit -q -s -am "Docs/mm/damon: roundtrip probe

A commit made by the harness test to check that export and expand are
exact inverses."
PATCHES=$q1 bash "$TOP/scripts/export.sh"
cp -a "$q1" "$scratch/q1.first"
expand_q "$q1"
PATCHES=$q1 bash "$TOP/scripts/export.sh"
if diff -r "$scratch/q1.first" "$q1" &&
	[ "$(wc -l <"$q1/series")" -eq $(($(wc -l <"$scratch/real/series") + 1)) ]; then
	ok "a queue with one more commit round-trips byte-identically"
else
	bad "the scratch queue changed on expand + export"
fi

# 3. Export refuses uncommitted work.
probe=$RSRC/roundtrip-probe.txt
touch "$probe"
if PATCHES=$q1 bash "$TOP/scripts/export.sh" 2>"$LOGS/roundtrip-refuse.log"; then
	bad "export ran over an untracked file"
elif grep -q 'uncommitted' "$LOGS/roundtrip-refuse.log"; then
	ok "export refuses uncommitted work: $(grep -o 'export: .*' "$LOGS/roundtrip-refuse.log")"
else
	bad "export failed without saying why"
fi
rm -f "$probe"

# 4. A scratch export leaves the real queue's recipients file alone.
if [ "$(sent)" = "$sent0" ]; then
	ok "exports of scratch queues left send/get_maintainer.txt as it was"
else
	bad "an export of a scratch queue rewrote send/get_maintainer.txt"
fi
[ "$fails" -eq 0 ]
