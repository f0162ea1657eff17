/* SPDX-License-Identifier: GPL-2.0 */
/* User-space stand-in of <linux/stddef.h> for tests/fuzz (spe-fuzz.c) */
#ifndef _FUZZ_LINUX_STDDEF_H
#define _FUZZ_LINUX_STDDEF_H
#include <stddef.h>
#define sizeof_field(TYPE, MEMBER)	sizeof((((TYPE *)0)->MEMBER))
#define offsetofend(TYPE, MEMBER) \
	(offsetof(TYPE, MEMBER) + sizeof_field(TYPE, MEMBER))
#endif
