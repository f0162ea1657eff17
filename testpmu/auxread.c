// SPDX-License-Identifier: GPL-2.0
/*
 * auxread.c: DAMON's AUX drain done by a user-space reader, to measure what
 * "why not decode in user space?" would cost (testpmu run aux-user).
 *
 * It opens, on every online CPU, the event that DAMON would open (same PMU,
 * config, config1/2, period, AUX buffer of 16 pages with a watermark of 2
 * pages), maps its ring buffer and AUX area as perf record does, and does
 * what the kdamond does with the records, the way user space has to: it
 * sleeps in poll() until a watermark's wakeup, reads the PERF_RECORD_AUX
 * records of the data ring (their TRUNCATED flag: perf core disabled the
 * event, and the reader enables it again with an ioctl once it consumed),
 * decodes the AUX records in place with DAMON's own decoder
 * (mm/damon/perf/spe.c, linked in from auxread-spe.c), and hands the data
 * addresses of the loads and stores to the kernel in one write() per
 * wakeup, to /dev/null: the cheapest hand-off there could be, as DAMON has
 * no interface that takes access reports from user space, and what the
 * kernel would then do with them (the report rings, the region update) is
 * not counted.  So its cost is a lower bound of a user-space drain.
 *
 * Usage: auxread TYPE CONFIG CONFIG1 CONFIG2 PERIOD SECONDS
 * Prints one line of key=value: records, wakeups, syscalls, bytes copied,
 * the process's CPU time (CLOCK_PROCESS_CPUTIME_ID, in guest nanoseconds:
 * instructions under QEMU -icount shift=0).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* auxread-spe.c: DAMON's decoder, and what the kdamond does with a record */
int auxread_decode(const uint8_t *buf, size_t len, unsigned long pos,
		   int *kind, uint64_t *va);

#define AUX_PAGES	16
#define WATERMARK_PAGES	2
#define MAX_CPUS	256
#define BATCH		4096

struct reader {
	int fd;
	int cpu;
	struct perf_event_mmap_page *meta;
	uint8_t *data;			/* the data ring, after meta */
	uint64_t data_size;
	uint8_t *aux;
	uint64_t aux_size;
};

static struct {
	unsigned long records, used, wakeups, polls, writes, enables;
	unsigned long truncated, malformed, wraps, aux_records;
	unsigned long long bytes;
} st;

static long page;
static uint64_t batch[BATCH];
static unsigned int nr_batch;
static int null_fd;

static void die(const char *what)
{
	fprintf(stderr, "auxread: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void flush_batch(void)
{
	if (!nr_batch)
		return;
	if (write(null_fd, batch, nr_batch * sizeof(batch[0])) < 0)
		die("write");
	st.writes++;
	nr_batch = 0;
}

/* The PERF_RECORD_AUX records of @r's data ring: whether one was TRUNCATED */
static int read_data(struct reader *r)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	int truncated = 0;

	while (tail < head) {
		struct perf_event_header h;
		uint64_t off = tail & (r->data_size - 1);
		uint8_t rec[64];

		memcpy(&h, r->data + off, sizeof(h));
		if (h.type == PERF_RECORD_AUX && h.size <= sizeof(rec)) {
			uint64_t flags;
			unsigned int i;

			for (i = 0; i < h.size; i++)
				rec[i] = r->data[(off + i) & (r->data_size - 1)];
			/* header, aux_offset, aux_size, flags */
			memcpy(&flags, rec + sizeof(h) + 16, sizeof(flags));
			st.aux_records++;
			if (flags & PERF_AUX_FLAG_TRUNCATED)
				truncated = 1;
		}
		tail += h.size;
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	return truncated;
}

/*
 * Decode what @r's AUX area holds, in place, and consume it.  A record that
 * the end of the area cuts is copied out with what follows it at the start.
 */
static void read_aux(struct reader *r)
{
	uint64_t head = __atomic_load_n(&r->meta->aux_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->aux_tail;
	static uint8_t tmp[4096];

	while (tail < head) {
		uint64_t off = tail & (r->aux_size - 1), va = 0;
		uint64_t avail = head - tail, first = r->aux_size - off;
		int kind, ret;

		ret = auxread_decode(r->aux + off, avail < first ? avail : first,
				     tail, &kind, &va);
		if (ret == -ENODATA && avail > first) {
			size_t n = avail < sizeof(tmp) ? avail : sizeof(tmp);

			memcpy(tmp, r->aux + off, first);
			memcpy(tmp + first, r->aux, n - first);
			st.bytes += n;
			st.wraps++;
			ret = auxread_decode(tmp, n, tail, &kind, &va);
		}
		if (ret == -ENODATA)
			break;		/* cut at the head: wait for the rest */
		if (ret < 0) {
			/* as the kdamond: discard up to the committed head */
			st.malformed++;
			tail = head;
			break;
		}
		tail += ret;
		if (!kind)
			continue;
		st.records++;
		if (kind == 2) {
			st.used++;
			batch[nr_batch++] = va;
			if (nr_batch == BATCH)
				flush_batch();
		}
	}
	__atomic_store_n(&r->meta->aux_tail, tail, __ATOMIC_RELEASE);
}

static void open_reader(struct reader *r, struct perf_event_attr *attr,
			int cpu)
{
	size_t data_pages = 4;

	r->cpu = cpu;
	r->fd = syscall(SYS_perf_event_open, attr, -1, cpu, -1,
			PERF_FLAG_FD_CLOEXEC);
	if (r->fd < 0)
		die("perf_event_open");
	r->meta = mmap(NULL, (1 + data_pages) * page, PROT_READ | PROT_WRITE,
		       MAP_SHARED, r->fd, 0);
	if (r->meta == MAP_FAILED)
		die("mmap of the ring buffer");
	r->data = (uint8_t *)r->meta + page;
	r->data_size = data_pages * page;
	r->meta->aux_offset = (1 + data_pages) * page;
	r->meta->aux_size = AUX_PAGES * page;
	r->aux_size = AUX_PAGES * page;
	r->aux = mmap(NULL, r->aux_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      r->fd, r->meta->aux_offset);
	if (r->aux == MAP_FAILED)
		die("mmap of the AUX area");
}

static unsigned long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	static struct reader readers[MAX_CPUS];
	static struct pollfd pfd[MAX_CPUS];
	struct perf_event_attr attr = { 0 };
	unsigned long long ns0, ns1;
	struct timespec end, now;
	int i, n = 0, ncpus;

	if (argc != 7) {
		fprintf(stderr, "usage: auxread TYPE CONFIG CONFIG1 CONFIG2 PERIOD SECONDS\n");
		return 2;
	}
	page = sysconf(_SC_PAGESIZE);
	null_fd = open("/dev/null", O_WRONLY);
	if (null_fd < 0)
		die("/dev/null");
	attr.size = sizeof(attr);
	attr.type = strtoul(argv[1], NULL, 0);
	attr.config = strtoull(argv[2], NULL, 0);
	attr.config1 = strtoull(argv[3], NULL, 0);
	attr.config2 = strtoull(argv[4], NULL, 0);
	attr.sample_period = strtoull(argv[5], NULL, 0);
	attr.aux_watermark = WATERMARK_PAGES * page;
	attr.disabled = 1;
	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	for (i = 0; i < ncpus && n < MAX_CPUS; i++, n++) {
		open_reader(&readers[n], &attr, i);
		pfd[n].fd = readers[n].fd;
		pfd[n].events = POLLIN;
	}

	ns0 = cpu_ns();
	for (i = 0; i < n; i++)
		if (ioctl(readers[i].fd, PERF_EVENT_IOC_ENABLE, 0))
			die("enable");
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += strtoul(argv[6], NULL, 0);
	for (;;) {
		int ready;

		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > end.tv_sec ||
		    (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec))
			break;
		ready = poll(pfd, n, 100);
		st.polls++;
		if (ready < 0 && errno != EINTR)
			die("poll");
		for (i = 0; ready > 0 && i < n; i++) {
			if (!pfd[i].revents)
				continue;
			st.wakeups++;
			/* the flags first: what TRUNCATED stopped is read now */
			if (read_data(&readers[i])) {
				read_aux(&readers[i]);
				st.truncated++;
				if (ioctl(readers[i].fd, PERF_EVENT_IOC_ENABLE, 0))
					die("enable");
				st.enables++;
			} else {
				read_aux(&readers[i]);
			}
		}
		flush_batch();
	}
	for (i = 0; i < n; i++)
		ioctl(readers[i].fd, PERF_EVENT_IOC_DISABLE, 0);
	ns1 = cpu_ns();
	printf("auxread cpus=%d records=%lu used=%lu wakeups=%lu polls=%lu writes=%lu enables=%lu truncated=%lu malformed=%lu aux_records=%lu copied=%llu wraps=%lu cpu_ns=%llu\n",
	       n, st.records, st.used, st.wakeups, st.polls, st.writes,
	       st.enables, st.truncated, st.malformed, st.aux_records,
	       st.bytes, st.wraps, ns1 - ns0);
	return 0;
}
