/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Benchmarks of the DAMON perf overflow handlers, for perf-bench.h
 *
 * For the damon-perf harness ('make bench') only.  Included by perf-bench.h,
 * in perf/report.c with -DDAMON_PERF_BENCH; provides damon_bench_handlers().
 */
/*
 * Handler cost: the perf overflow handlers, called on one CPU with crafted
 * samples through a function pointer like perf does, against an empty
 * handler called the same way.
 */

#if defined(CONFIG_PERF_EVENTS) && \
	(IS_ENABLED(CONFIG_DAMON_VADDR) || IS_ENABLED(CONFIG_DAMON_PADDR))

#include "../ops-common.h"

/* A perf overflow handler that does nothing, for the cost of the call */
static noinline void damon_bench_empty_overflow(struct perf_event *event,
						struct perf_sample_data *data,
						struct pt_regs *regs)
{
	barrier();
}

/*
 * struct damon_bench_handler - A perf overflow handler to benchmark.
 * @name:		Name of the benchmark.
 * @handler:		The handler.
 * @event:		Fake perf event whose handler context is a DAMON event.
 * @data:		Sample that the handler is called for.
 * @ctx:		Context that the handler reports to, drained between
 *			the batches, or NULL.
 * @round_ps:		Picoseconds per call of each round.
 * @min_batch_ns:	Nanoseconds of the fastest batch.
 */
struct damon_bench_handler {
	const char *name;
	perf_overflow_handler_t handler;
	struct perf_event *event;
	struct perf_sample_data *data;
	struct damon_ctx *ctx;
	u64 round_ps[DAMON_BENCH_ROUNDS];
	u64 min_batch_ns;
};

/*
 * Set up @b to call @handler for a sample of @flags, @addr and @phys_addr, of
 * an event of @sample_type that reports to @ctx.  @b should be zero-filled.
 * damon_bench_handler_fini() cleans up @b even if this fails.
 */
static int damon_bench_handler_init(struct damon_bench_handler *b,
				    const char *name,
				    perf_overflow_handler_t handler,
				    struct damon_ctx *ctx, u64 sample_type,
				    u64 flags, u64 addr, u64 phys_addr)
{
	struct damon_perf_event *ev;
	int cpu;

	b->name = name;
	b->handler = handler;
	b->ctx = ctx;
	b->min_batch_ns = U64_MAX;
	b->event = kzalloc(sizeof(*b->event), GFP_KERNEL);
	b->data = kzalloc(sizeof(*b->data), GFP_KERNEL);
	if (!b->event || !b->data)
		return -ENOMEM;
	b->event->attr.sample_type = sample_type;
	/* like a sample of the software page-faults event, of period one */
	perf_sample_data_init(b->data, 0, 1);
	b->data->sample_flags |= flags;
	b->data->addr = addr;
	b->data->phys_addr = phys_addr;
	if (!ctx)
		return 0;

	ev = damon_new_perf_event();
	if (!ev)
		return -ENOMEM;
	ev->ctx = ctx;
	b->event->overflow_handler_context = ev;
	/*
	 * The per-CPU states that the handlers check, as for an armed event.
	 * The first call on each CPU marks the event RUNNING there.
	 */
	for_each_possible_cpu(cpu) {
		damon_perf_observe_event_created(ev, cpu);
		damon_perf_observe_event_enabled(ev, cpu);
	}
	return 0;
}

static void damon_bench_handler_fini(struct damon_bench_handler *b)
{
	struct damon_perf_event *ev = NULL;
	int cpu;

	if (b->event)
		ev = b->event->overflow_handler_context;
	if (ev) {
		for_each_possible_cpu(cpu)
			damon_perf_observe_event_destroyed(ev, cpu);
		damon_perf_observe_event_free(ev);
		kfree(ev);
	}
	kfree(b->event);
	kfree(b->data);
}

/* Returns the nanoseconds that @nr calls of the handler of @b take */
static u64 damon_bench_handler_batch(struct damon_bench_handler *b,
				     unsigned int nr)
{
	/* an indirect call that the compiler cannot resolve, as perf's */
	perf_overflow_handler_t handler = READ_ONCE(b->handler);
	struct perf_sample_data *data = b->data;
	struct perf_event *event = b->event;
	unsigned int i;
	u64 start, end;

	/* the handlers run on the CPU of the sample, not preemptible */
	preempt_disable();
	start = local_clock();
	for (i = 0; i < nr; i++)
		handler(event, data, NULL);
	end = local_clock();
	preempt_enable();
	return end - start;
}

/*
 * Time round @round of @nr_batches batches of calls of the handler of @b, and
 * drain the reports of each batch outside of the timed part.
 */
static int damon_bench_handler_round(struct damon_bench_handler *b,
				     int round, unsigned long nr_batches)
{
	unsigned long batch;
	u64 ns, total = 0;

	for (batch = 0; batch < nr_batches; batch++) {
		ns = damon_bench_handler_batch(b, DAMON_BENCH_BATCH);
		total += ns;
		b->min_batch_ns = min(b->min_batch_ns, ns);
		if (b->ctx)
			damon_report_check_accesses(b->ctx, true);
		cond_resched();
		if (fatal_signal_pending(current))
			return -EINTR;
	}
	b->round_ps[round] = damon_bench_ps(total,
					    nr_batches * DAMON_BENCH_BATCH);
	return 0;
}

/* Whether the damon_perf_sample tracepoint is enabled */
static int damon_bench_sample_tp_enabled(void)
{
#ifdef CONFIG_DAMON_PERF_OBSERVE
	return trace_damon_perf_sample_enabled();
#else
	return 0;
#endif
}

static void damon_bench_handler_print(struct damon_bench_handler *b,
				      u64 iters, u64 empty_ps)
{
	u64 ps = damon_bench_median(b->round_ps, DAMON_BENCH_ROUNDS);
	unsigned long drops = 0;

	if (b->ctx)
		drops = b->ctx->report_stats.overflows +
			b->ctx->report_stats.nested_drops;
	damon_bench_printf("bench name=%s iters=%llu ns_per_op=%llu ps_per_op=%llu min_ps_per_op=%llu net_ps_per_op=%lld observe=%d tp=%d drops=%lu\n",
			   b->name, iters, div64_u64(ps, 1000), ps,
			   damon_bench_ps(b->min_batch_ns, DAMON_BENCH_BATCH),
			   (s64)(ps - empty_ps),
			   IS_ENABLED(CONFIG_DAMON_PERF_OBSERVE),
			   damon_bench_sample_tp_enabled(), drops);
}

/*
 * Time @calls calls, rounded up to batches, of each overflow handler and of
 * an empty handler, for DAMON_BENCH_ROUNDS interleaved rounds.  The rings are
 * drained between the batches, outside of the timed part, so that no report
 * is dropped.
 */
static int damon_bench_handlers(unsigned long calls)
{
	unsigned long nr_batches = DIV_ROUND_UP(calls, DAMON_BENCH_BATCH);
	struct damon_bench_handler b[3] = {};
	struct damon_ctx *vctx, *pctx;
	int round, i, err;
	u64 empty_ps;

	if (!calls || calls > DAMON_BENCH_MAX_CALLS)
		return -EINVAL;
	vctx = damon_bench_new_ctx(DAMON_OPS_VADDR, 4);
	pctx = damon_bench_new_ctx(DAMON_OPS_PADDR, 4);
	if (!vctx || !pctx) {
		err = -ENOMEM;
		goto out;
	}
	err = damon_bench_handler_init(&b[0], "handler_empty",
				       damon_bench_empty_overflow, NULL, 0, 0,
				       0, 0);
	if (!err)
		/* a sample of the software page-faults event */
		err = damon_bench_handler_init(&b[1], "handler_vaddr",
					       damon_perf_vaddr_overflow, vctx,
					       PERF_SAMPLE_ADDR,
					       PERF_SAMPLE_ADDR,
					       DAMON_BENCH_BASE + 0x1800, 0);
	if (!err)
		/* an IBS-like sample of a physical address */
		err = damon_bench_handler_init(&b[2], "handler_paddr",
					       damon_perf_paddr_overflow, pctx,
					       PERF_SAMPLE_ADDR |
					       PERF_SAMPLE_PHYS_ADDR,
					       PERF_SAMPLE_ADDR |
					       PERF_SAMPLE_PHYS_ADDR,
					       DAMON_BENCH_BASE + 0x1800,
					       DAMON_BENCH_BASE + 0x1800);
	if (err)
		goto out;
	/* a batch should fit in a ring, e.g., after report_ring_order changes */
	if (damon_bench_ring_size(vctx) < DAMON_BENCH_BATCH ||
	    damon_bench_ring_size(pctx) < DAMON_BENCH_BATCH) {
		err = -ENOSPC;
		goto out;
	}

	for (round = 0; round < DAMON_BENCH_ROUNDS; round++) {
		for (i = 0; i < ARRAY_SIZE(b); i++) {
			err = damon_bench_handler_round(&b[i], round,
							nr_batches);
			if (err)
				goto out;
		}
	}

	/* the net costs are above the median of the empty handler */
	empty_ps = damon_bench_median(b[0].round_ps, DAMON_BENCH_ROUNDS);
	for (i = 0; i < ARRAY_SIZE(b); i++)
		damon_bench_handler_print(&b[i], nr_batches *
					  DAMON_BENCH_BATCH *
					  DAMON_BENCH_ROUNDS, empty_ps);
out:
	for (i = 0; i < ARRAY_SIZE(b); i++)
		damon_bench_handler_fini(&b[i]);
	if (vctx)
		damon_bench_destroy_ctx(vctx);
	if (pctx)
		damon_bench_destroy_ctx(pctx);
	return err;
}

#else	/* CONFIG_PERF_EVENTS && (CONFIG_DAMON_VADDR || CONFIG_DAMON_PADDR) */

static int damon_bench_handlers(unsigned long calls)
{
	return -EOPNOTSUPP;
}

#endif	/* CONFIG_PERF_EVENTS && (CONFIG_DAMON_VADDR || CONFIG_DAMON_PADDR) */
