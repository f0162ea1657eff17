/* SPDX-License-Identifier: GPL-2.0 */
/* User-space stand-in of <linux/build_bug.h> for tests/fuzz (spe-fuzz.c) */
#ifndef _FUZZ_LINUX_BUILD_BUG_H
#define _FUZZ_LINUX_BUILD_BUG_H
#define BUILD_BUG_ON(cond)	_Static_assert(!(cond), #cond)
#endif
