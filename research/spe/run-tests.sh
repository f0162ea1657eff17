#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side checks of the SPE decoder, no kernel build, no VM:
#  1. test_decode with gcc -Wall -Wextra -Werror, and with ASan+UBSan, and clang
#  2. mutation check: each mutation of spe-decode.h must fail some case
#  3. checkpatch --strict on the kernel files
#  4. syntax-only compile of spe-decode.h against the tree's kernel headers
#     (x86 and, if aarch64-linux-gnu-gcc exists, arm64), with an empty
#     autoconf.h and asm-generic wrappers for the generated asm headers
set -u
cd "$(dirname "$0")"
KTREE=${KTREE:-/work/main/build/linux}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0

step() { printf '\n== %s\n' "$*"; }

step "gcc -Wall -Wextra -Werror"
gcc -std=gnu11 -Wall -Wextra -Werror -O2 -I shim -o test_decode test_decode.c &&
	./test_decode || fail=1

step "gcc ASan+UBSan"
gcc -std=gnu11 -Wall -Wextra -Werror -O1 -g -fsanitize=address,undefined \
	-fno-sanitize-recover=all -I shim -o "$TMP/asan" test_decode.c &&
	"$TMP/asan" | grep -E '^(ok|not ok|# damon)' || fail=1

if command -v clang >/dev/null; then
	step "clang -Wall -Wextra -Werror"
	clang -std=gnu11 -Wall -Wextra -Werror -O2 -I shim -o "$TMP/clang" \
		test_decode.c && "$TMP/clang" | grep -E '^(ok|not ok|# damon)' ||
		fail=1
fi

step "mutations (each must be killed)"
mutate() {
	mkdir -p "$TMP/mut"
	cp -r shim test_decode.c spe-decode-kunit.h "$TMP/mut/"
	python3 - "$1" "$2" <<'EOF' || return 1
import sys
s = open('spe-decode.h').read()
assert sys.argv[1] in s, sys.argv[1]
import os
out = os.path.join(os.environ['TMP'], 'mut', 'spe-decode.h')
open(out, 'w').write(s.replace(sys.argv[1], sys.argv[2], 1))
EOF
	gcc -std=gnu11 -O2 -I "$TMP/mut/shim" -o "$TMP/mut/t" "$TMP/mut/test_decode.c" &&
		if "$TMP/mut/t" >/dev/null; then
			echo "SURVIVED: $3"; fail=1
		else
			echo "killed: $3"
		fi
}
export TMP
mutate 'addr |= DAMON_SPE_ADDR_TOP_BYTE;' ';' 'no sign extension of VAs'
mutate 'rec->pa = v & DAMON_SPE_ADDR_MASK;' 'rec->pa = v;' 'PA NS/CH/PAT kept'
mutate 'idx = (hdr & 0x3) << 3;' 'idx = (hdr & 0x3) << 2;' 'extended index shift'
mutate 'idx = (hdr & 0x3) << 3;' 'idx = 0;' 'extended index high bits ignored'
mutate 'rec->end = DAMON_SPE_END_TIMESTAMP;' ';' 'Timestamp does not end a record'
mutate 'if (payload & DAMON_SPE_OP_LDST_ST)' 'if (!(payload & DAMON_SPE_OP_LDST_ST))' 'ST inverted'
mutate 'if (off - start >= DAMON_SPE_MAX_RECORD_SZ)' 'if (0)' 'no record size limit'
mutate 'if (!(rec->flags & DAMON_SPE_HAS_PA) || !rec->pa_ns)' 'if (!(rec->flags & DAMON_SPE_HAS_PA))' 'PA NS ignored'
mutate 'rec->atomic = !!(payload & DAMON_SPE_OP_LDST_AT);' ';' 'atomics not writes'
mutate 'v = (v << 8) | p[n];' 'v = (v << 8) | p[0];' 'little-endian order broken'

step "checkpatch --strict"
for f in spe-decode.h spe-decode-kunit.h; do
	"$KTREE/scripts/checkpatch.pl" --strict --no-tree -f "$f" 2>/dev/null |
		grep -E '^(total|CHECK|WARNING|ERROR)'
done

step "syntax-only compile of spe-decode.h against $KTREE headers"
printf '#include "%s/spe-decode.h"\nint f(const u8 *b, size_t l);\nint f(const u8 *b, size_t l)\n{\n\tstruct damon_spe_record r;\n\tint ret = damon_spe_decode_record(b, l, &r);\n\n\treturn ret < 0 ? ret : (int)damon_spe_record_verdict(&r, false) +\n\t\tdamon_spe_record_is_write(&r);\n}\n' "$PWD" > "$TMP/t.c"
kcheck() {	# $1 compiler, $2 arch
	local inc="$TMP/inc-$2" i m out
	mkdir -p "$inc/asm" "$inc/generated"
	: > "$inc/generated/autoconf.h"
	for i in $(seq 1 10); do
		# -Wextra minus what the kernel headers themselves trip
		out=$(cd "$KTREE" && $1 -fsyntax-only -Wall -Wextra \
			-Wno-unused-parameter -Wno-sign-compare -nostdinc \
			-isystem "$($1 -print-file-name=include)" -D__KERNEL__ \
			-I"$inc" -Iinclude -Iarch/$2/include \
			-Iarch/$2/include/uapi -Iinclude/uapi \
			-include include/linux/compiler-version.h \
			-include include/linux/kconfig.h \
			-include include/linux/compiler_types.h "$TMP/t.c" 2>&1)
		m=$(echo "$out" | grep -o 'fatal error: asm/[a-z_]*\.h' | head -1 |
			sed 's/fatal error: asm\///')
		[ -z "$m" ] && break
		echo "#include <asm-generic/$m>" > "$inc/asm/$m"
	done
	if [ -n "$out" ]; then echo "$out"; echo "FAIL: $2"; fail=1; else echo "ok: $2"; fi
}
kcheck gcc x86
command -v aarch64-linux-gnu-gcc >/dev/null && kcheck aarch64-linux-gnu-gcc arm64

echo
[ $fail = 0 ] && echo "ALL OK" || echo "SOME CHECK FAILED"
exit $fail
