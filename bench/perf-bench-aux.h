/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The AUX drain per record: Arm SPE records copied, decoded and reported as
 * the kdamond does with the AUX buffer of a perf event.  Part of
 * bench/perf-bench.h (the damon-perf harness only).
 *
 *	aux R [K [L]]	K records over R regions, in a vaddr context (the
 *			writer's records) and in a paddr context, in drains of
 *			half a report ring like the kdamond's batches.  Each
 *			record is a load or a store of a random address of the
 *			regions, by the writer's tid, in layout L:
 *			  0 (bench, the default): 64 bytes, padding, PC,
 *			    Events, issue and total latency, Operation Type,
 *			    VA, translation latency, PA (NS), Data Source,
 *			    Context, Timestamp;
 *			  1 (spe): the packets of perf's raw dumps of Arm SPE
 *			    data, Operation Type, VA, PA, issue latency, Events,
 *			    PC, total latency, and a Context packet before the
 *			    Timestamp, padded to 64 bytes;
 *			  2 (testpmu): the AUX test PMU's records, PC,
 *			    Operation Type, VA, PA, Context, Events, End (38
 *			    bytes, back to back);
 *			  3 (mix): spe, and bench for 15% of the records at
 *			    random, so that the decoder is not timed on one
 *			    layout only.
 *			Timed apart:
 *			  aux_decode: the copy out of the buffer in reads of
 *			    the drain's size (perf_event_read_kernel_aux()
 *			    copies the same bytes, with no more than a
 *			    memcpy() per read) and damon_perf_aux_decode():
 *			    decode, verdict, tgid, report into the ring;
 *			  aux_total: that and the ring drain that follows,
 *			    damon_report_check_accesses();
 *			  aux_parse: damon_spe_decode_record() alone over the
 *			    same records (ps_per_op), and damon_spe_decode()
 *			    with the layouts that the drain learns
 *			    (fast_ps_per_op): the decoder's share of
 *			    aux_decode; and the copy alone (copy_ps_per_op).
 *
 * damon_perf_aux_decode() is visible outside aux.c with CONFIG_KUNIT, which
 * the harness's guests have; without it, "aux" fails with -EOPNOTSUPP.
 */

/* Records of an "aux" benchmark by default: 20 drains */
#define DAMON_BENCH_AUX_RECORDS		(20 * 2048)

#if defined(CONFIG_PERF_EVENTS) && IS_ENABLED(CONFIG_KUNIT) && \
	(IS_ENABLED(CONFIG_DAMON_VADDR) || IS_ENABLED(CONFIG_DAMON_PADDR))

#include "../perf/spe.h"

/* The largest record of the layouts, and their names */
#define DAMON_BENCH_AUX_REC_SZ		64
static const char * const damon_bench_aux_layouts[] = {
	"bench", "spe", "testpmu", "mix",
};
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

/*
 * Write at @p a record of layout @layout (not mix) of a load or a store of
 * @va and @pa by @tid, and return where it ends
 */
static u8 *damon_bench_spe_record(u8 *p, unsigned int layout, bool store,
				  u64 va, u64 pa, u32 tid, u64 ts)
{
	u8 *start = p;

	switch (layout) {
	case 1:
		p = damon_bench_spe_put(p, 0x49, store, 1);	/* load/store */
		p = damon_bench_spe_put(p, 0xb2, va, 8);
		p = damon_bench_spe_put(p, 0xb3, pa | DAMON_SPE_ADDR_NS, 8);
		p = damon_bench_spe_put(p, 0x99, 7, 2);		/* issue */
		p = damon_bench_spe_put(p, 0x52, 0x16, 2);	/* events */
		p = damon_bench_spe_put(p, 0xb0, 0x400000 | DAMON_SPE_ADDR_NS,
					8);
		p = damon_bench_spe_put(p, 0x98, 31, 2);	/* total */
		p = damon_bench_spe_put(p, 0x64, tid, 4);
		p = damon_bench_spe_put(p, 0x71, ts, 8);
		/* padded to the record size */
		memset(p, 0, start + DAMON_BENCH_AUX_REC_SZ - p);
		return start + DAMON_BENCH_AUX_REC_SZ;
	case 2:
		p = damon_bench_spe_put(p, 0xb0, 0x401000 | DAMON_SPE_ADDR_NS,
					8);
		p = damon_bench_spe_put(p, 0x49, store, 1);
		p = damon_bench_spe_put(p, 0xb2, va, 8);
		p = damon_bench_spe_put(p, 0xb3, pa | DAMON_SPE_ADDR_NS, 8);
		p = damon_bench_spe_put(p, 0x64, tid, 4);
		p = damon_bench_spe_put(p, 0x52, 0x16, 2);
		*p++ = DAMON_SPE_HDR_END;
		return p;
	default:
		/* the padding first: a record ends the 64 bytes */
		memset(p, 0, 6);
		p += 6;
		p = damon_bench_spe_put(p, 0xb0, 0xffff800012345678ULL |
					(2ULL << DAMON_SPE_ADDR_EL_SHIFT), 8);
		p = damon_bench_spe_put(p, 0x52, BIT(1) | BIT(2) | BIT(4), 2);
		p = damon_bench_spe_put(p, 0x99, 3, 2);		/* issue */
		p = damon_bench_spe_put(p, 0x98, 12, 2);	/* total */
		p = damon_bench_spe_put(p, 0x49, store, 1);
		p = damon_bench_spe_put(p, 0xb2, va, 8);
		p = damon_bench_spe_put(p, 0x9a, 1, 2);		/* translation */
		p = damon_bench_spe_put(p, 0xb3, pa | DAMON_SPE_ADDR_NS, 8);
		p = damon_bench_spe_put(p, 0x53, 0, 2);		/* data source */
		p = damon_bench_spe_put(p, 0x64, tid, 4);	/* CONTEXTIDR_EL1 */
		p = damon_bench_spe_put(p, 0x71, ts, 8);	/* ends it */
		WARN_ON_ONCE(p != start + DAMON_BENCH_AUX_REC_SZ);
		return p;
	}
}

/*
 * Fill @buf with @nr records of layout @layout, of random addresses of
 * @nr_regions regions, and return their size
 */
static size_t damon_bench_aux_fill(u8 *buf, unsigned long nr,
				   unsigned int layout, struct rnd_state *rnd,
				   unsigned long nr_regions, u64 *ts)
{
	unsigned long len = nr_regions * DAMON_BENCH_REGION_SZ, i;
	u32 tid = task_pid_nr(current);
	unsigned int l = layout;
	u8 *p = buf;
	u64 addr;

	for (i = 0; i < nr; i++) {
		addr = DAMON_BENCH_BASE + prandom_u32_state(rnd) % len;
		if (layout == 3)
			l = prandom_u32_state(rnd) % 100 < 15 ? 0 : 1;
		p = damon_bench_spe_record(p, l, i & 1, addr, addr, tid,
					   (*ts)++);
	}
	return p - buf;
}

/*
 * Copy @len bytes of @aux in reads of the drain's size into @rbuf and decode
 * them for @ctx, as damon_perf_aux_drain_cpu() does on this CPU.  Returns the
 * number of records.
 */
static unsigned int damon_bench_aux_decode(struct damon_ctx *ctx,
					   struct perf_event *event,
					   const u8 *aux, size_t len, u8 *rbuf,
					   struct damon_spe_layouts *layouts)
{
	struct damon_perf_aux_cache cache = { .layouts = layouts };
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

/* Copy @len bytes of @aux in reads of the drain's size, and nothing else */
static void damon_bench_aux_copy(const u8 *aux, size_t len, u8 *rbuf)
{
	size_t off, n;

	for (off = 0; off < len; off += n) {
		n = min_t(size_t, len - off, DAMON_BENCH_AUX_READ_SZ);
		memcpy(rbuf, aux + off, n);
		/* as the drain's decode reads the copy after it */
		barrier();
	}
}

/*
 * Decode the @len bytes of records at @aux, and nothing else: in full, or
 * with @layouts if it is not NULL
 */
static unsigned long damon_bench_aux_parse(const u8 *aux, size_t len,
					   struct damon_spe_layouts *layouts)
{
	struct damon_spe_record rec;
	unsigned long nr = 0;
	size_t off = 0;
	int ret;

	while (off < len) {
		ret = damon_spe_decode(layouts, aux + off, len - off, off,
				       &rec);
		if (ret <= 0)
			break;
		off += ret;
		nr += rec.end != DAMON_SPE_END_NONE;
	}
	return nr;
}

/* The aux benchmark of @nr_records records in a context of operations @id */
static int damon_bench_aux_ops(enum damon_ops_id id, unsigned long nr_regions,
			       unsigned long nr_records, unsigned int layout)
{
	u64 decode_ns = 0, total_ns = 0, parse_ns = 0, fast_ns = 0, copy_ns = 0;
	u64 t0, t1, t2;
	unsigned long parsed = 0, fast = 0, bytes = 0;
	struct damon_spe_layouts *layouts, *parse_layouts;
	u64 ts = 0;
	size_t len;
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
	/* the drain's, kept across drains as the event keeps them */
	layouts = kzalloc(sizeof(*layouts), GFP_KERNEL);
	parse_layouts = kzalloc(sizeof(*parse_layouts), GFP_KERNEL);
	ctx = damon_bench_new_ctx(id, nr_regions);
	if (!event || !rbuf || !layouts || !parse_layouts || !ctx) {
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
		len = damon_bench_aux_fill(aux, nr, layout, &rnd, nr_regions,
					   &ts);
		bytes += len;

		t0 = ktime_get_ns();
		parsed += damon_bench_aux_parse(aux, len, NULL);
		parse_ns += ktime_get_ns() - t0;
		t0 = ktime_get_ns();
		fast += damon_bench_aux_parse(aux, len, parse_layouts);
		fast_ns += ktime_get_ns() - t0;
		t0 = ktime_get_ns();
		damon_bench_aux_copy(aux, len, rbuf);
		copy_ns += ktime_get_ns() - t0;

		migrate_disable();
		event->cpu = smp_processor_id();
		t0 = ktime_get_ns();
		decoded += damon_bench_aux_decode(ctx, event, aux, len, rbuf,
						  layouts);
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

	damon_bench_printf("bench name=aux_decode layout=%s ops=%s regions=%lu iters=%lu ns_per_op=%llu ps_per_op=%llu best_ps_per_op=%llu records_per_sec=%llu records_per_drain=%lu record_sz=%lu decoded=%lu matched=%lu\n",
			   damon_bench_aux_layouts[layout],
			   id == DAMON_OPS_PADDR ? "paddr" : "vaddr",
			   nr_regions, nr_records,
			   div64_u64(decode_ns, nr_records),
			   damon_bench_ps(decode_ns, nr_records), best_decode_ps,
			   decode_ns ? div64_u64((u64)nr_records * NSEC_PER_SEC,
						 decode_ns) : 0,
			   per_drain, bytes / nr_records, decoded, matched);
	damon_bench_printf("bench name=aux_parse layout=%s ops=%s regions=%lu iters=%lu ns_per_op=%llu ps_per_op=%llu parsed=%lu fast_ps_per_op=%llu fast=%lu copy_ps_per_op=%llu\n",
			   damon_bench_aux_layouts[layout],
			   id == DAMON_OPS_PADDR ? "paddr" : "vaddr",
			   nr_regions, nr_records,
			   div64_u64(parse_ns, nr_records),
			   damon_bench_ps(parse_ns, nr_records), parsed,
			   damon_bench_ps(fast_ns, nr_records), fast,
			   damon_bench_ps(copy_ns, nr_records));
	damon_bench_printf("bench name=aux_total layout=%s ops=%s regions=%lu iters=%lu ns_per_op=%llu ps_per_op=%llu\n",
			   damon_bench_aux_layouts[layout],
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
	kfree(parse_layouts);
	kfree(layouts);
	kfree(event);
	return err;
}

static int damon_bench_aux(unsigned long nr_regions, unsigned long nr_records,
			   unsigned long layout)
{
	int err = 0;

	if (!nr_regions || nr_regions > DAMON_BENCH_MAX_REGIONS ||
	    !nr_records || nr_records > DAMON_BENCH_MAX_REPORTS ||
	    layout >= ARRAY_SIZE(damon_bench_aux_layouts))
		return -EINVAL;
	if (IS_ENABLED(CONFIG_DAMON_VADDR))
		err = damon_bench_aux_ops(DAMON_OPS_VADDR, nr_regions,
					  nr_records, layout);
	if (!err && IS_ENABLED(CONFIG_DAMON_PADDR))
		err = damon_bench_aux_ops(DAMON_OPS_PADDR, nr_regions,
					  nr_records, layout);
	return err;
}

#else

static int damon_bench_aux(unsigned long nr_regions, unsigned long nr_records,
			   unsigned long layout)
{
	return -EOPNOTSUPP;
}

#endif
