#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# cross-check.sh ARCH VARIANT: configure the expanded tree for ARCH (arm64 or
# i386) with observe VARIANT (on/off; or noperf: CONFIG_PERF_EVENTS=n, which
# arm64 allows and x86 doesn't), build the DAMON objects with sparse on
# every file (C=2) and W=1, and fail on a warning in a DAMON file that is not
# in tests/static-baseline.  The counters of the series are u64s written from
# NMI, and its sample handlers must serve ARM SPE as well as x86 PMUs: this
# proves that the code builds cleanly on a 64-bit non-x86 and a 32-bit arch.
# Objects: $SRC/.out-ARCH-VARIANT.  Log: build/logs/cross-ARCH-VARIANT.log.
. "$(dirname "$0")/lib.sh"

arch=${1:?usage: cross-check.sh arm64|i386 on|off|noperf}
variant=${2:?usage: cross-check.sh arm64|i386 on|off|noperf}
[ -x "$SPARSE" ] || die "cross-check: no $SPARSE (scripts/deps.sh builds it)"
[ -d "$SRC/.git" ] || die "no expanded tree at $SRC: run scripts/expand.sh"

name=cross-$arch-$variant
cross_config "$arch" "$variant" "$name"	# sets O, kmake, cross_cc, cross_targets
bits=$(grep -q '^CONFIG_64BIT=y' "$O/.config" && echo 64 || echo 32)

# With perf events, perf core too: the series' kernel-owned AUX buffers
# (kernel/events/), and on arm64 the SPE driver that writes such a buffer.
targets=("${cross_targets[@]}")
start=$SECONDS
log "$name: make ${targets[*]} C=2 W=1 ($bits-bit, -j$JOBS, ccache)"
# Only these are rebuilt with sparse; kbuild prepares the rest first.
# Their objects are removed first, so that every file is compiled (ccache
# replays a cached compile's warnings) and W=1 cannot pass on old objects.
for t in "${targets[@]}"; do
	find "$O/${t%.o}"* -name '*.o' -delete 2>/dev/null || true
done
with_progress "$name" "${kmake[@]}" -j"$JOBS" CC="$cross_cc" \
	CHECK="$SPARSE" C=2 W=1 "${targets[@]}" || die "$name: build failed (build/logs/$name.log)"
# kbuild drops C= with only a warning when the checker is not valid
! grep -qE "$SPARSE_INVALID" "$LOGS/$name.log" ||
	die "$name: kbuild did not run sparse ($(grep -m1 -E "$SPARSE_INVALID" "$LOGS/$name.log"))"
grep -q '  CHECK   .*mm/damon/core.c' "$LOGS/$name.log" ||
	die "$name: sparse did not check mm/damon/core.c"
for o in core.o sysfs.o ops-common.o vaddr.o paddr.o; do
	[ -f "$O/mm/damon/$o" ] || die "$name: mm/damon/$o was not built"
done
if [ "$variant" = on ]; then
	[ -f "$O/mm/damon/perf/observe.o" ] || die "$name: mm/damon/perf/observe.o was not built"
fi
if [ "$variant" != noperf ]; then
	for o in perf/events.o perf/report.o; do
		[ -f "$O/mm/damon/$o" ] || die "$name: mm/damon/$o was not built"
	done
	[ -f "$O/kernel/events/core.o" ] || die "$name: kernel/events/core.o was not built"
	[ "$arch" != arm64 ] || [ -f "$O/drivers/perf/arm_spe_pmu.o" ] ||
		die "$name: drivers/perf/arm_spe_pmu.o was not built"
else
	# nothing of the perf source without perf events
	for o in $(cd "$O/mm/damon" && find perf -name '*.o' 2>/dev/null); do
		[ "$o" = perf/built-in.a ] || die "$name: mm/damon/$o was built without CONFIG_PERF_EVENTS"
	done
fi

grep -E '(mm/damon/|include/linux/damon\.h|include/trace/events/damon\.h).*: (warning|error):' \
	"$LOGS/$name.log" | sed -E 's#^(\.\./)?##; s#:[0-9]+:[0-9]+:#:#; s#:[0-9]+:#:#' |
	sort -u >"$LOGS/$name.txt" || true
new=$(grep -vxF -f <(grep -v '^#' "$TOP/tests/static-baseline") "$LOGS/$name.txt" || true)
# perf core has sparse warnings of its own: only the lines the series adds
perf_new=$(series_line_warnings "$LOGS/$name.log" kernel/events include/linux/perf_event.h \
	drivers/perf) || die "$name: reading the series' lines of perf core failed"
new+=${perf_new:+$'\n'$perf_new}
new=$(grep . <<<"$new" || true)
log "$name: built in $((SECONDS - start)) s; $(wc -l <"$LOGS/$name.txt") sparse/W=1 warning(s) in DAMON and perf core files, $(grep -c . <<<"$new" || true) not in the baseline"
if [ -n "$new" ]; then
	echo "$new"
	exit 1
fi
