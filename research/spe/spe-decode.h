/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Decoder of Arm Statistical Profiling Extension (SPE) sample records for
 * DAMON.
 *
 * ARM SPE writes its samples as records into the perf AUX buffer, never into
 * &struct perf_sample_data, so the perf overflow handlers of DAMON never see
 * them.  This decoder turns the bytes of one record into a &struct
 * damon_spe_record, from which the AUX buffer drain of DAMON builds a &struct
 * damon_access_report.  It is pure byte parsing: no register access, no
 * allocation, no locking, and no assumption about the endianness or the
 * alignment of the CPU that runs it, so it is tested anywhere, e.g., as KUnit
 * tests on QEMU, which doesn't implement SPE, and in user space.
 *
 * The layouts below are those of the Arm Architecture Reference Manual for
 * A-profile architecture (ARM DDI 0487), chapter "The Statistical Profiling
 * Extension", sections "Statistical Profiling Extension sample record
 * specification" (records and packets), "Packet headers" and the packet
 * sections named at each definition ("Address packet", "Operation Type
 * packet", ...).  The chapter is D10 in issue F.c and moves between issues,
 * so it is cited by the names of its sections, which are stable.
 *
 * Records and packets (section "Statistical Profiling Extension sample record
 * specification"):
 *
 * - A record is a sequence of packets.  The order of the packets in a record
 *   is not architected, except that a record ends with an End packet, or with
 *   a Timestamp packet when timestamps are enabled (PMSCR_ELx.TS).
 * - Padding packets may appear between and within records.
 * - A packet is a header of one byte (short header) or two bytes (extended
 *   header), then a payload of 0, 1, 2, 4 or 8 bytes.  Multi-byte payloads
 *   are little-endian.
 * - A record is at most PMSIDR_EL1.MaxSize bytes, which is at most 2KB.
 *
 * Short headers, 8 bits (section "Packet headers"; "sz" is the payload size,
 * 1 << sz bytes, in header bits [5:4]):
 *
 *   0b0000_0000                 Padding, no payload
 *   0b0000_0001                 End, no payload
 *   0b0111_0001                 Timestamp, sz = 0b11 (8 bytes)
 *   0b01_sz_0010                Events, any sz
 *   0b01_sz_0011                Data Source, any sz
 *   0b0110_01_idx[1:0]          Context, sz = 0b10 (4 bytes)
 *   0b0100_10_class[1:0]        Operation Type, sz = 0b00 (1 byte)
 *   0b1011_0_idx[2:0]           Address, sz = 0b11 (8 bytes)
 *   0b1001_1_idx[2:0]           Counter, sz = 0b01 (2 bytes)
 *   0b0010_00_idx[4:3]          first byte of an extended header
 *
 * Extended headers, 16 bits: the first byte is 0b0010_00_idx[4:3], and the
 * second byte is the short header of an Address or a Counter packet, whose
 * idx[2:0] are the low bits of the 5-bit index.  Only Address and Counter
 * packets have an extended form; anything else is malformed.
 *
 * Every value that no row above matches is malformed for this decoder.  The
 * short header masks leave the sz bits of the Address, Counter, Context,
 * Operation Type and Timestamp headers fixed, so those payload sizes hold.
 */

#ifndef _DAMON_SPE_DECODE_H
#define _DAMON_SPE_DECODE_H

#include <linux/bits.h>
#include <linux/errno.h>
#include <linux/limits.h>
#include <linux/types.h>

/* Header values and masks, section "Packet headers" */
#define DAMON_SPE_HDR_PAD		0x00
#define DAMON_SPE_HDR_END		0x01
#define DAMON_SPE_HDR_TIMESTAMP		0x71
#define DAMON_SPE_HDR_MASK_SZ_TYPE	0xcf	/* bits [7:6] and [3:0] */
#define DAMON_SPE_HDR_EVENTS		0x42
#define DAMON_SPE_HDR_DATA_SOURCE	0x43
#define DAMON_SPE_HDR_MASK_IDX2		0xfc	/* bits [7:2] */
#define DAMON_SPE_HDR_CONTEXT		0x64
#define DAMON_SPE_HDR_OP_TYPE		0x48
#define DAMON_SPE_HDR_EXTENDED		0x20
#define DAMON_SPE_HDR_MASK_IDX3		0xf8	/* bits [7:3] */
#define DAMON_SPE_HDR_ADDRESS		0xb0
#define DAMON_SPE_HDR_COUNTER		0x98

/* Payload size of a header, 1 << sz bytes, sz in bits [5:4] */
#define DAMON_SPE_HDR_PAYLOAD_SZ(hdr)	(1U << (((hdr) >> 4) & 0x3))

/*
 * Address packet indexes, section "Address packet".  The index is
 * header bits [2:0], or idx[4:3]:idx[2:0] of an extended header.
 */
#define DAMON_SPE_ADDR_PC		0	/* instruction virtual address */
#define DAMON_SPE_ADDR_BRANCH		1	/* branch target address */
#define DAMON_SPE_ADDR_DATA_VA		2	/* data access virtual address */
#define DAMON_SPE_ADDR_DATA_PA		3	/* data access physical address */
#define DAMON_SPE_ADDR_PREV_BRANCH	4	/* previous branch target */

/*
 * Address packet payloads, section "Address packet":
 *
 * - Instruction virtual address, branch target address (indexes 0, 1, 4):
 *   bits [55:0] the address, [62:61] EL, the Exception level of the
 *   sampled operation, and [63] NS.
 * - Data access virtual address (index 2): bits [55:0] the address, and
 *   [63:56] TAG, the top byte of the virtual address that the operation
 *   used, i.e., the Top Byte Ignore tag.  Address bit 55 selects the
 *   translation regime half (TTBR0 for user, TTBR1 for kernel), as it does
 *   for the tagged addresses of section "Address tagging", so the address is
 *   bits [55:0] sign-extended from bit 55.
 * - Data access physical address (index 3): bits [55:0] the address, [59:56]
 *   PAT, the physical address tag, [62] CH, whether the tag was checked, and
 *   [63] NS, the physical address space (1 for Non-secure).
 */
#define DAMON_SPE_ADDR_MASK		GENMASK_ULL(55, 0)
#define DAMON_SPE_ADDR_TTBR1		BIT_ULL(55)
#define DAMON_SPE_ADDR_TOP_BYTE		GENMASK_ULL(63, 56)
#define DAMON_SPE_ADDR_NS		BIT_ULL(63)
#define DAMON_SPE_ADDR_EL_SHIFT		61
#define DAMON_SPE_ADDR_EL_MASK		0x3

/* Context packet indexes (header bits [1:0]), section "Context packet" */
#define DAMON_SPE_CTX_EL1		0	/* CONTEXTIDR_EL1 */
#define DAMON_SPE_CTX_EL2		1	/* CONTEXTIDR_EL2 */

/*
 * Operation Type packet, section "Operation Type packet".  The class is
 * header bits [1:0]:
 *
 *   0b00  Other operation, payload bit [0] COND
 *   0b01  Load, store or atomic, payload bit [0] ST (1 store, 0 load), and
 *         bits [7:1] the subclass, e.g., 0b000_0000 general-purpose
 *         register, 0b000_0010 SIMD&FP, bit [3] set and bit [1] clear SVE,
 *         and bits [7:5] 0b000 with bit [1] set the atomic, exclusive and
 *         acquire/release subclass with bit [2] AT (atomic), [3] EXCL and
 *         [4] AR.  All subclasses access memory at the data address.
 *   0b10  Branch or exception return, payload bit [0] COND
 *   0b11  Reserved; decoded as an Other operation, not as an error, so
 *         that a future class is ignored rather than counted malformed.
 */
#define DAMON_SPE_OP_CLASS_MASK		0x3
#define DAMON_SPE_OP_CLASS_OTHER	0x0
#define DAMON_SPE_OP_CLASS_LDST		0x1
#define DAMON_SPE_OP_CLASS_BRANCH	0x2
#define DAMON_SPE_OP_LDST_ST		BIT(0)
#define DAMON_SPE_OP_LDST_AT		BIT(2)
#define DAMON_SPE_OP_LDST_ATOMIC_MASK	(GENMASK(7, 5) | BIT(1))
#define DAMON_SPE_OP_LDST_ATOMIC	BIT(1)

/* The largest record, PMSIDR_EL1.MaxSize, section "PMSIDR_EL1" */
#define DAMON_SPE_MAX_RECORD_SZ		2048

/**
 * enum damon_spe_op - What operation an SPE record sampled.
 * @DAMON_SPE_OP_NONE:		No Operation Type packet.
 * @DAMON_SPE_OP_LOAD:		A load (class 0b01, ST clear).
 * @DAMON_SPE_OP_STORE:		A store (class 0b01, ST set).
 * @DAMON_SPE_OP_BRANCH:	A branch or an exception return (class 0b10).
 * @DAMON_SPE_OP_OTHER:		Any other operation (class 0b00 or 0b11).
 */
enum damon_spe_op {
	DAMON_SPE_OP_NONE = 0,
	DAMON_SPE_OP_LOAD,
	DAMON_SPE_OP_STORE,
	DAMON_SPE_OP_BRANCH,
	DAMON_SPE_OP_OTHER,
};

/**
 * enum damon_spe_end - How an SPE record ended.
 * @DAMON_SPE_END_NONE:		No record; only padding was consumed.
 * @DAMON_SPE_END_END:		An End packet ended the record.
 * @DAMON_SPE_END_TIMESTAMP:	A Timestamp packet ended the record.
 */
enum damon_spe_end {
	DAMON_SPE_END_NONE = 0,
	DAMON_SPE_END_END,
	DAMON_SPE_END_TIMESTAMP,
};

/* Bits of &damon_spe_record->flags: which packets the record had */
#define DAMON_SPE_HAS_PC		BIT(0)
#define DAMON_SPE_HAS_VA		BIT(1)
#define DAMON_SPE_HAS_PA		BIT(2)
#define DAMON_SPE_HAS_CTX_EL1		BIT(3)
#define DAMON_SPE_HAS_CTX_EL2		BIT(4)
#define DAMON_SPE_HAS_TIMESTAMP		BIT(5)
#define DAMON_SPE_HAS_EVENTS		BIT(6)
#define DAMON_SPE_HAS_DATA_SOURCE	BIT(7)
#define DAMON_SPE_HAS_OP		BIT(8)

/**
 * struct damon_spe_record - A decoded SPE record.
 * @va:		Data access virtual address, tag stripped and sign-extended.
 * @pa:		Data access physical address, NS, CH and PAT stripped.
 * @pc:		Instruction virtual address, sign-extended.
 * @timestamp:	Timestamp packet payload.
 * @events:	Events packet payload, zero-extended.
 * @data_source: Data Source packet payload (IMPLEMENTATION DEFINED).
 * @ctx_el1:	CONTEXTIDR_EL1 from a Context packet of index 0.
 * @ctx_el2:	CONTEXTIDR_EL2 from a Context packet of index 1.
 * @flags:	DAMON_SPE_HAS_* bits of the packets found.
 * @op:		The operation (&enum damon_spe_op).
 * @op_class:	Raw class of the Operation Type packet, header bits [1:0].
 * @op_payload:	Raw payload of the Operation Type packet.
 * @end:	How the record ended (&enum damon_spe_end).
 * @pc_el:	Exception level of the sampled operation, from the PC packet.
 * @pa_ns:	NS bit of the data access physical address packet.
 * @atomic:	The load or store is atomic (AT of the atomic subclass).
 * @nr_unknown:	Address and Context packets of unknown indexes, skipped
 *		(saturates at 255).
 *
 * A field is valid only if the corresponding DAMON_SPE_HAS_* bit is set in
 * @flags (@op and the @op_* fields with %DAMON_SPE_HAS_OP, @pc_el with
 * %DAMON_SPE_HAS_PC, @pa_ns with %DAMON_SPE_HAS_PA); the others are zero.
 * Counter packets, branch target addresses and padding are skipped.
 */
struct damon_spe_record {
	u64 va;
	u64 pa;
	u64 pc;
	u64 timestamp;
	u64 events;
	u64 data_source;
	u32 ctx_el1;
	u32 ctx_el2;
	u16 flags;
	u8 op;
	u8 op_class;
	u8 op_payload;
	u8 end;
	u8 pc_el;
	bool pa_ns;
	bool atomic;
	u8 nr_unknown;
};

/**
 * enum damon_spe_verdict - What DAMON does with a decoded record.
 * @DAMON_SPE_USE:		Report the access.
 * @DAMON_SPE_PADDING:		Nothing to do, only padding was consumed.
 * @DAMON_SPE_NOT_LDST:		Ignore: not a load or a store (branch,
 *				other operation, or no Operation Type).
 * @DAMON_SPE_NO_ADDR:		Ignore: virtual address wanted, but the load
 *				or store has no data virtual address, or it
 *				is zero.
 * @DAMON_SPE_KERNEL:		Ignore: virtual address wanted, but it is a
 *				kernel (TTBR1) address.
 * @DAMON_SPE_NO_PHYS:		Ignore: physical address wanted, but the load
 *				or store has no data physical address (e.g.,
 *				PMSCR_ELx.PA is clear), or it is not in the
 *				Non-secure physical address space.
 */
enum damon_spe_verdict {
	DAMON_SPE_USE = 0,
	DAMON_SPE_PADDING,
	DAMON_SPE_NOT_LDST,
	DAMON_SPE_NO_ADDR,
	DAMON_SPE_KERNEL,
	DAMON_SPE_NO_PHYS,
};

/* Read an @n bytes little-endian payload at @p, byte by byte */
static inline u64 damon_spe_get_le(const u8 *p, unsigned int n)
{
	u64 v = 0;

	while (n--)
		v = (v << 8) | p[n];
	return v;
}

/* Bits [55:0] of an address payload, sign-extended from bit 55 */
static inline u64 damon_spe_sext55(u64 payload)
{
	u64 addr = payload & DAMON_SPE_ADDR_MASK;

	if (addr & DAMON_SPE_ADDR_TTBR1)
		addr |= DAMON_SPE_ADDR_TOP_BYTE;
	return addr;
}

/* Count a packet of an unknown index, saturating */
static inline void damon_spe_count_unknown(struct damon_spe_record *rec)
{
	if (rec->nr_unknown != (u8)~0)
		rec->nr_unknown++;
}

static inline void damon_spe_decode_addr(unsigned int idx, u64 v,
					 struct damon_spe_record *rec)
{
	switch (idx) {
	case DAMON_SPE_ADDR_PC:
		rec->pc = damon_spe_sext55(v);
		rec->pc_el = (v >> DAMON_SPE_ADDR_EL_SHIFT) &
			DAMON_SPE_ADDR_EL_MASK;
		rec->flags |= DAMON_SPE_HAS_PC;
		break;
	case DAMON_SPE_ADDR_DATA_VA:
		/* strip TAG, bits [63:56] */
		rec->va = damon_spe_sext55(v);
		rec->flags |= DAMON_SPE_HAS_VA;
		break;
	case DAMON_SPE_ADDR_DATA_PA:
		/* strip NS, CH and PAT, bits [63:56] */
		rec->pa = v & DAMON_SPE_ADDR_MASK;
		rec->pa_ns = !!(v & DAMON_SPE_ADDR_NS);
		rec->flags |= DAMON_SPE_HAS_PA;
		break;
	case DAMON_SPE_ADDR_BRANCH:
	case DAMON_SPE_ADDR_PREV_BRANCH:
		break;
	default:
		damon_spe_count_unknown(rec);
	}
}

static inline void damon_spe_decode_op(u8 op_class, u8 payload,
				       struct damon_spe_record *rec)
{
	rec->op_class = op_class;
	rec->op_payload = payload;
	/* the last Operation Type packet of a record wins */
	rec->atomic = false;
	rec->flags |= DAMON_SPE_HAS_OP;
	switch (op_class) {
	case DAMON_SPE_OP_CLASS_LDST:
		if (payload & DAMON_SPE_OP_LDST_ST)
			rec->op = DAMON_SPE_OP_STORE;
		else
			rec->op = DAMON_SPE_OP_LOAD;
		if ((payload & DAMON_SPE_OP_LDST_ATOMIC_MASK) ==
		    DAMON_SPE_OP_LDST_ATOMIC)
			rec->atomic = !!(payload & DAMON_SPE_OP_LDST_AT);
		break;
	case DAMON_SPE_OP_CLASS_BRANCH:
		rec->op = DAMON_SPE_OP_BRANCH;
		break;
	default:
		rec->op = DAMON_SPE_OP_OTHER;
	}
}

/* Packet types, for the header check before the payload is read */
enum damon_spe_pkt {
	DAMON_SPE_PKT_BAD = 0,
	DAMON_SPE_PKT_TIMESTAMP,
	DAMON_SPE_PKT_EVENTS,
	DAMON_SPE_PKT_DATA_SOURCE,
	DAMON_SPE_PKT_CONTEXT,
	DAMON_SPE_PKT_OP_TYPE,
	DAMON_SPE_PKT_ADDRESS,
	DAMON_SPE_PKT_COUNTER,
};

/* The type of the packet of a short header, or of the second header byte */
static inline enum damon_spe_pkt damon_spe_pkt_type(u8 hdr)
{
	if (hdr == DAMON_SPE_HDR_TIMESTAMP)
		return DAMON_SPE_PKT_TIMESTAMP;
	if ((hdr & DAMON_SPE_HDR_MASK_SZ_TYPE) == DAMON_SPE_HDR_EVENTS)
		return DAMON_SPE_PKT_EVENTS;
	if ((hdr & DAMON_SPE_HDR_MASK_SZ_TYPE) == DAMON_SPE_HDR_DATA_SOURCE)
		return DAMON_SPE_PKT_DATA_SOURCE;
	if ((hdr & DAMON_SPE_HDR_MASK_IDX2) == DAMON_SPE_HDR_CONTEXT)
		return DAMON_SPE_PKT_CONTEXT;
	if ((hdr & DAMON_SPE_HDR_MASK_IDX2) == DAMON_SPE_HDR_OP_TYPE)
		return DAMON_SPE_PKT_OP_TYPE;
	if ((hdr & DAMON_SPE_HDR_MASK_IDX3) == DAMON_SPE_HDR_ADDRESS)
		return DAMON_SPE_PKT_ADDRESS;
	if ((hdr & DAMON_SPE_HDR_MASK_IDX3) == DAMON_SPE_HDR_COUNTER)
		return DAMON_SPE_PKT_COUNTER;
	return DAMON_SPE_PKT_BAD;
}

/*
 * Decode the packet at @p, of which @len (at least one) bytes are available,
 * into @rec.  Return the size of the packet, -EINVAL if its header is
 * malformed, or -ENODATA if it is cut.  A malformed header is reported as
 * such even if the buffer ends right after it.
 */
static inline int damon_spe_decode_packet(const u8 *p, size_t len,
					  struct damon_spe_record *rec)
{
	unsigned int hlen = 1, idx = 0, sz;
	enum damon_spe_pkt type;
	u8 hdr = p[0];
	u64 v;

	if (hdr == DAMON_SPE_HDR_PAD)
		return 1;
	if (hdr == DAMON_SPE_HDR_END) {
		rec->end = DAMON_SPE_END_END;
		return 1;
	}
	if ((hdr & DAMON_SPE_HDR_MASK_IDX2) == DAMON_SPE_HDR_EXTENDED) {
		if (len < 2)
			return -ENODATA;
		idx = (hdr & 0x3) << 3;
		hdr = p[1];
		hlen = 2;
	}
	type = damon_spe_pkt_type(hdr);
	if (type == DAMON_SPE_PKT_BAD)
		return -EINVAL;
	/* only Address and Counter packets have extended headers */
	if (hlen > 1 && type != DAMON_SPE_PKT_ADDRESS &&
	    type != DAMON_SPE_PKT_COUNTER)
		return -EINVAL;

	sz = DAMON_SPE_HDR_PAYLOAD_SZ(hdr);
	if (len < hlen + sz)
		return -ENODATA;
	v = damon_spe_get_le(p + hlen, sz);

	switch (type) {
	case DAMON_SPE_PKT_TIMESTAMP:
		rec->timestamp = v;
		rec->flags |= DAMON_SPE_HAS_TIMESTAMP;
		rec->end = DAMON_SPE_END_TIMESTAMP;
		break;
	case DAMON_SPE_PKT_EVENTS:
		rec->events = v;
		rec->flags |= DAMON_SPE_HAS_EVENTS;
		break;
	case DAMON_SPE_PKT_DATA_SOURCE:
		rec->data_source = v;
		rec->flags |= DAMON_SPE_HAS_DATA_SOURCE;
		break;
	case DAMON_SPE_PKT_CONTEXT:
		if ((hdr & 0x3) == DAMON_SPE_CTX_EL1) {
			rec->ctx_el1 = (u32)v;
			rec->flags |= DAMON_SPE_HAS_CTX_EL1;
		} else if ((hdr & 0x3) == DAMON_SPE_CTX_EL2) {
			rec->ctx_el2 = (u32)v;
			rec->flags |= DAMON_SPE_HAS_CTX_EL2;
		} else {
			damon_spe_count_unknown(rec);
		}
		break;
	case DAMON_SPE_PKT_OP_TYPE:
		damon_spe_decode_op(hdr & DAMON_SPE_OP_CLASS_MASK, (u8)v, rec);
		break;
	case DAMON_SPE_PKT_ADDRESS:
		damon_spe_decode_addr(idx | (hdr & 0x7), v, rec);
		break;
	default:
		/* Counter packets: latencies, not used by DAMON */
		break;
	}
	return hlen + sz;
}

/**
 * damon_spe_decode_record() - Decode one SPE record.
 * @buf:	The bytes of the record, e.g., in an SPE AUX buffer.
 * @len:	The number of the bytes that @buf has.
 * @rec:	Where to decode the record into.
 *
 * Skips the padding before the record, then decodes the packets of the record
 * up to and including its End or Timestamp packet.  If @buf has only padding,
 * consumes all of it and sets @rec->end to %DAMON_SPE_END_NONE.  Doesn't read
 * beyond @len bytes of @buf, whatever the bytes are.
 *
 * Return: the number of the bytes consumed, including the leading padding,
 * -ENODATA if @buf ends before the record does (truncated, or empty), or
 * -EINVAL if a packet header is malformed or the record is larger than
 * %DAMON_SPE_MAX_RECORD_SZ.
 */
static inline int damon_spe_decode_record(const u8 *buf, size_t len,
					  struct damon_spe_record *rec)
{
	size_t off = 0, start;
	int ret;

	*rec = (struct damon_spe_record){};
	/* keep the consumed size representable in the return value */
	if (len > INT_MAX)
		len = INT_MAX;
	if (!len)
		return -ENODATA;
	while (off < len && buf[off] == DAMON_SPE_HDR_PAD)
		off++;
	if (off == len)
		return off;

	start = off;
	while (off < len) {
		if (off - start >= DAMON_SPE_MAX_RECORD_SZ)
			return -EINVAL;
		ret = damon_spe_decode_packet(buf + off, len - off, rec);
		if (ret < 0)
			return ret;
		off += ret;
		if (rec->end != DAMON_SPE_END_NONE)
			return off;
	}
	return -ENODATA;
}

/**
 * damon_spe_record_is_write() - Whether a record sampled a memory write.
 * @rec:	A decoded record.
 *
 * Return: true for stores, and for atomic loads, which also write.
 */
static inline bool damon_spe_record_is_write(const struct damon_spe_record *rec)
{
	return rec->op == DAMON_SPE_OP_STORE ||
		(rec->op == DAMON_SPE_OP_LOAD && rec->atomic);
}

/**
 * damon_spe_record_verdict() - Decide what DAMON does with a record.
 * @rec:	A record that damon_spe_decode_record() decoded.
 * @phys:	Whether the physical address (paddr operations) is wanted
 *		rather than the virtual address.
 *
 * Return: &enum damon_spe_verdict for @rec.
 */
static inline enum damon_spe_verdict
damon_spe_record_verdict(const struct damon_spe_record *rec, bool phys)
{
	if (rec->end == DAMON_SPE_END_NONE)
		return DAMON_SPE_PADDING;
	if (rec->op != DAMON_SPE_OP_LOAD && rec->op != DAMON_SPE_OP_STORE)
		return DAMON_SPE_NOT_LDST;
	if (phys) {
		if (!(rec->flags & DAMON_SPE_HAS_PA) || !rec->pa_ns)
			return DAMON_SPE_NO_PHYS;
		return DAMON_SPE_USE;
	}
	if (!(rec->flags & DAMON_SPE_HAS_VA) || !rec->va)
		return DAMON_SPE_NO_ADDR;
	if (rec->va & DAMON_SPE_ADDR_TTBR1)
		return DAMON_SPE_KERNEL;
	return DAMON_SPE_USE;
}

#endif /* _DAMON_SPE_DECODE_H */
