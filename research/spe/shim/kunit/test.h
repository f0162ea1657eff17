/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal user-space shim of <kunit/test.h> for test_decode.c: just what
 * spe-decode-kunit.h uses.  EXPECT failures mark the case failed and go on;
 * ASSERT failures and kunit_skip() end the case, like KUnit, via longjmp().
 */
#ifndef _SHIM_KUNIT_TEST_H
#define _SHIM_KUNIT_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GFP_KERNEL	0
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define KUNIT_SHIM_MAX_ALLOCS	16

struct kunit {
	const char *name;
	int nr_expect;
	int failed;
	int skipped;
	char skip_reason[256];
	void *allocs[KUNIT_SHIM_MAX_ALLOCS];
	int nr_allocs;
	jmp_buf abort;
};

struct kunit_case {
	void (*run_case)(struct kunit *test);
	const char *name;
};

struct kunit_suite {
	const char *name;
	struct kunit_case *test_cases;
};

#define KUNIT_CASE(fn)	{ .run_case = fn, .name = #fn }

#define kunit_test_suite(suite)	\
	static struct kunit_suite *kunit_shim_suite = &(suite)

static inline void *kunit_kzalloc(struct kunit *test, size_t sz, int gfp)
{
	void *p;

	(void)gfp;
	if (test->nr_allocs == KUNIT_SHIM_MAX_ALLOCS)
		return NULL;
	p = calloc(1, sz);
	test->allocs[test->nr_allocs++] = p;
	return p;
}

static inline void kunit_shim_fail(struct kunit *test, const char *file,
				   int line, const char *cond,
				   unsigned long long l, unsigned long long r)
{
	test->failed++;
	printf("    # %s: EXPECTATION FAILED at %s:%d: %s (0x%llx vs 0x%llx)\n",
	       test->name, file, line, cond, l, r);
}

#define KUNIT_SHIM_CHECK(test, cond, l, r, abort_on_fail)		\
	do {								\
		(test)->nr_expect++;					\
		if (!(cond)) {						\
			kunit_shim_fail(test, __FILE__, __LINE__, #cond,\
					(unsigned long long)(l),	\
					(unsigned long long)(r));	\
			if (abort_on_fail)				\
				longjmp((test)->abort, 1);		\
		}							\
	} while (0)

#define KUNIT_SHIM_EQ(test, left, right, abort_on_fail)		\
	do {								\
		__typeof__(left) __l = (left);				\
		__typeof__(right) __r = (right);			\
		(test)->nr_expect++;					\
		if ((unsigned long long)__l != (unsigned long long)__r) {\
			kunit_shim_fail(test, __FILE__, __LINE__,	\
					#left " == " #right,		\
					(unsigned long long)__l,	\
					(unsigned long long)__r);	\
			if (abort_on_fail)				\
				longjmp((test)->abort, 1);		\
		}							\
	} while (0)

#define KUNIT_EXPECT_EQ(test, l, r)	KUNIT_SHIM_EQ(test, l, r, 0)
#define KUNIT_ASSERT_EQ(test, l, r)	KUNIT_SHIM_EQ(test, l, r, 1)
#define KUNIT_EXPECT_TRUE(test, c)	KUNIT_SHIM_CHECK(test, c, !!(c), 1, 0)
#define KUNIT_EXPECT_FALSE(test, c)	KUNIT_SHIM_CHECK(test, !(c), !!(c), 0, 0)
#define KUNIT_ASSERT_TRUE(test, c)	KUNIT_SHIM_CHECK(test, c, !!(c), 1, 1)
#define KUNIT_ASSERT_NOT_ERR_OR_NULL(test, p)				\
	KUNIT_SHIM_CHECK(test, (p) != NULL, 0, 0, 1)

#define kunit_skip(test, ...)						\
	do {								\
		(test)->skipped = 1;					\
		snprintf((test)->skip_reason,				\
			 sizeof((test)->skip_reason), __VA_ARGS__);	\
		longjmp((test)->abort, 1);				\
	} while (0)

#endif
