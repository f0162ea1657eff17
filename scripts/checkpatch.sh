#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# checkpatch.sh: run the tree's checkpatch.pl --strict on every patch in
# patches/series.  Clean means 0 errors, 0 warnings and 0 checks.
. "$(dirname "$0")/lib.sh"

[ -d "$SRC/.git" ] || die "checkpatch: no expanded tree at $SRC"
n=0 bad=0
while IFS= read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	n=$((n + 1))
	res=$(cd "$SRC" && perl scripts/checkpatch.pl --strict --no-summary-file \
		--show-types "$PATCHES/$p" 2>&1) || true
	total=$(grep -E '^total: ' <<<"$res" || echo "total: (no result)")
	if grep -q '^total: 0 errors, 0 warnings, 0 checks' <<<"$res"; then
		echo "ok: $p"
	else
		echo "FAIL: $p: $total"
		grep -E '^(ERROR|WARNING|CHECK):' -A3 <<<"$res" | head -n 40
		bad=$((bad + 1))
	fi
done <"$PATCHES/series"
echo "checkpatch --strict: $n patch(es), $bad not clean"
[ "$bad" -eq 0 ]
