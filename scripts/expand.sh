#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Expand the patch queue into the working tree $SRC (a git repository):
# the base commit, then "git am" of every patch in patches/series, no fuzz.
# The first patch that does not apply stops the run and is named.
#
# An existing tree is reused (its O= build dirs survive) unless it holds work
# that was never exported: uncommitted changes, or commits made since the
# last expand/export.  FORCE=1 discards such work.
. "$(dirname "$0")/lib.sh"

bash "$TOP/scripts/base.sh"
stamp_file() { echo "$SRC/.git/damon-perf-exported"; }

if [ -d "$SRC/.git" ]; then
	cd "$SRC"
	if [ -z "${FORCE:-}" ]; then
		[ -z "$(git status --porcelain)" ] ||
			die "expand: $SRC has uncommitted changes; commit and 'make export', or FORCE=1 to discard"
		[ ! -f "$(stamp_file)" ] || [ "$(cat "$(stamp_file)")" = "$(git rev-parse HEAD)" ] ||
			die "expand: $SRC has commits that were never exported ('make export'), or FORCE=1 to discard"
	fi
	# The tree is the queue already: leave it (and its files' timestamps,
	# which decide what the O= dirs rebuild) as it is.
	if [ -z "$(git status --porcelain)" ] &&
		[ "$(cat .git/damon-perf-exported 2>/dev/null)" = "$(git rev-parse HEAD)" ] &&
		[ "$(cat .git/damon-perf-queue 2>/dev/null)" = "$(queue_hash)" ] &&
		[ "$(git rev-parse -q --verify 'base^{commit}')" = \
			"$(git --git-dir="$BASE_GIT" rev-parse 'base^{commit}')" ]; then
		log "expand: $SRC is already base + patches/series (HEAD $(git rev-parse --short HEAD)), left as it is"
		exit 0
	fi
	git am --abort >/dev/null 2>&1 || true
	git fetch -q "$BASE_GIT" "+refs/tags/base:refs/tags/base"
	git checkout -q -B series base
	git reset -q --hard base
	git clean -q -fdx -e '/.out-*'
else
	log "expand: cloning the base tree into $SRC (~1 min)"
	mkdir -p "$(dirname "$SRC")"
	git clone -q --no-checkout "$BASE_GIT" "$SRC"
	cd "$SRC"
	git checkout -q -b series base
fi
printf '/.out-*\n' >.git/info/exclude
git config user.name >/dev/null || git config user.name "damon-perf harness"
git config user.email >/dev/null || git config user.email "harness@localhost"

n=0
while IFS= read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	[ -f "$PATCHES/$p" ] || die "expand: patches/series names $p, which does not exist"
	if ! git am -q --committer-date-is-author-date "$PATCHES/$p" \
		>"$LOGS/am.log" 2>&1; then
		cat "$LOGS/am.log" >&2
		git am --abort >/dev/null 2>&1 || true
		die "expand: patch $((n + 1)) does not apply: $p"
	fi
	n=$((n + 1))
done <"$PATCHES/series"
git rev-parse HEAD >"$(stamp_file)"
queue_hash >.git/damon-perf-queue
log "expand: $SRC = base + $n patch(es), HEAD $(git rev-parse --short HEAD)"
