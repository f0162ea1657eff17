/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cost of the report rings against the number of CPUs.  Part of
 * bench/perf-bench.h (the damon-perf harness only).
 *
 *	rings [N]	the memory of a context's report rings and the drain of
 *			idle rings, on this boot's possible CPUs:
 *			  rings: the bytes that a context with perf events
 *			    allocates for its rings (the ring structs and
 *			    their entries) at the default report_ring_order;
 *			  rings_auto: what the default order makes of 1 to 256
 *			    possible CPUs (damon_report_ring_auto_order()),
 *			    for the machines the guest is not;
 *			  drain_idle: N (default 1000) drains of the context's
 *			    rings while every ring is empty, as the kdamond's
 *			    every sampling interval on an idle machine: the
 *			    median of five rounds per drain, and per possible
 *			    CPU (instructions under 'make bench' deterministic
 *			    mode).
 */

#define DAMON_BENCH_IDLE_DRAINS		1000

static unsigned long damon_bench_rings_bytes(struct damon_ctx *ctx)
{
	struct damon_report_ring *ring;
	unsigned long bytes = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		ring = per_cpu_ptr(damon_report_rings(ctx), cpu);
		bytes += sizeof(*ring) +
			(ring->mask + 1) * sizeof(struct damon_access_report);
	}
	return bytes;
}

static int damon_bench_rings(unsigned long nr_drains)
{
	static const unsigned int nr_cpus[] = {1, 2, 8, 32, 64, 128, 256};
	struct damon_report_snapshot *snap;
	u64 drain[DAMON_BENCH_ROUNDS], t0, m;
	unsigned int possible = num_possible_cpus(), order;
	struct damon_ctx *ctx;
	unsigned long i;
	int r, err = 0;

	if (!nr_drains || nr_drains > DAMON_BENCH_MAX_CALLS)
		return -EINVAL;
	ctx = damon_bench_new_ctx(DAMON_OPS_PADDR, 1);
	if (!ctx)
		return -ENOMEM;
	damon_bench_printf("bench name=rings possible_cpus=%u order=%u entries=%lu entry_sz=%zu ring_sz=%zu bytes=%lu\n",
			   possible, damon_report_ring_order_now(),
			   damon_bench_ring_size(ctx),
			   sizeof(struct damon_access_report),
			   sizeof(struct damon_report_ring),
			   damon_bench_rings_bytes(ctx));
	for (r = 0; r < ARRAY_SIZE(nr_cpus); r++) {
		order = damon_report_ring_auto_order(nr_cpus[r]);
		damon_bench_printf("bench name=rings_auto cpus=%u order=%u bytes=%lu\n",
				   nr_cpus[r], order,
				   (unsigned long)nr_cpus[r] *
				   (sizeof(struct damon_report_ring) +
				    BIT(order) *
				    sizeof(struct damon_access_report)));
	}

	snap = damon_report_snapshot_build(ctx);
	for (r = 0; r < DAMON_BENCH_ROUNDS; r++) {
		t0 = ktime_get_ns();
		for (i = 0; i < nr_drains; i++)
			damon_drain_reports(ctx, damon_report_rings(ctx), snap);
		drain[r] = ktime_get_ns() - t0;
		cond_resched();
		if (fatal_signal_pending(current)) {
			err = -EINTR;
			goto out;
		}
	}
	m = damon_bench_median(drain, DAMON_BENCH_ROUNDS);
	damon_bench_printf("bench name=drain_idle possible_cpus=%u iters=%lu ns_per_op=%llu ps_per_op=%llu ns_per_cpu=%llu dequeued=%lu\n",
			   possible, nr_drains, div64_u64(m, nr_drains),
			   damon_bench_ps(m, nr_drains),
			   div64_u64(m, (u64)nr_drains * possible),
			   ctx->report_stats.dequeued);
out:
	damon_bench_destroy_ctx(ctx);
	return err;
}
