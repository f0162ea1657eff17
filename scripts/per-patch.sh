#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# per-patch.sh [VARIANT...]: build mm/damon/ and kernel/events/ (the series'
# perf core patches) at every commit of the series
# (base..HEAD), for each variant (default: all), so that every patch builds
# with the observe framework on and off.  The commits are checked out and
# built in the history tree (hist_tree in lib.sh), not in build/linux.
#
# And at every commit, the cross builds of PER_PATCH_CROSS (default
# "arm64-on arm64-noperf", ARCH-VARIANT as in cross-check.sh; "" for none):
# arm64 with CONFIG_ARM_SPE_PMU=y (mm/damon/, kernel/events/ and the SPE
# driver, whose AUX buffers the perf core patches give kernel owners), and
# arm64 without CONFIG_PERF_EVENTS (mm/damon/ against the stubs of
# perf_event.h), which x86 cannot be configured for.  W=1, no sparse (the
# cross stages run sparse on the head); a warning in a DAMON file fails.
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

cross_cfgs=${PER_PATCH_CROSS-arm64-on arm64-noperf}

# cross_build ARCH-VARIANT: configure and build it at the checked-out commit,
# logged in $LOGS/per-patch-ARCH-VARIANT.log; print its DAMON warnings.  In
# a subshell: cross_config dies on a config that is not as asked.
cross_build() (
	local cfg=$1 logf=$LOGS/per-patch-$1.log warn
	cross_config "${cfg%%-*}" "${cfg#*-}" "per-patch-$cfg"
	"${kmake[@]}" -j"$JOBS" CC="$cross_cc" W=1 "${cross_targets[@]}" >"$logf" 2>&1 ||
		{ tail -n 20 "$logf"; exit 1; }
	warn=$(grep -E '(mm/damon/|include/linux/damon\.h|include/trace/events/damon\.h).*: (warning|error):' \
		"$logf" | sort -u || true)
	[ -z "$warn" ] || { echo "$warn"; exit 1; }
)

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
	for cfg in $cross_cfgs; do
		built=$((built + 1))
		t=$SECONDS
		if out=$(cross_build "$cfg" 2>&1); then
			echo "ok: patch $n ($cfg, $((SECONDS - t)) s): $subj"
		else
			echo "FAIL: patch $n ($cfg) does not build cleanly: $subj"
			echo "$out"
			bad=$((bad + 1))
		fi
	done
done
echo "per-patch builds: $n commit(s) x $(($# + $(wc -w <<<"$cross_cfgs"))) config(s) ($* $cross_cfgs): $built built, $skipped commit(s) without build input, $bad failed"
[ "$bad" -eq 0 ]
