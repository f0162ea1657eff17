/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Benchmarks of the DAMON access reports of perf event samples
 *
 * For the damon-perf harness ('make bench', bench/bench.sh) only, not part of
 * the series.  The harness patch bench/0001-bench-hook.patch includes this at
 * the bottom of perf/report.c, like the KUnit tests, so that it can call the
 * static functions of the report rings and the drain, and builds report.o
 * with -DDAMON_PERF_BENCH.
 *
 * Write a command to /sys/kernel/debug/damon_perf_bench to run benchmarks
 * synchronously in the writing process, then read the file for the results:
 *
 *	info		the report ring size and the build options
 *	handler [N]	N calls of each perf overflow handler per round (five
 *			rounds, interleaved with an empty handler)
 *	drain R [K]	K access reports drained and matched against R regions,
 *			timed whole, and again in its steps
 *	interval R [K]	kdamond's work per sampling interval over R regions:
 *			Accessed bits against K reports (perf-bench-interval.h)
 *	aux R [K [L]]	K Arm SPE records of layout L over R regions copied,
 *			decoded and reported like the kdamond's AUX drain, in
 *			a vaddr and a paddr context (perf-bench-aux.h)
 *	rings [N]	the memory of a context's report rings, and N drains of
 *			idle rings, on this boot's possible CPUs
 *			(perf-bench-rings.h)
 *	all		info, handler, and drain for 10, 100, 1k and 10k regions
 *
 * Each result is a line like below, with more key=value pairs after those:
 *
 *	bench name=<name> iters=<n> ns_per_op=<ns>
 *
 * The benchmark contexts are private to the writer and have no kdamond.  The
 * handlers and the drain feed the observability counters and tracepoints
 * like real samples do, so perf_stats counts the benchmark's samples too.
 */

#ifdef DAMON_PERF_BENCH

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/math64.h>
#include <linux/mutex.h>
#include <linux/prandom.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/timekeeping.h>

/* Size of the results buffer */
#define DAMON_BENCH_OUT_SZ		8192
/* Rounds of each handler benchmark, for the median */
#define DAMON_BENCH_ROUNDS		5
/* Handler calls per timed batch, less than a report ring holds */
#define DAMON_BENCH_BATCH		1024
#define DAMON_BENCH_CALLS		(100 * DAMON_BENCH_BATCH)
#define DAMON_BENCH_MAX_CALLS		(10000 * DAMON_BENCH_BATCH)
#define DAMON_BENCH_REPORTS		(20 * 4096)
#define DAMON_BENCH_MAX_REPORTS		BIT(24)
#define DAMON_BENCH_MAX_REGIONS		100000
/* Where the regions of the benchmark contexts start, and their size */
#define DAMON_BENCH_BASE		0x10000000UL
#define DAMON_BENCH_REGION_SZ		(16 * PAGE_SIZE)

/* Serializes the benchmarks and protects the results buffer */
static DEFINE_MUTEX(damon_bench_lock);
static char damon_bench_out[DAMON_BENCH_OUT_SZ];
static size_t damon_bench_len;

static __printf(1, 2) void damon_bench_printf(const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	damon_bench_len += vscnprintf(damon_bench_out + damon_bench_len,
				      sizeof(damon_bench_out) -
				      damon_bench_len, fmt, args);
	va_end(args);
}

/* Sorts @vals of @nr entries, and returns the median */
static u64 damon_bench_median(u64 *vals, int nr)
{
	int i, j;
	u64 v;

	for (i = 1; i < nr; i++) {
		v = vals[i];
		for (j = i; j > 0 && vals[j - 1] > v; j--)
			vals[j] = vals[j - 1];
		vals[j] = v;
	}
	return vals[nr / 2];
}

/* Picoseconds per operation, for @ns nanoseconds of @nr operations */
static u64 damon_bench_ps(u64 ns, u64 nr)
{
	return nr ? div64_u64(ns * 1000, nr) : 0;
}

static void damon_bench_destroy_ctx(struct damon_ctx *ctx)
{
	struct damon_target *t;

	/* This drains the rings, and reads the pids of the targets */
	damon_report_rings_release(ctx);
	/*
	 * On 7.x, destroying a target calls &damon_operations->cleanup_target,
	 * which puts the pid for vaddr; without one, put it here
	 * (&damon_target->pid is NULL for the physical address space)
	 */
	if (!ctx->ops.cleanup_target)
		damon_for_each_target(t, ctx)
			put_pid(t->pid);
	damon_destroy_ctx(ctx);
}

/*
 * Returns a new context of the operations @id that receives access reports,
 * having one target of @nr_regions adjacent regions of @sz bytes from @start,
 * or NULL.  The target of a virtual address space is the current process,
 * so that the reports that the current process makes match.
 */
static struct damon_ctx *damon_bench_ctx(enum damon_ops_id id,
					 unsigned long start,
					 unsigned long nr_regions,
					 unsigned long sz)
{
	struct damon_ctx *ctx = damon_new_ctx();
	struct damon_addr_range *ranges;
	struct damon_target *t;
	unsigned long i;
	int err;

	if (!ctx)
		return NULL;
	if (damon_select_ops(ctx, id))
		goto fail;
	t = damon_new_target();
	if (!t)
		goto fail;
	if (damon_target_has_pid(ctx))
		t->pid = get_task_pid(current, PIDTYPE_PID);
	damon_add_target(ctx, t);
	/* damon_add_region() is static since 7.x: the regions as ranges */
	ranges = kvmalloc_array(nr_regions, sizeof(*ranges), GFP_KERNEL);
	if (!ranges)
		goto fail;
	for (i = 0; i < nr_regions; i++) {
		ranges[i].start = start + i * sz;
		ranges[i].end = start + (i + 1) * sz;
	}
	/* the target has no region yet: added in order, in linear time */
	err = damon_set_regions(t, ranges, nr_regions, 1);
	kvfree(ranges);
	if (err)
		goto fail;
	if (damon_report_rings_alloc(ctx))
		goto fail;
	return ctx;

fail:
	damon_bench_destroy_ctx(ctx);
	return NULL;
}

/* damon_bench_ctx() of @nr_regions regions from DAMON_BENCH_BASE */
static struct damon_ctx *damon_bench_new_ctx(enum damon_ops_id id,
					     unsigned long nr_regions)
{
	return damon_bench_ctx(id, DAMON_BENCH_BASE, nr_regions,
			       DAMON_BENCH_REGION_SZ);
}

/* Number of the entries of each report ring of @ctx */
static unsigned long damon_bench_ring_size(struct damon_ctx *ctx)
{
	int cpu = cpumask_first(cpu_possible_mask);

	return per_cpu_ptr(damon_report_rings(ctx), cpu)->mask + 1;
}

static int damon_bench_info(void)
{
	damon_bench_printf("bench name=info iters=0 ns_per_op=0 ring_size=%lu observe=%d possible_cpus=%u batch=%d rounds=%d region_sz=%lu entry_size=%zu ring_order_default=%d ring_order_max=%d\n",
			   BIT(READ_ONCE(damon_report_ring_order)),
			   IS_ENABLED(CONFIG_DAMON_PERF_OBSERVE),
			   num_possible_cpus(), DAMON_BENCH_BATCH,
			   DAMON_BENCH_ROUNDS, DAMON_BENCH_REGION_SZ,
			   sizeof(struct damon_access_report),
			   ilog2(DAMON_REPORT_RING_SIZE),
			   DAMON_REPORT_RING_ORDER_MAX);
	return 0;
}

/* damon_bench_handlers(): the overflow handlers */
#include "perf-bench-handlers.h"

/*
 * Drain throughput: reports of random addresses in the regions, pushed into
 * the ring of this CPU with damon_report_access() outside of the timed part,
 * then drained and matched like kdamond does for a sampling interval.
 */

/*
 * Report @nr accesses of the current process to random addresses in
 * [@start, @start + @len), as virtual and as physical addresses.  Returns the
 * number of reports not queued.
 */
static unsigned long damon_bench_push_range(struct damon_ctx *ctx,
					    struct rnd_state *rnd,
					    unsigned long start,
					    unsigned long len, unsigned long nr)
{
	struct damon_access_report report = {
		.size = 1,
		.tid = task_pid_nr(current),
		.tgid = task_tgid_nr(current),
	};
	unsigned long i, failed = 0;

	for (i = 0; i < nr; i++) {
		report.vaddr = start + prandom_u32_state(rnd) % len;
		report.paddr = report.vaddr;
		if (damon_report_access(ctx, &report))
			failed++;
	}
	return failed;
}

/* damon_bench_push_range() over the @nr_regions regions of @ctx */
static unsigned long damon_bench_push(struct damon_ctx *ctx,
				      struct rnd_state *rnd,
				      unsigned long nr_regions,
				      unsigned long nr)
{
	return damon_bench_push_range(ctx, rnd, DAMON_BENCH_BASE,
				      nr_regions * DAMON_BENCH_REGION_SZ, nr);
}

/*
 * Drain and match @nr_reports reports against @nr_regions regions, in drains
 * of at most a ring of reports, first with damon_report_check_accesses()
 * (drain_total), then again in its three steps: the regions snapshot and the
 * access rates update (drain_fixed, per drain) and the drain and match of the
 * reports (drain_match).  The two alternate, with the same number of reports.
 */
static int damon_bench_drain(unsigned long nr_regions,
			     unsigned long nr_reports)
{
	u64 total_ns = 0, match_ns = 0, fixed_ns = 0, t0, t1, t2, t3;
	u64 best_total_ps = U64_MAX, best_match_ps = U64_MAX;
	unsigned long per_drain, done, nr, nr_drains = 0, failed = 0;
	unsigned long matched, dequeued;
	struct damon_report_snapshot *snap;
	struct damon_report_stats *stats;
	struct rnd_state rnd;
	struct damon_ctx *ctx;
	int err = 0;

	if (!nr_regions || nr_regions > DAMON_BENCH_MAX_REGIONS ||
	    !nr_reports || nr_reports > DAMON_BENCH_MAX_REPORTS)
		return -EINVAL;
	ctx = damon_bench_new_ctx(DAMON_OPS_VADDR, nr_regions);
	if (!ctx)
		return -ENOMEM;
	stats = &ctx->report_stats;
	prandom_seed_state(&rnd, nr_regions);
	per_drain = min(nr_reports, damon_bench_ring_size(ctx));

	/* allocates the snapshot, which the next drains reuse */
	failed += damon_bench_push(ctx, &rnd, nr_regions, per_drain);
	damon_report_check_accesses(ctx, true);
	matched = stats->matched;
	dequeued = stats->dequeued;

	for (done = 0; done < nr_reports; done += nr) {
		nr = min(per_drain, nr_reports - done);

		failed += damon_bench_push(ctx, &rnd, nr_regions, nr);
		t0 = ktime_get_ns();
		damon_report_check_accesses(ctx, true);
		t1 = ktime_get_ns();
		total_ns += t1 - t0;
		best_total_ps = min(best_total_ps,
				    damon_bench_ps(t1 - t0, nr));

		failed += damon_bench_push(ctx, &rnd, nr_regions, nr);
		t0 = ktime_get_ns();
		snap = damon_report_snapshot_build(ctx);
		t1 = ktime_get_ns();
		if (!snap) {
			err = -ENOMEM;
			goto out;
		}
		damon_drain_reports(ctx, damon_report_rings(ctx), snap);
		t2 = ktime_get_ns();
		damon_apply_reports(ctx, snap, true);
		t3 = ktime_get_ns();
		match_ns += t2 - t1;
		fixed_ns += (t1 - t0) + (t3 - t2);
		best_match_ps = min(best_match_ps,
				    damon_bench_ps(t2 - t1, nr));
		nr_drains++;

		cond_resched();
		if (fatal_signal_pending(current)) {
			err = -EINTR;
			goto out;
		}
	}
	matched = stats->matched - matched;
	dequeued = stats->dequeued - dequeued;

	damon_bench_printf("bench name=drain_total regions=%lu iters=%lu ns_per_op=%llu ps_per_op=%llu best_ps_per_op=%llu reports_per_sec=%llu reports_per_drain=%lu dequeued=%lu matched=%lu failed=%lu\n",
			   nr_regions, nr_reports,
			   div64_u64(total_ns, nr_reports),
			   damon_bench_ps(total_ns, nr_reports), best_total_ps,
			   total_ns ? div64_u64((u64)nr_reports * NSEC_PER_SEC,
						total_ns) : 0,
			   per_drain, dequeued, matched, failed);
	damon_bench_printf("bench name=drain_match regions=%lu iters=%lu ns_per_op=%llu ps_per_op=%llu best_ps_per_op=%llu reports_per_sec=%llu\n",
			   nr_regions, nr_reports,
			   div64_u64(match_ns, nr_reports),
			   damon_bench_ps(match_ns, nr_reports), best_match_ps,
			   match_ns ? div64_u64((u64)nr_reports * NSEC_PER_SEC,
						match_ns) : 0);
	damon_bench_printf("bench name=drain_fixed regions=%lu iters=%lu ns_per_op=%llu\n",
			   nr_regions, nr_drains,
			   nr_drains ? div64_u64(fixed_ns, nr_drains) : 0);
out:
	damon_bench_destroy_ctx(ctx);
	return err;
}

/* damon_bench_interval(): Accessed bits against access reports */
#include "perf-bench-interval.h"

/* damon_bench_aux(): the AUX drain per record */
#include "perf-bench-aux.h"

/* damon_bench_rings(): ring memory and idle drains against the CPUs */
#include "perf-bench-rings.h"

static int damon_bench_all(void)
{
	static const unsigned long nr_regions[] = {10, 100, 1000, 10000};
	int i, err;

	err = damon_bench_info();
	if (!err)
		err = damon_bench_handlers(DAMON_BENCH_CALLS);
	for (i = 0; !err && i < ARRAY_SIZE(nr_regions); i++)
		err = damon_bench_drain(nr_regions[i], DAMON_BENCH_REPORTS);
	return err;
}

static ssize_t damon_bench_read(struct file *file, char __user *ubuf,
				size_t count, loff_t *ppos)
{
	ssize_t ret;

	if (mutex_lock_interruptible(&damon_bench_lock))
		return -EINTR;
	ret = simple_read_from_buffer(ubuf, count, ppos, damon_bench_out,
				      damon_bench_len);
	mutex_unlock(&damon_bench_lock);
	return ret;
}

static ssize_t damon_bench_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	unsigned long arg1 = 0, arg2 = 0, arg3 = 0;
	char cmd[16];
	char *buf;
	int nr, err;

	if (!count || count > 64)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, count);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	nr = sscanf(buf, "%15s %lu %lu %lu", cmd, &arg1, &arg2, &arg3);
	kfree(buf);
	if (nr < 1)
		return -EINVAL;

	if (mutex_lock_interruptible(&damon_bench_lock))
		return -EINTR;
	damon_bench_len = 0;
	damon_bench_out[0] = '\0';
	if (!strcmp(cmd, "info"))
		err = damon_bench_info();
	else if (!strcmp(cmd, "handler"))
		err = damon_bench_handlers(nr > 1 ? arg1 : DAMON_BENCH_CALLS);
	else if (!strcmp(cmd, "drain") && nr > 1)
		err = damon_bench_drain(arg1, nr > 2 ? arg2 :
					DAMON_BENCH_REPORTS);
	else if (!strcmp(cmd, "interval") && nr > 1)
		err = damon_bench_interval(arg1, nr > 2 ? arg2 :
					   DAMON_BENCH_IV_REPORTS);
	else if (!strcmp(cmd, "aux") && nr > 1)
		err = damon_bench_aux(arg1, nr > 2 ? arg2 :
				      DAMON_BENCH_AUX_RECORDS,
				      nr > 3 ? arg3 : 0);
	else if (!strcmp(cmd, "rings"))
		err = damon_bench_rings(nr > 1 ? arg1 : DAMON_BENCH_IDLE_DRAINS);
	else if (!strcmp(cmd, "all"))
		err = damon_bench_all();
	else
		err = -EINVAL;
	mutex_unlock(&damon_bench_lock);
	if (err)
		return err;
	return count;
}

static const struct file_operations damon_bench_fops = {
	.owner = THIS_MODULE,
	.read = damon_bench_read,
	.write = damon_bench_write,
	.llseek = default_llseek,
};

static int __init damon_bench_init(void)
{
	debugfs_create_file("damon_perf_bench", 0600, NULL, NULL,
			    &damon_bench_fops);
	return 0;
}
late_initcall(damon_bench_init);

#endif	/* DAMON_PERF_BENCH */
