#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# spe-fuzz.sh [SECONDS] ('make check' stage spe-fuzz, 'make fuzz'): fuzz
# DAMON's Arm SPE decoder and AUX drain for SECONDS (default 60, or
# SPE_FUZZ_SECS) with libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer
# (Debian's clang and libclang-rt-14-dev, which scripts/deps.sh installs).
#
# tests/fuzz/spe-fuzz.c is the target: damon_spe_decode_record() and
# damon_spe_decode() of mm/damon/perf/spe.c of the expanded tree, built for
# user space as scripts/insn-test.sh builds the kernel's x86 decoder, and
# damon_perf_aux_decode() and damon_perf_aux_drain_cpu(), which this script
# extracts from mm/damon/perf/aux.c (with DAMON_PERF_AUX_READ_SZ, struct
# damon_perf_aux_drain, and struct damon_perf_aux_cpu of aux.h) unchanged;
# spe-fuzz.c models the AUX buffer
# and the counters that they use, and says what it checks beyond "no crash".
# The seeds are tests/fuzz/corpus (tests/fuzz/make-seeds.py writes them);
# the inputs that the run adds go to $BUILD/spe-fuzz/corpus, never into the
# checkout; a failing input is saved as $BUILD/spe-fuzz/crash-* (or leak-,
# timeout-, oom-), and the run fails.
# Prints libFuzzer's final statistics (number_of_executed_units).
# Exit: 0 no failure, 1 a failure, 4 clang or libFuzzer or the tree missing.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

secs=${1:-${SPE_FUZZ_SECS:-60}}
skip() { printf 'spe-fuzz: %s\n' "$*" >&2; exit 4; }

command -v clang >/dev/null || skip "clang missing (scripts/deps.sh)"
perf_dir=$SRC/mm/damon/perf
for f in "$perf_dir/spe.c" "$perf_dir/aux.c" "$perf_dir/aux.h"; do
	[ -f "$f" ] || skip "no $f (the expanded tree: scripts/expand.sh)"
done
fuzz=$TOP/tests/fuzz
work=$BUILD/spe-fuzz
rm -rf "$work"
mkdir -p "$work/corpus"

# What spe-fuzz.c takes of aux.c and aux.h, unchanged
awk '/^#define DAMON_PERF_AUX_READ_SZ/ { print }
	/^struct damon_perf_aux_drain \{/ { keep = 1 }
	/^VISIBLE_IF_KUNIT size_t$/ { keep = 1 }
	/^static unsigned int damon_perf_aux_drain_cpu\(/ { keep = 1 }
	keep { print }
	keep && /^};?$/ { keep = 0; print "" }' "$perf_dir/aux.c" >"$work/aux-extract.c"
awk '/^struct damon_perf_aux_cpu \{/ { keep = 1 }
	keep { print }
	keep && /^};/ { keep = 0 }' "$perf_dir/aux.h" >"$work/aux-structs.h"
for want in 'damon_perf_aux_decode(struct damon_ctx' 'struct damon_perf_aux_drain {' \
	'damon_perf_aux_drain_cpu(struct damon_ctx' 'DAMON_PERF_AUX_READ_SZ'; do
	grep -qF "$want" "$work/aux-extract.c" ||
		die "spe-fuzz: cannot find $want in $perf_dir/aux.c"
done
grep -q 'struct damon_perf_aux_cpu {' "$work/aux-structs.h" ||
	die "spe-fuzz: no struct damon_perf_aux_cpu in $perf_dir/aux.h"

log "spe-fuzz: building $fuzz/spe-fuzz.c on $perf_dir/spe.c and aux.c ($(clang --version | head -n 1))"
clang -g -O1 -Wall -Wno-unused-function \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-I "$fuzz/shim" -DSPE_C="\"$perf_dir/spe.c\"" \
	-DAUX_EXTRACT="\"$work/aux-extract.c\"" \
	-DAUX_STRUCTS="\"$work/aux-structs.h\"" \
	-o "$work/spe-fuzz" "$fuzz/spe-fuzz.c" 2>"$work/build.log" || {
	cat "$work/build.log" >&2
	grep -q -e 'libclang_rt.fuzzer' -e 'cannot find' "$work/build.log" &&
		skip "clang cannot link libFuzzer (libclang-rt-14-dev)"
	die "spe-fuzz: building the target failed"
}
[ ! -s "$work/build.log" ] || { cat "$work/build.log" >&2; die "spe-fuzz: the target built with warnings"; }

log "spe-fuzz: fuzzing for $secs s, seeds $fuzz/corpus ($(find "$fuzz/corpus" -type f | wc -l) files)"
rc=0
(cd "$work" && UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ./spe-fuzz \
	-max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
	-print_final_stats=1 -artifact_prefix="$work/" \
	"$work/corpus" "$fuzz/corpus") >"$work/fuzz.log" 2>&1 || rc=$?
grep -E '^stat::|^Done|ERROR|SUMMARY|spe-fuzz:' "$work/fuzz.log" || true
if [ "$rc" -ne 0 ]; then
	tail -n 40 "$work/fuzz.log"
	die "spe-fuzz: failed (rc $rc): $(ls "$work" | grep -E '^(crash|leak|timeout|oom)-' | head -n 3 | paste -sd' ' -) (log $work/fuzz.log)"
fi
log "spe-fuzz: $(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz.log") inputs in $secs s, no failure (log $work/fuzz.log)"
