// SPDX-License-Identifier: GPL-2.0
/*
 * oracle: a QEMU TCG plugin (QEMU 7.2's plugin API) that counts the memory
 * accesses of user-mode code per guest-physical 4 KiB page, in windows of
 * executed instructions: the ground truth of bench/eval/ (README.md here).
 *
 * usage: -plugin liboracle.so,out=PATH[,window=N]
 *	out	the output file (required)
 *	window	instructions per window (100000000: 100 ms of guest time
 *		under -icount shift=0, where one instruction is one ns)
 *
 * Output: for each window W (0, 1, ...) with any counted access, when it
 * closes, one line "W PFN COUNT" per guest-physical page frame, in PFN
 * order, all decimal; the last window at QEMU's exit (atexit callback).
 *
 * The window clock: every instruction that executes, of any mode
 * (firmware, kernel, user), since with -icount each one is guest time.  It
 * is an inline add of the block's length at the start of each translated
 * block, so an access is put in the window in which its block started,
 * and a block left early (a fault, an I/O recompile) still counts whole:
 * some tens of instructions per fault, well below a window's 10^8.  While
 * the vCPU halts, the guest's clock goes on (icount sleep=on, the
 * default) and this one doesn't: windows are instruction windows.
 *
 * Accesses: each load or store that QEMU's memory callback reports for an
 * instruction of user mode, to RAM (I/O is not counted), as 7.2's x86
 * translator makes them: a 16-byte vector load is two 8-byte ones, a
 * read-modify-write a load and a store, a locked one a single access.  Its
 * page is that of its first byte.  Kernel accesses on behalf of user
 * space (copy_to_user, clearing a faulted-in page) and the page-table
 * walker's are not counted.
 *
 * The page: 7.2's qemu_plugin_hwaddr_phys_addr() gives the RAM block's
 * ram_addr offset plus the block's memory region address, which is the
 * guest-physical address only where the guest's RAM is one block mapped
 * from 0: pc or q35 with all RAM below the PCI hole (under 3.5 GiB on pc,
 * 2.75 GiB on q35) and no -numa memdev.  The eval's accuracy guest (q35,
 * 2 GiB) is one; its tiering guest (two memory backends) is not.
 *
 * No GLib (build.sh says why): the per-window table is an open-addressing
 * hash of PFNs of its own, emptied at each window's end.  Not thread-safe:
 * -icount implies single-threaded TCG, where every vCPU runs on one thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu/qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define PAGE_SHIFT	12

struct slot {
	uint64_t key;		/* PFN + 1; 0: empty */
	uint64_t count;
};

static struct slot *table;
static uint64_t table_mask;	/* capacity - 1, capacity a power of 2 */
static unsigned int table_shift;	/* 64 - log2(capacity) */
static uint64_t table_used;

static FILE *out;
static uint64_t window = 100000000;
static uint64_t insns;		/* executed instructions, all modes */
static uint64_t win_idx;	/* the window that the table counts */
static uint64_t win_end = 100000000;	/* instruction count at its end */
static bool kernel_seen;	/* an upper-half block was translated */

/* totals, for the summary at exit */
static uint64_t nr_counted, nr_io, nr_nohw, nr_lines;

static void err(const char *msg)
{
	/*
	 * qemu_plugin_outs() writes to QEMU's log, which only '-d plugin'
	 * shows; stderr too then (stdout is the guest's console).
	 */
	qemu_plugin_outs(msg);
	fputs(msg, stderr);
}

static uint64_t hash(uint64_t key)
{
	/* Fibonacci hashing: consecutive PFNs spread over the table */
	return (key * 0x9e3779b97f4a7c15ull) >> table_shift;
}

static int table_alloc(uint64_t capacity)
{
	table = calloc(capacity, sizeof(*table));
	if (!table)
		return -1;
	table_mask = capacity - 1;
	table_shift = 64 - __builtin_ctzll(capacity);
	table_used = 0;
	return 0;
}

static void table_grow(void)
{
	struct slot *old = table;
	uint64_t i, j, old_cap = table_mask + 1;

	if (table_alloc(old_cap * 2)) {
		err("oracle: out of memory\n");
		abort();
	}
	for (i = 0; i < old_cap; i++) {
		if (!old[i].key)
			continue;
		for (j = hash(old[i].key) & table_mask; table[j].key;
		     j = (j + 1) & table_mask)
			;
		table[j] = old[i];
		table_used++;
	}
	free(old);
}

static void table_add(uint64_t pfn)
{
	uint64_t key = pfn + 1, j;

	for (j = hash(key) & table_mask; table[j].key;
	     j = (j + 1) & table_mask) {
		if (table[j].key == key) {
			table[j].count++;
			return;
		}
	}
	table[j].key = key;
	table[j].count = 1;
	/* at most half full, so that probe runs stay short */
	if (++table_used * 2 > table_mask + 1)
		table_grow();
}

static int slot_cmp(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* Write out the window that the table holds, and empty the table. */
static void flush(void)
{
	uint64_t i, n = 0;

	if (!table_used)
		return;
	/* the used slots to the front, then in PFN order */
	for (i = 0; i <= table_mask; i++) {
		if (!table[i].key)
			continue;
		if (i != n) {
			table[n] = table[i];
			table[i].key = 0;
			table[i].count = 0;
		}
		n++;
	}
	qsort(table, n, sizeof(*table), slot_cmp);
	for (i = 0; i < n; i++)
		fprintf(out, "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n", win_idx,
			table[i].key - 1, table[i].count);
	nr_lines += n;
	memset(table, 0, n * sizeof(*table));
	table_used = 0;
}

static void vcpu_mem(unsigned int vcpu_index, qemu_plugin_meminfo_t info,
		     uint64_t vaddr, void *udata)
{
	struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);

	if (!hw) {
		nr_nohw++;
		return;
	}
	if (qemu_plugin_hwaddr_is_io(hw)) {
		nr_io++;
		return;
	}
	/*
	 * Windows close lazily, at the first access after their end: one
	 * with no access has nothing to write, and no callback per block
	 * is needed to watch the clock.
	 */
	if (insns >= win_end) {
		flush();
		win_idx = insns / window;
		win_end = (win_idx + 1) * window;
	}
	table_add(qemu_plugin_hwaddr_phys_addr(hw) >> PAGE_SHIFT);
	nr_counted++;
}

static void vcpu_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &insns, n);
	/*
	 * User mode is told apart by the instruction's virtual address,
	 * because 7.2's API gives no CPL: Linux runs user code in the lower
	 * canonical half (below 0x800000000000 with 4-level paging, below
	 * 1 << 56 with 5-level) and its own in the upper one, so bit 63
	 * clear is user mode under either.  A block is all of one mode (a
	 * change of CPL ends it), so its first address says.  Before the
	 * kernel proper runs, ring 0 runs at low addresses: the firmware,
	 * the boot loader, the kernel's decompressor (10^9 accesses in a
	 * Debian kernel's boot) and the start of head_64.S, identity
	 * mapped; so nothing counts until a block of the upper half is
	 * translated.  Their blocks are not user code's either: a block is
	 * found again by its CPL too.  Ring 0 at low addresses later on
	 * would count (EFI runtime services, the real-mode trampoline that
	 * starts another CPU: neither in the eval's guests, SeaBIOS and one
	 * vCPU).  Checked at translation, so kernel code carries no
	 * callback at all.
	 */
	if (qemu_plugin_tb_vaddr(tb) >> 63) {
		kernel_seen = true;
		return;
	}
	if (!kernel_seen)
		return;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		qemu_plugin_register_vcpu_mem_cb(insn, vcpu_mem,
						 QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW, NULL);
	}
}

static void plugin_exit(qemu_plugin_id_t id, void *p)
{
	char msg[256];

	flush();
	if (fclose(out))
		err("oracle: writing the output failed\n");
	snprintf(msg, sizeof(msg),
		 "oracle: %" PRIu64 " instructions, %" PRIu64 " windows of %"
		 PRIu64 ", %" PRIu64 " user accesses counted in %" PRIu64
		 " lines, %" PRIu64 " to I/O, %" PRIu64 " without hwaddr\n",
		 insns, insns / window + 1, window, nr_counted, nr_lines,
		 nr_io, nr_nohw);
	qemu_plugin_outs(msg);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *path = NULL;
	char msg[512];
	int i;

	if (!info->system_emulation) {
		err("oracle: needs full-system emulation (guest-physical pages)\n");
		return -1;
	}
	for (i = 0; i < argc; i++) {
		char *end;

		if (!strncmp(argv[i], "out=", 4)) {
			path = argv[i] + 4;
		} else if (!strncmp(argv[i], "window=", 7)) {
			errno = 0;
			window = strtoull(argv[i] + 7, &end, 10);
			if (errno || *end || end == argv[i] + 7 || !window) {
				snprintf(msg, sizeof(msg),
					 "oracle: bad window: %s\n", argv[i]);
				err(msg);
				return -1;
			}
		} else {
			snprintf(msg, sizeof(msg),
				 "oracle: unknown argument %s (out=PATH, window=N)\n",
				 argv[i]);
			err(msg);
			return -1;
		}
	}
	if (!path || !*path) {
		err("oracle: out=PATH is required\n");
		return -1;
	}
	out = fopen(path, "w");
	if (!out) {
		snprintf(msg, sizeof(msg), "oracle: cannot open %s: %s\n",
			 path, strerror(errno));
		err(msg);
		return -1;
	}
	/* a window of a busy guest is some 10^4 lines: write them in big chunks */
	setvbuf(out, NULL, _IOFBF, 1 << 20);
	if (table_alloc(1 << 16)) {
		err("oracle: out of memory\n");
		return -1;
	}
	win_idx = 0;
	win_end = window;

	qemu_plugin_register_vcpu_tb_trans_cb(id, vcpu_tb_trans);
	qemu_plugin_register_atexit_cb(id, plugin_exit, NULL);
	return 0;
}
