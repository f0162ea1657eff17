#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Export the working tree's commits (base..HEAD) back into patches/:
# git format-patch, one file per commit, patches/series regenerated, and the
# cover letter patches/0000-cover-letter.patch regenerated with its subject
# and text kept from the previous one (edit it in patches/ and re-export)
# and its "Base:" line set to the exact base version.
# Refuses to run over uncommitted work in the tree.
. "$(dirname "$0")/lib.sh"

[ -d "$SRC/.git" ] || die "export: no expanded tree at $SRC"
cd "$SRC"
[ -z "$(git status --porcelain)" ] ||
	die "export: $SRC has uncommitted changes; commit them first (git commit -s)"
git am --abort >/dev/null 2>&1 || true

KVER=$(make -s -C "$PRISTINE" kernelversion)
DEBVER=$(deb_version "$BASE_PKG")
base_line="Base: Linux $KVER, Debian $BASE_PKG $DEBVER"
P=$PATCHES
cover=$P/0000-cover-letter.patch
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Subject, date and blurb of the previous cover letter.
subject="damon-perf: hardware-sampled access reports for DAMON and their observability"
date_hdr=""
blurb="*** BLURB HERE ***"
if [ -f "$cover" ]; then
	# Unfold the headers; blurb: the body up to the shortlog ("Name (N):").
	eval "$(python3 - "$cover" <<'PY'
import email, re, shlex, sys
msg = email.message_from_file(open(sys.argv[1], encoding="utf-8"))
subj = re.sub(r"\s*\n\s*", " ", msg["Subject"] or "")
subj = re.sub(r"^\[[^]]*\]\s*", "", subj)
lines = []
for line in msg.get_payload().splitlines():
    if re.match(r"^\S.* \(\d+\):$", line):
        break
    if not line.startswith("Base: Linux "):
        lines.append(line)
blurb = "\n".join(lines).strip("\n")
print("subject=" + shlex.quote(subj))
print("date_hdr=" + shlex.quote("Date: " + msg["Date"] if msg["Date"] else ""))
print("blurb=" + shlex.quote(blurb))
PY
)"
fi

n=$(git rev-list --count base..HEAD)
if [ "$n" -gt 0 ]; then
	git config branch.series.description "$(printf '%s\n\n%s\n\n%s\n' \
		"$subject" "$blurb" "$base_line")"
	# A fixed abbreviation: git's automatic one grows with the number of
	# objects in the repository, so index lines would differ between clones.
	git -c core.abbrev=12 format-patch -q --zero-commit --no-signature --cover-letter --base=base \
		--cover-from-description=subject -o "$tmp" base..HEAD
	[ -z "$date_hdr" ] || sed -i "s/^Date: .*/$date_hdr/" "$tmp/0000-cover-letter.patch"
else
	# No commits: keep a cover letter that states the base.
	{
		echo "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001"
		echo "From: $(git config user.name) <$(git config user.email)>"
		echo "${date_hdr:-Date: $(date -R)}"
		echo "Subject: [PATCH 0/0] $subject"
		echo
		printf '%s\n\n%s\n' "$blurb" "$base_line"
	} >"$tmp/0000-cover-letter.patch"
fi

rm -f "$P"/*.patch
mkdir -p "$P"
cp "$tmp"/*.patch "$P"/
(cd "$P" && ls -1 [0-9]*.patch | grep -v '^0000-cover-letter.patch$' || true) >"$P/series"
git rev-parse HEAD >"$SRC/.git/damon-perf-exported"
queue_hash >"$SRC/.git/damon-perf-queue"
log "export: $n patch(es) + cover letter into $P"
# The recipients of each patch, recorded for sending (check verifies); only
# for the real queue: a scratch queue (PATCHES=elsewhere, e.g. the roundtrip
# test's) must not rewrite send/.
if [ "$(realpath "$P")" = "$(realpath "$TOP/patches")" ]; then
	bash "$TOP/scripts/get-maintainer.sh"
else
	log "export: $P is not patches/: send/get_maintainer.txt left as it is"
fi
