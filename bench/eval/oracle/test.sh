#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test.sh BZIMAGE [--overhead]: does the oracle count what a program really
# does?  Boots BZIMAGE in a guest of its own (qemu-system-x86_64 directly,
# as eval runs it: TCG, one vCPU, -icount shift=0) with the oracle plugin;
# PID 1 runs oracle-test.c, whose accesses are known exactly: 64 hot pages
# of ITERS + 1 accesses each, 64 cold pages of one, and the guest-physical
# frames of both from /proc/self/pagemap.  Checks, from the oracle's
# output, in the windows of the program (between the empty windows that
# its first and last 2.5 windows, spins with no memory access, leave: the
# frames may be other processes' before and after):
#   - every hot page: ITERS + 1 accesses, +-TOL (the loop's loads and the
#     first touch; TOL=2 for a touch that would count again after a fault)
#   - every cold page: 1 or 2 accesses (the kernel clears the page at the
#     fault: some 10^3 accesses, which the oracle must not count)
#   - the smallest hot count is over 1000 times the largest cold one
#   - more than one window, and the hot pages' accesses spread over as many
#     windows as the loop's guest time says (its CLOCK_MONOTONIC time /
#     window, +1 for the window boundaries)
#   - in each window, the 64 hot pages' counts are equal +-2 (the loop
#     reads each once a round): the accesses are put in the right pages
# A plugin that counted virtual pages, kernel accesses, or lost accesses,
# would fail (tried: counting kernel code too fails the hot, cold and ratio
# checks; virtual pages find no access on a hot page).
#   --overhead  then boot the same guest without the plugin, and print the
#               ratio of host times (whole run, and the loop alone)
#
# The guest's root: both an initramfs (rdinit=/init) and the same files
# over virtio-9p (init=/init), so that kernels with either boot: the
# harness's have 9p built in and no BLK_DEV_INITRD, a distro's the other
# way round.
# Env: ORACLE_TEST_ITERS (1000000: some 3.2e8 instructions of loop, 3 to
# 4 windows), ORACLE_TEST_WINDOW (100000000), ORACLE_TEST_MACHINE (pc),
# ORACLE_TEST_MEM (MiB, 512; q35 and 2048 are the eval's accuracy guest),
# ORACLE_TEST_TIMEOUT (host seconds per boot, 1200), ORACLE_TEST_DIR (the
# work dir; default a new /tmp/oracle-test.XXXXXX, kept: console logs, the
# oracle's output).
# Exit: 0 PASS, 1 FAIL, 4 skip (QEMU without plugins, no qemu-plugin.h).
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)

kernel=${1:-}
overhead=0
[ "${2:-}" = --overhead ] && overhead=1
if [ -z "$kernel" ] || [ ! -f "$kernel" ]; then
	echo "usage: test.sh BZIMAGE [--overhead]" >&2
	exit 1
fi
iters=${ORACLE_TEST_ITERS:-1000000}
window=${ORACLE_TEST_WINDOW:-100000000}
timeout=${ORACLE_TEST_TIMEOUT:-1200}
machine=${ORACLE_TEST_MACHINE:-pc}
mem=${ORACLE_TEST_MEM:-512}
w=${ORACLE_TEST_DIR:-$(mktemp -d /tmp/oracle-test.XXXXXX)}
mkdir -p "$w"

skip() { echo "oracle test: SKIP: $*"; exit 4; }
fail() { echo "oracle test: FAIL: $*"; exit 1; }

command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64"
# -plugin is only an option of a QEMU built with CONFIG_PLUGIN
qemu-system-x86_64 -help 2>/dev/null | grep -q '^-plugin' ||
	skip "qemu-system-x86_64 has no -plugin (built without TCG plugins)"

rc=0
bash "$here/build.sh" "$w/plugin" || rc=$?
[ "$rc" -eq 4 ] && skip "build.sh could not get qemu-plugin.h"
[ "$rc" -eq 0 ] || fail "build.sh failed"
so=$w/plugin/liboracle.so

# The guest's root: static busybox, the test program, and an init.
root=$w/root
rm -rf "$root"
mkdir -p "$root/bin" "$root/proc" "$root/dev" "$root/sys"
[ -x /bin/busybox ] || fail "no /bin/busybox (busybox-static)"
cp /bin/busybox "$root/bin/busybox"
gcc -static -O2 -Wall -Werror -o "$root/oracle-test" "$here/oracle-test.c" ||
	fail "building oracle-test failed"
cat >"$root/init" <<EOF
#!/bin/busybox sh
# PID 1: a console of its own (on a 9p root the kernel finds no
# /dev/console to give it), then the test program, then off.
/bin/busybox mount -t devtmpfs dev /dev
exec </dev/console >/dev/console 2>&1
/bin/busybox mount -t proc proc /proc
/oracle-test $iters $window
echo "ORACLE exit \$?"
/bin/busybox poweroff -f
EOF
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet) >"$w/initrd.cpio"

append="console=ttyS0 quiet panic=-1 rdinit=/init init=/init"
append+=" root=hostroot rootfstype=9p rootflags=trans=virtio,version=9p2000.L ro"

# boot NAME [QEMU ARGS...]: one boot; NAME.log is the console, each line
# prefixed with the host's time ($EPOCHREALTIME) at which it came out.
boot() {
	local name=$1 rc=0 t0=$EPOCHREALTIME

	shift
	timeout -k 10 "$timeout" qemu-system-x86_64 -M "$machine" \
		-accel tcg,thread=single -icount shift=0 -m "$mem" -nographic \
		-no-reboot -kernel "$kernel" -initrd "$w/initrd.cpio" \
		-append "$append" \
		-virtfs "local,path=$root,mount_tag=hostroot,security_model=none,readonly=on" \
		"$@" </dev/null 2>"$w/$name.stderr" |
		while IFS= read -r line; do
			printf '%s %s\n' "$EPOCHREALTIME" "${line%$'\r'}"
		done >"$w/$name.log" || rc=$?
	echo "$t0 $EPOCHREALTIME" >"$w/$name.time"
	[ "$rc" -eq 0 ] || fail "QEMU ($name) exited with $rc, see $w/$name.log, $w/$name.stderr"
	grep -q ' ORACLE done$' "$w/$name.log" ||
		fail "the test program did not finish ($name), see $w/$name.log"
}

echo "oracle test: booting $kernel with the plugin (work dir $w)"
boot oracle -plugin "$so,out=$w/oracle.txt,window=$window" \
	-d plugin -D "$w/plugin.log"
[ -s "$w/oracle.txt" ] || fail "the oracle wrote nothing ($w/oracle.txt)"
cat "$w/plugin.log"

python3 - "$w/oracle.log" "$w/oracle.txt" "$iters" "$window" <<'EOF' || exit 1
import math, sys
from collections import defaultdict

log, oracle, iters, window = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
pfn = {'hot': {}, 'cold': {}}
loop_ns = None
for line in open(log):
    f = line.split()
    if len(f) < 3 or f[1] != 'ORACLE':
        continue
    if f[2] in pfn:
        pfn[f[2]][int(f[3])] = int(f[4])
    elif f[2] == 'loop_ns':
        loop_ns = int(f[3])
    elif f[2] == 'iters' and int(f[3]) != iters:
        sys.exit(f"oracle test: FAIL: the program ran {f[3]} iterations, not {iters}")
hot, cold = set(pfn['hot'].values()), set(pfn['cold'].values())
if len(hot) != 64 or len(cold) != 64 or hot & cold or 0 in hot | cold:
    sys.exit(f"oracle test: FAIL: not 64 + 64 distinct PFNs from pagemap "
             f"({len(hot)} hot, {len(cold)} cold)")

per_win = defaultdict(lambda: defaultdict(int))    # window -> pfn -> count
for line in open(oracle):
    w, p, c = map(int, line.split())
    per_win[w][p] += c
windows = set(per_win)
if not any(per_win[w][p] for w in windows for p in hot):
    sys.exit("oracle test: FAIL: no access on a hot page")
# the program's windows: between the empty ones around its hot accesses
last_hot = max(w for w in windows if any(per_win[w][p] for p in hot))
before = [w for w in range(last_hot) if w not in windows]
after = [w for w in range(last_hot, max(windows) + 2) if w not in windows]
if not before:
    sys.exit("oracle test: FAIL: no window without accesses before the "
             "program's (its spin should leave one)")
w0, w1 = before[-1] + 1, after[0]
total = defaultdict(int)                   # pfn -> count, in [w0, w1)
for w in range(w0, w1):
    for p, c in per_win[w].items():
        total[p] += c

bad = []
tol = 2
exp = iters + 1
hc = [total[p] for p in sorted(hot)]
cc = [total[p] for p in sorted(cold)]
print(f"oracle test: hot pages: expected {exp} each (1 touch + {iters} loads); "
      f"got min {min(hc)} max {max(hc)}, total {sum(hc)} of {64 * exp} "
      f"({(sum(hc) - 64 * exp) / (64 * exp):+.2e})")
print(f"oracle test: cold pages: expected 1 each; got min {min(cc)} max {max(cc)}")
if any(abs(c - exp) > tol for c in hc):
    bad.append(f"a hot page's count is off {exp} by more than {tol}")
if any(not 1 <= c <= 2 for c in cc):
    bad.append("a cold page's count is not 1 or 2")
if min(hc) <= 1000 * max(cc):
    bad.append("the hot pages are not far above the cold ones")

hot_wins = sorted(w for w in windows
                  if w0 <= w < w1 and any(per_win[w][p] for p in hot))
lo = math.floor(loop_ns / window)
hi = math.ceil(loop_ns / window) + 1
print(f"oracle test: {len(windows)} windows with accesses (0-{max(windows)}); "
      f"the program's {w0}-{w1 - 1}: {sum(total.values())} accesses on "
      f"{len(total)} pages; the loop took {loop_ns} guest ns, the hot pages "
      f"are in windows {hot_wins} (expected {lo} to {hi} windows)")
if len(windows) < 2:
    bad.append("fewer than 2 windows")
if not lo <= len(hot_wins) <= hi:
    bad.append(f"the hot pages are in {len(hot_wins)} windows, not {lo} to {hi}")
for w in hot_wins:
    c = [per_win[w][p] for p in hot]
    print(f"oracle test:   window {w}: hot pages {min(c)}-{max(c)} each")
    if max(c) - min(c) > 2:
        bad.append(f"window {w}: the hot pages' counts differ by {max(c) - min(c)}")
if bad:
    print("oracle test: FAIL: " + "; ".join(bad))
    sys.exit(1)
print("oracle test: PASS")
EOF

if [ "$overhead" = 1 ]; then
	echo "oracle test: booting again without the plugin (--overhead)"
	boot plain
	# host seconds of NAME: QEMU's whole run, and the console's
	# 'ORACLE start' to 'ORACLE iters' (the touch and the load loop;
	# 'start' may end a line that the boot left unended)
	span() { awk '
		FNR == NR { r = $2 - $1; next }
		/ORACLE start$/ && !s { s = $1 }
		/ ORACLE iters / && !e { e = $1 }
		END { printf "%.2f %.2f\n", r, e - s }' "$w/$1.time" "$w/$1.log"; }
	read -r run_p loop_p < <(span oracle)
	read -r run_n loop_n < <(span plain)
	awk -v rp="$run_p" -v rn="$run_n" -v lp="$loop_p" -v ln="$loop_n" 'BEGIN {
		printf "oracle test: host seconds with/without the plugin: whole run %.2f/%.2f = %.2fx, the load loop %.2f/%.2f = %.2fx\n",
			rp, rn, rp / rn, lp, ln, lp / ln }'
fi
exit 0
