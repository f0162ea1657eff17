#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-selftest.sh VARIANT: prove that scripts/vm-run.sh cannot pass when the
# guest fails: a command's status comes back, a WARN (provoked with LKDTM)
# fails the run, and a hung guest ends with a timeout message, not a hang.
. "$(dirname "$0")/../scripts/lib.sh"

variant=${1:?usage: vm-selftest.sh VARIANT}
vm=$TOP/scripts/vm-run.sh
fails=0
expect() {	# expect WANT_RC WHAT vm-run-args...
	local want=$1 what=$2 rc=0
	shift 2
	bash "$vm" "$@" >"$LOGS/vm-selftest.log" 2>&1 || rc=$?
	if [ "$rc" -eq "$want" ]; then
		echo "ok: $what (vm-run exit $rc)"
	else
		echo "FAIL: $what: vm-run exit $rc, wanted $want"
		tail -n 20 "$LOGS/vm-selftest.log"
		fails=$((fails + 1))
	fi
}

expect 0 "a passing command passes" --name selftest-pass "$variant" -- "uname -r"
grep -q "$(make -s -C "$SRC" O="$(objdir "$variant")" kernelrelease 2>/dev/null)" \
	"$BUILD/vm/selftest-pass/output.log" &&
	echo "ok: the guest ran the built kernel" ||
	{ echo "FAIL: the guest did not report the built kernel's release"; fails=$((fails + 1)); }
expect 3 "a command's exit status comes back" --name selftest-rc "$variant" -- "exit 3"
expect 1 "a WARN in the guest fails the run" --name selftest-warn "$variant" -- \
	"echo WARNING > /sys/kernel/debug/provoke-crash/DIRECT; sleep 5"
grep -q 'WARNING:' "$BUILD/vm/selftest-warn/console.log" &&
	echo "ok: the WARN is in the console log" ||
	{ echo "FAIL: no WARN in the console log"; fails=$((fails + 1)); }
expect 1 "a hung guest times out" --name selftest-hang --timeout 15 "$variant" -- "sleep 600"
grep -q 'timeout' "$LOGS/vm-selftest.log" &&
	echo "ok: the timeout is reported" ||
	{ echo "FAIL: no timeout message"; fails=$((fails + 1)); }
[ "$fails" -eq 0 ]
