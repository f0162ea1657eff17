/* SPDX-License-Identifier: GPL-2.0 */
/* User-space stand-in of <linux/bitops.h> for tests/fuzz (spe-fuzz.c) */
#ifndef _FUZZ_LINUX_BITOPS_H
#define _FUZZ_LINUX_BITOPS_H
#include "types.h"
static inline unsigned int __ffs64(u64 word)
{
	return __builtin_ctzll(word);
}
#endif
