#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# parts-check.sh: check the parts of the queue (patches/parts), each of which
# is posted as a series of its own:
#  - the parts cover patches/series, in order, without gap or overlap;
#  - each posted part has its cover letter in patches/cover/, of as many
#    patches as the part has;
#  - a part that applies on the base alone ("linux") applies there with
#    git am, without the patches before it, and the directories of the C
#    files it changes build there (variant "on").
# A part that applies on the queue before it ("queue") is what expand.sh
# applies and per-patch.sh builds at every patch; nothing more is needed.
# Works in a clone of its own, $BUILD/parts/linux, kept between runs.
. "$(dirname "$0")/lib.sh"

[ -d "$MAIN_SRC/.git" ] || die "parts: no expanded tree at $MAIN_SRC: run scripts/expand.sh"
parts=$PATCHES/parts
[ -f "$parts" ] || die "parts: no $parts"
mapfile -t queue < <(grep -vE '^(#|$)' "$PATCHES/series")
n=${#queue[@]}
fails=0
ok()  { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

next=1
linux_parts=()
while IFS=$'\t' read -r name range on subj; do
	case "$name" in ''|'#'*) continue ;; esac
	first=${range%-*} last=${range#*-}
	last=${last:-$n}
	if [ "$first" != "$next" ] || [ "$last" -lt "$first" ] || [ "$last" -gt "$n" ]; then
		bad "part $name: patches $range, where $next-... was due (the series has $n)"
		continue
	fi
	next=$((last + 1))
	case "$on" in
	linux) linux_parts+=("$name $first $last") ;;
	queue) ;;
	*) bad "part $name: applies on '$on', not 'linux' or 'queue'" ;;
	esac
	case "$subj" in '(not posted'*) continue ;; esac
	cl=$PATCHES/cover/$name-cover-letter.patch
	cnt=$((last - first + 1))
	want="[PATCH $(printf "%0${#cnt}d" 0)/$cnt]"
	if [ ! -f "$cl" ]; then
		bad "part $name: no cover letter $cl (scripts/export.sh writes it)"
	elif ! grep -qF "Subject: $want" "$cl"; then
		bad "part $name: $cl is not the cover letter of $cnt patches (export again)"
	elif [ "$(wc -l <"$cl")" -gt 150 ]; then
		bad "part $name: $cl has more than 150 lines"
	else
		ok "part $name: patches $first-$last, cover letter of $(wc -l <"$cl") lines"
	fi
done <"$parts"
[ "$next" -eq $((n + 1)) ] || bad "the parts end at patch $((next - 1)), the series at $n"

# The parts that apply on the base alone, in a clone of the expanded tree
# whose files look old, with the built objects of the queue's head, so that
# only what the part and the missing patches change is built again.
dir=$BUILD/parts/linux
for p in "${linux_parts[@]}"; do
	read -r name first last <<<"$p"
	git -C "$dir" rev-parse -q --verify HEAD >/dev/null 2>&1 || rm -rf "$dir"
	if [ ! -d "$dir/.git" ]; then
		# Once: files that look old, and the objects of the queue's head
		# (built by build.sh from a clean tree, which it records in .head)
		# with every file that differs from that head made to look new, so
		# that make rebuilds what uses them, and only that.
		log "parts: cloning $MAIN_SRC into $dir (once)"
		rm -rf "$dir" "$dir.tmp"
		git clone -q --shared --no-checkout "$MAIN_SRC" "$dir.tmp"
		printf '/.out-*\n' >"$dir.tmp/.git/info/exclude"
		git -C "$dir.tmp" checkout -q --detach base
		(cd "$dir.tmp" && git ls-files -z | xargs -0 touch -h -d @946684800)
		h=$(cat "$MAIN_SRC/.out-on/.head" 2>/dev/null || true)
		if [ -n "$h" ] && git -C "$dir.tmp" cat-file -e "$h^{commit}" 2>/dev/null; then
			cp -a "$MAIN_SRC/.out-on" "$dir.tmp/.out-on"
			git -C "$dir.tmp" diff --name-only "$h" HEAD |
				(cd "$dir.tmp" && while IFS= read -r f; do [ ! -e "$f" ] || touch "$f"; done)
		fi
		mv "$dir.tmp" "$dir"
	fi
	git -C "$dir" am --abort >/dev/null 2>&1 || true
	git -C "$dir" fetch -q "$MAIN_SRC" "+refs/tags/base:refs/tags/base"
	git -C "$dir" checkout -q -f --detach base
	git -C "$dir" clean -q -fdx -e '/.out-*'
	files=()
	for i in $(seq "$first" "$last"); do files+=("$PATCHES/${queue[$((i - 1))]}"); done
	if ! git -C "$dir" -c user.name=parts -c user.email=parts@localhost am -q "${files[@]}" >"$LOGS/parts-$name-am.log" 2>&1; then
		bad "part $name does not apply on the base alone: $(head -n 3 "$LOGS/parts-$name-am.log" | paste -sd' ')"
		git -C "$dir" am --abort >/dev/null 2>&1 || true
		continue
	fi
	ok "part $name (patches $first-$last) applies on the base alone"
	mapfile -t dirs < <(git -C "$dir" diff --name-only base HEAD -- '*.c' | xargs -r -n1 dirname | sort -u | sed 's|$|/|')
	[ ${#dirs[@]} -gt 0 ] || { ok "part $name changes no C file"; continue; }
	# its own logs: build.sh's build-on.log is the queue's
	mkdir -p "$LOGS/parts"
	if DAMON_PERF_SRC=$dir DAMON_PERF_LOGS=$LOGS/parts CCACHE_BASEDIR=$dir \
		bash "$TOP/scripts/build.sh" on "${dirs[@]}" >"$LOGS/parts-$name-build.log" 2>&1; then
		ok "part $name builds alone on the base: ${dirs[*]} ($(grep -c '^  CC ' "$LOGS/parts/build-on.log") objects compiled)"
	else
		tail -n 20 "$LOGS/parts/build-on.log"
		bad "part $name does not build alone on the base: ${dirs[*]}"
	fi
done
echo "parts: $fails failure(s)"
[ "$fails" -eq 0 ]
