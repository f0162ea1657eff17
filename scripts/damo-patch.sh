#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# damo-patch.sh [unit | run [VARIANT] | uses [VARIANT]]: damo, DAMON's user space tool, with
# the damo patch series of this repository (damo/series, git format-patch
# files: damo learns the series' perf_event probe preps).
#
#   (none)         $BUILD/damo-patched, a git repository: one base commit of
#                  Debian's damo $DAMO_DEB_VERSION (tag debian/VERSION), then
#                  'git am' of each patch of damo/series, no fuzz; the first
#                  patch that does not apply stops the run and is named.
#                  Prints the path of the patched damo's entry script
#                  (src/damo.py; run it with python3).  A tree that already is
#                  that base plus that series, unchanged, is left as it is.
#   unit           the same, then damo's unit tests of the patched tree
#                  (tests/unit/test_*.py) on the host, with python3
#   run [VARIANT]  the same, then boot VARIANT (default: on) and run
#                  guest/damo-patched-guest.sh (what it asserts is said
#                  there) with the patched damo.  Exit 4 if the guest
#                  skipped (the kernel lacks the perf_event probe prep).
#                  Output: $BUILD/vm/damo-patched/{output.log,console.log}.
#   uses [VARIANT] the same with guest/uses-guest.sh: the three uses of
#                  perf_event preps (perf instead of the Accessed bits, both
#                  side by side, attributes-only), each set up by the sysfs
#                  writes it prints and read with 'damo report access'.
#                  Output: $BUILD/vm/damo-uses/{output.log,console.log}.
#
# The base: Debian's source package, which scripts/deps.sh unpacks into
# $CACHE/damo-src-VERSION.  Where the mirror did not serve it (deps.sh left
# $CACHE/damo-src-VERSION.unavailable), the base is the modules of Debian's
# binary package (deps.sh's $DAMO_ROOT) laid out as in the source, src/*.py:
# the patches apply to both, the tests they add run on both, but the tree
# has none of damo's other tests then, and the base commit says so.  The
# tests of damo/series import damo's modules the way damo's own unit tests
# do, through tests/unit/_test_damo_common.py of the source; a base of the
# binary package has a stand-in of it (test_common_stand_in below), with
# the function that they use.
# Env: DAMO_PATCHED_GUEST, DAMO_USES_GUEST (the guest scripts),
# DAMO_VM_TIMEOUT (600, in s).
. "$(dirname "$0")/lib.sh"

mode=${1:-}
case "$mode" in
''|unit|run|uses) ;;
*) die "usage: damo-patch.sh [unit | run [VARIANT] | uses [VARIANT]]" ;;
esac

# as scripts/deps.sh names it
src_dir=$CACHE/damo-src-$DAMO_DEB_VERSION
bin_dir=$DAMO_ROOT/usr/lib/python3/dist-packages/damo
series_dir=$TOP/damo
tree=$BUILD/damo-patched
entry=$tree/src/damo.py

[ -f "$series_dir/series" ] || die "damo-patch: $series_dir/series missing"
if [ -d "$src_dir" ]; then
	base_kind="Debian's source package $DAMO_PKG $DAMO_DEB_VERSION ($src_dir)"
elif [ -f "$bin_dir/damo.py" ]; then
	why=$(head -n 1 "$src_dir.unavailable" 2>/dev/null || echo "not fetched")
	base_kind="the modules of Debian's binary package $DAMO_PKG $DAMO_DEB_VERSION ($bin_dir), as src/*.py, and a stand-in of damo's tests/unit/_test_damo_common.py: the source package is not available ($why)"
else
	die "damo-patch: neither $src_dir nor $bin_dir: run scripts/deps.sh"
fi

# tests/unit/_test_damo_common.py of a base of the binary package
test_common_stand_in() {
	cat <<'EOF'
#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# A stand-in of damo's tests/unit/_test_damo_common.py, which Debian's
# binary package of damo does not ship, laid out by the damon-perf harness
# (scripts/damo-patch.sh) for the unit tests of its damo patch series.
# Only what those tests use.

import os
import sys

def add_damo_dir_to_syspath():
    'Let the tests import the modules of damo, in src/ of the tree'
    unit_tests_dir = os.path.dirname(os.path.realpath(__file__))
    sys.path.append(os.path.join(unit_tests_dir, '..', '..', 'src'))
EOF
}

# the patch files of damo/series, in order
series=()
while IFS= read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	[ -f "$series_dir/$p" ] || die "damo-patch: damo/series names $p, which does not exist"
	series+=("$p")
done <"$series_dir/series"

# What the tree is made of: the base and every patch of the series
key=$({
	echo "$base_kind"
	[ -d "$src_dir" ] || test_common_stand_in
	for p in "${series[@]}"; do echo "$p"; cat "$series_dir/$p"; done
} | sha256sum | cut -c1-40)

build_tree() {
	local p n=0 tag=debian/$DAMO_DEB_VERSION

	if [ -f "$tree/.git/damo-patched-key" ] &&
		[ "$(cat "$tree/.git/damo-patched-key")" = "$key" ] &&
		[ -z "$(git -C "$tree" status --porcelain)" ]; then
		log "damo-patch: $tree is already $DAMO_PKG $DAMO_DEB_VERSION + damo/series (${#series[@]} patches), left as it is"
		return 0
	fi
	rm -rf "$tree"
	mkdir -p "$tree"
	if [ -d "$src_dir" ]; then
		# dpkg-source's quilt state is not part of the source
		(cd "$src_dir" && tar --exclude=./.pc -cf - .) | tar -C "$tree" -xf - ||
			die "damo-patch: copying $src_dir failed"
	else
		mkdir -p "$tree/src" "$tree/tests/unit"
		cp "$bin_dir"/*.py "$tree/src/" || die "damo-patch: copying $bin_dir failed"
		test_common_stand_in >"$tree/tests/unit/_test_damo_common.py"
	fi
	cd "$tree"
	git init -q -b debian
	git config user.name >/dev/null || git config user.name "damon-perf harness"
	git config user.email >/dev/null || git config user.email "harness@localhost"
	printf '__pycache__/\n' >.git/info/exclude
	git add -A -f .
	GIT_AUTHOR_DATE="2026-09-18T15:11:46+0100" GIT_COMMITTER_DATE="2026-09-18T15:11:46+0100" \
		git commit -q -m "damo $DAMO_DEB_VERSION" -m "The base of damo/series: $base_kind."
	# damo's version for its cache of the kernel's features (get_real_version(),
	# 'git describe'): the patched damo does not take the features that an
	# unpatched damo of the same release found
	git tag -a -m "Debian's damo $DAMO_DEB_VERSION" "$tag"
	for p in "${series[@]}"; do
		n=$((n + 1))
		if ! git am -q --committer-date-is-author-date "$series_dir/$p" \
			>"$LOGS/damo-am.log" 2>&1; then
			cat "$LOGS/damo-am.log" >&2
			git am --abort >/dev/null 2>&1 || true
			die "damo-patch: patch $n does not apply: damo/$p"
		fi
	done
	echo "$key" >.git/damo-patched-key
	log "damo-patch: $tree: $DAMO_PKG $DAMO_DEB_VERSION + ${#series[@]} patches of damo/series ($(git describe))"
	cd - >/dev/null
}

mkdir -p "$LOGS"
build_tree
[ -f "$entry" ] || die "damo-patch: no $entry in the patched tree"

case "$mode" in
'')
	echo "$entry"
	;;
unit)
	# damo's unit tests import the modules from ../../src; no byte code in
	# the tree (it must stay as built)
	passed=0 failed=0
	for t in "$tree"/tests/unit/test_*.py; do
		[ -f "$t" ] || continue
		if (cd "$(dirname "$t")" && PYTHONDONTWRITEBYTECODE=1 python3 "$t") \
			>"$LOGS/damo-unit-$(basename "$t" .py).log" 2>&1; then
			echo "PASS $(basename "$t")"
			passed=$((passed + 1))
		else
			echo "FAIL $(basename "$t") (log: $LOGS/damo-unit-$(basename "$t" .py).log)"
			tail -n 20 "$LOGS/damo-unit-$(basename "$t" .py).log" | sed 's/^/    /'
			failed=$((failed + 1))
		fi
	done
	echo "damo unit tests: $passed passed, $failed failed"
	[ "$passed" -gt 0 ] || die "damo-patch: no unit test in $tree/tests/unit"
	[ "$failed" -eq 0 ] || die "damo-patch: $failed unit test file(s) failed"
	;;
run | uses)
	variant=${2:-on}
	if [ "$mode" = run ]; then
		name=damo-patched guest=damo-patched-guest.sh env=DAMO_PATCHED_GUEST
	else
		name=damo-uses guest=uses-guest.sh env=DAMO_USES_GUEST
	fi
	# (not $BUILD/$name: stage_guest empties $BUILD/NAME)
	stage_guest "$name-stage" "$guest" "$env"
	# under $BUILD, which the guest sees wherever the cache is (guest/init.sh)
	cp -r "$tree/src" "$stage/damo-py" || die "damo-patch: staging $tree/src failed"
	out=$BUILD/vm/$name
	rc=0
	bash "$TOP/scripts/vm-run.sh" --name "$name" --timeout "${DAMO_VM_TIMEOUT:-600}" \
		"$variant" -- "bash $stage/$guest $stage/damo-py/damo.py $wl" || rc=$?
	cat "$out/output.log" 2>/dev/null || true
	case "$rc" in
	0) log "$name on $variant: passed (output: $out/output.log)" ;;
	4) log "$name on $variant: skipped: $(grep -m1 -E 'SKIP' "$out/output.log" 2>/dev/null) (output: $out/output.log)"; exit 4 ;;
	*) die "$name on $variant: failed (rc $rc): $(grep -E '^not ok ' "$out/output.log" 2>/dev/null | head -n 3 | paste -sd';' -) (output: $out/output.log)" ;;
	esac
	;;
esac
