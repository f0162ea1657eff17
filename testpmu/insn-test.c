// SPDX-License-Identifier: GPL-2.0
/*
 * The driver of scripts/insn-test.sh: runs dtp_insn_addr() (the test PMU's
 * damon_test_insn.h) on instructions decoded by the kernel's x86 decoder
 * (tools/arch/x86/lib/insn.c, built for user space) with a fixed register
 * file.
 *
 * Input, one instruction a line:  ID RIP HEXBYTES
 * Output, one line each:          ID VERDICT ADDR RAW SEG STORE LEN
 *   VERDICT  mem, nomem, vsib, unsupp, or decode (insn_decode() failed)
 *   ADDR     the linear address: RAW plus the FS or GS base of SEG (mem only)
 *   RAW      dtp_insn_addr()'s address, within the segment
 *   SEG      none, fs or gs
 *   STORE    1 if the operand is written, else 0
 *   LEN      the length the decoder found
 * Numbers in hex without 0x; 0 where they do not apply.
 *
 * Register file: gpr[i] = 0x7f0000000000 | (i + 1) << 20 | i * 0x11 (rax,
 * rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8 .. r15), fs base 0x7ff000000000,
 * gs base 0x7fe000000000; insn-test.sh evaluates the table with the same.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define fallthrough __attribute__((__fallthrough__))
#include "damon_test_insn.h"

#define FS_BASE 0x7ff000000000UL
#define GS_BASE 0x7fe000000000UL

int main(void)
{
	static const char * const verdicts[] = {
		[DTP_INSN_MEM] = "mem", [DTP_INSN_NOMEM] = "nomem",
		[DTP_INSN_VSIB] = "vsib", [DTP_INSN_UNSUPP] = "unsupp",
	};
	static const char * const segs[] = {
		[DTP_SEG_NONE] = "none", [DTP_SEG_FS] = "fs", [DTP_SEG_GS] = "gs",
	};
	unsigned long gpr[DTP_NR_GPRS];
	char line[512], id[64], hex[256];
	int i;

	for (i = 0; i < DTP_NR_GPRS; i++)
		gpr[i] = 0x7f0000000000UL | (unsigned long)(i + 1) << 20 |
			(unsigned long)i * 0x11;

	while (fgets(line, sizeof(line), stdin)) {
		unsigned char buf[MAX_INSN_SIZE];
		struct dtp_insn_mem mem = { 0 };
		enum dtp_insn_verdict v;
		unsigned long rip, addr = 0;
		struct insn insn;
		int n = 0;

		if (sscanf(line, "%63s %lx %255s", id, &rip, hex) != 3) {
			fprintf(stderr, "insn-test: bad input line: %s", line);
			return 2;
		}
		for (n = 0; hex[2 * n] && hex[2 * n + 1]; n++) {
			unsigned int b;

			if (n == MAX_INSN_SIZE || sscanf(hex + 2 * n, "%2x", &b) != 1) {
				fprintf(stderr, "insn-test: bad bytes %s\n", hex);
				return 2;
			}
			buf[n] = b;
		}
		/* exactly the instruction's bytes: the decoder reads no more */
		if (insn_decode(&insn, buf, n, INSN_MODE_64) < 0) {
			printf("%s decode 0 0 none 0 0\n", id);
			continue;
		}
		v = dtp_insn_addr(&insn, gpr, rip, &mem);
		if (v == DTP_INSN_MEM) {
			addr = mem.addr;
			if (mem.seg == DTP_SEG_FS)
				addr += FS_BASE;
			else if (mem.seg == DTP_SEG_GS)
				addr += GS_BASE;
		} else {
			memset(&mem, 0, sizeof(mem));
		}
		printf("%s %s %lx %lx %s %d %x\n", id, verdicts[v], addr, mem.addr,
		       segs[mem.seg], mem.store ? 1 : 0, insn.length);
	}
	return 0;
}
