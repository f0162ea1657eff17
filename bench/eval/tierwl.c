// SPDX-License-Identifier: GPL-2.0
/*
 * tierwl: the workload of the tiering loop (bench/eval/tier-guest.sh,
 * bench/eval/tiering.py): how fast, and how well, does memory tiering put a
 * workload's hot set on the fast NUMA node?
 *
 * usage: tierwl [options] OUTDIR
 *	--hot-mb N		hot set (64 MiB)
 *	--cold-mb N		cold set (192 MiB)
 *	--hot-permille N	accesses that go to the hot set (970)
 *	--seconds S		how long the access loop runs (30), counted from
 *				the mark with --wait-mark, else from the start;
 *				may be fractional
 *	--report-ms N		interval of the placement queries (1000)
 *	--stride N		query every Nth page of each set only (1)
 *	--slow-node N		where every page is placed first (1)
 *	--fast-node N		the node whose share is counted (0)
 *	--wait-mark		the loop runs until SIGUSR1 (the mark: the
 *				tiering mode is on) and then --seconds more; at
 *				most 600 s before the mark
 *	--seed N		PRNG seed (1)
 *	--tlb-flush-us N	flush the TLB every N us of CLOCK_MONOTONIC (0:
 *				never), see below
 *	--touch-chunk N		place the sets in alternating chunks: N hot
 *				pages, then the cold set's share of pages, and
 *				so on (0: all hot, then all cold), see below
 *
 * build: gcc -O2 -Wall -static -o tierwl tierwl.c
 *
 * Placement.  The hot and the cold set are two anonymous private mappings,
 * MADV_NOHUGEPAGE so that they stay in 4 KiB pages (one folio a page: what
 * DAMON migrates and what move_pages() reports).  Before they are touched,
 * set_mempolicy(MPOL_BIND, {slow node}) (the raw system call: no libnuma),
 * so that every page is placed on the slow node; each page is written once
 * (hot set first, then cold; --touch-chunk interleaves them), then
 * set_mempolicy(MPOL_DEFAULT), so that a migration, by DAMON or by NUMA
 * balancing, is free to move them (NUMA balancing does not move a page
 * against an MPOL_BIND policy).  Then "tierwl: ready PID" is printed and
 * the loop starts.
 *
 * The loop.  One access reads and writes one 8-byte word, at a random word
 * of a page picked uniformly from the hot set with probability
 * hot-permille / 1000, else from the cold set.  With the defaults a hot page
 * is accessed 97/16384 : 3/49152, about 97 times as often as a cold page.
 * The clock is read every BATCH accesses.
 *
 * TLB flushes.  A CPU's TLB holds a few thousand translations; QEMU's
 * software TLB holds far more, and a translation it holds does not walk the
 * page table again, so the Accessed bit of a PTE that DAMON cleared is set
 * again only after QEMU's TLB dropped it: on a CR3 write, i.e. when another
 * process runs, about once a second in the guest of tier-guest.sh.  (DAMON
 * clears the bit with ptep_test_and_clear_young(), damon_ptep_mkold(), and
 * no TLB flush, as x86's ptep_clear_flush_young() does: "it will
 * eventually be flushed by a context switch or a VM operation anyway".)
 * So under TCG the Accessed bits of a
 * hot page stay clear for seconds, and DAMON's damon-abit mode sees the hot
 * set accessed in bursts after each flush only.  --tlb-flush-us N makes the
 * loop flush this process's TLB every N us: an mprotect() that toggles the
 * write permission of 64 touched pages of a mapping of its own, more than
 * x86's tlb_single_page_flush_ceiling (33), so the kernel flushes the whole
 * TLB (and QEMU its own).  With N = 1000, a hot page is seen accessed in
 * the sampling interval after a clear, as on a CPU whose TLB is far smaller
 * than the hot set.  It costs an mprotect() of 64 pages a ms; the flushes
 * made are in the summary (tlb_flushes).
 *
 * Physical layout.  DAMON's paddr schemes migrate physical address ranges:
 * how well they separate the hot set from the cold one depends on how the
 * two sets' frames interleave.  On a fresh slow node the buddy allocator
 * hands out frames in order, so the hot set (touched first) lies in a few
 * physical runs apart from the cold set; after other runs have freed and
 * migrated pages there, the frames of both sets interleave.  After the
 * placement the frames are read from /proc/self/pagemap (root sees PFNs)
 * and the summary gets hot_pfn_runs (maximal runs of consecutive PFNs of
 * the hot set; 1 is one block) and hot_cold_boundaries (in PFN order, the
 * changes between a hot and a cold frame; 1 is two blocks apart); -1 where
 * the PFNs cannot be read.  --touch-chunk N interleaves the sets by the
 * order of the first touches (N hot pages, N * cold / hot cold pages, ...),
 * so that on a fresh node the hot set lies in runs of N frames between
 * cold ones: a layout of a long-running system, the same in every boot.
 *
 * Queries.  At the start of the loop, at the mark, every --report-ms of
 * CLOCK_MONOTONIC after the start, and at the end, move_pages(0, n, pages,
 * NULL, status, 0) (the raw system call; no node list: it only reports the
 * node of each page) is asked where the tracked pages are, QCHUNK pages a
 * call, and a line is appended (and flushed) to OUTDIR/share:
 *
 *	T_NS HOT_ON_FAST HOT_TOTAL COLD_ON_FAST COLD_TOTAL
 *
 * T_NS is CLOCK_MONOTONIC ns since the start of the loop; the counts are
 * pages: of each set's tracked pages, those on the fast node, and those
 * whose node was known (a page under migration, or not present, answers
 * with an error and is in neither count: status_err in the summary).
 * The loop does not run while a query does: its cost is in the summary
 * (query_ns_*).  A query of all 65536 pages of the default sets took 8.5 ms
 * on the host (one node, --slow-node 0) and 44 ms in the guest of
 * tier-guest.sh (-icount shift=0: 44 M instructions, ~670 a page): 4.4 % of
 * the time at one query a second.  --stride N cuts it by N: tier-guest.sh
 * queries every 8th page every 250 ms (~5.5 ms each, 2.2 %), for a finer
 * time axis.
 *
 * Ping-pong.  For each tracked page the node of the last query is kept: a
 * query that finds a page on another node than the last one counts one node
 * change of that page.  A page that moves there and back between two queries
 * counts none, so the figure is a lower bound at the query interval.
 *
 * OUTDIR/summary, at the end, "key value" lines:
 *	hot_pages, cold_pages	tracked pages of each set (every stride-th)
 *	hot_moves, cold_moves	node changes seen, summed over the tracked
 *				pages of each set
 *	hot_pages_all, cold_pages_all, stride, page_size, fast_node,
 *	slow_node, hot_permille, seconds, report_ms, seed
 *	mark_ns			T_NS of the mark (-1: none), the origin of
 *				tiering.py's time axis
 *	end_ns			T_NS at the end of the loop
 *	accesses		accesses made
 *	queries, query_ns_total, query_ns_max
 *	status_err		page answers that were an error, all queries
 *	hot_on_fast_start	hot pages on the fast node at the first query
 *	tlb_flush_us, tlb_flushes
 *	hot_pfn_runs, hot_cold_boundaries, touch_chunk	see "Physical layout"
 *
 * stdout has "tierwl: ready PID" and at the end "tierwl: done ACCESSES".
 * Errors go to stderr with exit status 1, usage errors with 2.  SIGTERM or
 * SIGINT end the loop early (the summary is still written).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PAGE		4096UL
#define WORDS_MASK	(PAGE / sizeof(uint64_t) - 1)
#define MIB		(1UL << 20)
/* Accesses between two looks at the clock (and at the signal flags) */
#define BATCH		4096
/* Pages a move_pages() call */
#define QCHUNK		4096
/* Pages whose protection a TLB flush toggles: > tlb_single_page_flush_ceiling */
#define FLUSH_PAGES	64
/* Before the mark, the loop gives up after this long */
#define MAX_WAIT_NS	(600LL * 1000000000LL)

/* include/uapi/linux/mempolicy.h */
#define TW_MPOL_DEFAULT	0
#define TW_MPOL_BIND	2

static const char *outdir;
static volatile sig_atomic_t got_mark, got_stop;

static void __attribute__((noreturn)) die(const char *what)
{
	fprintf(stderr, "tierwl: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void __attribute__((noreturn)) usage(void)
{
	fprintf(stderr,
		"usage: tierwl [--hot-mb N] [--cold-mb N] [--hot-permille N]\n"
		"       [--seconds S] [--report-ms N] [--stride N] [--slow-node N]\n"
		"       [--fast-node N] [--wait-mark] [--seed N] [--tlb-flush-us N]\n"
		"       [--touch-chunk N] OUTDIR\n");
	exit(2);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* xorshift64* */
static inline uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

static FILE *open_out(const char *name, const char *how)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", outdir, name);
	f = fopen(path, how);
	if (!f)
		die(path);
	return f;
}

static long set_mempolicy_raw(int mode, const unsigned long *mask,
			      unsigned long maxnode)
{
	return syscall(SYS_set_mempolicy, mode, mask, maxnode);
}

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		got_mark = 1;
	else
		got_stop = 1;
}

/* The tracked pages of both sets, and their last known nodes */
struct tracked {
	void **pages;		/* hot ones first, then cold */
	int *status;
	int8_t *last;		/* node at the last query, -1 unknown */
	size_t nhot, ncold;
	uint64_t hot_moves, cold_moves, status_err;
	uint64_t queries, query_ns_total, query_ns_max;
};

static void track(struct tracked *t, char *hot, size_t hp, char *cold,
		  size_t cp, size_t stride)
{
	size_t n = 0;

	t->nhot = (hp + stride - 1) / stride;
	t->ncold = (cp + stride - 1) / stride;
	t->pages = malloc((t->nhot + t->ncold) * sizeof(*t->pages));
	t->status = malloc((t->nhot + t->ncold) * sizeof(*t->status));
	t->last = malloc(t->nhot + t->ncold);
	if (!t->pages || !t->status || !t->last)
		die("malloc");
	for (size_t i = 0; i < hp; i += stride)
		t->pages[n++] = hot + i * PAGE;
	for (size_t i = 0; i < cp; i += stride)
		t->pages[n++] = cold + i * PAGE;
	memset(t->last, -1, n);
}

/* One query; appends its line to @share; returns hot pages on @fast */
static uint64_t query(struct tracked *t, FILE *share, int64_t t0, int fast)
{
	size_t n = t->nhot + t->ncold;
	uint64_t on[2] = { 0, 0 }, known[2] = { 0, 0 };
	int64_t a = now_ns(), d;

	for (size_t i = 0; i < n; i += QCHUNK) {
		unsigned long c = n - i < QCHUNK ? n - i : QCHUNK;

		if (syscall(SYS_move_pages, 0, c, t->pages + i, NULL,
			    t->status + i, 0))
			die("move_pages");
	}
	d = now_ns() - a;
	for (size_t i = 0; i < n; i++) {
		int cold = i >= t->nhot, s = t->status[i];

		if (s < 0) {
			t->status_err++;
			continue;
		}
		known[cold]++;
		on[cold] += s == fast;
		if (t->last[i] >= 0 && t->last[i] != s) {
			if (cold)
				t->cold_moves++;
			else
				t->hot_moves++;
		}
		t->last[i] = s;
	}
	t->queries++;
	t->query_ns_total += d;
	if ((uint64_t)d > t->query_ns_max)
		t->query_ns_max = d;
	fprintf(share, "%lld %llu %llu %llu %llu\n", (long long)(a - t0),
		(unsigned long long)on[0], (unsigned long long)known[0],
		(unsigned long long)on[1], (unsigned long long)known[1]);
	if (fflush(share))
		die("share");
	return on[0];
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The physical layout of the sets (see the top): *runs, the runs of
 * consecutive PFNs of the hot set, and *bounds, the hot/cold changes in PFN
 * order; both -1 if a PFN is not readable.  Each entry is PFN << 1 | hot.
 */
static void layout(char *hot, size_t hp, char *cold, size_t cp, long *runs,
		   long *bounds)
{
	size_t n = hp + cp, k = 0;
	uint64_t *e = malloc(n * sizeof(*e)), *buf = malloc(QCHUNK * 8);
	FILE *pm = fopen("/proc/self/pagemap", "r");

	*runs = *bounds = -1;
	if (!e || !buf || !pm)
		goto out;
	for (int set = 0; set < 2; set++) {
		char *base = set ? cold : hot;
		size_t np = set ? cp : hp;

		for (size_t i = 0; i < np; i += QCHUNK) {
			size_t c = np - i < QCHUNK ? np - i : QCHUNK;

			if (fseeko(pm, (off_t)((uintptr_t)(base + i * PAGE) /
					       PAGE * 8), SEEK_SET) ||
			    fread(buf, 8, c, pm) != c)
				goto out;
			for (size_t j = 0; j < c; j++) {
				uint64_t pfn = buf[j] & ((1ULL << 55) - 1);

				if (!(buf[j] >> 63) || !pfn)
					goto out;
				e[k++] = pfn << 1 | !set;
			}
		}
	}
	qsort(e, n, sizeof(*e), cmp_u64);
	*runs = *bounds = 0;
	for (size_t i = 0, last = 0, any = 0; i < n; i++) {
		if (i && (e[i] & 1) != (e[i - 1] & 1))
			++*bounds;
		if (!(e[i] & 1))
			continue;
		if (!any || (e[i] >> 1) != (e[last] >> 1) + 1)
			++*runs;
		last = i;
		any = 1;
	}
out:
	if (pm)
		fclose(pm);
	free(buf);
	free(e);
}

/* @len bytes in base pages on @node, every page written once */
static char *map_placed(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	if (madvise(p, len, MADV_NOHUGEPAGE))
		die("madvise(MADV_NOHUGEPAGE)");
	return p;
}

static void touch(char *p, size_t len)
{
	for (size_t off = 0; off < len; off += PAGE)
		*(volatile uint64_t *)(p + off) = off;
}

/* Touches both sets, in chunks of @chunk hot pages (0: one chunk each) */
static void place(char *hot, size_t hp, char *cold, size_t cp, size_t chunk)
{
	size_t h = 0, c = 0;

	if (!chunk)
		chunk = hp;
	while (h < hp || c < cp) {
		size_t nh = hp - h < chunk ? hp - h : chunk;
		/* the cold pages due by the time h + nh hot pages are placed */
		size_t ct = h + nh >= hp ? cp : (h + nh) * cp / hp;

		touch(hot + h * PAGE, nh * PAGE);
		touch(cold + c * PAGE, (ct - c) * PAGE);
		h += nh;
		c = ct;
	}
}

static unsigned long num(const char *s)
{
	char *e;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &e, 0);
	if (errno || e == s || *e)
		usage();
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "hot-mb", required_argument, NULL, 'h' },
		{ "cold-mb", required_argument, NULL, 'c' },
		{ "hot-permille", required_argument, NULL, 'p' },
		{ "seconds", required_argument, NULL, 's' },
		{ "report-ms", required_argument, NULL, 'r' },
		{ "stride", required_argument, NULL, 'S' },
		{ "slow-node", required_argument, NULL, 'l' },
		{ "fast-node", required_argument, NULL, 'f' },
		{ "wait-mark", no_argument, NULL, 'w' },
		{ "seed", required_argument, NULL, 'e' },
		{ "tlb-flush-us", required_argument, NULL, 't' },
		{ "touch-chunk", required_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long hot_mb = 64, cold_mb = 192, permille = 970, report_ms = 1000;
	unsigned long stride = 1, slow = 1, fast = 0, seed = 1, flush_us = 0;
	unsigned long nflush = 0, chunk = 0;
	long pfn_runs, pfn_bounds;
	char *flush_buf = NULL;
	int flush_prot = PROT_READ;
	int64_t flush_ns = 0, next_flush = INT64_MAX;
	double secs = 30;
	int wait_mark = 0, o;
	struct sigaction sa = { .sa_handler = on_signal };
	struct tracked t = { 0 };
	size_t hp, cp;
	char *hot, *cold, *e;
	unsigned long mask[16] = { 0 };
	uint64_t s, x, n = 0, hot0;
	uint32_t thresh;
	int64_t t0, now, next, end, mark = -1, report_ns;
	FILE *share, *f;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'h': hot_mb = num(optarg); break;
		case 'c': cold_mb = num(optarg); break;
		case 'p': permille = num(optarg); break;
		case 's':
			secs = strtod(optarg, &e);
			if (e == optarg || *e || secs <= 0)
				usage();
			break;
		case 'r': report_ms = num(optarg); break;
		case 'S': stride = num(optarg); break;
		case 'l': slow = num(optarg); break;
		case 'f': fast = num(optarg); break;
		case 'w': wait_mark = 1; break;
		case 'e': seed = num(optarg); break;
		case 't': flush_us = num(optarg); break;
		case 'C': chunk = num(optarg); break;
		default: usage();
		}
	}
	if (optind != argc - 1 || !hot_mb || !cold_mb || permille > 1000 ||
	    !report_ms || !stride || slow >= 16 * 64 || fast >= 16 * 64)
		usage();
	outdir = argv[optind];
	hp = hot_mb * MIB / PAGE;
	cp = cold_mb * MIB / PAGE;

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) || sigaction(SIGTERM, &sa, NULL) ||
	    sigaction(SIGINT, &sa, NULL))
		die("sigaction");

	hot = map_placed(hp * PAGE);
	cold = map_placed(cp * PAGE);
	mask[slow / 64] = 1UL << (slow % 64);
	if (set_mempolicy_raw(TW_MPOL_BIND, mask, 16 * 64))
		die("set_mempolicy(MPOL_BIND, slow node)");
	place(hot, hp, cold, cp, chunk);
	if (set_mempolicy_raw(TW_MPOL_DEFAULT, NULL, 0))
		die("set_mempolicy(MPOL_DEFAULT)");
	layout(hot, hp, cold, cp, &pfn_runs, &pfn_bounds);
	track(&t, hot, hp, cold, cp, stride);
	if (flush_us) {
		flush_buf = map_placed(FLUSH_PAGES * PAGE);
		touch(flush_buf, FLUSH_PAGES * PAGE);
		flush_ns = flush_us * 1000LL;
	}

	share = open_out("share", "w");
	x = seed;
	do
		s = splitmix64(&x);
	while (!s);
	/* an access goes to the hot set if its top 32 bits are < thresh */
	thresh = (uint32_t)(((uint64_t)permille << 32) / 1000 -
			    (permille == 1000));
	report_ns = report_ms * 1000000LL;

	printf("tierwl: ready %d\n", (int)getpid());
	fflush(stdout);
	t0 = now_ns();
	hot0 = query(&t, share, t0, fast);
	now = now_ns();
	next = t0 + report_ns;
	if (flush_us)
		next_flush = now + flush_ns;
	end = wait_mark ? t0 + MAX_WAIT_NS : t0 + (int64_t)(secs * 1e9);

	while (!got_stop && now < end) {
		for (int i = 0; i < BATCH; i++) {
			uint64_t r = rnd(&s);
			int in_hot = (uint32_t)(r >> 32) < thresh;
			/* bits 0-22 the page (multiply-shift), 23-31 the word */
			uint64_t pg = ((r & 0x7fffff) * (in_hot ? hp : cp)) >> 23;
			volatile uint64_t *q = (volatile uint64_t *)
				((in_hot ? hot : cold) + pg * PAGE) +
				((r >> 23) & WORDS_MASK);

			*q += 1;
		}
		n += BATCH;
		now = now_ns();
		if (now >= end)
			break;
		if (now >= next_flush) {
			if (mprotect(flush_buf, FLUSH_PAGES * PAGE, flush_prot))
				die("mprotect");
			flush_prot ^= PROT_WRITE;
			nflush++;
			next_flush += flush_ns;
			if (next_flush <= now)
				next_flush = now + flush_ns;
		}
		if (got_mark && mark < 0) {
			mark = now - t0;
			end = now + (int64_t)(secs * 1e9);
			query(&t, share, t0, fast);
			next = now_ns() + report_ns;
			now = now_ns();
		} else if (now >= next) {
			query(&t, share, t0, fast);
			next += report_ns;
			now = now_ns();
			if (next <= now)	/* fell behind: no burst */
				next = now + report_ns;
		}
	}
	query(&t, share, t0, fast);
	if (ferror(share) | fclose(share))
		die("share");

	f = open_out("summary", "w");
	fprintf(f, "hot_pages %zu\ncold_pages %zu\nhot_moves %llu\n"
		"cold_moves %llu\nhot_pages_all %zu\ncold_pages_all %zu\n"
		"stride %lu\npage_size %lu\nfast_node %lu\nslow_node %lu\n"
		"hot_permille %lu\nseconds %.9g\nreport_ms %lu\nseed %lu\n"
		"mark_ns %lld\nend_ns %lld\naccesses %llu\nqueries %llu\n"
		"query_ns_total %llu\nquery_ns_max %llu\nstatus_err %llu\n"
		"hot_on_fast_start %llu\ntlb_flush_us %lu\ntlb_flushes %lu\n"
		"hot_pfn_runs %ld\nhot_cold_boundaries %ld\ntouch_chunk %lu\n",
		t.nhot, t.ncold, (unsigned long long)t.hot_moves,
		(unsigned long long)t.cold_moves, hp, cp, stride, PAGE, fast,
		slow, permille, secs, report_ms, seed, (long long)mark,
		(long long)(now - t0), (unsigned long long)n,
		(unsigned long long)t.queries,
		(unsigned long long)t.query_ns_total,
		(unsigned long long)t.query_ns_max,
		(unsigned long long)t.status_err, (unsigned long long)hot0,
		flush_us, nflush, pfn_runs, pfn_bounds, chunk);
	if (ferror(f) | fclose(f))
		die("summary");
	printf("tierwl: done %llu\n", (unsigned long long)n);
	return 0;
}
