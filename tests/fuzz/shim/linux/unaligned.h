/* SPDX-License-Identifier: GPL-2.0 */
/* User-space stand-in of <linux/unaligned.h> for tests/fuzz (spe-fuzz.c) */
#ifndef _FUZZ_LINUX_UNALIGNED_H
#define _FUZZ_LINUX_UNALIGNED_H
#include <endian.h>
#include <string.h>
#include "types.h"
static inline u16 get_unaligned_le16(const void *p)
{
	u16 v;

	memcpy(&v, p, sizeof(v));
	return le16toh(v);
}
static inline u32 get_unaligned_le32(const void *p)
{
	u32 v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}
static inline u64 get_unaligned_le64(const void *p)
{
	u64 v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}
#endif
