#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# config.sh VARIANT [OBJDIR]: assemble the guest .config of VARIANT in its
# O= dir (or OBJDIR):
#   tinyconfig, then kconfig/guest-base.config, kconfig/distro.config (what
#   a distro kernel runs differently), DAMON's selftest config,
#   kconfig/damon.config, kconfig/observe-VARIANT.config, any EXTRA_FRAGMENTS,
#   and kconfig/guest-required.config last; then olddefconfig, then a check
#   that every requested option came out as asked.
. "$(dirname "$0")/lib.sh"

variant=${1:?usage: config.sh VARIANT [OBJDIR]}
O=${2:-$(objdir "$variant")}
[ -d "$SRC/.git" ] || die "no expanded tree at $SRC: run scripts/expand.sh"
frags=(
	"$TOP/kconfig/guest-base.config"
	"$TOP/kconfig/distro.config"
	"$SRC/tools/testing/selftests/damon/config"
	"$TOP/kconfig/damon.config"
	"$TOP/kconfig/observe-$variant.config"
)
for f in ${EXTRA_FRAGMENTS:-}; do frags+=("$f"); done
frags+=("$TOP/kconfig/guest-required.config")
for f in "${frags[@]}"; do [ -f "$f" ] || die "missing fragment $f"; done

mkdir -p "$O"
# Assembling takes ~25 s (four kconfig runs); a config assembled before from
# the same inputs (config_key) is taken from the cache instead.
key=$(config_key x86 "${frags[@]}")
if config_from_cache "$key" "$O"; then
	log "config $variant: inputs as before (key ${key:0:12}), .config from $CACHE/configs"
else
	{
		make -s -C "$SRC" O="$O" tinyconfig
		# merge_config.sh makes its temporary files in the current directory:
		# in the O= dir, not in the checkout that other lanes check
		(cd "$O" && "$SRC/scripts/kconfig/merge_config.sh" -m -O "$O" "$O/.config" "${frags[@]}")
		make -s -C "$SRC" O="$O" olddefconfig
	} >"$LOGS/config-$variant.log" 2>&1 ||
		{ tail -n 30 "$LOGS/config-$variant.log" >&2; die "config $variant failed"; }
	store=1
fi

# Requested value of each symbol: the last fragment that mentions it wins.
declare -A want
for f in "${frags[@]}"; do
	while IFS= read -r line; do
		if [[ $line =~ ^CONFIG_([A-Za-z0-9_]+)=(.*)$ ]]; then
			want[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
		elif [[ $line =~ ^#\ CONFIG_([A-Za-z0-9_]+)\ is\ not\ set ]]; then
			want[${BASH_REMATCH[1]}]=n
		fi
	done <"$f"
done

series_syms=" $(grep -v '^#' "$TOP/kconfig/series-symbols" | tr '\n' ' ') "
bad=0
for sym in $(printf '%s\n' "${!want[@]}" | sort); do
	w=${want[$sym]}
	got=$(grep -E "^CONFIG_$sym=" "$O/.config" | cut -d= -f2- || true)
	[ -n "$got" ] || got=n
	[ "$got" = "$w" ] && continue
	if [[ $series_syms == *" $sym "* ]] &&
		! grep -rqsE "^(menu)?config $sym\$" --include='Kconfig*' "$SRC/mm" "$SRC/kernel" "$SRC/lib"; then
		log "config $variant: CONFIG_$sym not defined in this tree yet (series symbol), skipped"
		continue
	fi
	echo "CONFIG_$sym: requested $w, got $got" >&2
	bad=$((bad + 1))
done
[ "$bad" -eq 0 ] || die "config $variant: $bad requested option(s) did not come out as asked (unmet dependencies; see 'make O=$O menuconfig')"
[ -z "${store:-}" ] || config_to_cache "$key" "$O"
log "config $variant: ${#want[@]} requested options all as asked ($(grep -c '=y' "$O/.config") =y)"
