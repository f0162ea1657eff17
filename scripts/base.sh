#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Unpack the base tarball once into a read-only pristine tree and record it as
# the single commit of a cached bare git repository ($BASE_GIT, tag "base").
#
# The Debian tarball's top-level .gitignore ends with a stanza ("/*",
# "!/debian/") that ignores the whole tree; the base commit carries the
# .gitignore with that stanza removed so that new files are visible to git.
. "$(dirname "$0")/lib.sh"

[ -f "$BASE_TARBALL" ] || die "$BASE_TARBALL missing: run scripts/deps.sh"
mkdir -p "$CACHE"
stamp=$CACHE/.pristine-$(stat -c %s-%Y "$BASE_TARBALL")

if [ ! -f "$stamp" ]; then
	log "base: unpacking $BASE_TARBALL into $PRISTINE (~15 s)"
	rm -f "$CACHE"/.pristine-*
	[ -d "$PRISTINE" ] && chmod -R u+w "$PRISTINE" && rm -rf "$PRISTINE"
	rm -rf "$BASE_GIT"
	tmp=$(mktemp -d "$CACHE/unpack.XXXXXX")
	tar -C "$tmp" -xf "$BASE_TARBALL"
	mv "$tmp/linux-source-$BASE_SERIES" "$PRISTINE"
	rmdir "$tmp"
	chmod -R a-w "$PRISTINE"
	touch "$stamp"
fi
KVER=$(make -s -C "$PRISTINE" kernelversion)
debver=$(deb_version "$BASE_PKG")
# The message names the tarball by its path in the package, not where deps.sh
# unpacked it (which depends on DAMON_PERF_CACHE): the base commit, and so
# the queue's base-commit, is the same on every machine.
msg="Linux $KVER (Debian $BASE_PKG $debver)

Pristine tree of /usr/src/linux-source-$BASE_SERIES.tar.xz of the
package, with one change: the Debian stanza at the end of the top-level
.gitignore (\"/*\", \"!/debian/\"), which ignores the whole tree, is
removed so that git sees new files."
# A base commit of another message (an older harness's) is made again.
if git --git-dir="$BASE_GIT" rev-parse -q --verify refs/tags/base >/dev/null 2>&1 &&
	[ "$(git --git-dir="$BASE_GIT" log -1 --format=%B base)" != "$msg" ]; then
	log "base: $BASE_GIT holds a base commit of another message: making it again"
	rm -rf "$BASE_GIT"
fi

if ! git --git-dir="$BASE_GIT" rev-parse -q --verify refs/tags/base >/dev/null 2>&1; then
	log "base: committing the pristine $KVER tree (~90k files, ~2.5 min)"
	rm -rf "$BASE_GIT" "$BASE_GIT.tmp"
	git init -q --bare "$BASE_GIT.tmp"
	export GIT_DIR=$BASE_GIT.tmp GIT_WORK_TREE=$PRISTINE
	export GIT_INDEX_FILE=$BASE_GIT.tmp/index
	git config core.autocrlf false
	git config core.fileMode true
	# -f: the tarball is the tree; the Debian stanza would hide it all.
	git add -A -f .
	gi=$(sed '/^# Debian packaging: ignore everything/,$d' "$PRISTINE/.gitignore" |
		sed '${/^#$/d}' | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' |
		git hash-object -w --stdin)
	git update-index --cacheinfo "100644,$gi,.gitignore"
	tree=$(git write-tree)
	commit=$(GIT_AUTHOR_NAME="damon-perf base" GIT_AUTHOR_EMAIL="base@localhost" \
		GIT_COMMITTER_NAME="damon-perf base" GIT_COMMITTER_EMAIL="base@localhost" \
		GIT_AUTHOR_DATE="2000-01-01T00:00:00Z" GIT_COMMITTER_DATE="2000-01-01T00:00:00Z" \
		git commit-tree "$tree" <<<"$msg")
	git tag base "$commit"
	rm -f "$GIT_INDEX_FILE"
	unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE
	mv "$BASE_GIT.tmp" "$BASE_GIT"
fi
log "base: $KVER at $(git --git-dir="$BASE_GIT" rev-parse --short base)"
