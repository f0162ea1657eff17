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
 *
 * usage: workload [seconds] [hot MiB] [cold MiB] [refault|cow]
 */
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
