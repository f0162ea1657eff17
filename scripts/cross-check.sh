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
case $arch in
arm64)	cross=aarch64-linux-gnu- ;;
i386)	cross= ;;	# the host's gcc builds 32-bit x86 kernels (-m32)
*)	die "cross-check: unknown arch $arch (arm64 or i386)" ;;
esac
command -v "${cross}gcc" >/dev/null ||
	die "cross-check: ${cross}gcc missing (scripts/deps.sh installs it)"
[ -x "$SPARSE" ] || die "cross-check: no $SPARSE (scripts/deps.sh builds it)"
[ -d "$SRC/.git" ] || die "no expanded tree at $SRC: run scripts/expand.sh"

O=$SRC/.out-$arch-$variant
name=cross-$arch-$variant
frags=("$TOP/kconfig/cross.config" "$TOP/kconfig/damon.config")
case $variant in
on|off)	frags+=("$TOP/kconfig/observe-$variant.config") ;;
# observe asked for, and left out by Kconfig: it depends on PERF_EVENTS
noperf)	frags+=("$TOP/kconfig/observe-on.config" "$TOP/kconfig/noperf.config") ;;
*)	die "cross-check: unknown variant $variant (on, off or noperf)" ;;
esac
kmake=(make -C "$SRC" O="$O" ARCH="$arch" CROSS_COMPILE="$cross")

# The other variant's prepared O= dir, if there is one, is a head start.
for v in on off noperf; do
	[ "$v" = "$variant" ] || seed_objdir "$SRC/.out-$arch-$v" "$O" mm/damon/core.o
done
mkdir -p "$O"
key=$(config_key "$arch" "${frags[@]}")
if config_from_cache "$key" "$O"; then
	log "$name: config inputs as before (key ${key:0:12}), .config from $CACHE/configs"
else
	{
		"${kmake[@]}" -s tinyconfig
		# merge_config.sh makes its temporary files in the current directory:
		# in the O= dir, not in the checkout that other lanes check
		(cd "$O" && "$SRC/scripts/kconfig/merge_config.sh" -m -O "$O" "$O/.config" "${frags[@]}")
		"${kmake[@]}" -s olddefconfig
	} >"$LOGS/$name-config.log" 2>&1 ||
		{ tail -n 30 "$LOGS/$name-config.log" >&2; die "$name: config failed"; }
	store=1
fi

# The DAMON options and what the series needs must come out as asked.
bad=0
perf=PERF_EVENTS
[ "$variant" != noperf ] || perf=
for sym in DAMON DAMON_VADDR DAMON_PADDR DAMON_SYSFS DAMON_KUNIT_TEST \
	$perf DEBUG_FS EVENT_TRACING SMP HOTPLUG_CPU; do
	grep -qx "CONFIG_$sym=y" "$O/.config" ||
		{ echo "CONFIG_$sym is not y" >&2; bad=$((bad + 1)); }
done
if [ "$arch" = arm64 ] && [ "$variant" != noperf ] &&
	! grep -qx 'CONFIG_ARM_SPE_PMU=y' "$O/.config"; then
	echo "CONFIG_ARM_SPE_PMU is not y" >&2
	bad=$((bad + 1))
fi
if [ "$variant" = noperf ] && grep -qx 'CONFIG_PERF_EVENTS=y' "$O/.config"; then
	echo "CONFIG_PERF_EVENTS is y for variant noperf" >&2
	bad=$((bad + 1))
fi
obs=$(grep -E '^CONFIG_DAMON_PERF_OBSERVE=' "$O/.config" | cut -d= -f2 || true)
[ "${obs:-n}" = "$([ "$variant" = on ] && echo y || echo n)" ] ||
	{ echo "CONFIG_DAMON_PERF_OBSERVE is '${obs:-n}' for variant $variant" >&2; bad=$((bad + 1)); }
[ "$bad" -eq 0 ] || die "$name: $bad option(s) did not come out as asked (see $O/.config)"
[ -z "${store:-}" ] || config_to_cache "$key" "$O"
bits=$(grep -q '^CONFIG_64BIT=y' "$O/.config" && echo 64 || echo 32)

# With perf events, perf core too: the series' kernel-owned AUX buffers
# (kernel/events/), and on arm64 the SPE driver that writes such a buffer.
targets=(mm/damon/)
if [ "$variant" != noperf ]; then
	targets+=(kernel/events/)
	[ "$arch" != arm64 ] || targets+=(drivers/perf/arm_spe_pmu.o)
fi
start=$SECONDS
log "$name: make ${targets[*]} C=2 W=1 ($bits-bit, -j$JOBS, ccache)"
# Only these are rebuilt with sparse; kbuild prepares the rest first.
# Their objects are removed first, so that every file is compiled (ccache
# replays a cached compile's warnings) and W=1 cannot pass on old objects.
for t in "${targets[@]}"; do
	find "$O/${t%.o}"* -name '*.o' -delete 2>/dev/null || true
done
with_progress "$name" "${kmake[@]}" -j"$JOBS" CC="ccache ${cross}gcc" \
	CHECK="$SPARSE" C=2 W=1 "${targets[@]}" || die "$name: build failed (build/logs/$name.log)"
# kbuild drops C= with only a warning when the checker is not valid
! grep -qE "$SPARSE_INVALID" "$LOGS/$name.log" ||
	die "$name: kbuild did not run sparse ($(grep -m1 -E "$SPARSE_INVALID" "$LOGS/$name.log"))"
grep -q '  CHECK   .*mm/damon/core.c' "$LOGS/$name.log" ||
	die "$name: sparse did not check mm/damon/core.c"
for o in core.o sysfs.o ops-common.o vaddr.o paddr.o perf/events.o perf/report.o; do
	[ -f "$O/mm/damon/$o" ] || die "$name: mm/damon/$o was not built"
done
if [ "$variant" = on ]; then
	[ -f "$O/mm/damon/perf/observe.o" ] || die "$name: mm/damon/perf/observe.o was not built"
fi
if [ "$variant" != noperf ]; then
	[ -f "$O/kernel/events/core.o" ] || die "$name: kernel/events/core.o was not built"
	[ "$arch" != arm64 ] || [ -f "$O/drivers/perf/arm_spe_pmu.o" ] ||
		die "$name: drivers/perf/arm_spe_pmu.o was not built"
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
