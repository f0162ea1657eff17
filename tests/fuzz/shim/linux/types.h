/* SPDX-License-Identifier: GPL-2.0 */
/* User-space stand-in of <linux/types.h> for tests/fuzz (spe-fuzz.c) */
#ifndef _FUZZ_LINUX_TYPES_H
#define _FUZZ_LINUX_TYPES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;
typedef int pid_t;
/* what the kernel's compiler_attributes.h, included everywhere, defines */
#define noinline	__attribute__((__noinline__))
#endif
