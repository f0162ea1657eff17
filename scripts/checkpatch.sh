#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# checkpatch.sh: run the tree's checkpatch.pl --strict on every patch in
# patches/series.  Clean means 0 errors, 0 warnings and 0 checks.
# checkpatch warns "does MAINTAINERS need updating?" on every added file,
# whether or not an entry covers it; instead of that warning this checks
# that get_maintainer.pl finds the DAMON section ("DATA ACCESS MONITOR"
# before 7.x) for every file the patch adds.
. "$(dirname "$0")/lib.sh"

[ -d "$SRC/.git" ] || die "checkpatch: no expanded tree at $SRC"
n=0 bad=0
while IFS= read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	n=$((n + 1))
	# Debian's python3 first: checkpatch.pl runs scripts/spdxcheck.py,
	# which needs python3-ply (deps.sh), not a python3 of a user's PATH
	res=$(cd "$SRC" && PATH=/usr/bin:$PATH perl scripts/checkpatch.pl --strict --no-summary-file \
		--show-types --ignore FILE_PATH_CHANGES "$PATCHES/$p" 2>&1) || true
	uncovered=""
	for f in $(awk '/^--- \/dev\/null/ {getline; sub(/^\+\+\+ b\//, ""); print}' "$PATCHES/$p"); do
		sections=$(cd "$SRC" && perl scripts/get_maintainer.pl --no-git \
			--no-git-fallback --sections -f "$f" </dev/null 2>/dev/null) || true
		# mm/damon/ files by DAMON's entry, kernel/events/ files by perf's
		case $f in
		kernel/events/*) want='PERFORMANCE EVENTS SUBSYSTEM' ;;
		*) want='DAMON|DATA ACCESS MONITOR' ;;
		esac
		grep -qxE "$want" <<<"$sections" || uncovered+=" $f"
	done
	total=$(grep -E '^total: ' <<<"$res" || echo "total: (no result)")
	if [ -n "$uncovered" ]; then
		echo "FAIL: $p: added files not covered by their MAINTAINERS entry (DAMON, or perf for kernel/events/):$uncovered"
		bad=$((bad + 1))
	elif grep -q '^total: 0 errors, 0 warnings, 0 checks' <<<"$res"; then
		echo "ok: $p"
	else
		echo "FAIL: $p: $total"
		grep -E '^(ERROR|WARNING|CHECK):' -A3 <<<"$res" | head -n 40
		bad=$((bad + 1))
	fi
done <"$PATCHES/series"
echo "checkpatch --strict: $n patch(es), $bad not clean"
[ "$bad" -eq 0 ]
