#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kunit.sh VARIANT: boot VARIANT (KUnit runs the built-in suites at boot) and
# parse the console's KTAP with the kernel's own "kunit.py parse".  Fails on
# any "not ok", on a crashed or missing run, and when a suite listed in
# tests/kunit-suites did not run.
. "$(dirname "$0")/lib.sh"

variant=${1:?usage: kunit.sh VARIANT}
name=kunit-$variant
out=$BUILD/vm/$name
# The guest checks that KUnit's debugfs results exist for every suite.
suites=$(awk -v v="$variant" '!/^#/ && NF {
	if (NF == 1) { print $1; next }
	for (i = 2; i <= NF; i++) if ($i == v) print $1
}' "$TOP/tests/kunit-suites" | tr '\n' ' ')
bash "$TOP/scripts/vm-run.sh" --name "$name" --timeout 300 "$variant" -- \
	"for s in $suites; do test -r /sys/kernel/debug/kunit/\$s/results || { echo \"KUnit suite \$s did not run\"; exit 1; }; done; echo 'KUnit suites present: $suites'" ||
	die "kunit $variant: the VM run failed"

python3 "$SRC/tools/testing/kunit/kunit.py" parse --json="$out/kunit.json" \
	"$out/console.log" >"$out/kunit.txt" 2>&1 || {
	cat "$out/kunit.txt"
	die "kunit $variant: failures (see $out/kunit.txt)"
}
grep -E 'Testing complete|^\[.*\] (=+|\[PASSED\]|\[FAILED\])' "$out/kunit.txt" | tail -n 25
python3 - "$out/kunit.json" $suites <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))
ran = {c["name"]: c for c in res["sub_groups"]} if "sub_groups" in res else {}
missing = [s for s in sys.argv[2:] if s not in ran]
if missing:
    sys.exit("kunit: suites did not run: " + " ".join(missing))
print("kunit: %d suites ran, all expected suites present" % len(ran))
PY
