/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kdamond's work per sampling interval: page table Accessed bits against
 * access reports.  Part of bench/perf-bench.h (the damon-perf harness only).
 *
 *	interval R [K]	a virtual address context of R regions over a buffer
 *			of DAMON_BENCH_IV_PAGES pages that the writing process
 *			maps and populates, then DAMON_BENCH_ROUNDS sampling
 *			intervals of each access check, alternating:
 *			  accessbit: ops.prepare_access_checks() and
 *			    ops.check_accesses(), what kdamond does per
 *			    interval without perf events
 *			  perf: damon_report_check_accesses() of K reports
 *			    (default 1024: the sample rate is fixed, not the
 *			    samples per region; 0: an interval in which
 *			    nothing was sampled) at random addresses of the
 *			    buffer, queued before the timed part, as the
 *			    sampled CPUs queue them
 *			The medians are printed, in ns (instructions under
 *			'make bench' deterministic mode).
 */

#include <linux/mm.h>
#include <linux/mman.h>

/* The buffer: 100k pages, so that 100k regions have a page each */
#define DAMON_BENCH_IV_PAGES		100000UL
#define DAMON_BENCH_IV_REPORTS		1024

static int damon_bench_interval(unsigned long nr_regions,
				unsigned long nr_reports)
{
	u64 prepare[DAMON_BENCH_ROUNDS], check[DAMON_BENCH_ROUNDS];
	u64 accessbit[DAMON_BENCH_ROUNDS], perf[DAMON_BENCH_ROUNDS];
	unsigned long len = DAMON_BENCH_IV_PAGES * PAGE_SIZE, addr, sz;
	unsigned long failed = 0, matched;
	struct rnd_state rnd;
	struct damon_ctx *ctx;
	u64 t0, t1, t2, m_accessbit, m_perf;
	int i, err = 0;

	if (!nr_regions || nr_regions > DAMON_BENCH_IV_PAGES ||
	    nr_reports > DAMON_BENCH_MAX_REPORTS)
		return -EINVAL;
	sz = len / nr_regions / PAGE_SIZE * PAGE_SIZE;
	addr = vm_mmap(NULL, 0, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, 0);
	if (IS_ERR_VALUE(addr))
		return (int)addr;
	ctx = damon_bench_ctx(DAMON_OPS_VADDR, addr, nr_regions, sz);
	if (!ctx) {
		err = -ENOMEM;
		goto out;
	}
	nr_reports = min(nr_reports, damon_bench_ring_size(ctx));
	prandom_seed_state(&rnd, nr_regions);
	/* the first drain allocates the snapshot, which the next ones reuse */
	failed += damon_bench_push_range(ctx, &rnd, addr, nr_regions * sz,
					 nr_reports);
	damon_report_check_accesses(ctx, true);
	matched = ctx->report_stats.matched;

	for (i = 0; i < DAMON_BENCH_ROUNDS; i++) {
		t0 = ktime_get_ns();
		ctx->ops.prepare_access_checks(ctx);
		t1 = ktime_get_ns();
		ctx->ops.check_accesses(ctx);
		t2 = ktime_get_ns();
		prepare[i] = t1 - t0;
		check[i] = t2 - t1;
		accessbit[i] = t2 - t0;

		failed += damon_bench_push_range(ctx, &rnd, addr,
						 nr_regions * sz, nr_reports);
		t0 = ktime_get_ns();
		damon_report_check_accesses(ctx, true);
		t1 = ktime_get_ns();
		perf[i] = t1 - t0;

		cond_resched();
		if (fatal_signal_pending(current)) {
			err = -EINTR;
			goto out;
		}
	}
	matched = ctx->report_stats.matched - matched;
	m_accessbit = damon_bench_median(accessbit, DAMON_BENCH_ROUNDS);
	m_perf = damon_bench_median(perf, DAMON_BENCH_ROUNDS);

	damon_bench_printf("bench name=interval regions=%lu reports=%lu region_pages=%lu rounds=%d accessbit_ns=%llu prepare_ns=%llu check_ns=%llu perf_ns=%llu perf_per_mille=%llu matched=%lu failed=%lu\n",
			   nr_regions, nr_reports, sz >> PAGE_SHIFT,
			   DAMON_BENCH_ROUNDS, m_accessbit,
			   damon_bench_median(prepare, DAMON_BENCH_ROUNDS),
			   damon_bench_median(check, DAMON_BENCH_ROUNDS),
			   m_perf,
			   div64_u64(1000 * m_perf, max(1ULL, m_accessbit)),
			   matched, failed);
out:
	if (ctx)
		damon_bench_destroy_ctx(ctx);
	vm_munmap(addr, len);
	return err;
}
