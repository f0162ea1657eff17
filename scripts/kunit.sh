#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kunit.sh VARIANT: boot VARIANT (KUnit runs the built-in suites at boot) and
# parse the KTAP of each suite listed in tests/kunit-suites with the kernel's
# own "kunit.py parse".  Fails on any "not ok", on a crashed or missing run,
# and when a listed suite did not run.
#
# The KTAP is read from KUnit's debugfs results of each suite, not from the
# console: at boot, other subsystems print between the suites (e.g. the TSC
# calibration), and one such line between two suites made kunit.py misnumber
# every later suite while every test had passed.
. "$(dirname "$0")/lib.sh"

variant=${1:?usage: kunit.sh VARIANT}
name=kunit-$variant
out=$BUILD/vm/$name
suites=$(awk -v v="$variant" '!/^#/ && NF {
	if (NF == 1) { print $1; next }
	for (i = 2; i <= NF; i++) if ($i == v) print $1
}' "$TOP/tests/kunit-suites" | tr '\n' ' ')
bash "$TOP/scripts/vm-run.sh" --name "$name" --timeout 300 "$variant" -- \
	"mkdir -p /tmp/out/ktap && for s in $suites; do cat /sys/kernel/debug/kunit/\$s/results >/tmp/out/ktap/\$s.ktap || { echo \"KUnit suite \$s did not run\"; exit 1; }; done; echo 'KUnit suites present: $suites'" ||
	die "kunit $variant: the VM run failed"

for s in $suites; do
	python3 "$SRC/tools/testing/kunit/kunit.py" parse --json="$out/ktap/$s.json" \
		"$out/ktap/$s.ktap" >"$out/ktap/$s.txt" 2>&1 || {
		cat "$out/ktap/$s.txt"
		die "kunit $variant: failures in suite $s (see $out/ktap/$s.txt)"
	}
	echo "$s: $(grep -oE 'Testing complete\. .*' "$out/ktap/$s.txt")"
done
# shellcheck disable=SC2086
python3 - "$out/ktap" $suites <<'PY'
import json, os, sys
d, suites = sys.argv[1], sys.argv[2:]
cases = 0
for s in suites:
    res = json.load(open(os.path.join(d, s + ".json")))
    groups = res.get("sub_groups", [])
    if [g["name"] for g in groups] != [s]:
        sys.exit("kunit: %s.ktap is not the results of suite %s" % (s, s))
    for c in groups[0].get("test_cases", []):
        if c["status"] not in ("PASS", "SKIP"):
            sys.exit("kunit: %s.%s: %s" % (s, c["name"], c["status"]))
        cases += 1
print("kunit: %d suites ran, all expected suites present, %d cases passed or skipped" %
      (len(suites), cases))
PY
