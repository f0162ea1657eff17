#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install every build/test dependency (apt-get), and fetch the base kernel
# source and damo, of Debian suites the machine doesn't use, unpacked.
# Idempotent: does nothing when everything is already installed.
. "$(dirname "$0")/lib.sh"

PKGS=(
	# kernel build
	build-essential flex bison bc libelf-dev libssl-dev dwarves cpio kmod
	rsync python3 xz-utils git ccache perl
	# checkpatch.pl runs scripts/spdxcheck.py, which needs ply
	python3-ply
	# the fuzz target of the SPE decoder (scripts/spe-fuzz.sh): libFuzzer
	clang libclang-rt-14-dev
	# VM and guest tools (the guest runs the host root over 9p)
	qemu-system-x86 busybox-static procps stress-ng
	# cross builds of mm/damon (scripts/cross-check.sh; i386 uses the host gcc)
	gcc-aarch64-linux-gnu
	# documentation build (scripts/docs-check.sh)
	python3-sphinx python3-sphinx-rtd-theme
	# tracing consumers run in the guest (scripts/consumers.sh)
	linux-perf trace-cmd bpftrace
	# DAMON's drgn-based kselftests (sysfs.py, sysfs_no_op_commit_break.py),
	# run in the guest on the 'drgn' variant (check stage kselftest-drgn)
	python3-drgn
	# make eval's plots (bench/eval/accuracy.py, tiering.py)
	python3-matplotlib
)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done

# unpacked: PKG VERSION: whether deps.sh unpacked VERSION of PKG into $DEBS
unpacked() { [ "$(deb_version "$1")" = "$2" ] && [ -d "$DEBS/$1" ]; }

# damo's source package, unpacked (dpkg-source -x) for the damo patch series
# of damo/ (scripts/damo-patch.sh applies it).  Where the mirror does not
# serve it, deps.sh leaves $DAMO_SRC_DIR.unavailable with apt's message
# instead (remove it to try again) and damo-patch.sh says what it uses.
DAMO_SRC_DIR=$CACHE/damo-src-$DAMO_DEB_VERSION
damo_src_tried() { [ -d "$DAMO_SRC_DIR" ] || [ -f "$DAMO_SRC_DIR.unavailable" ]; }

if [ ${#missing[@]} -eq 0 ] && unpacked "$BASE_PKG" "$BASE_DEB_VERSION" &&
	[ -f "$BASE_TARBALL" ] && unpacked "$DAMO_PKG" "$DAMO_DEB_VERSION" &&
	damo_src_tried && [ -x "$SPARSE" ]; then
	log "deps: all installed ($BASE_PKG $BASE_DEB_VERSION, $DAMO_PKG $DAMO_DEB_VERSION unpacked in $DEBS)"
	exit 0
fi

export DEBIAN_FRONTEND=noninteractive
if [ ${#missing[@]} -gt 0 ]; then
	log "deps: apt-get update"
	apt-get update -q >"$LOGS/apt-update.log" 2>&1 ||
		die "apt-get update failed, see $LOGS/apt-update.log"
	log "deps: installing ${missing[*]}"
	apt-get install -y -q --no-install-recommends "${missing[@]}" \
		>"$LOGS/apt-install.log" 2>&1 ||
		die "apt-get install failed, see $LOGS/apt-install.log"
fi

# The base and damo are of Debian suites the machine doesn't use (the
# harness's apt/sources.list): apt gets their indexes into a state dir of
# the harness's own, 'apt-get download' fetches the exact versions, and
# dpkg-deb -x unpacks them into $DEBS.  Nothing is installed, and the
# machine's sources, pins and package states don't change.
apt_state=$CACHE/apt
apt_opts=(
	-o "Dir::Etc::SourceList=$TOP/apt/sources.list"
	-o "Dir::Etc::SourceParts=/dev/null"
	-o "Dir::State::Lists=$apt_state/lists"
	-o "Dir::Cache=$apt_state/cache"
	-o "APT::Get::List-Cleanup=0"
)
fetched=0
# apt's indexes of the harness's sources, once per run
apt_update_extra() {
	[ "$fetched" -eq 0 ] || return 0
	log "deps: apt-get update of the harness's sources (apt/sources.list)"
	mkdir -p "$apt_state/lists/partial" "$apt_state/cache/archives/partial"
	apt-get "${apt_opts[@]}" update -q >"$LOGS/apt-update-extra.log" 2>&1 ||
		die "apt-get update of apt/sources.list failed, see $LOGS/apt-update-extra.log"
	fetched=1
}
fetch_unpack() {
	local pkg=$1 ver=$2 deb tmp
	unpacked "$pkg" "$ver" && return 0
	apt_update_extra
	log "deps: fetching $pkg=$ver"
	tmp=$(mktemp -d "$CACHE/deb.XXXXXX")
	# _apt downloads into a directory that it can write
	chmod 777 "$tmp"
	(cd "$tmp" && apt-get "${apt_opts[@]}" download -q "$pkg=$ver") \
		>"$LOGS/apt-download-$pkg.log" 2>&1 ||
		die "apt-get download $pkg=$ver failed, see $LOGS/apt-download-$pkg.log"
	deb=$(ls "$tmp"/"${pkg}"_*.deb)
	rm -rf "$DEBS/$pkg" "$DEBS/$pkg.version"
	mkdir -p "$DEBS"
	dpkg-deb -x "$deb" "$DEBS/$pkg.tmp" || die "dpkg-deb -x $deb failed"
	mv "$DEBS/$pkg.tmp" "$DEBS/$pkg"
	echo "$ver" >"$DEBS/$pkg.version"
	rm -rf "$tmp"
}
mkdir -p "$CACHE"
fetch_unpack "$BASE_PKG" "$BASE_DEB_VERSION"
[ -f "$BASE_TARBALL" ] || die "$BASE_PKG $BASE_DEB_VERSION has no $BASE_TARBALL"
fetch_unpack "$DAMO_PKG" "$DAMO_DEB_VERSION"

# damo's source package, as sparse's below: 'apt-get source --download-only'
# of the exact version, then dpkg-source -x (the orig tarball plus Debian's
# patches: the source of the binary package that damo.sh runs).  Not fatal
# when it cannot be fetched: only the damo patch series needs it.
fetch_damo_source() {
	local tmp dsc
	damo_src_tried && return 0
	apt_update_extra
	log "deps: fetching the source package $DAMO_PKG=$DAMO_DEB_VERSION"
	tmp=$(mktemp -d "$CACHE/damo-src.XXXXXX")
	chmod 777 "$tmp"
	if ! (cd "$tmp" && apt-get "${apt_opts[@]}" source --download-only -q \
		"$DAMO_PKG=$DAMO_DEB_VERSION") >"$LOGS/apt-source-damo.log" 2>&1; then
		grep -E '^E:' "$LOGS/apt-source-damo.log" >"$DAMO_SRC_DIR.unavailable" ||
			echo "apt-get source failed" >"$DAMO_SRC_DIR.unavailable"
		rm -rf "$tmp"
		log "deps: WARNING: apt-get source $DAMO_PKG=$DAMO_DEB_VERSION failed ($(head -n 1 "$DAMO_SRC_DIR.unavailable")); not tried again while $DAMO_SRC_DIR.unavailable exists (see $LOGS/apt-source-damo.log)"
		return 0
	fi
	dsc=$(ls "$tmp"/"${DAMO_PKG}"_*.dsc) || die "no .dsc of $DAMO_PKG in $tmp"
	dpkg-source -x "$dsc" "$tmp/src" \
		>"$LOGS/dpkg-source-damo.log" 2>&1 ||
		die "dpkg-source -x of $DAMO_PKG $DAMO_DEB_VERSION failed, see $LOGS/dpkg-source-damo.log"
	rm -rf "$DAMO_SRC_DIR"
	mv "$tmp/src" "$DAMO_SRC_DIR"
	rm -rf "$tmp"
	log "deps: damo's source in $DAMO_SRC_DIR"
}
fetch_damo_source

# sparse, built from the source package of sid (lib.sh says why): the
# upstream tarball only, no Debian patch is needed to build the binary.
build_sparse() {
	local tmp orig
	[ -x "$SPARSE" ] && return 0
	apt_update_extra
	log "deps: building sparse from Debian's source package $SPARSE_SRC_PKG=$SPARSE_SRC_VERSION"
	tmp=$(mktemp -d "$CACHE/sparse.XXXXXX")
	chmod 777 "$tmp"
	(cd "$tmp" && apt-get "${apt_opts[@]}" source --download-only -q \
		"$SPARSE_SRC_PKG=$SPARSE_SRC_VERSION") >"$LOGS/apt-source-sparse.log" 2>&1 ||
		die "apt-get source $SPARSE_SRC_PKG=$SPARSE_SRC_VERSION failed, see $LOGS/apt-source-sparse.log"
	orig=$(ls "$tmp"/"${SPARSE_SRC_PKG}"_*.orig.tar.*) || die "no orig tarball of sparse"
	mkdir "$tmp/src"
	tar -C "$tmp/src" --strip-components=1 -xf "$orig" || die "unpacking $orig failed"
	make -C "$tmp/src" -j"$JOBS" sparse >"$LOGS/sparse-build.log" 2>&1 ||
		die "building sparse failed, see $LOGS/sparse-build.log"
	rm -rf "$SPARSE_DIR"
	mkdir -p "$SPARSE_DIR"
	cp "$tmp/src/sparse" "$SPARSE" && rm -rf "$tmp"
	log "deps: sparse in $SPARSE"
}
build_sparse
log "deps: done ($BASE_PKG $(deb_version "$BASE_PKG"), $DAMO_PKG $(deb_version "$DAMO_PKG") in $DEBS, damo's source $([ -d "$DAMO_SRC_DIR" ] && echo "in $DAMO_SRC_DIR" || echo "not available"), sparse $SPARSE_SRC_VERSION in $SPARSE_DIR)"
