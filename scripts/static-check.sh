#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# static-check.sh VARIANT: rebuild mm/damon/ and kernel/events/ with sparse
# on every file (C=2) and W=1; fail on any warning in mm/damon/ or
# include/linux/damon.h that is not in tests/static-baseline (the ones the
# pristine base already has), and on any warning on a line that the series
# adds to perf core (kernel/events/, include/linux/perf_event.h);
# and fail if an overflow handler calls a damon_perf_observe_* function
# instead of inlining it (objdump of ops-common.o).
. "$(dirname "$0")/lib.sh"

variant=${1:?usage: static-check.sh VARIANT}
[ -x "$SPARSE" ] || die "static-check: no $SPARSE (scripts/deps.sh builds it)"
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
# perf core's kernel/events/ too, for the series' kernel-owned AUX buffers.
find "$S/mm/damon" "$S/kernel/events" -name '*.o' -delete 2>/dev/null || true
log "static-check $variant: make mm/damon/ kernel/events/ C=2 W=1 in $S"
run_logged "static-build-$variant" make -C "$SRC" O="$S" -j"$JOBS" CC="ccache gcc" \
	CHECK="$SPARSE" C=2 W=1 mm/damon/ kernel/events/ || die "static-check $variant: build failed"
# kbuild drops C= with only a warning when the checker is not valid
! grep -qE "$SPARSE_INVALID" "$LOGS/static-build-$variant.log" ||
	die "static-check $variant: kbuild did not run sparse ($(grep -m1 -E "$SPARSE_INVALID" "$LOGS/static-build-$variant.log"))"
grep -q '  CHECK   .*mm/damon/core.c' "$LOGS/static-build-$variant.log" ||
	die "static-check $variant: sparse did not check mm/damon/core.c"
# Normalise "file:line:col: warning: text" to "file: warning: text".
grep -E '(mm/damon/|include/linux/damon\.h|include/trace/events/damon\.h).*: (warning|error):' \
	"$LOGS/static-build-$variant.log" | sed -E 's#^(\.\./)?##; s#:[0-9]+:[0-9]+:#:#; s#:[0-9]+:#:#' |
	sort -u >"$LOGS/static-$variant.txt" || true
new=$(grep -vxF -f <(grep -v '^#' "$TOP/tests/static-baseline") "$LOGS/static-$variant.txt" || true)
# perf core has sparse warnings of its own: only the lines the series adds
perf_new=$(series_line_warnings "$LOGS/static-build-$variant.log" kernel/events \
	include/linux/perf_event.h) || die "static-check $variant: reading the series' lines of perf core failed"
new+=${perf_new:+$'\n'$perf_new}
new=$(grep . <<<"$new" || true)
echo "static-check $variant: $(wc -l <"$LOGS/static-$variant.txt") sparse/W=1 warning(s) in DAMON files, $(grep -c . <<<"$new" || true) not in the baseline"
if [ -n "$new" ]; then
	echo "$new"
	exit 1
fi

# The overflow handlers run on every sample, in NMI too: the observe hooks
# they call are inlined (issue #13), never a call.  FUNC's calls: the
# target of each call instruction, or, for a call that the object leaves to
# the linker (shown as a call of FUNC itself), its relocation.  DIS is the
# object's disassembly, in a file: awk stops reading at FUNC's end, and
# objdump writing into a closed pipe would die of SIGPIPE, which pipefail
# turns into a silent exit of this script (CI saw static-on and static-off
# fail so, with no message, when the other lane kept the CPUs busy).
handler_calls() {	# handler_calls DIS FUNC
	awk -v fn="$2" '
		$2 == "<" fn ">:" { p = 1; print "#found"; next }
		p && /^$/ { exit }
		p && c && /R_X86_64/ { sub(/[-+]0x[0-9a-f]+$/, "", $NF); print $NF }
		{ c = 0 }
		p && /[[:space:]]call[[:space:]]/ && match($0, /<[^>]*>$/) {
			t = substr($0, RSTART + 1, RLENGTH - 2)
			sub(/\+0x[0-9a-f]+$/, "", t)
			if (t == fn)
				c = 1
			else
				print t
		}' "$1"
}
obj=$S/mm/damon/ops-common.o
dis=$LOGS/static-$variant-ops-common.dis
objdump -dr --no-show-raw-insn "$obj" >"$dis" || die "static-check $variant: objdump $obj failed"
bad=""
for f in damon_perf_vaddr_overflow damon_perf_paddr_overflow; do
	calls=$(handler_calls "$dis" "$f")
	grep -qx '#found' <<<"$calls" || { bad+=" $f not found in $obj;"; continue; }
	hooks=$(grep '^damon_perf_observe_' <<<"$calls" | sort -u | paste -sd, -) || true
	[ -z "$hooks" ] || bad+=" $f calls $hooks;"
done
if [ -n "$bad" ]; then
	echo "static-check $variant: the overflow handlers must inline the observe hooks:$bad"
	exit 1
fi
echo "static-check $variant: the overflow handlers call no damon_perf_observe_* function"
