# SPDX-License-Identifier: GPL-2.0
# Common settings for the damon-perf harness.  Sourced, never run.

set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${DAMON_PERF_BUILD:-$TOP/build}
CACHE=${DAMON_PERF_CACHE:-/var/cache/damon-perf}
LOGS=$BUILD/logs
SRC=$BUILD/linux                      # expanded working tree (git)
PATCHES=${PATCHES:-$TOP/patches}      # the patch queue (expand reads, export writes)
# Debian package that carries the base tree; the version is pinned so that
# the series always meets the same base.  BASE_DEB_FALLBACK allows the
# newest 6.12 package when the pinned one has left the archive.
BASE_PKG=linux-source-6.12
BASE_DEB_VERSION=${BASE_DEB_VERSION:-6.12.117-1~deb12u1}
BASE_TARBALL=/usr/src/linux-source-6.12.tar.xz
PRISTINE=$CACHE/linux-source-6.12      # read-only unpacked base
BASE_GIT=$CACHE/base.git               # bare repo holding the base commit
JOBS=${JOBS:-$(nproc)}

export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache}
export CCACHE_BASEDIR=$SRC
export CCACHE_NOHASHDIR=1
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-10G}

mkdir -p "$LOGS"

log()  { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die()  { printf '[%s] ERROR: %s\n' "$(date +%H:%M:%S)" "$*" >&2; exit 1; }

# objdir VARIANT: the O= directory of a config variant.  It is a direct child
# of the source tree so that kbuild uses relative paths (srctree := ..) and
# ccache hits survive a fresh clone in another directory.
objdir() { echo "$SRC/.out-$1"; }

# Known config variants (kconfig fragments applied on top of tinyconfig).
variants() { echo "on off"; }

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
