/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User-space stand-in of <linux/limits.h> for tests/fuzz (spe-fuzz.c): the
 * UAPI header of that name, which glibc's <limits.h> includes too, and
 * INT_MAX
 */
#include_next <linux/limits.h>
#include <limits.h>
