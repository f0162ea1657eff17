#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# docs-examples.sh [OBS_TEST_OPTION...]: regenerate the example outputs of
# Documentation/admin-guide/mm/damon/perf-observability.rst from ONE guest
# run (issue #12): the examples came from different runs, so their numbers
# disagreed (perf_stats 'update 16815' beside a drain trace of updated=1822).
# Boots the `on` variant once, 2 vCPUs, with kunit.enable=0 (the built-in
# KUnit tests would count in perf_stats at boot, and the docs show it
# "without the KUnit tests"), and runs guest/docs-examples.sh, which runs
# damon_perf_obs_test.sh (default options: --pmu software) and captures in
# the same run its output, `cat perf_stats` right after it, the first lines of
# the four damon:damon_perf_* tracepoints, damon_perf_funnel.py's summary of
# that trace, and checks that the numbers agree (the guest script's header
# says how the trace window is made to be the obs test's own).
#
# Output: $BUILD/vm/docs-examples/: obs-test.txt, perf_stats.txt,
# trace-{sample,overflow,missed,drain}.txt, funnel.txt, checks.txt,
# manifest.txt (boot id, kernel, the series commit), trace.txt (the funnel's
# input) and trace-full.txt.gz; console.log and output.log of vm-run.sh.
# Exit: 0 if the obs test and every check passed, 1 otherwise.
# Env: DOCS_EXAMPLES_KSELFTEST: an installed kselftest dir to use (e.g.
# build/kselftest, as scripts/kselftest.sh leaves it) instead of installing
# the damon selftests of $SRC into $BUILD/docs-examples/kselftest;
# DOCS_EXAMPLES_MEM (2048) in MiB; DOCS_EXAMPLES_BUFFER_KB (65536) tracefs
# buffer per CPU; DOCS_EXAMPLES_LINES (3) lines kept per tracepoint;
# DOCS_EXAMPLES_APPEND (kunit.enable=0) kernel arguments;
# DOCS_EXAMPLES_VM_TIMEOUT (1200) in s; VM_ACCEL as for vm-run.sh.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

variant=on
name=docs-examples
stage=$BUILD/docs-examples
out=$BUILD/vm/$name
kernel=$(objdir "$variant")/arch/x86/boot/bzImage
[ -f "$kernel" ] || die "$name: no $kernel (run: make build VARIANT=$variant)"

# The damon selftests: damon_perf_obs_test.sh, perf_fault_workload (its
# workload) and tools/mm/damon_perf_funnel.py, from the tree the kernel was
# built of.
# Installed here, not into build/kselftest, which kselftest.sh (make check)
# removes and rebuilds.
mkdir -p "$stage"
inst=${DOCS_EXAMPLES_KSELFTEST:-}
if [ -z "$inst" ]; then
	inst=$stage/kselftest
	log "$name: installing the damon selftests of $SRC into $inst"
	rm -rf "$inst"
	run_logged "$name-kselftest" make -C "$SRC/tools/testing/selftests" \
		TARGETS=damon O="$stage/kselftest-obj" INSTALL_PATH="$inst" install ||
		die "$name: building the damon selftests failed"
fi
# the funnel is a tool of tools/mm, not a selftest: next to the test in the guest
cp "$SRC/tools/mm/damon_perf_funnel.py" "$inst/damon/" ||
	die "$name: no $SRC/tools/mm/damon_perf_funnel.py"
for f in damon_perf_obs_test.sh damon_perf_funnel.py perf_fault_workload; do
	[ -f "$inst/damon/$f" ] || die "$name: no $inst/damon/$f"
done
inst=$(cd "$inst" && pwd)	# the guest's working directory is /tmp
# The guest reads the script from the host root: a copy, so that editing the
# script meanwhile does not change the run (bash reads scripts lazily).
cp "$TOP/guest/docs-examples.sh" "$stage/docs-examples-guest.sh"

args=""
for a in "$@"; do args+=" $(printf '%q' "$a")"; done
env="DOCS_BUFFER_KB=${DOCS_EXAMPLES_BUFFER_KB:-65536} DOCS_LINES=${DOCS_EXAMPLES_LINES:-3}"
rc=0
bash "$TOP/scripts/vm-run.sh" --name "$name" --cpus 2 --mem "${DOCS_EXAMPLES_MEM:-2048}" \
	--timeout "${DOCS_EXAMPLES_VM_TIMEOUT:-1200}" \
	--append "${DOCS_EXAMPLES_APPEND-kunit.enable=0}" "$variant" -- \
	"$env bash $stage/docs-examples-guest.sh $inst/damon$args" || rc=$?

[ -f "$out/manifest.txt" ] && {
	echo "series: $(git -C "$SRC" describe --always --dirty 2>/dev/null || echo unknown)" \
		"($(git -C "$SRC" log -1 --format=%s 2>/dev/null))"
	echo "kselftests: $inst"
	echo "kernel image: $kernel ($(date -r "$kernel" '+%F %T'))"
} >>"$out/manifest.txt"
# The whole trace is only the evidence of a check: keep it small.
[ ! -f "$out/trace-full.txt" ] || gzip -f "$out/trace-full.txt" || true

echo
[ -f "$out/checks.txt" ] && cat "$out/checks.txt"
echo
log "$name: files in $out:"
for f in obs-test.txt perf_stats.txt trace-sample.txt trace-overflow.txt \
	trace-missed.txt trace-drain.txt funnel.txt checks.txt manifest.txt; do
	if [ -f "$out/$f" ]; then
		printf '  %-20s %6d lines\n' "$f" "$(wc -l <"$out/$f")" >&2
	else
		printf '  %-20s missing\n' "$f" >&2
	fi
done
[ "$rc" -eq 0 ] || die "$name: failed (rc $rc): $(grep -E '^FAIL ' "$out/checks.txt" 2>/dev/null |
	cut -c1-100 | paste -sd';' -) (output: $out/output.log)"
log "$name: every check passed; the examples are in $out"
