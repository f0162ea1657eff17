# SPDX-License-Identifier: GPL-2.0
# Common settings for the damon-perf harness.  Sourced, never run.

set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${DAMON_PERF_BUILD:-$TOP/build}
CACHE=${DAMON_PERF_CACHE:-/var/cache/damon-perf}
LOGS=${DAMON_PERF_LOGS:-$BUILD/logs}
MAIN_SRC=$BUILD/linux                 # expanded working tree (git)
SRC=${DAMON_PERF_SRC:-$MAIN_SRC}      # the tree a script works on (see hist_tree)
HIST=$BUILD/linux-hist                # a clone for builds of other commits
PATCHES=${PATCHES:-$TOP/patches}      # the patch queue (expand reads, export writes)
# Debian package that carries the base tree, and its version, pinned so that
# the series always meets the same base.  It is of Debian's trixie-backports
# suite, which this Debian 12 machine doesn't use: scripts/deps.sh fetches it
# with a sources list of the harness's own (apt/) and unpacks it with
# dpkg-deb -x into $DEBS, which installs nothing and changes nothing else.
BASE_PKG=linux-source-7.3
BASE_DEB_VERSION=${BASE_DEB_VERSION:-7.3.4-1~bpo13+1}
BASE_SERIES=7.3
DEBS=$CACHE/debs                       # packages unpacked by deps.sh
BASE_TARBALL=$DEBS/$BASE_PKG/usr/src/linux-source-$BASE_SERIES.tar.xz
PRISTINE=$CACHE/linux-source-$BASE_SERIES  # read-only unpacked base
BASE_GIT=$CACHE/base-$BASE_SERIES.git      # bare repo holding the base commit
# damo, DAMON's user space tool (Debian sid, an 'all' package), unpacked the
# same way; the guests run it from there (check stage 'damo')
DAMO_PKG=damo
DAMO_DEB_VERSION=${DAMO_DEB_VERSION:-3.4.1-1}
DAMO_ROOT=$DEBS/$DAMO_PKG
# sparse for C=1/C=2: 7.3's Makefile runs scripts/checker-valid.sh, which
# wants __typeof_unqual__; Debian 12's sparse 0.6.4 lacks it, and kbuild
# then prints a warning and checks nothing.  deps.sh builds the sparse of
# Debian sid's source package (as a source: sid's binary needs glibc 2.38)
# into $SPARSE_DIR; the static and cross checks run it and fail when kbuild
# says it is not valid.
SPARSE_SRC_PKG=sparse
SPARSE_SRC_VERSION=${SPARSE_SRC_VERSION:-0.6.5~rc1-2}
SPARSE_DIR=$CACHE/sparse-$SPARSE_SRC_VERSION
SPARSE=$SPARSE_DIR/sparse
# kbuild's message when C= is given but the checker is not valid
SPARSE_INVALID='specified, but .* is not available or not up to date'
# deb_version PKG: the version of PKG that deps.sh unpacked, or 'unknown'
deb_version() { cat "$DEBS/$1.version" 2>/dev/null || echo unknown; }
JOBS=${JOBS:-$(nproc)}

export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache}
export CCACHE_BASEDIR=$SRC
export CCACHE_NOHASHDIR=1
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-10G}
# Depend mode: on a miss ccache runs only the compiler and takes the include
# list from its -MMD output; the default mode runs the preprocessor as well
# to hash its output.  Measured here on mm/ and kernel/ (368 objects, cold
# cache, -j2): 172 s in depend mode, 344 s in the default mode, 151 s with
# plain gcc.  Hits need the same sources and headers (direct hits), which is
# what every rebuild of one config here is; other configs start from a copied
# O= dir (seed_objdir) instead of relying on preprocessed-output hits.
export CCACHE_DEPEND=${CCACHE_DEPEND:-1}

mkdir -p "$LOGS"

log()  { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die()  { printf '[%s] ERROR: %s\n' "$(date +%H:%M:%S)" "$*" >&2; exit 1; }

# objdir VARIANT: the O= directory of a config variant.  It is a direct child
# of the source tree so that kbuild uses relative paths (srctree := ..) and
# ccache hits survive a fresh clone in another directory.
objdir() { echo "$SRC/.out-$1"; }

# seed_objdir FROM TO: start the O= dir TO as a copy of the built O= dir FROM
# (same source tree).  kbuild records, per object, the CONFIG_ symbols it
# depends on (fixdep, include/config/), so after TO is reconfigured only the
# objects that use a symbol whose value differs are rebuilt, instead of the
# whole kernel (ccache's preprocessor-mode hits still cost ~0.5 s an object).
# Does nothing when TO has the file MARKER (default vmlinux: a complete
# build) already or FROM has none.
seed_objdir() {
	local from=$1 to=$2 marker=${3:-vmlinux}
	[ ! -f "$to/$marker" ] && [ -f "$from/$marker" ] || return 0
	log "seeding $(basename "$to") from $(basename "$from") (only what the config difference touches is rebuilt)"
	rm -rf "$to"
	cp -a "$from" "$to.tmp.$$"
	mv "$to.tmp.$$" "$to"
	rm -f "$to/.config"	# so that the caller reconfigures it
}

# queue_hash: a hash of the patch queue ($PATCHES/series and the patches it
# lists, in order).  expand.sh records it for the tree it applied, export.sh
# for the queue it wrote; an equal hash means the tree is the queue.
queue_hash() {
	{
		cat "$PATCHES/series"
		grep -vE '^(#|$)' "$PATCHES/series" | while IFS= read -r p; do
			cat "$PATCHES/$p"
		done
	} | sha256sum | cut -d' ' -f1
}

# hist_tree: switch this script to the history tree $HIST, a clone of the
# expanded tree in which per-patch.sh and bloat-check.sh check out and build
# other commits of the series.  build/linux then stays at its head, with its
# files' timestamps, so that its O= dirs are not rebuilt and stages that read
# it can run meanwhile.  $HIST is brought to build/linux's HEAD; its own O=
# dirs (and logs, in $LOGS/hist) persist between runs.  When it is made, its
# files get an old timestamp and build/linux's built O= dirs are copied in:
# they were built from the same commit, so nothing is rebuilt until a
# checkout changes a file.
hist_tree() {
	[ -d "$MAIN_SRC/.git" ] || die "no expanded tree at $MAIN_SRC: run scripts/expand.sh"
	local head v
	head=$(git -C "$MAIN_SRC" rev-parse HEAD)
	[ -z "$(git -C "$MAIN_SRC" status --porcelain)" ] ||
		die "$MAIN_SRC has uncommitted changes: commit them, the history tree builds commits"
	if [ -d "$HIST" ] && ! git -C "$HIST" rev-parse -q --verify HEAD >/dev/null 2>&1; then
		rm -rf "$HIST"
	fi
	if [ ! -d "$HIST" ]; then
		log "hist: cloning $MAIN_SRC into $HIST (once)"
		git clone -q --no-checkout "$MAIN_SRC" "$HIST.tmp"
		git -C "$HIST.tmp" checkout -q --detach "$head"
		printf '/.out-*\n' >"$HIST.tmp/.git/info/exclude"
		(cd "$HIST.tmp" && git ls-files -z | xargs -0 touch -h -d @946684800)
		for v in $(variants); do
			[ -f "$MAIN_SRC/.out-$v/vmlinux" ] &&
				[ "$(cat "$MAIN_SRC/.out-$v/.head" 2>/dev/null)" = "$head" ] &&
				cp -a "$MAIN_SRC/.out-$v" "$HIST.tmp/.out-$v"
		done
		mv "$HIST.tmp" "$HIST"
	fi
	git -C "$HIST" fetch -q "$MAIN_SRC" "+refs/tags/base:refs/tags/base" "$head"
	git -C "$HIST" checkout -q --detach "$head"
	SRC=$HIST
	LOGS=$LOGS/hist
	mkdir -p "$LOGS"
	export DAMON_PERF_SRC=$SRC DAMON_PERF_LOGS=$LOGS CCACHE_BASEDIR=$SRC
}

# config_key ARCH FRAGMENT...: a key for the .config that tinyconfig plus
# FRAGMENTs (merged in this order) give for ARCH in $SRC.  kconfig is a pure
# function of the Kconfig files, the kconfig tool and the scripts Kconfig
# calls (scripts/), the tiny base configs, the fragments and the toolchain
# that Kconfig probes; the key hashes all of them.
config_key() {
	local arch=$1 f
	shift
	{
		echo "arch $arch"
		for t in gcc aarch64-linux-gnu-gcc ld pahole; do
			command -v "$t" >/dev/null && "$t" --version 2>&1 | head -n 1
		done
		for f in "$@"; do echo "== $(basename "$f")"; cat "$f"; done
		(cd "$SRC" && find . -path './.out-*' -prune -o -path './.git' -prune -o -type f \
			\( -name 'Kconfig*' -o -path './scripts/*' -o -path './kernel/configs/*' \
			-o -path "./arch/*/configs/*" \) -print0 | sort -z | xargs -0 sha256sum)
	} | sha256sum | cut -c1-40
}

# config_from_cache KEY O: put the cached .config of KEY into the O= dir O
# (leaving an identical .config and its timestamp alone); fails when there
# is none.  config_to_cache KEY O: remember O's .config under KEY.
config_from_cache() {
	local c=$CACHE/configs/$1.config
	[ -f "$c" ] || return 1
	mkdir -p "$2"
	cmp -s "$c" "$2/.config" || cp "$c" "$2/.config"
}
config_to_cache() {
	mkdir -p "$CACHE/configs"
	cp "$2/.config" "$CACHE/configs/$1.config.tmp.$$" &&
		mv "$CACHE/configs/$1.config.tmp.$$" "$CACHE/configs/$1.config"
}

# cross_config ARCH VARIANT NAME: configure the O= dir $SRC/.out-ARCH-VARIANT
# for ARCH (arm64, or i386: the host's gcc with -m32) with observe VARIANT
# (on/off; or noperf: CONFIG_PERF_EVENTS=n, which arm64 allows and x86
# doesn't): tinyconfig, kconfig/cross.config, kconfig/damon.config and the
# variant's fragments, through the config cache.  Dies unless the options
# the series needs come out as asked (CONFIG_DAMON_PERF_OBSERVE only where
# the tree defines it: per-patch.sh configures commits before it).  Sets O,
# kmake (the make command line), cross_cc (the compiler, through ccache) and
# cross_targets (what to build: mm/damon/, and with perf events
# kernel/events/ and, on arm64, the SPE driver).  Logs to
# $LOGS/NAME-config.log.
cross_config() {
	local arch=$1 variant=$2 name=$3 cross frags key store="" bad=0 perf v sym obs

	case $arch in
	arm64)	cross=aarch64-linux-gnu- ;;
	i386)	cross= ;;
	*)	die "$name: unknown arch $arch (arm64 or i386)" ;;
	esac
	command -v "${cross}gcc" >/dev/null ||
		die "$name: ${cross}gcc missing (scripts/deps.sh installs it)"
	O=$SRC/.out-$arch-$variant
	frags=("$TOP/kconfig/cross.config" "$TOP/kconfig/damon.config")
	case $variant in
	on|off)	frags+=("$TOP/kconfig/observe-$variant.config") ;;
	# observe asked for, and left out by Kconfig: it depends on PERF_EVENTS
	noperf)	frags+=("$TOP/kconfig/observe-on.config" "$TOP/kconfig/noperf.config") ;;
	*)	die "$name: unknown variant $variant (on, off or noperf)" ;;
	esac
	kmake=(make -C "$SRC" O="$O" ARCH="$arch" CROSS_COMPILE="$cross")
	cross_cc="ccache ${cross}gcc"
	cross_targets=(mm/damon/)
	if [ "$variant" != noperf ]; then
		cross_targets+=(kernel/events/)
		[ "$arch" != arm64 ] || cross_targets+=(drivers/perf/arm_spe_pmu.o)
	fi

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
			# merge_config.sh makes its temporary files in the current
			# directory: in the O= dir, not in the checkout that other
			# lanes check
			(cd "$O" && "$SRC/scripts/kconfig/merge_config.sh" -m -O "$O" "$O/.config" "${frags[@]}")
			"${kmake[@]}" -s olddefconfig
		} >"$LOGS/$name-config.log" 2>&1 ||
			{ tail -n 30 "$LOGS/$name-config.log" >&2; die "$name: config failed"; }
		store=1
	fi

	# The DAMON options and what the series needs must come out as asked.
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
	if git -C "$SRC" grep -qE '^config DAMON_PERF_OBSERVE$' -- mm/damon; then
		obs=$(grep -E '^CONFIG_DAMON_PERF_OBSERVE=' "$O/.config" | cut -d= -f2 || true)
		[ "${obs:-n}" = "$([ "$variant" = on ] && echo y || echo n)" ] ||
			{ echo "CONFIG_DAMON_PERF_OBSERVE is '${obs:-n}' for variant $variant" >&2; bad=$((bad + 1)); }
	fi
	[ "$bad" -eq 0 ] || die "$name: $bad option(s) did not come out as asked (see $O/.config)"
	[ -z "$store" ] || config_to_cache "$key" "$O"
}

# stage_guest NAME FILE VAR: stage the guest script FILE for a VM run as
# $BUILD/NAME/FILE: the script named by the variable VAR (e.g. STRESS_GUEST)
# if set, else FILE beside the running script or in guest/.  With it, what it
# sources from beside it: the shared guest library lib/ and its own directory
# NAME/ if there is one (the stress subtests, the consumers' tools), each
# taken from the script's directory if there, else from guest/.  The guest
# sees the host root read-only at the same paths, except where guest/init.sh
# mounts a tmpfs (/tmp, /run, /var/tmp, /var/log, /root) and keeps only DP_TOP
# and DP_BUILD visible: hence the copy under $BUILD.  Also builds
# guest/workload.c into $BUILD/guest/workload when missing or older than its
# source.  Sets stage (the directory) and wl (the workload).
stage_guest() {
	local name=$1 file=$2 script=${!3:-} d from
	if [ -z "$script" ]; then
		for script in "$(dirname "$0")/$file" "$TOP/guest/$file"; do
			[ -f "$script" ] && break
		done
	fi
	[ -f "$script" ] || die "$name: no guest script (set $3)"
	stage=$BUILD/$name
	rm -rf "$stage"
	mkdir -p "$stage" "$BUILD/guest"
	cp "$script" "$stage/$file" || die "$name: staging $script failed"
	for d in lib "$name"; do
		from=$(dirname "$script")/$d
		[ -d "$from" ] || from=$TOP/guest/$d
		[ -d "$from" ] || [ "$d" = lib ] || continue	# NAME/ is optional
		cp -r "$from" "$stage/$d" || die "$name: staging $from failed"
	done
	wl=$BUILD/guest/workload
	if [ ! -x "$wl" ] || [ "$TOP/guest/workload.c" -nt "$wl" ]; then
		gcc -O2 -Wall -o "$wl" "$TOP/guest/workload.c" ||
			die "$name: building guest/workload.c failed"
	fi
}

# Known config variants (kconfig fragments applied on top of tinyconfig).
variants() { echo "on off"; }

# DAMON's kselftests that read the running kernel with drgn: they need a
# kernel with /proc/kcore and DWARF debug info, the 'drgn' variant
DRGN_TESTS="damon:sysfs.py damon:sysfs_no_op_commit_break.py"

# run_logged NAME CMD...: run CMD, output to $LOGS/NAME.log; on failure show
# the tail of the log.
run_logged() {
	local name=$1; shift
	local logf=$LOGS/$name.log
	if ! "$@" >"$logf" 2>&1; then
		log "$name failed, last lines of $logf:"
		tail -n 40 "$logf" >&2
		return 1
	fi
}

# with_progress NAME CMD...: like run_logged, printing a heartbeat with the
# last log line every 30 s so long steps show progress.
# series_line_warnings LOG PATH...: the compiler and sparse warnings in LOG
# that are on lines the series (base..HEAD of $SRC) adds to the files under
# PATH, one "file:line: warning: text" each.  For files of the base that are
# not warning-free (perf core is not sparse-clean), where a baseline of
# normalised lines could not tell a new warning from an old one.
series_line_warnings() {
	local logf=$1
	shift
	python3 - "$logf" "$SRC" "$@" <<'PY'
import re, subprocess, sys
logf, src, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
diff = subprocess.run(["git", "-C", src, "diff", "-U0", "base", "HEAD", "--"] + paths,
                      capture_output=True, text=True, check=True).stdout
added, f = {}, None
for l in diff.splitlines():
    if l.startswith("+++ "):
        f = l[6:] if l.startswith("+++ b/") else None
        continue
    m = re.match(r"@@ -\S+ \+(\d+)(?:,(\d+))? @@", l)
    if m and f:
        a, n = int(m.group(1)), int(m.group(2) or 1)
        added.setdefault(f, set()).update(range(a, a + n))
pre = re.escape(src.rstrip("/") + "/")
for l in open(logf, errors="replace"):
    m = re.match(r"(?:" + pre + r"|\.\./)?(\S+?):(\d+):(?:\d+:)? (warning|error): (.*)", l)
    if m and int(m.group(2)) in added.get(m.group(1), ()):
        print(f"{m.group(1)}:{m.group(2)}: {m.group(3)}: {m.group(4).strip()}")
PY
}

with_progress() {
	local name=$1; shift
	local logf=$LOGS/$name.log start=$SECONDS rc=0 pid
	"$@" >"$logf" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		for _ in $(seq 30); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 1
		done
		kill -0 "$pid" 2>/dev/null || break
		log "  $name: $((SECONDS - start)) s, $(tail -n 1 "$logf" | cut -c1-100)"
	done
	wait "$pid" || rc=$?
	if [ "$rc" -ne 0 ]; then
		log "$name failed (rc $rc), last lines of $logf:"
		tail -n 40 "$logf" >&2
	fi
	return "$rc"
}
