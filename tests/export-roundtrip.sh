#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# export-roundtrip.sh: expand then export with no edits must give
# byte-identical patch files, for the real queue and for a scratch queue with
# one extra commit; and export must refuse to run over uncommitted work.
# Leaves the working tree expanded from the real patches/.
. "$(dirname "$0")/../scripts/lib.sh"

scratch=$(mktemp -d)
probe=$SRC/roundtrip-probe.txt
cleanup() {
	rm -rf "$scratch"
	rm -f "$probe"
	bash "$TOP/scripts/expand.sh" >/dev/null 2>&1 ||
		log "roundtrip: could not re-expand the real queue"
}
trap cleanup EXIT
fails=0
ok()  { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# 1. The real queue.
cp -a "$TOP/patches" "$scratch/real"
bash "$TOP/scripts/expand.sh"
bash "$TOP/scripts/export.sh"
if diff -r "$scratch/real" "$TOP/patches"; then
	ok "expand + export of patches/ is byte-identical ($(grep -c . "$TOP/patches/series" || true) patches)"
else
	cp -a "$scratch/real/." "$TOP/patches/"
	bad "expand + export changed patches/ (diff above; restored)"
fi

# 2. A scratch queue: the real one plus a commit made here.
export PATCHES=$scratch/q1
cp -a "$scratch/real" "$PATCHES"
echo "roundtrip probe $$" >>"$SRC/Documentation/mm/damon/index.rst"
git -C "$SRC" commit -q -s -am "Docs/mm/damon: roundtrip probe

A commit made by the harness test to check that export and expand are
exact inverses."
bash "$TOP/scripts/export.sh"
cp -a "$PATCHES" "$scratch/q1.first"
bash "$TOP/scripts/expand.sh"
bash "$TOP/scripts/export.sh"
if diff -r "$scratch/q1.first" "$PATCHES" &&
	[ "$(wc -l <"$PATCHES/series")" -eq $(($(wc -l <"$scratch/real/series") + 1)) ]; then
	ok "a queue with one more commit round-trips byte-identically"
else
	bad "the scratch queue changed on expand + export"
fi

# 3. Export refuses uncommitted work.
touch "$probe"
if bash "$TOP/scripts/export.sh" 2>"$LOGS/roundtrip-refuse.log"; then
	bad "export ran over an untracked file"
elif grep -q 'uncommitted' "$LOGS/roundtrip-refuse.log"; then
	ok "export refuses uncommitted work: $(grep -o 'export: .*' "$LOGS/roundtrip-refuse.log")"
else
	bad "export failed without saying why"
fi
rm -f "$probe"
unset PATCHES
[ "$fails" -eq 0 ]
