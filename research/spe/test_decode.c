// SPDX-License-Identifier: GPL-2.0
/*
 * User-space harness of the DAMON SPE record decoder.
 *
 * Includes spe-decode.h and spe-decode-kunit.h as they are, with the shims
 * of shim/ (u8..u64 here, BIT macros in shim/linux/bits.h, a minimal KUnit in
 * shim/kunit/test.h), and runs the very KUnit cases, printing KTAP-like
 * lines.  Then it runs a model of the drain of DESIGN.md (b) over one AUX
 * chunk, to show the reason that each record is counted with.
 *
 *   gcc -Wall -Wextra -Werror -I shim -o test_decode test_decode.c
 *   ./test_decode
 *
 * Exit status: 0 if no case failed, 1 otherwise.
 */
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef unsigned long long u64;

#define CONFIG_DAMON_KUNIT_TEST 1

#include "spe-decode.h"
#include "spe-decode-kunit.h"

/*
 * Model of the drain loop of DESIGN.md (b): the reasons of the
 * damon_perf_sample tracepoint, including the two new ones.
 */
enum {
	R_VALID, R_NULL, R_ADDR_ZERO, R_KERNEL, R_INV_PHYS, R_MALFORMED,
	R_NOT_LDST, NR_R,
};

static const char * const r_names[NR_R] = {
	"valid", "null", "addr_zero", "kernel", "inv_phys", "malformed",
	"not_ldst",
};

static void drain_model(const u8 *buf, size_t len, bool phys,
			unsigned long *cnt, size_t *lost)
{
	static const int verdict_to_reason[] = {
		[DAMON_SPE_USE] = R_VALID,
		[DAMON_SPE_NOT_LDST] = R_NOT_LDST,
		[DAMON_SPE_NO_ADDR] = R_ADDR_ZERO,
		[DAMON_SPE_KERNEL] = R_KERNEL,
		[DAMON_SPE_NO_PHYS] = R_INV_PHYS,
	};
	struct damon_spe_record rec;
	enum damon_spe_verdict v;
	size_t off = 0;
	int ret;

	*lost = 0;
	while (off < len) {
		ret = damon_spe_decode_record(buf + off, len - off, &rec);
		if (ret < 0) {
			/* one malformed (or truncated), the rest is lost */
			cnt[R_MALFORMED]++;
			*lost = len - off;
			return;
		}
		off += ret;
		v = damon_spe_record_verdict(&rec, phys);
		if (v == DAMON_SPE_PADDING)
			continue;
		cnt[verdict_to_reason[v]]++;
	}
}

static int run_drain_model(void)
{
	static const u8 tail_bad[] = { 0x49, 0x00, 0x02, 0x01 };
	static const unsigned long want_v[NR_R] = {
		[R_VALID] = 3, [R_NOT_LDST] = 1, [R_MALFORMED] = 1,
	};
	static const unsigned long want_p[NR_R] = {
		[R_VALID] = 2, [R_INV_PHYS] = 1, [R_NOT_LDST] = 1,
		[R_MALFORMED] = 1,
	};
	unsigned long cv[NR_R] = {}, cp[NR_R] = {};
	u8 chunk[512] = {};
	size_t off = 4, lost_v, lost_p;
	int i, fails = 0;

#define APPEND(a) do { memcpy(chunk + off, a, sizeof(a)); off += sizeof(a) + 2; } while (0)
	APPEND(damon_spe_test_load_rec);
	APPEND(damon_spe_test_store_rec);
	APPEND(damon_spe_test_branch_rec);
	APPEND(damon_spe_test_va_only_rec);
	APPEND(tail_bad);
#undef APPEND

	drain_model(chunk, off, false, cv, &lost_v);
	drain_model(chunk, off, true, cp, &lost_p);
	printf("# drain model over a %zu-byte chunk (load, store, branch, VA-only, malformed, with padding):\n",
	       off);
	printf("#   %-10s %6s %6s\n", "reason", "vaddr", "paddr");
	for (i = 0; i < NR_R; i++) {
		printf("#   %d %-8s %6lu %6lu\n", i, r_names[i], cv[i], cp[i]);
		if (cv[i] != want_v[i] || cp[i] != want_p[i])
			fails++;
	}
	printf("#   bytes lost after the malformed record: %zu (vaddr), %zu (paddr)\n",
	       lost_v, lost_p);
	return fails;
}

/* Run one case; setjmp() is here so that main()'s locals are not clobbered */
static void run_case(struct kunit_case *c, struct kunit *test)
{
	int a;

	if (!setjmp(test->abort))
		c->run_case(test);
	for (a = 0; a < test->nr_allocs; a++)
		free(test->allocs[a]);
}

int main(void)
{
	struct kunit_suite *suite = kunit_shim_suite;
	int nr_cases = 0, nr_fail = 0, nr_skip = 0, nr_expect = 0, i;
	struct kunit_case *c;

	for (c = suite->test_cases; c->run_case; c++)
		nr_cases++;
	printf("KTAP version 1\n1..1\n");
	printf("    # Subtest: %s\n    1..%d\n", suite->name, nr_cases);
	for (i = 0, c = suite->test_cases; c->run_case; c++, i++) {
		struct kunit test = { .name = c->name };

		run_case(c, &test);
		nr_expect += test.nr_expect;
		if (test.failed) {
			nr_fail++;
			printf("    not ok %d %s\n", i + 1, c->name);
		} else if (test.skipped) {
			nr_skip++;
			printf("    ok %d %s # SKIP %s\n", i + 1, c->name,
			       test.skip_reason);
		} else {
			printf("    ok %d %s (%d expectations)\n", i + 1,
			       c->name, test.nr_expect);
		}
	}
	printf("# %s: pass:%d fail:%d skip:%d total:%d (%d expectations)\n",
	       suite->name, nr_cases - nr_fail - nr_skip, nr_fail, nr_skip,
	       nr_cases, nr_expect);
	printf("%s 1 %s\n", nr_fail ? "not ok" : "ok", suite->name);

	if (run_drain_model()) {
		printf("not ok drain model: unexpected counts\n");
		nr_fail++;
	} else {
		printf("ok drain model\n");
	}
	return nr_fail ? 1 : 0;
}
