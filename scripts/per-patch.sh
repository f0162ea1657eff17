#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# per-patch.sh [VARIANT...]: build mm/damon/ and kernel/events/ (the series'
# perf core patches) at every commit of the series
# (base..HEAD), for each variant (default: all), so that every patch builds
# with the observe framework on and off.  The commits are checked out and
# built in the history tree (hist_tree in lib.sh), not in build/linux.
#
# Two shortcuts, each printed with its reason, neither taken on a guess:
#  - a commit that changes no file the kernel build reads (only
#    Documentation/ text and selftest sources; not a Kconfig file, not the
#    selftests' "config" fragment that config.sh merges) builds exactly what
#    its parent built: it is not built again;
#  - where the variants' configs cannot differ, one build covers them all:
#    the variants differ only in their kconfig/observe-VARIANT.config
#    fragment, and before the series defines the symbols those fragments
#    set (CONFIG_DAMON_PERF_OBSERVE...), kconfig drops them, so "on" and
#    "off" give the same .config.  Checked with git grep at every commit.
. "$(dirname "$0")/lib.sh"

[ $# -gt 0 ] || set -- $(variants)
hist_tree	# build/linux stays at its head; the commits are built in $HIST
cd "$SRC"
head=$(git symbolic-ref -q --short HEAD || git rev-parse HEAD)
trap 'git -C "$SRC" checkout -q "$head"' EXIT
commits=$(git rev-list --reverse base..HEAD)
# The symbols in which the variants' fragments differ.
varsyms=$(for v in "$@"; do grep -hoE '^(# )?CONFIG_[A-Za-z0-9_]+' "$TOP/kconfig/observe-$v.config"; done |
	sed 's/^# //; s/^CONFIG_//' | sort -u | paste -sd'|')

# build_inputs COMMIT: the files COMMIT changes that a kernel build reads.
build_inputs() {
	git diff --name-only "$1^" "$1" | grep -vE '^(Documentation|tools/testing/selftests)/' |
		cat - <(git diff --name-only "$1^" "$1" |
			grep -E '(^|/)Kconfig[^/]*$|^tools/testing/selftests/damon/config$') |
		sort -u
}

n=0 bad=0 built=0 skipped=0
for c in $commits; do
	n=$((n + 1))
	subj=$(git log -1 --format=%s "$c")
	if [ -z "$(build_inputs "$c")" ]; then
		echo "ok: patch $n: no build input changed (only $(git diff --name-only "$c^" "$c" |
			cut -d/ -f1-3 | sort -u | paste -sd' ')): builds as patch $((n - 1)): $subj"
		skipped=$((skipped + 1))
		continue
	fi
	git checkout -q "$c"
	# The variants share one build when no symbol their fragments set is
	# defined in this commit's Kconfig files.
	defined=$(git grep -hoE "^[[:space:]]*(menu)?config ($varsyms)[[:space:]]*\$" -- \
		'*Kconfig*' | awk '{ print $2 }' | sort -u | paste -sd' ' || true)
	for v in "$@"; do
		if [ -z "$defined" ] && [ "$v" != "$1" ]; then
			echo "ok: patch $n ($v): the tree defines none of $varsyms: same .config as $1, built there: $subj"
			continue
		fi
		built=$((built + 1))
		t=$SECONDS
		if bash "$TOP/scripts/build.sh" "$v" mm/damon/ kernel/events/ 2>"$LOGS/per-patch.err"; then
			echo "ok: patch $n ($v, $((SECONDS - t)) s): $subj"
		else
			echo "FAIL: patch $n ($v) does not build: $subj"
			tail -n 20 "$LOGS/build-$v.log"
			bad=$((bad + 1))
		fi
	done
done
echo "per-patch builds: $n commit(s) x $# variant(s): $built built, $skipped commit(s) without build input, $bad failed"
[ "$bad" -eq 0 ]
