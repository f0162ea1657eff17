/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User-space stand-in of <linux/errno.h> for tests/fuzz (spe-fuzz.c): the
 * UAPI header of that name, which glibc's <errno.h> includes too
 */
#include_next <linux/errno.h>
