// SPDX-License-Identifier: GPL-2.0
/*
 * spe-fuzz.c: a libFuzzer target of DAMON's Arm SPE decoder and AUX drain,
 * built for user space by scripts/spe-fuzz.sh with ASan and UBSan.
 *
 * The code under test is the kernel's, unmodified: mm/damon/perf/spe.c of
 * the expanded tree (included whole, with tests/fuzz/shim/ for the few
 * <linux/...> headers it uses), and damon_perf_aux_decode() and
 * damon_perf_aux_drain_cpu() of mm/damon/perf/aux.c, which spe-fuzz.sh
 * extracts into AUX_EXTRACT.  What those two call in the rest of the kernel
 * is modelled below: one CPU's AUX buffer as a stream of committed bytes
 * (perf_event_read_kernel_aux() copies from the tail, consume moves it),
 * and the reports and counters as counts.
 *
 * Input: byte 0 the budget of each drain (0: no limit), byte 1 the number of
 * commits (1 + b % 4) and the offset of the stream in the PMU's buffer, the
 * rest the bytes that the PMU writes.  Checked, beyond what the sanitizers
 * catch:
 *  - damon_spe_decode_record() along the buffer, from the next byte after
 *    a malformed record: a size within the buffer (never 0), -ENODATA or
 *    -EINVAL, nothing else;
 *  - each drain: no more records than its budget, a tail that never passes
 *    the head, and the drain's offset (aux_cpu->pos) equal to the bytes
 *    consumed;
 *  - every consumed byte either decoded (the sizes that the decoder
 *    returned) or counted as skipped (malformed data, and the discard up to
 *    the committed head), exactly;
 *  - each record that the drain decodes by a learned layout
 *    (damon_spe_decode()) decodes the same, size and fields, in full
 *    (damon_spe_decode_record());
 *  - after each commit, the drains consume everything up to the head: no
 *    byte is left behind and none is consumed twice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include SPE_C

#define VISIBLE_IF_KUNIT
#define PERF_AUX_FLAG_TRUNCATED		0x01
#define per_cpu_ptr(ptr, cpu)		(ptr)
#define migrate_disable()		do { } while (0)
#define migrate_enable()		do { } while (0)

struct damon_ctx {
	int unused;
};

struct perf_event {
	int cpu;
};

struct damon_perf_aux_batch {
	unsigned int nr;
};

struct damon_perf_aux_cache {
	pid_t tid;
	pid_t tgid;
	struct damon_spe_layouts *layouts;
	struct damon_perf_aux_batch batch;
};

#include AUX_STRUCTS

struct damon_perf_event {
	struct perf_event **events;
	void *aux_buf;
	struct damon_perf_aux_cpu *aux_cpu;
};

#define FUZZ_CHECK(cond)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "spe-fuzz: %s:%d: %s\n",	\
				__FILE__, __LINE__, #cond);		\
			abort();					\
		}							\
	} while (0)

/* One CPU's AUX buffer, and what the drain did with it */
static struct {
	const u8 *data;
	size_t head;		/* committed */
	size_t tail;		/* consumed */
	size_t decoded;		/* bytes of the decoder's sizes */
	size_t skipped;		/* bytes counted as discarded */
	unsigned long records;
	unsigned long malformed;
} F;

static long perf_event_read_kernel_aux(struct perf_event *event, void *buf,
				       size_t len, u64 *flags)
{
	size_t n = F.head - F.tail;

	if (n > len)
		n = len;
	memcpy(buf, F.data + F.tail, n);
	*flags = 0;
	return n;
}

static int perf_event_consume_kernel_aux(struct perf_event *event, size_t len)
{
	FUZZ_CHECK(len <= F.head - F.tail);
	F.tail += len;
	return 0;
}

static bool damon_perf_aux_attached(const struct damon_perf_event *ev)
{
	return true;
}

static void damon_perf_observe_aux_flags(int cpu, u64 flags)
{
}

static u64 *damon_perf_observe_aux_flags_ptr(u64 *flags)
{
	return flags;
}

static void damon_perf_observe_aux_running(struct damon_perf_event *ev,
					   int cpu)
{
}

static void damon_perf_observe_aux_skip(int cpu, size_t bytes)
{
	F.skipped += bytes;
}

static void damon_perf_aux_malformed(struct perf_event *event, size_t skip)
{
	F.malformed++;
	F.skipped += skip;
}

static void damon_perf_aux_report(struct damon_ctx *ctx,
				  struct perf_event *event,
				  const struct damon_spe_record *rec,
				  struct damon_perf_aux_cache *cache)
{
	if (damon_spe_record_verdict(rec, false) != DAMON_SPE_PADDING)
		F.records++;
}

static void damon_perf_aux_flush(struct damon_ctx *ctx,
				 struct damon_perf_aux_batch *batch)
{
}

/* Whether two decodes of one record are the same, field by field */
static bool fuzz_same_record(const struct damon_spe_record *a,
			     const struct damon_spe_record *b)
{
	return a->va == b->va && a->pa == b->pa && a->pc == b->pc &&
		a->timestamp == b->timestamp && a->events == b->events &&
		a->data_source == b->data_source &&
		a->ctx_el1 == b->ctx_el1 && a->ctx_el2 == b->ctx_el2 &&
		a->flags == b->flags && a->op == b->op &&
		a->op_class == b->op_class && a->op_payload == b->op_payload &&
		a->end == b->end && a->pc_el == b->pc_el &&
		a->pa_ns == b->pa_ns && a->atomic == b->atomic &&
		a->nr_unknown == b->nr_unknown;
}

/*
 * The decoder as the drain calls it: the sizes it returns are decoded, and
 * what it decodes by a learned layout is what the full decode gives
 */
static int fuzz_decode_drain(struct damon_spe_layouts *layouts,
			     const u8 *buf, size_t len, unsigned long pos,
			     struct damon_spe_record *rec)
{
	struct damon_spe_record full;
	int ret = damon_spe_decode(layouts, buf, len, pos, rec);

	FUZZ_CHECK(ret == damon_spe_decode_record(buf, len, pos, &full));
	if (ret > 0) {
		FUZZ_CHECK(fuzz_same_record(rec, &full));
		F.decoded += ret;
	}
	return ret;
}

#define damon_spe_decode fuzz_decode_drain
#include AUX_EXTRACT
#undef damon_spe_decode

/* damon_spe_decode_record() alone, along @buf */
static void fuzz_decode(const u8 *buf, size_t len, unsigned long pos)
{
	struct damon_spe_record rec;
	unsigned int nr_bad = 0;
	size_t off = 0;
	int ret;

	while (off < len) {
		ret = damon_spe_decode_record(buf + off, len - off, pos + off,
					      &rec);
		FUZZ_CHECK(ret == -ENODATA || ret == -EINVAL ||
			   (ret > 0 && (size_t)ret <= len - off));
		/* the rest is one record that @buf cuts */
		if (ret == -ENODATA)
			break;
		/*
		 * After a malformed one, from the next byte, a few times: each
		 * try may walk the same long run of padding again
		 */
		if (ret < 0 && ++nr_bad > 64)
			break;
		off += ret > 0 ? (size_t)ret : 1;
	}
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	static struct damon_perf_aux_drain drain;
	struct damon_perf_aux_cache cache = {};
	struct damon_perf_aux_cpu state = {};
	struct perf_event event = { .cpu = 0 };
	struct perf_event *events = &event;
	struct damon_perf_event ev = {
		.events = &events,
		.aux_buf = &drain,
		.aux_cpu = &state,
	};
	struct damon_ctx ctx = {};
	unsigned int budget, nr, commits, i;
	size_t len, tail, decoded, skipped, calls;

	if (size < 2)
		return 0;
	budget = data[0] ? data[0] : UINT_MAX;
	commits = 1 + data[1] % 4;
	data += 2;
	len = size - 2;
	fuzz_decode(data, len, data[-1]);

	/* the drain begins at offset 0 of a buffer that was just attached */
	memset(&F, 0, sizeof(F));
	memset(&drain.layouts, 0, sizeof(drain.layouts));
	F.data = data;
	for (i = 1; i <= commits; i++) {
		F.head = len * i / commits;
		for (calls = 0; F.tail < F.head; calls++) {
			/* each drain that stops short makes progress */
			FUZZ_CHECK(calls <= F.head);
			tail = F.tail;
			decoded = F.decoded;
			skipped = F.skipped;
			nr = damon_perf_aux_drain_cpu(&ctx, &ev, 0, budget,
						      &cache);
			FUZZ_CHECK(nr <= budget);
			FUZZ_CHECK(F.tail <= F.head);
			FUZZ_CHECK(F.tail - tail ==
				   (F.decoded - decoded) + (F.skipped - skipped));
			FUZZ_CHECK(state.pos == F.tail);
			if (nr < budget)
				FUZZ_CHECK(F.tail == F.head);
		}
	}
	FUZZ_CHECK(F.tail == len);
	FUZZ_CHECK(F.decoded + F.skipped == len);
	return 0;
}
