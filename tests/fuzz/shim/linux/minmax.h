/* SPDX-License-Identifier: GPL-2.0 */
/* User-space stand-in of <linux/minmax.h> for tests/fuzz (spe-fuzz.c) */
#ifndef _FUZZ_LINUX_MINMAX_H
#define _FUZZ_LINUX_MINMAX_H
#define max(a, b)	((a) > (b) ? (a) : (b))
#define clamp_t(type, val, lo, hi)					\
	((type)(val) < (type)(lo) ? (type)(lo) :			\
	 (type)(val) > (type)(hi) ? (type)(hi) : (type)(val))
#endif
