/* SPDX-License-Identifier: GPL-2.0 */
/* User-space stand-in of <linux/string.h> for tests/fuzz (spe-fuzz.c) */
#ifndef _FUZZ_LINUX_STRING_H
#define _FUZZ_LINUX_STRING_H
#include <string.h>
#endif
