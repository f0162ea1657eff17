#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install the base kernel source and every build/test dependency (apt-get).
# Idempotent: does nothing when everything is already installed.
. "$(dirname "$0")/lib.sh"

PKGS=(
	# kernel build
	build-essential flex bison bc libelf-dev libssl-dev dwarves cpio kmod
	rsync python3 xz-utils git ccache sparse perl
	# VM and guest tools (the guest runs the host root over 9p)
	qemu-system-x86 busybox-static procps stress-ng
	# cross builds of mm/damon (scripts/cross-check.sh; i386 uses the host gcc)
	gcc-aarch64-linux-gnu
	# documentation build (scripts/docs-check.sh)
	python3-sphinx python3-sphinx-rtd-theme
	# tracing consumers run in the guest (scripts/consumers.sh)
	linux-perf trace-cmd bpftrace
)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
have_src=$(dpkg-query -W -f='${Version}' "$BASE_PKG" 2>/dev/null || true)

if [ ${#missing[@]} -eq 0 ] && [ -n "$have_src" ] && [ -f "$BASE_TARBALL" ]; then
	log "deps: all installed ($BASE_PKG $have_src)"
	exit 0
fi

export DEBIAN_FRONTEND=noninteractive
log "deps: apt-get update"
apt-get update -q >"$LOGS/apt-update.log" 2>&1 ||
	die "apt-get update failed, see $LOGS/apt-update.log"

if [ ${#missing[@]} -gt 0 ]; then
	log "deps: installing ${missing[*]}"
	apt-get install -y -q --no-install-recommends "${missing[@]}" \
		>"$LOGS/apt-install.log" 2>&1 ||
		die "apt-get install failed, see $LOGS/apt-install.log"
fi

if [ -z "$have_src" ] || [ ! -f "$BASE_TARBALL" ]; then
	log "deps: installing $BASE_PKG=$BASE_DEB_VERSION (150 MB)"
	if ! apt-get install -y -q --no-install-recommends \
		"$BASE_PKG=$BASE_DEB_VERSION" >>"$LOGS/apt-install.log" 2>&1; then
		[ -n "${BASE_DEB_FALLBACK:-}" ] ||
			die "$BASE_PKG=$BASE_DEB_VERSION not installable; set BASE_DEB_FALLBACK=1 to take the newest 6.12 (the series may then need a rebase)"
		log "deps: WARNING pinned base not available, taking newest $BASE_PKG"
		apt-get install -y -q --no-install-recommends "$BASE_PKG" \
			>>"$LOGS/apt-install.log" 2>&1 ||
			die "apt-get install $BASE_PKG failed, see $LOGS/apt-install.log"
	fi
fi
log "deps: done ($BASE_PKG $(dpkg-query -W -f='${Version}' "$BASE_PKG"))"
