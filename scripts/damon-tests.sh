#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# damon-tests.sh [VARIANT]: the regression tests of damon-tests corr, the
# DAMON maintainer's suite (damon-tests/snapshot: ../shared/peers/damon-tests,
# commit e2d28b5, unmodified),
# on VARIANT's kernel (default: on), unpatched and with this repository's
# damon-tests patches (damon-tests/series, applied with git am, no fuzz).
#
# On the host: $BUILD/damon-tests-work/{pristine,patched}/corr, copies of the
# snapshot (the second a git repository: the snapshot, then one commit a
# patch), and their tests' C programs built.  In the guest (panic_on_warn=1,
# as corr/run.sh sets it; vm-run.sh boots with it too):
# guest/damon-tests-guest.sh runs the regression tests of each copy's
# corr/tests/Makefile (its "simple regression tests"), the unpatched copy
# first.  The stage passes when every test of the patched copy passes or
# skips with its reason, and, where the kernel has perf_stats, when
# huge_count_read_write.sh tested it (passed, not skipped); the unpatched
# copy's failures are printed, not counted, to show what the patches
# change.  corr's functional tests (damo_tests.sh, masim-record.sh) need
# damo's git tree and masim, which this machine cannot fetch; its KUnit and
# cross-build tests are other stages' work (kunit-*, cross-*): they are
# listed as skipped, with that reason.
# Output: $BUILD/vm/damon-tests-VARIANT/{output.log,console.log}.
. "$(dirname "$0")/lib.sh"

variant=${1:-on}
# The snapshot: damon-tests/snapshot, an unmodified copy of the peer suite,
# so that a clone has it; where the peer's directory is beside the
# checkout, the copy must still be identical to it.
snapshot=${DAMON_TESTS_SNAPSHOT:-$TOP/damon-tests/snapshot}
peer=$TOP/../shared/peers/damon-tests
series_dir=$TOP/damon-tests
[ -d "$snapshot/corr/tests" ] || die "damon-tests: no snapshot at $snapshot (corr/tests)"
if [ -d "$peer/corr" ] && ! diff -r "$peer" "$snapshot" >/dev/null; then
	die "damon-tests: $snapshot differs from $peer: $(diff -rq "$peer" "$snapshot" | head -n 3 | paste -sd';' -)"
fi
[ -f "$series_dir/series" ] || die "damon-tests: $series_dir/series missing"

work=$BUILD/damon-tests-work
rm -rf "$work"
mkdir -p "$work/pristine" "$work/patched"
for d in pristine patched; do
	cp -a "$snapshot/corr" "$snapshot/COPYING" "$work/$d/" ||
		die "damon-tests: copying $snapshot failed"
done

# the patched copy: the snapshot, then git am of each patch of the series
git -C "$work/patched" init -q &&
	git -C "$work/patched" add -A &&
	git -C "$work/patched" -c user.name=damon-perf -c user.email=damon-perf@localhost \
		commit -qm "damon-tests snapshot ($(head -n 1 "$snapshot/SOURCE" 2>/dev/null))" ||
	die "damon-tests: cannot make a git repository of the snapshot"
n=0
while IFS= read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	[ -f "$series_dir/$p" ] || die "damon-tests: damon-tests/series names $p, which does not exist"
	git -C "$work/patched" -c user.name=damon-perf -c user.email=damon-perf@localhost \
		am -q "$series_dir/$p" || {
		git -C "$work/patched" am --abort 2>/dev/null
		die "damon-tests: $p does not apply to the snapshot"
	}
	n=$((n + 1))
done <"$series_dir/series"
[ "$n" -gt 0 ] || die "damon-tests: damon-tests/series has no patch"
log "damon-tests: $n patches applied: $(git -C "$work/patched" log --format=%s -n "$n" | tac | paste -sd';' -)"
rm -rf "$work/patched/.git"

# the tests' C programs, for the guest (the host's root is the guest's)
for d in pristine patched; do
	for c in "$work/$d"/corr/tests/*.c; do
		gcc -O2 -o "${c%.c}" "$c" 2>"$work/$d-$(basename "$c").gcc.log" ||
			die "damon-tests: building $c failed ($(tail -n 3 "$work/$d-$(basename "$c").gcc.log"))"
	done
done

stage_guest damon-tests damon-tests-guest.sh DAMON_TESTS_GUEST
name=damon-tests-$variant
out=$BUILD/vm/$name
rc=0
bash "$TOP/scripts/vm-run.sh" --name "$name" --timeout "${DAMON_TESTS_VM_TIMEOUT:-600}" \
	"$variant" -- "bash $stage/damon-tests-guest.sh $work/pristine $work/patched" || rc=$?
cat "$out/output.log" 2>/dev/null || true
[ "$rc" -eq 0 ] || die "damon-tests $variant: failed (rc $rc): $(grep -E '^(FAIL|not ok) ' "$out/output.log" 2>/dev/null | head -n 3 | paste -sd';' -) (output: $out/output.log)"
log "damon-tests corr on $variant: passed with damon-tests/series (output: $out/output.log)"
