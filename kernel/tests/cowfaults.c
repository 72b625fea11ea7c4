// SPDX-License-Identifier: GPL-2.0
/*
 * cowfaults: count and time the COW faults of a child writing memory it
 * shares with its parent after fork(), as seen by /proc/cow_stats.
 *
 *   cowfaults [--pattern seq|random|single|stride|hotset|burst|memcpy|fork]
 *             [--size-mb N | --pages N] [--precopy 0|1|2] [--depth N]
 *             [--reps N] [--thp] [--stride N] [--hot-pct P] [--lat]
 *
 * Patterns: seq writes every page in order, random every page in a random
 * order, single one page, stride every N-th page (default 2), hotset as many
 * writes as there are pages, each to a random page of a contiguous hot set
 * of P % of the pages (default 10) in the middle of the mapping, burst runs
 * of N (--stride) consecutive pages, each in ascending order, at random
 * non-overlapping places (runs may abut), in random order, until P % of
 * the pages are written (as cowbench's burst workload).  fork
 * times fork() itself (the parent's call, the child exits at once) of the
 * populated mapping: one line per repetition with "ns" the fork time.
 *
 * One line per repetition, then a summary line, all "key=value" pairs.
 * "faults" is the /proc/cow_stats fault delta over the child's write loop
 * (everything else in the guest is idle), "ns" the loop's wall time,
 * "distinct" the pages written, "new_pages" = faults + pre-copied pages (the
 * child's anonymous growth in pages), "wasted" = pre-copied pages the child
 * never wrote, "anon_kb" the change of AnonPages in /proc/meminfo (a
 * cross-check; per-CPU counter drift makes it approximate).  With --lat, each
 * write is timed: lat_p50, lat_p99 and lat_max in ns.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "cowtest.h"

struct result {
	unsigned long long faults, minflt, success, attempts, ns;
	unsigned long long lat_p50, lat_p99, lat_max;
	long long anon_kb;
	int ok;
};

static long long anon_pages_kb(void)
{
	static char buf[4096];
	char *p;

	if (read_file("/proc/meminfo", buf, sizeof(buf)))
		return 0;
	p = strstr(buf, "AnonPages:");
	return p ? atoll(p + 10) : 0;
}

static const char *pattern = "seq";
static long pages = 4096;
static int precopy = -1, depth = 0, reps = 5, thp, have_stats = 1, stride = 2, hot_pct = 10, lat;

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

/*
 * The copy limit: a plain memcpy of the same bytes between two populated
 * private buffers, in the same guest, so bench.sh can print how far the COW
 * write loop is from copying the memory and nothing else.
 */
static int memcpy_reference(void)
{
	size_t len = (size_t)pages * 4096;

	for (int rep = 0; rep < reps; rep++) {
		char *src = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		char *dst = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		uint64_t t0, t1;

		if (src == MAP_FAILED || dst == MAP_FAILED)
			return 2;
		memset(src, 0x5a, len);
		t0 = now_ns();
		memcpy(dst, src, len);
		__asm__ __volatile__("" ::: "memory");
		t1 = now_ns();
		printf("cowfaults pattern=memcpy pages=%ld written=%ld precopy=%d depth=%d rep=%d faults=0 minflt=0 "
		       "precopy_success=0 precopy_attempts=0 ns=%llu\n",
		       pages, pages, precopy, depth, rep, (unsigned long long)(t1 - t0));
		fflush(stdout);
		munmap(src, len);
		munmap(dst, len);
	}
	return 0;
}

/* fork() of a populated private mapping: the cost COW pays up front. */
static int fork_reference(void)
{
	size_t len = (size_t)pages * 4096;
	char *mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mem == MAP_FAILED)
		return 2;
	madvise(mem, len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	memset(mem, 0x5a, len);
	for (int rep = 0; rep < reps; rep++) {
		uint64_t t0 = now_ns(), t1;
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		t1 = now_ns();
		if (pid < 0)
			return 2;
		waitpid(pid, NULL, 0);
		printf("cowfaults pattern=fork pages=%ld written=0 precopy=%d depth=%d rep=%d faults=0 minflt=0 "
		       "precopy_success=0 precopy_attempts=0 ns=%llu\n",
		       pages, precopy, depth, rep, (unsigned long long)(t1 - t0));
		fflush(stdout);
	}
	munmap(mem, len);
	return 0;
}

static void timed_writes(char *mem, const long *order, long n, unsigned long long *lat)
{
	for (long i = 0; i < n; i++) {
		uint64_t a = now_ns();

		mem[order[i] * 4096 + (i & 63)] = (char)(i | 1);
		__asm__ __volatile__("" ::: "memory");
		lat[i] = now_ns() - a;
	}
}

static void child(char *mem, long *order, long n, int go_fd, int res_fd)
{
	struct cow_stats before, after;
	struct rusage ru0, ru1;
	struct result r = { 0 };
	unsigned long long *latv = NULL;
	long long anon0;
	uint64_t t0, t1;
	char c;

	if (lat) {
		latv = mmap(NULL, n * sizeof(*latv), PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (latv == MAP_FAILED)
			_exit(2);
		memset(latv, 0, n * sizeof(*latv));
	}
	anon0 = anon_pages_kb();
	/* Warm up: fault in our stack, the stats buffers and the code. */
	cow_stats_read(&before);
	cow_stats_read(&after);
	t0 = now_ns();
	if (read(go_fd, &c, 1) != 1)
		_exit(2);
	getrusage(RUSAGE_SELF, &ru0);
	getrusage(RUSAGE_SELF, &ru1);
	cow_stats_read(&before);
	anon0 = anon_pages_kb();
	getrusage(RUSAGE_SELF, &ru0);
	t0 = now_ns();
	if (latv) {
		timed_writes(mem, order, n, latv);
	} else {
		for (long i = 0; i < n; i++)
			mem[order[i] * 4096 + (i & 63)] = (char)(i | 1);
	}
	t1 = now_ns();
	getrusage(RUSAGE_SELF, &ru1);
	cow_stats_read(&after);
	r.anon_kb = anon_pages_kb() - anon0;
	if (latv) {
		qsort(latv, n, sizeof(*latv), cmp_ull);
		r.lat_p50 = latv[n / 2];
		r.lat_p99 = latv[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1];
		r.lat_max = latv[n - 1];
	}
	r.minflt = ru1.ru_minflt - ru0.ru_minflt;
	/* Without /proc/cow_stats (stock kernel), count the child's minor faults. */
	r.faults = have_stats ? cow_stat(&after, "faults") - cow_stat(&before, "faults") : r.minflt;
	if (cow_has_stat(&after, "precopy_success")) {
		r.success = cow_stat(&after, "precopy_success") - cow_stat(&before, "precopy_success");
		r.attempts = cow_stat(&after, "precopy_attempts") - cow_stat(&before, "precopy_attempts");
	}
	r.ns = t1 - t0;
	r.ok = 1;
	if (write(res_fd, &r, sizeof(r)) != sizeof(r))
		_exit(3);
	_exit(0);
}

int main(int argc, char **argv)
{
	unsigned long long *f, *ns;
	double sum_f = 0, sum_s = 0, sum_a = 0, sum_ns = 0;
	double sum_w = 0, sum_new = 0;
	struct cow_stats st;
	long n, *order, distinct = 0;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--pattern") && i + 1 < argc)
			pattern = argv[++i];
		else if (!strcmp(argv[i], "--size-mb") && i + 1 < argc)
			pages = atol(argv[++i]) * 256;
		else if (!strcmp(argv[i], "--pages") && i + 1 < argc)
			pages = atol(argv[++i]);
		else if (!strcmp(argv[i], "--precopy") && i + 1 < argc)
			precopy = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--depth") && i + 1 < argc)
			depth = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--thp"))
			thp = 1;
		else if (!strcmp(argv[i], "--stride") && i + 1 < argc)
			stride = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--hot-pct") && i + 1 < argc)
			hot_pct = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--lat"))
			lat = 1;
		else {
			fprintf(stderr, "usage: %s [--pattern seq|random|single|stride|hotset|burst|memcpy|fork] "
				"[--size-mb N|--pages N] [--precopy M] [--depth N] [--reps N] [--thp] "
				"[--stride N] [--hot-pct P] [--lat]\n", argv[0]);
			return 2;
		}
	}
	if (cow_stats_read(&st)) {
		have_stats = 0;
		fprintf(stderr, "note: no %s (stock kernel?): faults = child's minor faults\n", COW_STATS_PATH);
	}
	if (precopy >= 0 && set_precopy(precopy, depth)) {
		fprintf(stderr, "cannot set vm.cow_precopy=%d depth=%d\n", precopy, depth);
		return 2;
	}
	if (precopy < 0) {
		char b[32] = "0";

		read_file("/proc/sys/vm/cow_precopy", b, sizeof(b));
		precopy = atoi(b);
	}
	if (depth <= 0) {
		char b[32] = "0";

		read_file("/proc/sys/vm/cow_precopy_depth", b, sizeof(b));
		depth = atoi(b);
	}

	if (pages < 1 || reps < 1 || stride < 1 || hot_pct < 1 || hot_pct > 100) {
		fprintf(stderr, "cowfaults: --pages, --reps, --stride must be >= 1, --hot-pct 1..100\n");
		return 2;
	}
	if (!strcmp(pattern, "memcpy"))
		return memcpy_reference();
	if (!strcmp(pattern, "fork"))
		return fork_reference();
	n = !strcmp(pattern, "single") ? 1 : pages;
	if (!strcmp(pattern, "stride"))
		n = (pages + stride - 1) / stride;
	if (!strcmp(pattern, "burst"))
		n = pages / stride * hot_pct / 100 * stride;
	order = malloc(sizeof(long) * pages);
	f = calloc(reps, sizeof(*f));
	ns = calloc(reps, sizeof(*ns));
	if (!order || !f || !ns)
		return 2;
	for (long k = 0; k < pages; k++)
		order[k] = k;
	if (!strcmp(pattern, "single")) {
		order[0] = pages / 2;
	} else if (!strcmp(pattern, "random")) {
		srandom(12345);
		for (long k = pages - 1; k > 0; k--) {
			long j = random() % (k + 1), t = order[k];

			order[k] = order[j];
			order[j] = t;
		}
	} else if (!strcmp(pattern, "stride")) {
		for (long k = 0; k < n; k++)
			order[k] = k * stride;
	} else if (!strcmp(pattern, "hotset")) {
		long hot = pages * hot_pct / 100 > 0 ? pages * hot_pct / 100 : 1;
		long base = (pages - hot) / 2;

		srandom(54321);
		for (long k = 0; k < n; k++)
			order[k] = base + random() % hot;
	} else if (!strcmp(pattern, "burst")) {
		long slots = pages / stride, *slot = malloc(sizeof(long) * (slots ? slots : 1));

		if (!slot)
			return 2;
		srandom(24680);
		for (long k = 0; k < slots; k++)
			slot[k] = k;
		for (long k = slots - 1; k > 0; k--) {
			long j = random() % (k + 1), t = slot[k];

			slot[k] = slot[j];
			slot[j] = t;
		}
		for (long k = 0; k < n; k++)
			order[k] = slot[k / stride] * stride + k % stride;
		free(slot);
	} else if (strcmp(pattern, "seq")) {
		fprintf(stderr, "unknown pattern %s\n", pattern);
		return 2;
	}

	{
		char *seen = calloc(pages, 1);

		if (!seen)
			return 2;
		distinct = 0;
		for (long k = 0; k < n; k++)
			if (!seen[order[k]]++)
				distinct++;
		free(seen);
	}
	for (int rep = 0; rep < reps; rep++) {
		char *mem = mmap(NULL, pages * 4096, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		int go[2], res[2], status;
		struct result r = { 0 };
		char c = 'g';
		pid_t pid;

		if (mem == MAP_FAILED || pipe(go) || pipe(res))
			return 2;
		madvise(mem, pages * 4096, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
		for (long k = 0; k < pages; k++)
			memset(mem + k * 4096, (int)(k & 0xff) | 1, 4096);
		pid = fork();
		if (pid < 0)
			return 2;
		if (pid == 0)
			child(mem, order, n, go[0], res[1]);
		/* Break COW on our own stack before the child starts measuring. */
		memset(&r, 0, sizeof(r));
		status = 0;
		if (write(go[1], &c, 1) != 1)
			return 2;
		if (read(res[0], &r, sizeof(r)) != sizeof(r) || !r.ok) {
			fprintf(stderr, "child failed\n");
			return 1;
		}
		waitpid(pid, &status, 0);
		close(go[0]); close(go[1]); close(res[0]); close(res[1]);
		munmap(mem, pages * 4096);
		f[rep] = r.faults;
		ns[rep] = r.ns;
		sum_f += r.faults;
		sum_s += r.success;
		sum_a += r.attempts;
		sum_ns += r.ns;
		{
			unsigned long long newp = r.faults + r.success;
			long long wasted = (long long)newp - distinct;

			sum_new += newp;
			sum_w += wasted > 0 ? wasted : 0;
			printf("cowfaults pattern=%s pages=%ld written=%ld precopy=%d depth=%d rep=%d faults=%llu "
			       "minflt=%llu precopy_success=%llu precopy_attempts=%llu ns=%llu distinct=%ld "
			       "new_pages=%llu wasted=%lld anon_kb=%lld lat_p50=%llu lat_p99=%llu lat_max=%llu\n",
			       pattern, pages, n, precopy, depth, rep, r.faults, r.minflt, r.success, r.attempts,
			       r.ns, distinct, newp, wasted, r.anon_kb, r.lat_p50, r.lat_p99, r.lat_max);
		}
		fflush(stdout);
	}
	qsort(f, reps, sizeof(*f), cmp_ull);
	qsort(ns, reps, sizeof(*ns), cmp_ull);
	{
		double faults = sum_f / reps, success = sum_s / reps;
		/* A pre-copied page is a hit when the child wrote it later. */
		double hits = distinct - faults > 0 ? distinct - faults : 0;

		printf("cowfaults-summary pattern=%s pages=%ld written=%ld precopy=%d depth=%d reps=%d "
		       "faults_avg=%.1f faults_median=%llu precopy_success_avg=%.1f precopy_attempts_avg=%.1f "
		       "hit_rate=%.3f ns_avg=%.0f ns_median=%llu ns_per_page=%.1f distinct=%ld new_pages_avg=%.1f "
		       "wasted_avg=%.1f\n",
		       pattern, pages, n, precopy, depth, reps, faults, f[reps / 2], success, sum_a / reps,
		       success > 0 ? (hits > success ? 1.0 : hits / success) : 0.0,
		       sum_ns / reps, ns[reps / 2], sum_ns / reps / n, distinct, sum_new / reps, sum_w / reps);
	}
	return 0;
}
