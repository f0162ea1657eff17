/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User-space shim of <linux/bits.h> for test_decode.c.  Only this header is
 * shadowed; <linux/errno.h>, <linux/limits.h> and <linux/types.h> resolve to
 * the harmless UAPI headers, and test_decode.c defines u8..u64 and includes
 * <limits.h> for INT_MAX before it includes spe-decode.h.
 */
#ifndef _SHIM_LINUX_BITS_H
#define _SHIM_LINUX_BITS_H

#define BIT(n)			(1UL << (n))
#define BIT_ULL(n)		(1ULL << (n))
#define GENMASK(h, l)		((~0UL << (l)) & (~0UL >> (63 - (h))))
#define GENMASK_ULL(h, l)	((~0ULL << (l)) & (~0ULL >> (63 - (h))))

#endif
