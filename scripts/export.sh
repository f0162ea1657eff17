#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Export the working tree's commits (base..HEAD) back into patches/:
# git format-patch, one file per commit, patches/series regenerated, and the
# cover letter patches/0000-cover-letter.patch regenerated with its subject
# and text kept from the previous one (edit it in patches/ and re-export)
# and its "Base:" line set to the exact base version.  Likewise the cover
# letter of each part that patches/parts lists, in patches/cover/.
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

# cover_fields FILE: shell assignments of the subject, the date header and
# the blurb of the cover letter FILE.  Headers unfolded; blurb: the body up
# to the shortlog ("Name (N):"), without the "Base:" line that export writes.
cover_fields() {
	python3 - "$1" <<'PY'
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
}

# cover_letter SUBJECT BLURB BASE_LINE DATE_HDR DIR BASE TIP [ARGS...]:
# git format-patch ARGS BASE..TIP into DIR, with a cover letter made from
# the description of a branch at TIP (format-patch reads the description of
# the branch that the range names).
cover_letter() {
	local s=$1 b=$2 bl=$3 dh=$4 dir=$5 from=$6 to=$7 br=series
	shift 7
	if [ "$(git rev-parse "$to")" != "$(git rev-parse HEAD)" ]; then
		br=damon-perf-export-part
		git branch -f "$br" "$to"
	fi
	git config "branch.$br.description" "$(printf '%s\n\n%s\n\n%s\n' "$s" "$b" "$bl")"
	# A fixed abbreviation: git's automatic one grows with the number of
	# objects in the repository, so index lines would differ between clones.
	git -c core.abbrev=12 format-patch -q --zero-commit --no-signature --cover-letter \
		--cover-from-description=subject -o "$dir" "$@" "$from..$br"
	[ "$br" = series ] || git branch -q -D "$br"
	[ -z "$dh" ] || sed -i "s/^Date: .*/$dh/" "$dir/0000-cover-letter.patch"
}

# Subject, date and blurb of the previous cover letter.
subject="damon-perf: hardware-sampled access reports for DAMON and their observability"
date_hdr=""
blurb="*** BLURB HERE ***"
[ ! -f "$cover" ] || eval "$(cover_fields "$cover")"

n=$(git rev-list --count base..HEAD)
mkdir -p "$tmp/q" "$tmp/cover"
if [ "$n" -gt 0 ]; then
	cover_letter "$subject" "$blurb" "$base_line" "$date_hdr" "$tmp/q" base HEAD --base=base
else
	# No commits: keep a cover letter that states the base.
	{
		echo "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001"
		echo "From: $(git config user.name) <$(git config user.email)>"
		echo "${date_hdr:-Date: $(date -R)}"
		echo "Subject: [PATCH 0/0] $subject"
		echo
		printf '%s\n\n%s\n' "$blurb" "$base_line"
	} >"$tmp/q/0000-cover-letter.patch"
fi

# The cover letter of each part of patches/parts (name, patches N-M, what it
# applies on, subject), its text kept from its previous cover letter.
if [ -f "$P/parts" ] && [ "$n" -gt 0 ]; then
	mapfile -t commits < <(git rev-list --reverse base..HEAD)
	qdate=$(grep -m1 '^Date: ' "$tmp/q/0000-cover-letter.patch")
	before=""
	while IFS=$'\t' read -r name range on psubj; do
		case "$name" in ''|'#'*) continue ;; esac
		first=${range%-*} last=${range#*-}
		last=${last:-$n}
		[ "$first" -ge 1 ] && [ "$first" -le "$last" ] && [ "$last" -le "$n" ] ||
			die "export: part $name: patches $range are not within 1-$n of the series"
		case "$psubj" in
		'(not posted'*) ;;
		*)
			pc=$P/cover/$name-cover-letter.patch
			(
				date_hdr=$qdate blurb="*** BLURB HERE ***"
				[ ! -f "$pc" ] || eval "$(cover_fields "$pc")"
				from=${commits[$((first - 1))]} to=${commits[$((last - 1))]}
				mkdir "$tmp/$name"
				if [ "$on" = linux ]; then
					cover_letter "$psubj" "$blurb" "$base_line" "$date_hdr" \
						"$tmp/$name" "$from^" "$to"
				else
					cover_letter "$psubj" "$blurb" "$base_line, with the parts before it:$before" \
						"$date_hdr" "$tmp/$name" "$from^" "$to" --base=base
				fi
				mv "$tmp/$name/0000-cover-letter.patch" "$tmp/cover/$name-cover-letter.patch"
			) || die "export: the cover letter of part $name failed"
			;;
		esac
		before+=" $name"
	done <"$P/parts"
fi

rm -f "$P"/*.patch "$P"/cover/*-cover-letter.patch
mkdir -p "$P"
cp "$tmp"/q/*.patch "$P"/
if [ -n "$(ls "$tmp/cover")" ]; then
	mkdir -p "$P/cover"
	cp "$tmp"/cover/*.patch "$P"/cover/
fi
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
