// SPDX-License-Identifier: GPL-2.0
/*
 * Page-fault storm for the damon-perf benchmarks (bench/bench.sh).
 *
 * Each of THREADS threads maps MIB MiB of anonymous memory, writes one byte
 * of every page, and unmaps it, ROUNDS times.  Transparent huge pages are
 * disabled on the mappings, so that every base page faults once per round.
 * The threads start together; the wall time from their start to the end of
 * the last one is printed on one line, with the minor faults that the
 * process counted (minflt, which should be close to F):
 *
 *	faultstorm threads=T mib=M rounds=R faults=F elapsed_ns=N ns_per_fault=X minflt=N
 *
 * usage: faultstorm [-t THREADS] [-m MIB] [-r ROUNDS] [-k] [-w]
 *	-t	number of threads (default: the online CPUs)
 *	-m	MiB that each thread maps per round (default 32)
 *	-r	rounds (default 8)
 *	-k	keep the mapping, and drop its pages with MADV_DONTNEED between
 *		the rounds instead of unmapping it, so that the addresses stay
 *	-w	print "ready pid=PID" and wait for SIGUSR1 before starting, so
 *		that DAMON can be set up to monitor the process first
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static size_t sz_map, sz_page;
static int nr_rounds = 8, keep;
static pthread_barrier_t start_barrier;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static char *map_area(void)
{
	char *p = mmap(NULL, sz_map, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	/* fails without CONFIG_TRANSPARENT_HUGEPAGE, where it is not needed */
	madvise(p, sz_map, MADV_NOHUGEPAGE);
	return p;
}

static void touch_pages(char *p)
{
	size_t off;

	for (off = 0; off < sz_map; off += sz_page)
		p[off] = 1;
	/* keep the compiler from dropping the writes */
	asm volatile("" : : "r" (p) : "memory");
}

static void *storm(void *arg)
{
	char *p = NULL;
	int round;

	(void)arg;
	pthread_barrier_wait(&start_barrier);
	for (round = 0; round < nr_rounds; round++) {
		if (!keep || !p)
			p = map_area();
		else if (madvise(p, sz_map, MADV_DONTNEED))
			die("madvise");
		touch_pages(p);
		if (!keep && munmap(p, sz_map))
			die("munmap");
	}
	if (keep && munmap(p, sz_map))
		die("munmap");
	return NULL;
}

static long long now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts))
		die("clock_gettime");
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char *argv[])
{
	long nr_threads = sysconf(_SC_NPROCESSORS_ONLN);
	long long start, elapsed, faults;
	long mib = 32;
	pthread_t *threads;
	struct rusage ru;
	int opt, wait_signal = 0, sig, err;
	sigset_t set;
	long i;

	while ((opt = getopt(argc, argv, "t:m:r:kw")) != -1) {
		switch (opt) {
		case 't':
			nr_threads = atol(optarg);
			break;
		case 'm':
			mib = atol(optarg);
			break;
		case 'r':
			nr_rounds = atoi(optarg);
			break;
		case 'k':
			keep = 1;
			break;
		case 'w':
			wait_signal = 1;
			break;
		default:
			fprintf(stderr, "usage: %s [-t THREADS] [-m MIB] [-r ROUNDS] [-k] [-w]\n",
				argv[0]);
			return 1;
		}
	}
	if (nr_threads < 1 || mib < 1 || nr_rounds < 1) {
		fprintf(stderr, "faultstorm: threads, MiB and rounds must be positive\n");
		return 1;
	}
	sz_page = sysconf(_SC_PAGESIZE);
	sz_map = (size_t)mib << 20;

	/* blocked in all threads, and taken by sigwait() */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	err = pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (err) {
		errno = err;
		die("pthread_sigmask");
	}
	err = pthread_barrier_init(&start_barrier, NULL, nr_threads + 1);
	if (err) {
		errno = err;
		die("pthread_barrier_init");
	}
	threads = calloc(nr_threads, sizeof(*threads));
	if (!threads)
		die("calloc");
	for (i = 0; i < nr_threads; i++) {
		err = pthread_create(&threads[i], NULL, storm, NULL);
		if (err) {
			errno = err;
			die("pthread_create");
		}
	}
	if (wait_signal) {
		printf("ready pid=%d\n", getpid());
		fflush(stdout);
		if (sigwait(&set, &sig))
			die("sigwait");
	}

	start = now_ns();
	pthread_barrier_wait(&start_barrier);
	for (i = 0; i < nr_threads; i++)
		pthread_join(threads[i], NULL);
	elapsed = now_ns() - start;

	faults = (long long)nr_threads * nr_rounds * (sz_map / sz_page);
	if (getrusage(RUSAGE_SELF, &ru))
		die("getrusage");
	printf("faultstorm threads=%ld mib=%ld rounds=%d faults=%lld elapsed_ns=%lld ns_per_fault=%lld minflt=%ld\n",
	       nr_threads, mib, nr_rounds, faults, elapsed,
	       faults ? elapsed / faults : 0, ru.ru_minflt);
	free(threads);
	return 0;
}
