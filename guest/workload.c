// SPDX-License-Identifier: GPL-2.0
/*
 * A workload with a known access pattern for DAMON demos and tests: a "hot"
 * buffer written continuously and a "cold" buffer touched once, mapped
 * apart.  Prints both ranges, then runs for the given number of seconds.
 * With "refault", the hot buffer is dropped (MADV_DONTNEED) before each
 * round, so that every round page-faults on it: the software page-faults
 * perf event then samples the hot buffer's addresses.  With "cow", a child
 * is forked and reaped before each round, which write-protects the hot
 * buffer's pages: every write of the round page-faults on a page that is
 * mapped, and keeps its frame, so that the faults have physical addresses.
 * With "spread", a thread on each online CPU, pinned there, writes the hot
 * buffer: every CPU runs the workload's thread group, as a sampling PMU on
 * every CPU needs to make records of it on each.  "spread:PCT" makes each
 * thread busy for 5 ms, longer than a tick at HZ=250 so that a timer
 * interrupt lands in it, and then sleep: busy PCT percent of the time.  A
 * guest of many vCPUs on a host of two CPUs then still leaves CPU time to
 * the kdamond and to the test script.
 *
 * usage: workload [seconds] [hot MiB] [cold MiB] [refault|cow|spread[:PCT]]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char *map(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

struct spread_arg {
	pthread_t thread;
	int cpu;
	char *hot;
	size_t hot_len;
	long page;
	time_t end;
	int duty;		/* percent of each period that it is busy */
	unsigned long rounds;
};

#define SPREAD_BUSY_NS	5000000LL

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* One round over the hot buffer of @a */
static void spread_round(struct spread_arg *a)
{
	for (size_t off = 0; off < a->hot_len; off += a->page)
		__atomic_fetch_add(&a->hot[off], 1, __ATOMIC_RELAXED);
	a->rounds++;
}

static void *spread_thread(void *p)
{
	struct spread_arg *a = p;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(a->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("sched_setaffinity");
	while (time(NULL) < a->end) {
		long long start = now_ns(), idle;
		struct timespec rest;

		if (a->duty >= 100) {
			spread_round(a);
			continue;
		}
		do
			spread_round(a);
		while (now_ns() - start < SPREAD_BUSY_NS);
		idle = SPREAD_BUSY_NS * (100 - a->duty) / a->duty;
		rest.tv_sec = idle / 1000000000LL;
		rest.tv_nsec = idle % 1000000000LL;
		nanosleep(&rest, NULL);
	}
	return NULL;
}

/* A thread on each online CPU writes @hot until @end; 1 if none started */
static int spread(char *hot, size_t hot_len, long page, time_t end,
		  int duty)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN), started = 0;
	unsigned long rounds = 0;
	struct spread_arg *a = calloc(n > 0 ? n : 1, sizeof(*a));
	cpu_set_t online;

	if (!a || sched_getaffinity(0, sizeof(online), &online)) {
		perror("spread");
		return 1;
	}
	/* every CPU that is online, whatever this process was pinned to */
	for (int cpu = 0; cpu < CPU_SETSIZE && started < n; cpu++) {
		char path[64];

		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/online", cpu);
		if (cpu && access(path, F_OK))
			continue;
		a[started] = (struct spread_arg){ .cpu = cpu, .hot = hot,
			.hot_len = hot_len, .page = page, .end = end,
			.duty = duty };
		if (pthread_create(&a[started].thread, NULL, spread_thread,
				   &a[started]))
			break;
		started++;
	}
	for (long i = 0; i < started; i++) {
		pthread_join(a[i].thread, NULL);
		rounds += a[i].rounds;
	}
	printf("workload: %lu rounds over the hot buffer by %ld threads\n",
	       rounds, started);
	free(a);
	return !started;
}

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 10;
	size_t hot_len = (argc > 2 ? atol(argv[2]) : 16) << 20;
	size_t cold_len = (argc > 3 ? atol(argv[3]) : 64) << 20;
	char *cold = map(cold_len);
	char *gap = map(64 << 20);	/* keeps the two apart */
	char *hot = map(hot_len);
	long page = sysconf(_SC_PAGESIZE);
	time_t end = time(NULL) + secs;
	unsigned long rounds = 0;
	int refault = argc > 4 && !strcmp(argv[4], "refault");
	int cow = argc > 4 && !strcmp(argv[4], "cow");
	pid_t child;

	munmap(gap, 64 << 20);
	memset(cold, 1, cold_len);
	printf("hot=%p-%p cold=%p-%p\n", hot, hot + hot_len, cold,
	       cold + cold_len);
	fflush(stdout);
	if (argc > 4 && !strncmp(argv[4], "spread", 6)) {
		int duty = argv[4][6] == ':' ? atoi(argv[4] + 7) : 100;

		if (duty < 1 || duty > 100) {
			fprintf(stderr, "spread:PCT needs 1 <= PCT <= 100\n");
			return 1;
		}
		return spread(hot, hot_len, page, end, duty);
	}
	while (time(NULL) < end) {
		if (refault && madvise(hot, hot_len, MADV_DONTNEED)) {
			perror("madvise");
			return 1;
		}
		if (cow) {
			child = fork();
			if (child < 0) {
				perror("fork");
				return 1;
			}
			if (!child)
				_exit(0);
			waitpid(child, NULL, 0);
		}
		for (size_t off = 0; off < hot_len; off += page)
			hot[off]++;
		rounds++;
	}
	printf("workload: %lu rounds over the hot buffer\n", rounds);
	return 0;
}
