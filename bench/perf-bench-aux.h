/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The AUX drain per record: Arm SPE records copied, decoded and reported as
 * the kdamond does with the AUX buffer of a perf event.  Part of
 * bench/perf-bench.h (the damon-perf harness only).
 *
 *	aux R [K]	K records over R regions, in a vaddr context (the
 *			writer's records) and in a paddr context, in drains of
 *			half a report ring like the kdamond's batches.  Each
 *			record is a load or a store of a random address of the
 *			regions, 64 bytes as an SPE implementation writes it:
 *			padding, PC, Events, issue and total latency, Operation
 *			Type, VA, translation latency, PA (NS), Data Source,
 *			Context (the writer's tid), Timestamp.
 *			Timed apart:
 *			  aux_decode: the copy out of the buffer in reads of
 *			    the drain's size (perf_event_read_kernel_aux()
 *			    copies the same bytes, with no more than a
 *			    memcpy() per read) and damon_perf_aux_decode():
 *			    decode, verdict, tgid, report into the ring;
 *			  aux_total: that and the ring drain that follows,
 *			    damon_report_check_accesses();
 *			  aux_parse: damon_spe_decode_record() alone over the
 *			    same records, the decoder's share of aux_decode.
 *
 * damon_perf_aux_decode() is visible outside aux.c with CONFIG_KUNIT, which
 * the harness's guests have; without it, "aux" fails with -EOPNOTSUPP.
 */

/* Records of an "aux" benchmark by default: 20 drains */
#define DAMON_BENCH_AUX_RECORDS		(20 * 2048)

#if defined(CONFIG_PERF_EVENTS) && IS_ENABLED(CONFIG_KUNIT) && \
	(IS_ENABLED(CONFIG_DAMON_VADDR) || IS_ENABLED(CONFIG_DAMON_PADDR))

#include "../perf/spe.h"

#define DAMON_BENCH_AUX_REC_SZ		64
/* What the drain copies out of an AUX buffer at once (aux.c) */
#define DAMON_BENCH_AUX_READ_SZ		(8 * DAMON_SPE_MAX_RECORD_SZ)

static u8 *damon_bench_spe_put(u8 *p, u8 hdr, u64 payload, unsigned int sz)
{
	*p++ = hdr;
	while (sz--) {
		*p++ = payload;
		payload >>= 8;
	}
	return p;
}

/* Write at @rec a record of a load or a store of @va and @pa by @tid */
static void damon_bench_spe_record(u8 *rec, bool store, u64 va, u64 pa,
				   u32 tid, u64 ts)
{
	u8 *p = rec, *end = rec + DAMON_BENCH_AUX_REC_SZ;

	/* the padding first: a record ends the 64 bytes */
	memset(p, 0, 6);
	p += 6;
	p = damon_bench_spe_put(p, 0xb0, 0xffff800012345678ULL |
				(2ULL << DAMON_SPE_ADDR_EL_SHIFT), 8);
	p = damon_bench_spe_put(p, 0x52, BIT(1) | BIT(2) | BIT(4), 2);
	p = damon_bench_spe_put(p, 0x99, 3, 2);		/* issue latency */
	p = damon_bench_spe_put(p, 0x98, 12, 2);	/* total latency */
	p = damon_bench_spe_put(p, 0x49, store, 1);	/* load/store */
	p = damon_bench_spe_put(p, 0xb2, va, 8);
	p = damon_bench_spe_put(p, 0x9a, 1, 2);		/* translation */
	p = damon_bench_spe_put(p, 0xb3, pa | DAMON_SPE_ADDR_NS, 8);
	p = damon_bench_spe_put(p, 0x53, 0, 2);		/* data source */
	p = damon_bench_spe_put(p, 0x64, tid, 4);	/* CONTEXTIDR_EL1 */
	p = damon_bench_spe_put(p, 0x71, ts, 8);	/* ends the record */
	WARN_ON_ONCE(p != end);
}

/* Fill @buf with @nr records of random addresses of @nr_regions regions */
static void damon_bench_aux_fill(u8 *buf, unsigned long nr,
				 struct rnd_state *rnd,
				 unsigned long nr_regions, u64 *ts)
{
	unsigned long len = nr_regions * DAMON_BENCH_REGION_SZ, i;
	u32 tid = task_pid_nr(current);
	u64 addr;

	for (i = 0; i < nr; i++) {
		addr = DAMON_BENCH_BASE + prandom_u32_state(rnd) % len;
		damon_bench_spe_record(buf + i * DAMON_BENCH_AUX_REC_SZ,
				       i & 1, addr, addr, tid, (*ts)++);
	}
}

/*
 * Copy @len bytes of @aux in reads of the drain's size into @rbuf and decode
 * them for @ctx, as damon_perf_aux_drain_cpu() does on this CPU.  Returns the
 * number of records.
 */
static unsigned int damon_bench_aux_decode(struct damon_ctx *ctx,
					   struct perf_event *event,
					   const u8 *aux, size_t len, u8 *rbuf)
{
	struct damon_perf_aux_cache cache = {};
	unsigned int nr = 0;
	size_t off = 0, n, used;
	bool resync = false;

	while (off < len) {
		n = min_t(size_t, len - off, DAMON_BENCH_AUX_READ_SZ);
		memcpy(rbuf, aux + off, n);
		used = damon_perf_aux_decode(ctx, event, rbuf, n, off,
					     n == DAMON_BENCH_AUX_READ_SZ,
					     UINT_MAX, &nr, &cache, &resync);
		if (!used)
			break;
		off += used;
	}
	return nr;
}

/* Decode the @len bytes of records at @aux, and nothing else */
static unsigned long damon_bench_aux_parse(const u8 *aux, size_t len)
{
	struct damon_spe_record rec;
	unsigned long nr = 0;
	size_t off = 0;
	int ret;

	while (off < len) {
		ret = damon_spe_decode_record(aux + off, len - off, off, &rec);
		if (ret <= 0)
			break;
		off += ret;
		nr += rec.end != DAMON_SPE_END_NONE;
	}
	return nr;
}

/* The aux benchmark of @nr_records records in a context of operations @id */
static int damon_bench_aux_ops(enum damon_ops_id id, unsigned long nr_regions,
			       unsigned long nr_records)
{
	u64 decode_ns = 0, total_ns = 0, parse_ns = 0, t0, t1, t2, ts = 0;
	unsigned long parsed = 0;
	u64 best_decode_ps = U64_MAX;
	unsigned long per_drain, done, nr, decoded = 0, matched;
	/* the DAMON event of the records: probe 0, as the drain reads it */
	struct damon_perf_event ev = { .probe = 0 };
	struct perf_event *event;
	struct damon_ctx *ctx;
	struct rnd_state rnd;
	u8 *aux, *rbuf;
	int err = 0;

	event = kzalloc(sizeof(*event), GFP_KERNEL);
	rbuf = kvmalloc(DAMON_BENCH_AUX_READ_SZ, GFP_KERNEL);
	ctx = damon_bench_new_ctx(id, nr_regions);
	if (!event || !rbuf || !ctx) {
		err = -ENOMEM;
		goto out_free;
	}
	/* the kdamond's batches: half a ring between two ring drains */
	per_drain = min(nr_records, damon_bench_ring_size(ctx) / 2);
	aux = kvmalloc_array(per_drain, DAMON_BENCH_AUX_REC_SZ, GFP_KERNEL);
	if (!aux) {
		err = -ENOMEM;
		goto out_free;
	}
	event->attr.sample_period = 1;
	event->overflow_handler_context = &ev;
	prandom_seed_state(&rnd, nr_regions);
	matched = ctx->report_stats.matched;

	for (done = 0; done < nr_records; done += nr) {
		nr = min(per_drain, nr_records - done);
		damon_bench_aux_fill(aux, nr, &rnd, nr_regions, &ts);

		t0 = ktime_get_ns();
		parsed += damon_bench_aux_parse(aux, nr * DAMON_BENCH_AUX_REC_SZ);
		parse_ns += ktime_get_ns() - t0;

		migrate_disable();
		event->cpu = smp_processor_id();
		t0 = ktime_get_ns();
		decoded += damon_bench_aux_decode(ctx, event, aux,
						  nr * DAMON_BENCH_AUX_REC_SZ,
						  rbuf);
		t1 = ktime_get_ns();
		migrate_enable();
		damon_report_check_accesses(ctx, true);
		t2 = ktime_get_ns();
		decode_ns += t1 - t0;
		total_ns += t2 - t0;
		best_decode_ps = min(best_decode_ps,
				     damon_bench_ps(t1 - t0, nr));

		cond_resched();
		if (fatal_signal_pending(current)) {
			err = -EINTR;
			goto out_aux;
		}
	}
	matched = ctx->report_stats.matched - matched;

	damon_bench_printf("bench name=aux_decode ops=%s regions=%lu iters=%lu ns_per_op=%llu ps_per_op=%llu best_ps_per_op=%llu records_per_sec=%llu records_per_drain=%lu record_sz=%d decoded=%lu matched=%lu\n",
			   id == DAMON_OPS_PADDR ? "paddr" : "vaddr",
			   nr_regions, nr_records,
			   div64_u64(decode_ns, nr_records),
			   damon_bench_ps(decode_ns, nr_records), best_decode_ps,
			   decode_ns ? div64_u64((u64)nr_records * NSEC_PER_SEC,
						 decode_ns) : 0,
			   per_drain, DAMON_BENCH_AUX_REC_SZ, decoded, matched);
	damon_bench_printf("bench name=aux_parse ops=%s regions=%lu iters=%lu ns_per_op=%llu ps_per_op=%llu parsed=%lu\n",
			   id == DAMON_OPS_PADDR ? "paddr" : "vaddr",
			   nr_regions, nr_records,
			   div64_u64(parse_ns, nr_records),
			   damon_bench_ps(parse_ns, nr_records), parsed);
	damon_bench_printf("bench name=aux_total ops=%s regions=%lu iters=%lu ns_per_op=%llu ps_per_op=%llu\n",
			   id == DAMON_OPS_PADDR ? "paddr" : "vaddr",
			   nr_regions, nr_records,
			   div64_u64(total_ns, nr_records),
			   damon_bench_ps(total_ns, nr_records));
out_aux:
	kvfree(aux);
out_free:
	if (ctx)
		damon_bench_destroy_ctx(ctx);
	kvfree(rbuf);
	kfree(event);
	return err;
}

static int damon_bench_aux(unsigned long nr_regions, unsigned long nr_records)
{
	int err = 0;

	if (!nr_regions || nr_regions > DAMON_BENCH_MAX_REGIONS ||
	    !nr_records || nr_records > DAMON_BENCH_MAX_REPORTS)
		return -EINVAL;
	if (IS_ENABLED(CONFIG_DAMON_VADDR))
		err = damon_bench_aux_ops(DAMON_OPS_VADDR, nr_regions,
					  nr_records);
	if (!err && IS_ENABLED(CONFIG_DAMON_PADDR))
		err = damon_bench_aux_ops(DAMON_OPS_PADDR, nr_regions,
					  nr_records);
	return err;
}

#else

static int damon_bench_aux(unsigned long nr_regions, unsigned long nr_records)
{
	return -EOPNOTSUPP;
}

#endif
