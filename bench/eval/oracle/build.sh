#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build.sh [OUTDIR]: build the oracle TCG plugin (oracle.c) into
# OUTDIR/liboracle.so (default $BUILD/eval/oracle: build/eval/oracle).
#
# A plugin must be compiled against the qemu-plugin.h of the QEMU that loads
# it (qemu_plugin_install() is refused when QEMU_PLUGIN_VERSION is out of
# the QEMU's range).  No binary package of Debian 12 ships that header
# (dpkg -S and apt-cache search find none), so it is taken from the source
# package of the installed qemu-system-x86: 'apt-get source --download-only'
# of the exact version, with a sources list of the oracle's own
# (sources.list: deb-src of bookworm through the machine's mirror) and an
# apt state dir under $CACHE, as scripts/deps.sh does with apt/sources.list;
# the machine's sources and indexes stay as they are.  Only
# include/qemu/qemu-plugin.h is taken out of the orig tarball, and the
# build stops if one of Debian's patches (the debian tarball) touches it
# (none of 1:7.2+dfsg-7+deb12u18's does).  The header is cached under
# $CACHE/qemu-plugin-h/VERSION, so that later builds download nothing.
#
# The plugin uses no GLib: its hash table is its own (oracle.c), because
# libglib2.0-dev must be of the same version as the installed libglib2.0-0,
# and the mirror has only a newer one: installing it would upgrade the
# machine's glib and pcre2.  QEMU 7.2's qemu-plugin.h needs only libc.
#
# Exit: 0 built, 1 error, 4 the header cannot be had (no such source
# package on the mirror, no network): test.sh turns this into a skip.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../../scripts/lib.sh
. "$here/../../../scripts/lib.sh"

out=${1:-$BUILD/eval/oracle}
mkdir -p "$out"
out=$(cd "$out" && pwd)

skip() { log "oracle: SKIP: $*"; exit 4; }

# The source version, not ${Version}: the binary is a binNMU
# (1:7.2+dfsg-7+deb12u18+b3), a rebuild of the source 1:7.2+dfsg-7+deb12u18
# that apt-get source knows by the latter.
qver=$(dpkg-query -W -f='${source:Version}' qemu-system-x86 2>/dev/null) ||
	skip "qemu-system-x86 is not installed"
[ -n "$qver" ] || skip "no source version of qemu-system-x86"
hdr_dir=$CACHE/qemu-plugin-h/$qver
hdr=$hdr_dir/qemu/qemu-plugin.h

fetch_header() {
	local apt_state=$CACHE/apt-oracle tmp orig deb hits
	local apt_opts=(
		-o "Dir::Etc::SourceList=$here/sources.list"
		-o "Dir::Etc::SourceParts=/dev/null"
		-o "Dir::State::Lists=$apt_state/lists"
		-o "Dir::Cache=$apt_state/cache"
		-o "APT::Get::List-Cleanup=0"
	)

	log "oracle: fetching qemu-plugin.h of the source package qemu=$qver"
	mkdir -p "$apt_state/lists/partial" "$apt_state/cache/archives/partial"
	apt-get "${apt_opts[@]}" update -q >"$LOGS/apt-update-oracle.log" 2>&1 ||
		skip "apt-get update of $here/sources.list failed, see $LOGS/apt-update-oracle.log"
	tmp=$(mktemp -d "$CACHE/qemu-src.XXXXXX")
	# _apt downloads into a directory that it can write
	chmod 777 "$tmp"
	if ! (cd "$tmp" && apt-get "${apt_opts[@]}" source --download-only -q \
		"qemu=$qver") >"$LOGS/apt-source-qemu.log" 2>&1; then
		rm -rf "$tmp"
		skip "apt-get source qemu=$qver failed ($(grep -m1 '^E:' "$LOGS/apt-source-qemu.log" || echo '?')), see $LOGS/apt-source-qemu.log"
	fi
	orig=$(ls "$tmp"/qemu_*.orig.tar.*) || die "no orig tarball of qemu in $tmp"
	deb=$(ls "$tmp"/qemu_*.debian.tar.*) || die "no debian tarball of qemu in $tmp"

	# One member; its top directory (qemu-7.2+dfsg/) is matched, not assumed.
	mkdir "$tmp/x"
	tar -C "$tmp/x" -xf "$orig" --wildcards --no-anchored \
		'*/include/qemu/qemu-plugin.h' ||
		die "no include/qemu/qemu-plugin.h in $orig"
	# Debian's patches, each a diff: one that names the file changes it.
	mkdir "$tmp/d"
	tar -C "$tmp/d" -xf "$deb" --wildcards 'debian/patches/*' ||
		die "no debian/patches in $deb"
	hits=$(grep -rl 'qemu-plugin\.h' "$tmp/d/debian/patches" || true)
	[ -z "$hits" ] ||
		die "Debian's patches of qemu $qver touch qemu-plugin.h (${hits//$tmp\/d\//}): take the patched header (dpkg-source -x) instead"
	log "oracle: none of the $(find "$tmp/d/debian/patches" -type f | wc -l) files of debian/patches touches qemu-plugin.h"

	rm -rf "$hdr_dir"
	mkdir -p "$hdr_dir/qemu"
	cp "$tmp"/x/*/include/qemu/qemu-plugin.h "$hdr" ||
		die "copying qemu-plugin.h failed"
	echo "$(basename "$orig") $(sha256sum "$orig" | cut -d' ' -f1)" >"$hdr_dir/source"
	rm -rf "$tmp"
}

if [ -f "$hdr" ]; then
	log "oracle: qemu-plugin.h of qemu $qver cached in $hdr_dir"
else
	fetch_header
fi
command -v gcc >/dev/null || die "no gcc (scripts/deps.sh installs build-essential)"

gcc -O2 -shared -fPIC -Wall -Wextra -Wno-unused-parameter -Werror \
	-I"$hdr_dir" -o "$out/liboracle.so.tmp" "$here/oracle.c" ||
	die "compiling oracle.c failed"
mv "$out/liboracle.so.tmp" "$out/liboracle.so"
log "oracle: built $out/liboracle.so (qemu-plugin.h of qemu $qver)"
