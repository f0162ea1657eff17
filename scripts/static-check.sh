#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# static-check.sh VARIANT: rebuild mm/damon/ with sparse on every file (C=2)
# and W=1; fail on any warning in mm/damon/ or include/linux/damon.h that is
# not in tests/static-baseline (the ones the pristine 6.12 base already has).
. "$(dirname "$0")/lib.sh"

variant=${1:?usage: static-check.sh VARIANT}
command -v sparse >/dev/null || die "static-check: sparse missing (scripts/deps.sh)"
# In an O= dir of its own (a copy of the variant's, same .config), so that
# the variant's objects, and its bzImage, stay as a normal build made them.
O=$(objdir "$variant")
S=$(objdir "static-$variant")
[ -f "$O/.config" ] || bash "$TOP/scripts/build.sh" "$variant" || die "static-check $variant: build failed"
if [ ! -d "$S" ]; then
	cp -a "$O" "$S.tmp.$$" && mv "$S.tmp.$$" "$S"
fi
cmp -s "$O/.config" "$S/.config" || cp "$O/.config" "$S/.config"
# Every DAMON object is compiled again (ccache replays a cached compile's
# warnings), so that W=1 cannot pass on objects built before.
find "$S/mm/damon" -name '*.o' -delete 2>/dev/null || true
log "static-check $variant: make mm/damon/ C=2 W=1 in $S"
run_logged "static-build-$variant" make -C "$SRC" O="$S" -j"$JOBS" CC="ccache gcc" C=2 W=1 mm/damon/ ||
	die "static-check $variant: build failed"
# Normalise "file:line:col: warning: text" to "file: warning: text".
grep -E '(mm/damon/|include/linux/damon\.h|include/trace/events/damon\.h).*: (warning|error):' \
	"$LOGS/static-build-$variant.log" | sed -E 's#^(\.\./)?##; s#:[0-9]+:[0-9]+:#:#; s#:[0-9]+:#:#' |
	sort -u >"$LOGS/static-$variant.txt" || true
new=$(grep -vxF -f <(grep -v '^#' "$TOP/tests/static-baseline") "$LOGS/static-$variant.txt" || true)
echo "static-check $variant: $(wc -l <"$LOGS/static-$variant.txt") sparse/W=1 warning(s) in DAMON files, $(grep -c . <<<"$new" || true) not in the baseline"
if [ -n "$new" ]; then
	echo "$new"
	exit 1
fi
