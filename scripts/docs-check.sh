#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# docs-check.sh: build the DAMON documentation with Debian's sphinx
# (make SPHINXDIRS="admin-guide/mm/damon mm/damon" htmldocs, which also runs
# kernel-doc on include/linux/damon.h and mm/damon/core.c) and fail on any
# warning in a file that the series touches.  SPHINXDIRS builds each directory
# alone, so a reference to a document or label of the other directory or of
# the rest of Documentation/ is unresolved there; such a warning is accepted
# only if the target exists in Documentation/.  Then the ABI checker
# must say nothing about DAMON's ABI files.
. "$(dirname "$0")/lib.sh"

[ -d "$SRC/.git" ] || die "docs-check: no expanded tree at $SRC"
command -v sphinx-build >/dev/null || die "docs-check: sphinx missing (scripts/deps.sh)"
O=$BUILD/docs
logf=$LOGS/docs-check-htmldocs.log
rm -rf "$O"
mkdir -p "$O"
log "docs-check: make SPHINXDIRS=\"admin-guide/mm/damon mm/damon\" htmldocs"
make -C "$SRC" O="$O" SPHINXDIRS="admin-guide/mm/damon mm/damon" htmldocs \
	>"$logf" 2>&1 || { tail -n 30 "$logf" >&2; die "docs-check: htmldocs failed"; }

mapfile -t touched < <(cd "$SRC" && git diff --name-only base..HEAD)
bad=0 ok_refs=0 others=0
while IFS= read -r line; do
	file=${line%%:*}
	file=${file#"$SRC"/}
	if ! printf '%s\n' "${touched[@]}" | grep -qxF "$file"; then
		others=$((others + 1))
		continue
	fi
	if [[ $line =~ unknown\ document:\ \'/?([^\']+)\' ]]; then
		[ -f "$SRC/Documentation/${BASH_REMATCH[1]}.rst" ] &&
			{ ok_refs=$((ok_refs + 1)); continue; }
	elif [[ $line =~ undefined\ label:\ \'([^\']+)\' ]]; then
		grep -rqsF ".. _${BASH_REMATCH[1]}:" "$SRC/Documentation" &&
			{ ok_refs=$((ok_refs + 1)); continue; }
	fi
	echo "$line"
	bad=$((bad + 1))
done < <(grep -E '(WARNING|ERROR|warning|error):' "$logf" | grep -E '^[^ ]+:[0-9]*:? ' || true)

# The ABI files' checker: tools/docs/get_abi.py on 7.x, scripts/get_abi.pl
# before.  Its warnings about other subsystems' files are not the series'.
if [ -f "$SRC/tools/docs/get_abi.py" ]; then
	get_abi() { (cd "$SRC" && /usr/bin/python3 tools/docs/get_abi.py "$@"); }
else
	get_abi() { (cd "$SRC" && perl scripts/get_abi.pl "$@"); }
fi
abi_all=$(get_abi validate 2>&1) || die "docs-check: the ABI validation failed: $(tail -n 3 <<<"$abi_all")"
abi=$(grep -i 'damon' <<<"$abi_all" || true)
abi_others=$(grep -c 'WARNING\|ERROR' <<<"$abi_all" || true)
if [ -n "$abi" ]; then
	echo "$abi" | head -n 20
	bad=$((bad + 1))
fi
nabi=$(get_abi search 'kdamonds' 2>/dev/null | grep -cE '^([0-9]+\. )?/sys/kernel/mm/damon/' || true)
log "docs-check: $bad warning(s) in the series' files; $ok_refs cross-directory reference(s) resolved in Documentation/; $others warning(s) in untouched files; ABI validate: ${abi:-clean} for DAMON, $((abi_others - $(grep -ci 'damon' <<<"$abi" || true))) warning(s) of other files ($nabi DAMON ABI entries)"
[ "$bad" -eq 0 ]
