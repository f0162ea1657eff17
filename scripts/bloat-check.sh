#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bloat-check.sh: with CONFIG_DAMON_PERF_OBSERVE=n the observe framework must
# compile away.  Builds the "off" variant at the last commit before the
# observe part (the parent of the commit that adds "config
# DAMON_PERF_OBSERVE") in its own O= dir, and at HEAD, then compares vmlinux
# and every mm/damon object with scripts/bloat-o-meter: 0 bytes allowed.
. "$(dirname "$0")/lib.sh"

hist_tree	# the base-only commit is checked out and built in $HIST
cd "$SRC"
first=$(git log --reverse --format=%H -S'config DAMON_PERF_OBSERVE' base..HEAD -- mm/damon/Kconfig | sed -n 1p)
if [ -z "$first" ]; then
	echo "bloat-check: no commit of the series adds DAMON_PERF_OBSERVE yet: nothing to compare"
	exit 0
fi
base_only=$(git rev-parse "$first^")
echo "bloat-check: base-only series ends at $(git log -1 --format='%h %s' "$base_only")"
head=$(git symbolic-ref -q --short HEAD || git rev-parse HEAD)
trap 'git -C "$SRC" checkout -q "$head"' EXIT

ref=$(objdir off-baseonly)
# The reference starts from the objects of HEAD's observe=off build: after
# the checkout only what the observe part changed is rebuilt.
[ -f "$(objdir off)/vmlinux" ] || bash "$TOP/scripts/build.sh" off vmlinux ||
	die "bloat-check: HEAD off build failed"
seed_objdir "$(objdir off)" "$ref"
git checkout -q "$base_only"
bash "$TOP/scripts/config.sh" off "$ref"
log "bloat-check: building the base-only series (observe off) in $ref"
with_progress bloat-baseonly make -C "$SRC" O="$ref" -j"$JOBS" CC="ccache gcc" vmlinux ||
	die "bloat-check: base-only build failed"
git checkout -q "$head"
bash "$TOP/scripts/build.sh" off vmlinux || die "bloat-check: HEAD off build failed"

cur=$(objdir off)
# The DAMON objects linked into each vmlinux (the members of the thin
# archive), not whatever *.o lies in the directory: an O= dir may hold
# objects of another commit or config that this build does not link.
linked() { (cd "$1" && ar t mm/damon/built-in.a | grep '^mm/damon/') || die "bloat-check: no mm/damon/built-in.a in $1"; }
mapfile -t objs < <(linked "$ref"; linked "$cur"; echo vmlinux)
bad=0 n=0
for o in $(printf '%s\n' "${objs[@]}" | sort -u); do
	n=$((n + 1))
	if [ ! -f "$ref/$o" ] || [ ! -f "$cur/$o" ]; then
		echo "FAIL: $o is built in only one of the two"
		bad=$((bad + 1))
		continue
	fi
	out=$("$SRC/scripts/bloat-o-meter" "$ref/$o" "$cur/$o")
	sizes=$(size "$ref/$o" "$cur/$o" | awk 'NR > 1 {print $1, $2, $3}' | uniq | wc -l)
	if head -n 1 <<<"$out" | grep -q '(0)$' && [ "$sizes" -eq 1 ] &&
		tail -n 1 <<<"$out" | grep -qE 'Before=([0-9]+), After=\1,'; then
		echo "ok: $o: 0 bytes ($(tail -n 1 <<<"$out"))"
	else
		echo "FAIL: $o:"
		echo "$out"
		size "$ref/$o" "$cur/$o"
		bad=$((bad + 1))
	fi
done
echo "bloat-o-meter observe=n vs base-only: $n objects, $bad differ"
[ "$bad" -eq 0 ]
