/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests of the DAMON decoder of ARM SPE records
 *
 * The records are crafted byte arrays, so the tests run on any architecture,
 * including arm64 guests of QEMU TCG, which doesn't implement SPE.  Each
 * array is annotated with its packets; see spe-decode.h for the layouts.
 */

#ifdef CONFIG_DAMON_KUNIT_TEST

#ifndef _DAMON_SPE_DECODE_KUNIT_H
#define _DAMON_SPE_DECODE_KUNIT_H

#include <kunit/test.h>

#ifdef CONFIG_ARM64
#include <asm/cpufeature.h>
#endif

#include "spe-decode.h"

/* A load with every packet type, ended by a Timestamp packet */
static const u8 damon_spe_test_load_rec[] = {
	/* PC 0x401000, EL0, NS */
	0xb0, 0x00, 0x10, 0x40, 0x00, 0x00, 0x00, 0x00, 0x80,
	/* Operation Type: load/store class, general-purpose load */
	0x49, 0x00,
	/* Events, 2 bytes: retired, L1D access */
	0x52, 0x06, 0x00,
	/* Counter 0 (total latency): 42 */
	0x98, 0x2a, 0x00,
	/* data VA 0xfffff7a01238 */
	0xb2, 0x38, 0x12, 0xa0, 0xf7, 0xff, 0xff, 0x00, 0x00,
	/* data PA 0x8a5bc238, NS */
	0xb3, 0x38, 0xc2, 0x5b, 0x8a, 0x00, 0x00, 0x00, 0x80,
	/* Context, CONTEXTIDR_EL1: 1234 */
	0x64, 0xd2, 0x04, 0x00, 0x00,
	/* Data Source, 2 bytes: 0xa */
	0x53, 0x0a, 0x00,
	/* Timestamp 0x123456789a, ends the record */
	0x71, 0x9a, 0x78, 0x56, 0x34, 0x12, 0x00, 0x00, 0x00,
};

/* A store, ended by an End packet */
static const u8 damon_spe_test_store_rec[] = {
	/* Operation Type: load/store class, general-purpose store */
	0x49, 0x01,
	/* data VA 0xaaaa00002000 */
	0xb2, 0x00, 0x20, 0x00, 0x00, 0xaa, 0xaa, 0x00, 0x00,
	/* data PA 0x100002000, NS */
	0xb3, 0x00, 0x20, 0x00, 0x00, 0x01, 0x00, 0x00, 0x80,
	/* Context, CONTEXTIDR_EL2: 4321 */
	0x65, 0xe1, 0x10, 0x00, 0x00,
	/* End */
	0x01,
};

/* A load with a data VA but no data PA (PMSCR_ELx.PA clear) */
static const u8 damon_spe_test_va_only_rec[] = {
	/* Operation Type: load */
	0x49, 0x00,
	/* data VA 0x7fff00000040 */
	0xb2, 0x40, 0x00, 0x00, 0x00, 0xff, 0x7f, 0x00, 0x00,
	/* End */
	0x01,
};

/* A conditional branch: PC, branch target, no data address */
static const u8 damon_spe_test_branch_rec[] = {
	/* PC 0x402000, EL0, NS */
	0xb0, 0x00, 0x20, 0x40, 0x00, 0x00, 0x00, 0x00, 0x80,
	/* Operation Type: branch class, conditional */
	0x4a, 0x01,
	/* branch target 0x401000 */
	0xb1, 0x00, 0x10, 0x40, 0x00, 0x00, 0x00, 0x00, 0x80,
	/* Events, 1 byte: retired, not taken */
	0x42, 0x42,
	/* End */
	0x01,
};

static void damon_spe_test_load(struct kunit *test)
{
	const u8 *buf = damon_spe_test_load_rec;
	int len = ARRAY_SIZE(damon_spe_test_load_rec);
	struct damon_spe_record rec;

	KUNIT_EXPECT_EQ(test, damon_spe_decode_record(buf, len, &rec), len);
	KUNIT_EXPECT_EQ(test, rec.op, (u8)DAMON_SPE_OP_LOAD);
	KUNIT_EXPECT_EQ(test, rec.end, (u8)DAMON_SPE_END_TIMESTAMP);
	KUNIT_EXPECT_EQ(test, rec.va, 0xfffff7a01238ULL);
	KUNIT_EXPECT_EQ(test, rec.pa, 0x8a5bc238ULL);
	KUNIT_EXPECT_TRUE(test, rec.pa_ns);
	KUNIT_EXPECT_EQ(test, rec.pc, 0x401000ULL);
	KUNIT_EXPECT_EQ(test, rec.pc_el, 0);
	KUNIT_EXPECT_EQ(test, rec.ctx_el1, 1234U);
	KUNIT_EXPECT_EQ(test, rec.events, 0x6ULL);
	KUNIT_EXPECT_EQ(test, rec.data_source, 0xaULL);
	KUNIT_EXPECT_EQ(test, rec.timestamp, 0x123456789aULL);
	KUNIT_EXPECT_EQ(test, rec.flags,
			(u16)(DAMON_SPE_HAS_PC | DAMON_SPE_HAS_VA |
			      DAMON_SPE_HAS_PA | DAMON_SPE_HAS_CTX_EL1 |
			      DAMON_SPE_HAS_TIMESTAMP | DAMON_SPE_HAS_EVENTS |
			      DAMON_SPE_HAS_DATA_SOURCE | DAMON_SPE_HAS_OP));
	KUNIT_EXPECT_EQ(test, rec.nr_unknown, 0);
	KUNIT_EXPECT_FALSE(test, damon_spe_record_is_write(&rec));
	KUNIT_EXPECT_EQ(test, damon_spe_record_verdict(&rec, false),
			DAMON_SPE_USE);
	KUNIT_EXPECT_EQ(test, damon_spe_record_verdict(&rec, true),
			DAMON_SPE_USE);
}

static void damon_spe_test_store(struct kunit *test)
{
	const u8 *buf = damon_spe_test_store_rec;
	int len = ARRAY_SIZE(damon_spe_test_store_rec);
	struct damon_spe_record rec;

	KUNIT_EXPECT_EQ(test, damon_spe_decode_record(buf, len, &rec), len);
	KUNIT_EXPECT_EQ(test, rec.op, (u8)DAMON_SPE_OP_STORE);
	KUNIT_EXPECT_EQ(test, rec.end, (u8)DAMON_SPE_END_END);
	KUNIT_EXPECT_EQ(test, rec.va, 0xaaaa00002000ULL);
	KUNIT_EXPECT_EQ(test, rec.pa, 0x100002000ULL);
	KUNIT_EXPECT_EQ(test, rec.ctx_el2, 4321U);
	KUNIT_EXPECT_TRUE(test, rec.flags & DAMON_SPE_HAS_CTX_EL2);
	KUNIT_EXPECT_FALSE(test, rec.flags & DAMON_SPE_HAS_CTX_EL1);
	KUNIT_EXPECT_FALSE(test, rec.flags & DAMON_SPE_HAS_TIMESTAMP);
	KUNIT_EXPECT_TRUE(test, damon_spe_record_is_write(&rec));
	KUNIT_EXPECT_EQ(test, damon_spe_record_verdict(&rec, false),
			DAMON_SPE_USE);
	KUNIT_EXPECT_EQ(test, damon_spe_record_verdict(&rec, true),
			DAMON_SPE_USE);
}

static void damon_spe_test_atomic(struct kunit *test)
{
	/* atomic subclass, AT set, ST clear, e.g., LDADD; data VA 0x1000 */
	static const u8 buf[] = {
		0x49, 0x06,
		0xb2, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x01,
	};
	struct damon_spe_record rec;

	KUNIT_EXPECT_EQ(test, damon_spe_decode_record(buf, sizeof(buf), &rec),
			(int)sizeof(buf));
	KUNIT_EXPECT_EQ(test, rec.op, (u8)DAMON_SPE_OP_LOAD);
	KUNIT_EXPECT_TRUE(test, rec.atomic);
	KUNIT_EXPECT_TRUE(test, damon_spe_record_is_write(&rec));
}

static void damon_spe_test_va_only(struct kunit *test)
{
	const u8 *buf = damon_spe_test_va_only_rec;
	int len = ARRAY_SIZE(damon_spe_test_va_only_rec);
	struct damon_spe_record rec;

	KUNIT_EXPECT_EQ(test, damon_spe_decode_record(buf, len, &rec), len);
	KUNIT_EXPECT_EQ(test, rec.op, (u8)DAMON_SPE_OP_LOAD);
	KUNIT_EXPECT_EQ(test, rec.va, 0x7fff00000040ULL);
	KUNIT_EXPECT_FALSE(test, rec.flags & DAMON_SPE_HAS_PA);
	KUNIT_EXPECT_EQ(test, rec.pa, 0ULL);
	KUNIT_EXPECT_EQ(test, damon_spe_record_verdict(&rec, false),
			DAMON_SPE_USE);
	/* paddr operations need the PA: ignored as "no physical address" */
	KUNIT_EXPECT_EQ(test, damon_spe_record_verdict(&rec, true),
			DAMON_SPE_NO_PHYS);
}

static void damon_spe_test_not_ldst(struct kunit *test)
{
	const u8 *buf = damon_spe_test_branch_rec;
	int len = ARRAY_SIZE(damon_spe_test_branch_rec);
	/* other class, then a record of only an End packet */
	static const u8 other[] = { 0x48, 0x00, 0x01 };
	static const u8 bare[] = { 0x01 };
	/* a load/store without any data address */
	static const u8 noaddr[] = { 0x49, 0x00, 0x01 };
	struct damon_spe_record rec;

	KUNIT_EXPECT_EQ(test, damon_spe_decode_record(buf, len, &rec), len);
	KUNIT_EXPECT_EQ(test, rec.op, (u8)DAMON_SPE_OP_BRANCH);
	KUNIT_EXPECT_FALSE(test, rec.flags & DAMON_SPE_HAS_VA);
	KUNIT_EXPECT_EQ(test, rec.events, 0x42ULL);
	KUNIT_EXPECT_EQ(test, damon_spe_record_verdict(&rec, false),
			DAMON_SPE_NOT_LDST);
	KUNIT_EXPECT_EQ(test, damon_spe_record_verdict(&rec, true),
			DAMON_SPE_NOT_LDST);

	KUNIT_EXPECT_EQ(test, damon_spe_decode_record(other, 3, &rec), 3);
	KUNIT_EXPECT_EQ(test, rec.op, (u8)DAMON_SPE_OP_OTHER);
	KUNIT_EXPECT_EQ(test, damon_spe_record_verdict(&rec, false),
			DAMON_SPE_NOT_LDST);

	KUNIT_EXPECT_EQ(test, damon_spe_decode_record(bare, 1, &rec), 1);
	KUNIT_EXPECT_EQ(test, rec.op, (u8)DAMON_SPE_OP_NONE);
	KUNIT_EXPECT_EQ(test, damon_spe_record_verdict(&rec, false),
			DAMON_SPE_NOT_LDST);

	KUNIT_EXPECT_EQ(test, damon_spe_decode_record(noaddr, 3, &rec), 3);
	KUNIT_EXPECT_EQ(test, damon_spe_record_verdict(&rec, false),
			DAMON_SPE_NO_ADDR);
	KUNIT_EXPECT_EQ(test, damon_spe_record_verdict(&rec, true),
			DAMON_SPE_NO_PHYS);
}

static void damon_spe_test_padding(struct kunit *test)
{
	const size_t store_len = ARRAY_SIZE(damon_spe_test_store_rec);
	const size_t va_len = ARRAY_SIZE(damon_spe_test_va_only_rec);
	/* 2 pads, store record, 3 pads, VA-only record, 5 pads */
	size_t len = 2 + store_len + 3 + va_len + 5;
	struct damon_spe_record rec;
	size_t off = 0;
	u8 *buf;

	buf = kunit_kzalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);
	memcpy(buf + 2, damon_spe_test_store_rec, store_len);
	memcpy(buf + 2 + store_len + 3, damon_spe_test_va_only_rec, va_len);

	KUNIT_EXPECT_EQ(test, damon_spe_decode_record(buf, len, &rec),
			(int)(2 + store_len));
	KUNIT_EXPECT_EQ(test, rec.op, (u8)DAMON_SPE_OP_STORE);
	off += 2 + store_len;

	KUNIT_EXPECT_EQ(test, damon_spe_decode_record(buf + off, len - off,
						      &rec),
			(int)(3 + va_len));
	KUNIT_EXPECT_EQ(test, rec.va, 0x7fff00000040ULL);
	off += 3 + va_len;

	/* only the trailing padding is left: consumed, but no record */
	KUNIT_EXPECT_EQ(test, damon_spe_decode_record(buf + off, len - off,
						      &rec), 5);
	KUNIT_EXPECT_EQ(test, rec.end, (u8)DAMON_SPE_END_NONE);
	KUNIT_EXPECT_EQ(test, damon_spe_record_verdict(&rec, false),
			DAMON_SPE_PADDING);

	/* a padding packet within a record is skipped, too */
	buf[0] = 0x49;
	buf[1] = 0x01;
	buf[2] = 0x00;
	buf[3] = 0x01;
	KUNIT_EXPECT_EQ(test, damon_spe_decode_record(buf, 4, &rec), 4);
	KUNIT_EXPECT_EQ(test, rec.op, (u8)DAMON_SPE_OP_STORE);
}

static void damon_spe_test_truncated(struct kunit *test)
{
	const u8 *buf = damon_spe_test_load_rec;
	int len = ARRAY_SIZE(damon_spe_test_load_rec);
	/* the first byte of an extended header, alone */
	static const u8 ext[] = { 0x20 };
	struct damon_spe_record rec;
	int i;

	/* every proper prefix of a record is truncated, never malformed */
	for (i = 0; i < len; i++)
		KUNIT_EXPECT_EQ(test, damon_spe_decode_record(buf, i, &rec),
				-ENODATA);
	KUNIT_EXPECT_EQ(test, damon_spe_decode_record(ext, 1, &rec), -ENODATA);
	/* the full record decodes */
	KUNIT_EXPECT_EQ(test, damon_spe_decode_record(buf, len, &rec), len);
}

static void damon_spe_test_malformed(struct kunit *test)
{
	/* 0x02 matches no header */
	static const u8 bad_hdr[] = { 0x49, 0x00, 0x02, 0x01 };
	/* an extended header whose second byte is an Operation Type header */
	static const u8 bad_ext[] = { 0x20, 0x49, 0x00, 0x01 };
	/* 0xff matches no header either */
	static const u8 bad_ff[] = { 0xff };
	int i, len = DAMON_SPE_MAX_RECORD_SZ + 16;
	struct damon_spe_record rec;
	u8 *buf;

	KUNIT_EXPECT_EQ(test, damon_spe_decode_record(bad_hdr, 4, &rec),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, damon_spe_decode_record(bad_ext, 4, &rec),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, damon_spe_decode_record(bad_ff, 1, &rec),
			-EINVAL);

	/* a record that doesn't end within the largest record size */
	buf = kunit_kzalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);
	for (i = 0; i < len; i += 2) {
		buf[i] = 0x42;	/* Events, 1 byte */
		buf[i + 1] = 0x02;
	}
	KUNIT_EXPECT_EQ(test, damon_spe_decode_record(buf, len, &rec), -EINVAL);
	/* a malformed header is malformed even at the end of the buffer */
	KUNIT_EXPECT_EQ(test, damon_spe_decode_record(bad_hdr + 2, 1, &rec),
			-EINVAL);
}

static void damon_spe_test_extended(struct kunit *test)
{
	static const u8 buf[] = {
		/* extended Address, index 0b11_111 (31): unknown, skipped */
		0x23, 0xb7, 0xef, 0xbe, 0xad, 0xde, 0x00, 0x00, 0x00, 0x00,
		/* extended Counter, index 0b01_010 (10): skipped */
		0x21, 0x9a, 0x10, 0x00,
		/* short Address, index 5: unknown, skipped */
		0xb5, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		/* extended Address, index 0b00_010: the data VA 0x5000 */
		0x20, 0xb2, 0x00, 0x50, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		/* extended Address, index 0b01_010 (10), not the data VA */
		0x21, 0xb2, 0x00, 0x00, 0xad, 0xde, 0x00, 0x00, 0x00, 0x00,
		/* extended Address, index 0b01_000 (8), not the previous branch */
		0x21, 0xb0, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		/* Operation Type: store */
		0x49, 0x01,
		/* End */
		0x01,
	};
	struct damon_spe_record rec;

	KUNIT_EXPECT_EQ(test, damon_spe_decode_record(buf, sizeof(buf), &rec),
			(int)sizeof(buf));
	KUNIT_EXPECT_EQ(test, rec.nr_unknown, 4);
	KUNIT_EXPECT_TRUE(test, rec.flags & DAMON_SPE_HAS_VA);
	KUNIT_EXPECT_EQ(test, rec.va, 0x5000ULL);
	KUNIT_EXPECT_EQ(test, rec.op, (u8)DAMON_SPE_OP_STORE);
	KUNIT_EXPECT_EQ(test, damon_spe_record_verdict(&rec, false),
			DAMON_SPE_USE);
}

static void damon_spe_test_strip(struct kunit *test)
{
	/* user VA 0x7fffdeadb000 with the TBI tag 0xa5 */
	static const u8 user_va[] = {
		0x49, 0x00,
		0xb2, 0x00, 0xb0, 0xad, 0xde, 0xff, 0x7f, 0x00, 0xa5,
		0x01,
	};
	/* kernel VA 0xffff800012345000 with the tag 0x3c */
	static const u8 kernel_va[] = {
		0x49, 0x00,
		0xb2, 0x00, 0x50, 0x34, 0x12, 0x00, 0x80, 0xff, 0x3c,
		0x01,
	};
	/* PA 0x87654000 with NS, CH and PAT 0x5; PC at EL1, NS */
	static const u8 pa_ns[] = {
		0x49, 0x01,
		0xb3, 0x00, 0x40, 0x65, 0x87, 0x00, 0x00, 0x00, 0xc5,
		0xb0, 0x00, 0x00, 0x00, 0x08, 0x00, 0x80, 0xff, 0xa0,
		0x01,
	};
	/* PA 0x87654000 of the Secure physical address space (NS clear) */
	static const u8 pa_secure[] = {
		0x49, 0x01,
		0xb3, 0x00, 0x40, 0x65, 0x87, 0x00, 0x00, 0x00, 0x00,
		0x01,
	};
	struct damon_spe_record rec;
	int ret;

	ret = damon_spe_decode_record(user_va, sizeof(user_va), &rec);
	KUNIT_EXPECT_EQ(test, ret, (int)sizeof(user_va));
	KUNIT_EXPECT_EQ(test, rec.va, 0x7fffdeadb000ULL);
	KUNIT_EXPECT_EQ(test, damon_spe_record_verdict(&rec, false),
			DAMON_SPE_USE);

	ret = damon_spe_decode_record(kernel_va, sizeof(kernel_va), &rec);
	KUNIT_EXPECT_EQ(test, ret, (int)sizeof(kernel_va));
	KUNIT_EXPECT_EQ(test, rec.va, 0xffff800012345000ULL);
	KUNIT_EXPECT_EQ(test, damon_spe_record_verdict(&rec, false),
			DAMON_SPE_KERNEL);

	ret = damon_spe_decode_record(pa_ns, sizeof(pa_ns), &rec);
	KUNIT_EXPECT_EQ(test, ret, (int)sizeof(pa_ns));
	KUNIT_EXPECT_EQ(test, rec.pa, 0x87654000ULL);
	KUNIT_EXPECT_TRUE(test, rec.pa_ns);
	KUNIT_EXPECT_EQ(test, rec.pc, 0xffff800008000000ULL);
	KUNIT_EXPECT_EQ(test, rec.pc_el, 1);
	KUNIT_EXPECT_EQ(test, damon_spe_record_verdict(&rec, true),
			DAMON_SPE_USE);

	ret = damon_spe_decode_record(pa_secure, sizeof(pa_secure), &rec);
	KUNIT_EXPECT_EQ(test, ret, (int)sizeof(pa_secure));
	KUNIT_EXPECT_EQ(test, rec.pa, 0x87654000ULL);
	KUNIT_EXPECT_FALSE(test, rec.pa_ns);
	KUNIT_EXPECT_EQ(test, damon_spe_record_verdict(&rec, true),
			DAMON_SPE_NO_PHYS);
}

/*
 * Every header byte, followed by zeroes and an End packet, either decodes or
 * is malformed.  Exactly 35 values decode: Padding, End, Timestamp, 4 Events,
 * 4 Data Source, 4 Context, 4 Operation Type, 8 Address and 8 Counter.  The
 * 4 extended header values are malformed here, as a zero second byte is not
 * an Address or a Counter header.
 */
static void damon_spe_test_header_table(struct kunit *test)
{
	struct damon_spe_record rec;
	u8 buf[18] = {};
	int ret, nr_valid = 0;
	unsigned int hdr;

	buf[17] = 0x01;
	for (hdr = 0; hdr < 256; hdr++) {
		buf[0] = hdr;
		ret = damon_spe_decode_record(buf, sizeof(buf), &rec);
		KUNIT_EXPECT_TRUE(test, ret == -EINVAL ||
				  (ret > 0 && ret <= (int)sizeof(buf)));
		if (ret > 0)
			nr_valid++;
	}
	KUNIT_EXPECT_EQ(test, nr_valid, 35);
}

/* Decoding any bytes stays within the buffer and makes progress */
static void damon_spe_test_robust(struct kunit *test)
{
	struct damon_spe_record rec;
	u32 x = 0x2545f491;
	size_t i, off, len;
	unsigned int round;
	u8 *buf;
	int ret;

	buf = kunit_kzalloc(test, 256, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);
	for (round = 0; round < 256; round++) {
		len = 1 + round;
		for (i = 0; i < len; i++) {
			/* xorshift32 */
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			buf[i] = x;
		}
		for (off = 0; off < len; ) {
			ret = damon_spe_decode_record(buf + off, len - off,
						      &rec);
			if (ret == -ENODATA)
				break;
			KUNIT_ASSERT_TRUE(test, ret == -EINVAL ||
					  (ret > 0 && (size_t)ret <= len - off));
			/* resynchronize byte by byte after a malformed one */
			off += ret > 0 ? ret : 1;
		}
	}
}

/*
 * The live part needs an SPE PMU, and a way for DAMON to drain its AUX buffer,
 * which needs a perf core API that Linux 6.12 doesn't have.
 */
static void damon_spe_test_live(struct kunit *test)
{
#ifdef CONFIG_ARM64
	u64 dfr0 = read_sanitised_ftr_reg(SYS_ID_AA64DFR0_EL1);
	int shift = ID_AA64DFR0_EL1_PMSVer_SHIFT;

	if (!cpuid_feature_extract_unsigned_field(dfr0, shift))
		kunit_skip(test,
			   "no FEAT_SPE: ID_AA64DFR0_EL1.PMSVer is 0 (QEMU TCG doesn't implement SPE)");
	kunit_skip(test,
		   "FEAT_SPE present, but no perf core API lets a kernel counter own an AUX buffer (perf_event_attach_kernel_aux())");
#else
	kunit_skip(test, "ARM SPE exists only on arm64");
#endif
}

static struct kunit_case damon_spe_decode_test_cases[] = {
	KUNIT_CASE(damon_spe_test_load),
	KUNIT_CASE(damon_spe_test_store),
	KUNIT_CASE(damon_spe_test_atomic),
	KUNIT_CASE(damon_spe_test_va_only),
	KUNIT_CASE(damon_spe_test_not_ldst),
	KUNIT_CASE(damon_spe_test_padding),
	KUNIT_CASE(damon_spe_test_truncated),
	KUNIT_CASE(damon_spe_test_malformed),
	KUNIT_CASE(damon_spe_test_extended),
	KUNIT_CASE(damon_spe_test_strip),
	KUNIT_CASE(damon_spe_test_header_table),
	KUNIT_CASE(damon_spe_test_robust),
	KUNIT_CASE(damon_spe_test_live),
	{},
};

static struct kunit_suite damon_spe_decode_test_suite = {
	.name = "damon-spe-decode",
	.test_cases = damon_spe_decode_test_cases,
};

kunit_test_suite(damon_spe_decode_test_suite);

#endif /* _DAMON_SPE_DECODE_KUNIT_H */

#endif /* CONFIG_DAMON_KUNIT_TEST */
