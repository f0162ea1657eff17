#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# per-patch.sh [VARIANT...]: build mm/damon/ at every commit of the series
# (base..HEAD), for each variant (default: all), so that every patch builds
# with the observe framework on and off.  Returns the tree to its head.
. "$(dirname "$0")/lib.sh"

[ $# -gt 0 ] || set -- $(variants)
cd "$SRC"
head=$(git symbolic-ref -q --short HEAD || git rev-parse HEAD)
trap 'git -C "$SRC" checkout -q "$head"' EXIT
commits=$(git rev-list --reverse base..HEAD)
n=0 bad=0
for c in $commits; do
	n=$((n + 1))
	git checkout -q "$c"
	for v in "$@"; do
		if bash "$TOP/scripts/build.sh" "$v" mm/damon/ 2>"$LOGS/per-patch.err"; then
			echo "ok: patch $n ($v): $(git log -1 --format=%s "$c")"
		else
			echo "FAIL: patch $n ($v) does not build: $(git log -1 --format=%s "$c")"
			tail -n 20 "$LOGS/build-$v.log"
			bad=$((bad + 1))
		fi
	done
done
echo "per-patch builds: $n commit(s) x $# variant(s), $bad failed"
[ "$bad" -eq 0 ]
