// SPDX-License-Identifier: GPL-2.0
/*
 * evalwl: a workload with a known, probabilistic access pattern, for the
 * accuracy benchmark (bench/eval/accuracy.py): does DAMON find the memory
 * that a workload really uses?
 *
 * usage: evalwl MODE SECONDS OUTDIR [options]
 *	MODE	hotcold or zipf
 *	SECONDS	how long the access loop runs, in CLOCK_MONOTONIC time
 *		(may be fractional)
 *	OUTDIR	where the ground truth goes (created if missing)
 *	--hot MB --warm MB --cold MB	hotcold's buffers (16, 32, 192 MiB)
 *	--size MB			zipf's buffer (256 MiB)
 *	--s X				zipf's exponent (0.99)
 *	--seed N			PRNG seed, of the accesses and of
 *					zipf's page permutation (1)
 *	--wait-start			after "ready", wait for SIGUSR1 to
 *					start the loop (and its SECONDS); after
 *					"done", wait for SIGUSR1 again before
 *					exiting, so that a monitor of this
 *					process (DAMON vaddr stops when its
 *					target exits) can read its figures
 *
 * build: gcc -O2 -Wall -static -o evalwl evalwl.c -lm
 *
 * All the memory is one anonymous private mapping, MADV_NOHUGEPAGE so that
 * it stays in 4 KiB pages, carved into the buffers.  Every page of it is
 * written once before the loop, so that all are mapped (and none is the
 * shared zero page).  Then OUTDIR/layout is written and "evalwl: ready PID"
 * printed, and the loop runs: at once, or with --wait-start when SIGUSR1
 * comes, so that a monitor can be set up on the process first.  One access
 * reads and writes one 8-byte word, at a random word of a page picked at
 * random as the mode says below.
 *
 * hotcold: three buffers, contiguous in this address order:
 *
 *	warm [W) | cold [C) | hot [H)		(H <= C is required)
 *
 * Each access goes to the hot set with probability P_HOT (0.80), to the
 * warm set with P_WARM (0.19), and to the cold set with the rest (0.01),
 * uniformly over the pages of the set it goes to.  At SECONDS/2 the hot and
 * cold roles swap:
 *	phase 0: hot set = the hot buffer, warm set = the warm buffer,
 *		 cold set = the cold buffer;
 *	phase 1: hot set = the first H bytes of the cold buffer, warm set =
 *		 the warm buffer, cold set = the rest of the cold buffer and the
 *		 old hot buffer, which are contiguous: [cold + H, hot + H).
 * So each set keeps its size (H, W, C) across the swap, and each set is one
 * address range in each phase.  The probabilities are exact multiples of
 * 2^-23 (the loop compares 23 random bits with two thresholds); the layout
 * file gives them as they are.
 *
 * zipf: one buffer of N pages.  A fixed permutation (Fisher-Yates, from
 * --seed) gives each page a rank 1..N; rank r is accessed with probability
 * proportional to 1/r^s.  The rank is drawn by the inverse of the CDF: a
 * guide table indexed by the top bits of the random number bounds the
 * binary search over the CDF table to a few steps.  There is no swap.
 *
 * OUTDIR/layout, text, one item per line, numbers in decimal, addresses as
 * byte addresses in this process, ranges [START, END):
 *	pid PID
 *	page_size 4096
 *	mode hotcold|zipf
 *	seconds SECONDS
 *	seed N
 *	start_ns NS		CLOCK_MONOTONIC ns at the start of the loop
 *				(with --wait-start, the layout is written
 *				again when SIGUSR1 comes, with this start)
 *	buffer NAME START END	each buffer (hot, warm, cold; or zipf)
 *   hotcold:
 *	phase P ROLE START END WEIGHT
 *		for P in 0, 1 and ROLE in hot, warm, cold: the range of the set
 *		and the probability that an access goes to it (WEIGHT), spread
 *		uniformly over its pages; the WEIGHTs of a phase sum to 1
 *   zipf:
 *	s X
 *	zipf buf START END	the buffer whose pages OUTDIR/zipf_weights gives
 *
 * OUTDIR/zipf_weights (zipf only): one little-endian IEEE double per page
 * of the buffer, in address order: the probability that an access hits
 * that page (they sum to 1).
 *
 * OUTDIR/events, written as they happen (flushed), CLOCK_MONOTONIC ns:
 *	start NS		the start of the loop, as start_ns of the layout
 *	swap NS			hotcold only: when phase 1 began
 *	end NS			when the loop ended
 *
 * stdout has only "evalwl: ready PID" (after the layout is written) and
 * "evalwl: done ACCESSES" (the number of accesses made).  Errors go to
 * stderr, with exit status 1; 2 is a usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "zipf_weights is written as little-endian doubles in native order"
#endif

#define PAGE		4096UL
#define WORDS_MASK	(PAGE / sizeof(uint64_t) - 1)	/* 512 words a page */
#define MIB		(1UL << 20)

/* hotcold's probabilities, taken as multiples of 2^-CLASS_BITS */
#define P_HOT		0.80
#define P_WARM		0.19
#define CLASS_BITS	23

/*
 * Accesses between two looks at the clock: a few hundred thousand
 * instructions, well under a millisecond of the guest's time, so that the
 * swap and the end are that close to their due time while the clock costs
 * next to nothing.
 */
#define BATCH		4096

/* The command line */
static const char *outdir;
static double secs;
static uint64_t seed = 1;
static int wait_start;
static sigset_t go_set;		/* SIGUSR1, blocked from the start */

static void __attribute__((noreturn)) die(const char *what)
{
	fprintf(stderr, "evalwl: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void __attribute__((noreturn)) usage(void)
{
	fprintf(stderr,
		"usage: evalwl hotcold|zipf SECONDS OUTDIR [--hot MB] [--warm MB]\n"
		"       [--cold MB] [--size MB] [--s X] [--seed N] [--wait-start]\n");
	exit(2);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* splitmix64: turns the seed into well-mixed, non-zero PRNG states */
static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* xorshift64*: a few instructions per 64 random bits */
static inline uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

static uint64_t seed_state(uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ stream, s;

	do
		s = splitmix64(&x);
	while (!s);		/* xorshift's one forbidden state */
	return s;
}

static FILE *open_out(const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", outdir, name);
	f = fopen(path, "w");
	if (!f)
		die(path);
	return f;
}

static void close_out(FILE *f, const char *name)
{
	if (ferror(f) | fclose(f))
		die(name);
}

static FILE *events;

static void event(const char *what, int64_t ns)
{
	fprintf(events, "%s %lld\n", what, (long long)ns);
	if (fflush(events))
		die("events");
}

/* One mapping of @len bytes in base pages, every page written once */
static char *map_touched(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	if (madvise(p, len, MADV_NOHUGEPAGE))
		die("madvise(MADV_NOHUGEPAGE)");
	for (size_t off = 0; off < len; off += PAGE)
		*(volatile uint64_t *)(p + off) = off;
	return p;
}

/*
 * OUTDIR/layout: the header lines, then @body, the mode's own.  Through a
 * temporary file and rename(), so that it is always whole, also when
 * --wait-start has it written again.
 */
static void write_layout(const char *mode, const char *body, int64_t start)
{
	char tmp[4096], path[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s/layout.tmp", outdir);
	snprintf(path, sizeof(path), "%s/layout", outdir);
	f = fopen(tmp, "w");
	if (!f)
		die(tmp);
	fprintf(f, "pid %d\npage_size %lu\nmode %s\nseconds %.9g\n"
		"seed %llu\nstart_ns %lld\n%s", (int)getpid(), PAGE, mode,
		secs, (unsigned long long)seed, (long long)start, body);
	close_out(f, tmp);
	if (rename(tmp, path))
		die(path);
}

/*
 * Writes the layout, prints "ready" and, with --wait-start, waits for
 * SIGUSR1 and writes the layout again with the start moved to then.
 * Returns the start of the loop, which the events file also gets.
 */
static int64_t start_loop(const char *mode, const char *body)
{
	int64_t start = now_ns();
	int sig, err;

	write_layout(mode, body, start);
	printf("evalwl: ready %d\n", (int)getpid());
	fflush(stdout);
	if (wait_start) {
		err = sigwait(&go_set, &sig);
		if (err) {
			errno = err;
			die("sigwait");
		}
		start = now_ns();
		write_layout(mode, body, start);
	}
	events = open_out("events");
	event("start", start);
	return start;
}

/* A stream to print the mode's layout lines into */
static FILE *body_stream(char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);

	if (!f)
		die("open_memstream");
	return f;
}

/* A set of pages that the loop picks one of uniformly */
struct set {
	char *base;
	uint64_t npages;
};

static uint64_t hotcold(size_t hot_len, size_t warm_len, size_t cold_len)
{
	char *warm = map_touched(warm_len + cold_len + hot_len);
	char *cold = warm + warm_len, *hot = cold + cold_len;
	uint64_t hp = hot_len / PAGE, wp = warm_len / PAGE, cp = cold_len / PAGE;
	/* [phase][0 hot, 1 warm, 2 cold]: see the comment at the top */
	const struct set sets[2][3] = {
		{ { hot, hp }, { warm, wp }, { cold, cp } },
		{ { cold, hp }, { warm, wp }, { cold + hot_len, cp } },
	};
	const uint32_t t_hot = lround(P_HOT * (1 << CLASS_BITS));
	const uint32_t t_warm = t_hot + lround(P_WARM * (1 << CLASS_BITS));
	const double w[3] = { t_hot / (double)(1 << CLASS_BITS),
		(t_warm - t_hot) / (double)(1 << CLASS_BITS),
		((1 << CLASS_BITS) - t_warm) / (double)(1 << CLASS_BITS) };
	static const char *const role[3] = { "hot", "warm", "cold" };
	int64_t start, swap_at, end, now;
	const struct set *cur = sets[0];
	uint64_t s = seed_state(seed, 0), n = 0;
	char *body;
	size_t body_len;
	FILE *f = body_stream(&body, &body_len);

	fprintf(f, "buffer warm %lu %lu\nbuffer cold %lu %lu\n"
		"buffer hot %lu %lu\n",
		(unsigned long)warm, (unsigned long)(warm + warm_len),
		(unsigned long)cold, (unsigned long)(cold + cold_len),
		(unsigned long)hot, (unsigned long)(hot + hot_len));
	for (int p = 0; p < 2; p++)
		for (int k = 0; k < 3; k++)
			fprintf(f, "phase %d %s %lu %lu %.17g\n", p, role[k],
				(unsigned long)sets[p][k].base,
				(unsigned long)(sets[p][k].base +
						sets[p][k].npages * PAGE),
				w[k]);
	close_out(f, "layout body");
	start = start_loop("hotcold", body);
	swap_at = start + secs * 5e8;
	end = start + secs * 1e9;

	do {
		for (int i = 0; i < BATCH; i++) {
			uint64_t r = rnd(&s);
			/*
			 * Bits 41-63 pick the set, 32-40 the word, 0-31 the
			 * page (multiply-shift: no division, no branch).
			 */
			uint32_t c = r >> (64 - CLASS_BITS);
			const struct set *st = &cur[(c >= t_hot) + (c >= t_warm)];
			uint64_t pg = ((r & 0xffffffffULL) * st->npages) >> 32;
			volatile uint64_t *q = (volatile uint64_t *)
				(st->base + pg * PAGE) + ((r >> 32) & WORDS_MASK);

			*q += 1;
		}
		n += BATCH;
		now = now_ns();
		if (cur == sets[0] && now >= swap_at) {
			cur = sets[1];
			event("swap", now);
		}
	} while (now < end);
	event("end", now);
	return n;
}

static uint64_t zipf(size_t len, double sexp)
{
	char *buf = map_touched(len);
	uint32_t np = len / PAGE, gbits = 1, *perm, *guide;
	uint64_t s = seed_state(seed, 0x5eed5eed5eed5eedULL), n = 0, g;
	double *cdf, *wpage, total = 0, acc = 0;
	int64_t end, now;
	char *body;
	size_t body_len;
	FILE *f;

	while ((1ULL << gbits) < np)
		gbits++;
	g = 1ULL << gbits;
	perm = malloc(np * sizeof(*perm));
	cdf = malloc(np * sizeof(*cdf));
	wpage = malloc(np * sizeof(*wpage));
	guide = malloc((g + 1) * sizeof(*guide));
	if (!perm || !cdf || !wpage || !guide)
		die("malloc");

	/* perm[rank - 1] = the page of that rank: Fisher-Yates */
	for (uint32_t i = 0; i < np; i++)
		perm[i] = i;
	for (uint32_t i = np - 1; i > 0; i--) {
		uint32_t j = rnd(&s) % (i + 1), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	/*
	 * The weight of each rank (in cdf[] for a start), each page's share
	 * of them, then cdf[i] = P(rank <= i + 1), the last forced to 1.
	 */
	for (uint32_t i = 0; i < np; i++)
		total += cdf[i] = pow(i + 1.0, -sexp);
	for (uint32_t i = 0; i < np; i++) {
		wpage[perm[i]] = cdf[i] / total;
		acc += cdf[i];
		cdf[i] = acc / total;
	}
	cdf[np - 1] = 1.0;
	/*
	 * guide[j] = the first index whose cdf exceeds j / g: a draw u in
	 * [j / g, (j + 1) / g) has its index in [guide[j], guide[j + 1]].
	 */
	for (uint64_t j = 0, i = 0; j < g; j++) {
		while (cdf[i] <= (double)j / g)
			i++;
		guide[j] = i;
	}
	guide[g] = np - 1;

	f = open_out("zipf_weights");
	if (fwrite(wpage, sizeof(*wpage), np, f) != np)
		die("zipf_weights");
	close_out(f, "zipf_weights");
	free(wpage);

	s = seed_state(seed, 0);
	f = body_stream(&body, &body_len);
	fprintf(f, "s %.17g\nbuffer zipf %lu %lu\nzipf buf %lu %lu\n", sexp,
		(unsigned long)buf, (unsigned long)(buf + len),
		(unsigned long)buf, (unsigned long)(buf + len));
	close_out(f, "layout body");
	end = start_loop("zipf", body) + secs * 1e9;

	do {
		for (int i = 0; i < BATCH; i++) {
			uint64_t r = rnd(&s);
			/*
			 * Bits 11-63 are u in [0, 1), their top gbits its
			 * guide bucket, bits 0-8 the word.
			 */
			double u = (r >> 11) * 0x1p-53;
			uint64_t j = r >> (64 - gbits);
			uint32_t lo = guide[j], hi = guide[j + 1];
			volatile uint64_t *q;

			while (lo < hi) {
				uint32_t mid = (lo + hi) >> 1;

				if (cdf[mid] > u)
					hi = mid;
				else
					lo = mid + 1;
			}
			q = (volatile uint64_t *)(buf + (uint64_t)perm[lo] * PAGE) +
				(r & WORDS_MASK);
			*q += 1;
		}
		n += BATCH;
		now = now_ns();
	} while (now < end);
	event("end", now);
	return n;
}

/* A positive number of MiB */
static size_t mib_arg(const char *v)
{
	char *e;
	unsigned long mb = strtoul(v, &e, 10);

	if (*e || !mb || mb > (1UL << 20))
		usage();
	return mb * MIB;
}

int main(int argc, char **argv)
{
	size_t hot = 16 * MIB, warm = 32 * MIB, cold = 192 * MIB;
	size_t size = 256 * MIB;
	double sexp = 0.99;
	uint64_t n;
	char *e;

	if (argc < 4)
		usage();
	secs = strtod(argv[2], &e);
	if (*e || !(secs > 0))
		usage();
	outdir = argv[3];
	for (int i = 4; i < argc; i++) {
		const char *o = argv[i], *v = argv[i + 1];

		if (!strcmp(o, "--wait-start")) {
			wait_start = 1;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (!strcmp(o, "--hot"))
			hot = mib_arg(v);
		else if (!strcmp(o, "--warm"))
			warm = mib_arg(v);
		else if (!strcmp(o, "--cold"))
			cold = mib_arg(v);
		else if (!strcmp(o, "--size"))
			size = mib_arg(v);
		else if (!strcmp(o, "--seed")) {
			seed = strtoull(v, &e, 0);
			if (*e)
				usage();
		} else if (!strcmp(o, "--s")) {
			sexp = strtod(v, &e);
			if (*e || !(sexp >= 0))
				usage();
		} else {
			usage();
		}
	}
	if (sysconf(_SC_PAGESIZE) != PAGE) {
		fprintf(stderr, "evalwl: needs %lu-byte pages\n", PAGE);
		return 1;
	}
	if (mkdir(outdir, 0755) && errno != EEXIST)
		die(outdir);
	/* blocked before "ready", so that an early SIGUSR1 waits for sigwait */
	sigemptyset(&go_set);
	sigaddset(&go_set, SIGUSR1);
	if (wait_start && sigprocmask(SIG_BLOCK, &go_set, NULL))
		die("sigprocmask");

	if (!strcmp(argv[1], "hotcold")) {
		if (hot > cold) {
			fprintf(stderr, "evalwl: --hot must not exceed --cold\n");
			return 2;
		}
		n = hotcold(hot, warm, cold);
	} else if (!strcmp(argv[1], "zipf")) {
		n = zipf(size, sexp);
	} else {
		usage();
	}
	if (fclose(events))
		die("events");
	printf("evalwl: done %llu\n", (unsigned long long)n);
	if (wait_start) {
		int sig;

		fflush(stdout);
		if (sigwait(&go_set, &sig))
			die("sigwait");
	}
	return 0;
}
