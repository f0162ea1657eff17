#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# build.sh VARIANT [TARGET...]: configure (if needed) and build VARIANT in its
# O= dir with ccache.  Default target: bzImage.  "mm/damon/" builds only
# DAMON's objects, the fast inner loop.  Extra make flags via KMAKEFLAGS
# (e.g. KMAKEFLAGS="C=1 W=1").
. "$(dirname "$0")/lib.sh"

variant=${1:?usage: build.sh VARIANT [TARGET...]}
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(bzImage)
O=$(objdir "$variant")

# A variant's first build starts from another built variant's objects.
for v in $(variants); do
	[ "$v" = "$variant" ] || seed_objdir "$(objdir "$v")" "$O"
done
# Re-assemble the config when it is missing or a fragment is newer.
if [ ! -f "$O/.config" ] || [ -n "$(find "$TOP/kconfig" "$SRC/tools/testing/selftests/damon/config" \
	-newer "$O/.config" -type f 2>/dev/null)" ] ||
	[ -n "$(find "$SRC" -path "$SRC/.out-*" -prune -o -name 'Kconfig*' -newer "$O/.config" -print -quit)" ]; then
	bash "$TOP/scripts/config.sh" "$variant"
fi

start=$SECONDS
log "build $variant: make ${targets[*]} ${KMAKEFLAGS:-} (-j$JOBS, ccache)"
# shellcheck disable=SC2086
with_progress "build-$variant" make -C "$SRC" O="$O" -j"$JOBS" CC="ccache gcc" \
	${KMAKEFLAGS:-} "${targets[@]}" || die "build $variant failed"
# A complete build of a clean tree records its commit (hist_tree in lib.sh
# copies only O= dirs built from the commit it checks out).
rm -f "$O/.head"
if [[ " ${targets[*]} " =~ \ (bzImage|vmlinux)\  ]] &&
	[ -z "$(git -C "$SRC" status --porcelain 2>/dev/null)" ]; then
	git -C "$SRC" rev-parse HEAD >"$O/.head"
fi
log "build $variant: done in $((SECONDS - start)) s"
