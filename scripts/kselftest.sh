#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kselftest.sh VARIANT [COLLECTION:TEST...]: build and install the damon
# kselftests from the expanded tree, boot VARIANT, run them in the guest with
# the kselftest runner (run_kselftest.sh) and judge its TAP output with the
# kernel's own parser (kunit.py parse).  Without arguments it runs every test
# of the damon collection except those in tests/kselftest-denylist.
. "$(dirname "$0")/lib.sh"

variant=${1:?usage: kselftest.sh VARIANT [COLLECTION:TEST...]}
shift
# KSELFTEST_TAG names a second run beside the first (its own install dir
# and guest dir); KSELFTEST_EXCLUDE lists COLLECTION:TEST entries not to run
# (another run of check runs them); KSELFTEST_CPUS sets the guest's vCPUs.
tag=${KSELFTEST_TAG:+-$KSELFTEST_TAG}
inst=$BUILD/kselftest$tag
name=kselftest-$variant$tag
out=$BUILD/vm/$name

log "kselftest: building and installing TARGETS=damon into $inst"
rm -rf "$inst"
run_logged "kselftest-build$tag" make -C "$SRC/tools/testing/selftests" \
	TARGETS=damon O="$BUILD/kselftest-obj$tag" INSTALL_PATH="$inst" install ||
	die "kselftest: build failed"

if [ $# -gt 0 ]; then
	tests=("$@")
else
	# DAMON's drgn-based tests read the running kernel with drgn, which
	# needs /proc/kcore and the kernel's DWARF debug info: they run on a
	# variant that has both ('drgn', kconfig/observe-drgn.config), not here.
	nodrgn=""
	grep -q '^CONFIG_PROC_KCORE=y' "$(objdir "$variant")/.config" &&
		grep -q '^CONFIG_DEBUG_INFO=y' "$(objdir "$variant")/.config" ||
		nodrgn=" $DRGN_TESTS "
	mapfile -t tests < <(grep -v '^$' "$inst/kselftest-list.txt" | while read -r t; do
		grep -q "^$t[[:space:]]" "$TOP/tests/kselftest-denylist" ||
			[[ " ${KSELFTEST_EXCLUDE:-} $nodrgn " == *" $t "* ]] || echo "$t"
	done)
	[ -z "${KSELFTEST_EXCLUDE:-}" ] || log "kselftest: not run here (another run has them): $KSELFTEST_EXCLUDE"
	[ -z "$nodrgn" ] || log "kselftest: not run on $variant (no /proc/kcore or no DWARF; they run on the drgn variant):$nodrgn"
	denied=$(grep -c '^[a-z]' "$TOP/tests/kselftest-denylist" || true)
	log "kselftest: ${#tests[@]} tests to run, $denied denylisted (tests/kselftest-denylist)"
fi
[ ${#tests[@]} -gt 0 ] || die "kselftest: no test to run"
args=""
for t in "${tests[@]}"; do args+=" -t $t"; done

# Tests run from a writable copy (some write next to themselves).
bash "$TOP/scripts/vm-run.sh" --name "$name" --cpus "${KSELFTEST_CPUS:-2}" --timeout "${KSELFTEST_VM_TIMEOUT:-3600}" \
	"$variant" -- "cp -a $inst /tmp/ks && cd /tmp/ks && ./run_kselftest.sh -o ${KSELFTEST_TIMEOUT:-900}$args |
	while IFS= read -r l; do printf '%s\\n' \"\$l\"; printf '%s %s\\n' \"\$EPOCHREALTIME\" \"\$l\" >>/tmp/out/stamps.log; done" ||
	vmrc=$?
# A guest that ran clean but whose tests failed (run_kselftest.sh's status)
# is judged below, with the failed tests named; anything else is the VM's.
if [ "${vmrc:-0}" -ne 0 ] && [ "$(cat "$out/verdict" 2>/dev/null)" != "guest $vmrc" ]; then
	die "kselftest $variant: the VM run failed: $(sed 's/^vm: //' "$out/verdict" 2>/dev/null) (console: $out/console.log)"
fi
# Guest seconds per test (where the time goes).
awk '$2 == "#" && $3 == "selftests:" { t = $1; n = $5 }
     ($2 == "ok" || ($2 == "not" && $3 == "ok")) && n != "" {
	printf "%7.1f s  %s\n", $1 - t, n; n = "" }' "$out/stamps.log" 2>/dev/null |
	sort -rn >"$out/durations.txt" || true
[ -s "$out/durations.txt" ] && { echo "guest seconds per test:"; cat "$out/durations.txt"; }

python3 "$SRC/tools/testing/kunit/kunit.py" parse --json="$out/kselftest.json" \
	"$out/output.log" >"$out/kselftest.txt" 2>&1 && rc=0 || rc=$?
grep -E '\[(PASSED|FAILED|SKIPPED|CRASHED)\]|Testing complete' "$out/kselftest.txt"
[ "$rc" -eq 0 ] && exit 0
# Show what each failed test printed last, so that a CI log names the cause.
awk '/^# selftests: / { n = 0; delete buf }
     { buf[n++ % 30] = $0 }
     /^not ok [0-9]+ selftests: / {
	print "---- " $0
	for (i = (n > 30 ? n - 30 : 0); i < n; i++) print "    " buf[i % 30]
     }' "$out/output.log" | grep -v '^    not ok' >&2 || true
# The ERROR line names each failed test and the first line that it printed
# that says FAIL (or fail, error), else its first line (a CI summary shows
# the ERROR lines alone).
failed=$(awk '/^# selftests: / { first = ""; bad = ""; next }
	/^# / && first == "" && !/^# (overriding timeout|timeout|exit)/ { first = substr($0, 3) }
	/^# / && bad == "" && /FAIL|[Ff]ail|[Ee]rror|not met/ { bad = substr($0, 3) }
	/^not ok [0-9]+ selftests: / { printf "%s%s (%s)", sep, $6, bad != "" ? bad : first; sep = "; " }' \
	"$out/output.log")
[ -n "$failed" ] || [ "${vmrc:-0}" -eq 0 ] || failed="the guest command exited $vmrc"
die "kselftest $variant: failed: ${failed:-see log} (output: $out/output.log)"
