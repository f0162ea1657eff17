// SPDX-License-Identifier: GPL-2.0
/*
 * oracle-test: the guest side of test.sh, a workload whose accesses are
 * known exactly.  Two buffers of NPAGES pages each, mapped apart:
 *	cold	one 8-byte store per page, once
 *	hot	one 8-byte store per page, then ITERS rounds of one 8-byte
 *		volatile load per page
 * so that every hot page sees ITERS + 1 user accesses and every cold page
 * one.  Faulting the pages in is the kernel's work (clearing them), which
 * the oracle must not count.  Then /proc/self/pagemap gives the
 * guest-physical frame of every page (as root: PFNs are zero otherwise).
 *
 * Before all that and after, a spin of 2.5 windows of instructions that
 * makes no memory access: at least one whole window with no user access at
 * all, so that test.sh can tell the windows of this program from those of
 * the processes before and after it, which may use the same frames.
 *
 * usage: oracle-test ITERS WINDOW
 *	WINDOW	the oracle's window, in instructions
 * Output, on stdout, lines test.sh parses:
 *	ORACLE start			before the first touch (test.sh takes
 *					the host's time of this line and of
 *					the next, the loop's host time)
 *	ORACLE iters N
 *	ORACLE loop_ns NS		the load loop's CLOCK_MONOTONIC time
 *	ORACLE hot I PFN		one per page, I the page's index
 *	ORACLE cold I PFN
 *	ORACLE done
 *
 * build: gcc -static -O2 -Wall -o oracle-test oracle-test.c
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define NPAGES		64
#define PAGE_SIZE	4096
#define WORDS		(PAGE_SIZE / sizeof(uint64_t))

static volatile uint64_t *map_buffer(void)
{
	void *p = mmap(NULL, NPAGES * PAGE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	/* 4 KiB pages, one PFN each (64 pages could not be a THP anyway) */
	madvise(p, NPAGES * PAGE_SIZE, MADV_NOHUGEPAGE);
	return p;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void print_pfns(int fd, const char *name, volatile uint64_t *buf)
{
	int i;

	for (i = 0; i < NPAGES; i++) {
		uintptr_t va = (uintptr_t)(buf + i * WORDS);
		uint64_t e;

		if (pread(fd, &e, sizeof(e), va / PAGE_SIZE * sizeof(e)) !=
		    sizeof(e)) {
			perror("pread pagemap");
			exit(1);
		}
		/* bit 63: present; bits 0-54: the PFN */
		if (!(e >> 63)) {
			fprintf(stderr, "%s page %d not present\n", name, i);
			exit(1);
		}
		printf("ORACLE %s %d %llu\n", name, i,
		       (unsigned long long)(e & ((1ull << 55) - 1)));
	}
}

/* 2.5 windows of instructions, two a round, with no memory access */
static void spin(long window)
{
	uint64_t n = window * 5 / 4;

	asm volatile("1: dec %0; jnz 1b" : "+r" (n));
}

int main(int argc, char **argv)
{
	volatile uint64_t *hot, *cold;
	uint64_t sum = 0, t0, t1;
	long window;
	long iters, it;
	int i, fd;

	if (argc != 3 || (iters = atol(argv[1])) <= 0 ||
	    (window = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: oracle-test ITERS WINDOW\n");
		return 2;
	}
	spin(window);
	printf("ORACLE start\n");
	fflush(stdout);
	hot = map_buffer();
	/* a page between them, so that they are two mappings */
	mmap(NULL, PAGE_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cold = map_buffer();

	for (i = 0; i < NPAGES; i++) {
		cold[i * WORDS] = i + 1;
		hot[i * WORDS] = i + 1;
	}
	t0 = now_ns();
	for (it = 0; it < iters; it++)
		for (i = 0; i < NPAGES; i++)
			sum += hot[i * WORDS];
	t1 = now_ns();

	fd = open("/proc/self/pagemap", O_RDONLY);
	if (fd < 0) {
		perror("/proc/self/pagemap");
		return 1;
	}
	printf("ORACLE iters %ld\n", iters);
	printf("ORACLE loop_ns %llu\n", (unsigned long long)(t1 - t0));
	/* the sum, so that the loads are used (they are volatile anyway) */
	printf("ORACLE sum %llu\n", (unsigned long long)sum);
	print_pfns(fd, "hot", hot);
	print_pfns(fd, "cold", cold);
	printf("ORACLE done\n");
	fflush(stdout);
	spin(window);
	return 0;
}
