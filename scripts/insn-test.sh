#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# insn-test.sh [-v] ('make check' stage insn-test): the host-side table test
# of the test PMU's insn mode (testpmu/README.md section 8): dtp_insn_addr()
# of drivers/perf/damon_test_insn.h, on real assembled instructions decoded
# by the kernel's x86 decoder built for user space.
#
# Each line of testpmu/insn-table.txt is "AT&T assembly | address | kind",
# the address a Python expression over the registers, written from the SDM.
# All lines are assembled in one `as --64` run (a label before each; the
# lengths from the labels' offsets, the bytes from objcopy), decoded with
# insn_decode(.., INSN_MODE_64) (tools/arch/x86/lib/insn.c of $SRC) and
# given to dtp_insn_addr() by testpmu/insn-test.c with a fixed register
# file; the kind (load, store, nomem, vsib, unsupp) and, for a load or a
# store, the address (with the FS or GS base added) must be the table's, and
# the decoder's length the assembler's.  Prints one line per mismatch, then
# "insn-test: N instructions, M mismatches"; -v prints every instruction.
#
# The header: the new file drivers/perf/damon_test_insn.h of
# testpmu/0004-damon-test-pmu-insn.patch, or the file INSN_HEADER names.
# Env: INSN_TABLE (testpmu/insn-table.txt), INSN_HEADER.
# Exit: 0 no mismatch, 1 mismatches (or a table line that does not
# assemble or parse), 4 as/objcopy/nm/gcc/python3, the tree or the
# header missing.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

verbose=0
[ "${1:-}" != -v ] || verbose=1

skip() { printf 'insn-test: %s\n' "$*" >&2; exit 4; }

for t in as objcopy nm gcc python3 awk; do
	command -v "$t" >/dev/null || skip "$t missing"
done
lib=$SRC/tools/arch/x86/lib
for f in "$lib/insn.c" "$lib/inat.c" "$lib/x86-opcode-map.txt" \
	"$SRC/tools/arch/x86/tools/gen-insn-attr-x86.awk" \
	"$SRC/tools/arch/x86/include/asm/insn.h"; do
	[ -f "$f" ] || skip "no $f (the expanded tree: scripts/expand.sh)"
done
table=${INSN_TABLE:-$TOP/testpmu/insn-table.txt}
[ -f "$table" ] || skip "no table $table"
driver=$TOP/testpmu/insn-test.c
[ -f "$driver" ] || skip "no $driver"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/insn-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The header under test
patch=$TOP/testpmu/0004-damon-test-pmu-insn.patch
if [ -n "${INSN_HEADER:-}" ]; then
	[ -f "$INSN_HEADER" ] || skip "no INSN_HEADER $INSN_HEADER"
	cp "$INSN_HEADER" "$tmp/damon_test_insn.h"
	hdr_from=$INSN_HEADER
else
	[ -f "$patch" ] || skip "no $patch (or set INSN_HEADER)"
	# the '+' lines of the file's new-file hunk
	awk '
		/^diff --git / { f = ($3 == "a/drivers/perf/damon_test_insn.h"); h = 0; next }
		f && /^@@ / { h = 1; next }
		f && h && /^\+/ { print substr($0, 2) }
	' "$patch" >"$tmp/damon_test_insn.h"
	[ -s "$tmp/damon_test_insn.h" ] ||
		skip "no drivers/perf/damon_test_insn.h in $patch"
	hdr_from=$patch
fi

# The decoder for user space, and the driver
awk -f "$SRC/tools/arch/x86/tools/gen-insn-attr-x86.awk" "$lib/x86-opcode-map.txt" \
	>"$tmp/inat-tables.c" || die "insn-test: gen-insn-attr-x86.awk failed"
if ! gcc -O1 -Wall -o "$tmp/insn-test" \
	-I "$tmp" -I "$SRC/tools/arch/x86/include" -I "$SRC/tools/include" -I "$lib" \
	"$driver" "$lib/insn.c" "$lib/inat.c" >"$tmp/gcc.log" 2>&1; then
	cat "$tmp/gcc.log" >&2
	die "insn-test: building the driver with $hdr_from failed"
fi
[ "$verbose" = 0 ] || { log "insn-test: header from $hdr_from"; cat "$tmp/gcc.log" >&2; }

python3 - "$table" "$tmp" "$verbose" <<'PY'
import re, subprocess, sys

table, tmp, verbose = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
KINDS = ("load", "store", "nomem", "vsib", "unsupp")
NAMES = "rax rcx rdx rbx rsp rbp rsi rdi r8 r9 r10 r11 r12 r13 r14 r15".split()
REGS = {n: 0x7f0000000000 | (i + 1) << 20 | i * 0x11 for i, n in enumerate(NAMES)}
REGS.update(fs=0x7ff000000000, gs=0x7fe000000000)

def rip_of(lineno):
    return 0x400000 + 0x100 * lineno

def fail(msg):
    print(f"insn-test: {msg}", file=sys.stderr)
    sys.exit(1)

# The table: (table line, assembly, expression, kind)
rows = []
with open(table) as f:
    for no, raw in enumerate(f, 1):
        text = raw.split("#", 1)[0].strip()
        if not text:
            continue
        parts = [p.strip() for p in text.split("|")]
        if len(parts) != 3 or not parts[0] or parts[2] not in KINDS:
            fail(f"{table}:{no}: not 'assembly | address | kind': {raw.rstrip()}")
        asm, expr, kind = parts
        if (kind in ("load", "store")) == (expr == "-"):
            fail(f"{table}:{no}: a load or a store has an address, others '-'")
        rows.append((no, asm, expr, kind))

# One assembly of them all, a label before each and one at the end
src, sline = [".text", ".code64"], {}
for i, (no, asm, _, _) in enumerate(rows):
    src.append(f"insn_{i}:")
    src.append(asm)
    sline[len(src)] = no
src.append(f"insn_{len(rows)}:")
with open(f"{tmp}/t.s", "w") as f:
    f.write("\n".join(src) + "\n")
r = subprocess.run(["as", "--64", "-o", f"{tmp}/t.o", f"{tmp}/t.s"],
                   capture_output=True, text=True)
if r.returncode:
    for l in r.stderr.splitlines():
        m = re.match(r".*?t\.s:(\d+): (.*)", l)
        if m and int(m.group(1)) in sline:
            no = sline[int(m.group(1))]
            print(f"insn-test: {table}:{no}: {m.group(2)}", file=sys.stderr)
        elif not l.endswith("Assembler messages:"):
            print(l, file=sys.stderr)
    fail("the table does not assemble")
offs = {}
for l in subprocess.run(["nm", f"{tmp}/t.o"], capture_output=True, text=True,
                        check=True).stdout.splitlines():
    p = l.split()
    if len(p) == 3 and p[2].startswith("insn_"):
        offs[int(p[2][5:])] = int(p[0], 16)
subprocess.run(["objcopy", "-O", "binary", "-j", ".text", f"{tmp}/t.o",
                f"{tmp}/t.bin"], check=True)
text = open(f"{tmp}/t.bin", "rb").read()

lines = []
for i, (no, asm, _, _) in enumerate(rows):
    b = text[offs[i]:offs[i + 1]]
    if not 1 <= len(b) <= 15:
        fail(f"{table}:{no}: '{asm}' is {len(b)} bytes, not one instruction")
    lines.append((no, b))
inp = "".join(f"{i} {rip_of(no):x} {b.hex()}\n" for i, (no, b) in enumerate(lines))
out = subprocess.run([f"{tmp}/insn-test"], input=inp, capture_output=True,
                     text=True, check=True).stdout.splitlines()
if len(out) != len(rows):
    fail(f"the driver answered {len(out)} lines for {len(rows)} instructions")

bad = 0
for (no, asm, expr, kind), (_, b), res in zip(rows, lines, out):
    _, verdict, addr, _raw, seg, store, dlen = res.split()
    addr, dlen = int(addr, 16), int(dlen, 16)
    got = {"mem": "store" if store == "1" else "load"}.get(verdict, verdict)
    env = dict(REGS, rip=rip_of(no), len=len(b))
    want = None
    if kind in ("load", "store"):
        try:
            want = eval(expr, {"__builtins__": {}}, env) % 2**64
        except Exception as e:
            fail(f"{table}:{no}: cannot evaluate '{expr}': {e}")
    why = []
    if got != kind:
        why.append("kind")
    elif want is not None and addr != want:
        why.append("address")
    if dlen != len(b):
        why.append(f"length (decoder {dlen}, as {len(b)})")
    gots = got + (f" {addr:#x}" + (f" ({seg})" if seg != "none" else "")
                  if verdict == "mem" else "")
    wants = kind + (f" {want:#x}" if want is not None else "")
    if why:
        bad += 1
        print(f"MISMATCH {table.rsplit('/', 1)[-1]}:{no}: {asm} [{b.hex(' ')}]: "
              f"expected {wants} ({expr}), got {gots}: {', '.join(why)}")
    elif verbose:
        print(f"ok {no}: {asm} [{b.hex(' ')}]: {gots}")
print(f"insn-test: {len(rows)} instructions, {bad} mismatches")
sys.exit(1 if bad else 0)
PY
