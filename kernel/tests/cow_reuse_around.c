// SPDX-License-Identifier: GPL-2.0
/*
 * cow_reuse_around: vm.cow_reuse_around, the reuse-side fault-around.  When a
 * write fault reuses an exclusively owned anonymous page, the kernel also
 * makes writable the PTEs of its aligned window whose pages it would reuse
 * too.  Checked here, in exact counts (the process's own minor faults, the
 * cow_reuse_around and cow_reuse_around_pages events of /proc/vmstat, and the
 * same keys of /proc/cow_stats when it exists):
 *
 *   sysctl      0..16 accepted, 17 refused, a value that is not a power of
 *               two reads back rounded down, 1 reads back 0 (off)
 *   counts      after a forked child exited, the parent writes N pages in
 *               order and in random order: N traps with the window off,
 *               N / W with a window of W pages (N - N / W PTEs made writable)
 *   isolation   child A exits at once, child B stays alive and writes its odd
 *               pages (the parent's odd pages become its own, the even ones
 *               stay shared with B); the parent writes every page in random
 *               order: every even page must still take its COW fault (traps
 *               N / 2 + N / W - 1 after a first write to page 1), B must read
 *               back exactly its data and the parent its own
 *   soft-dirty  after clear_refs 4 (soft-dirty cleared, PTEs write-protected),
 *               no PTE may be made writable ahead: N traps for N pages, each
 *               page soft-dirty in pagemap after its write (skipped where the
 *               kernel has no soft-dirty tracking)
 *
 *   cow_reuse_around [--pages N]     (N a multiple of 16, default 1024)
 *
 * Reports one KTAP result per check (ktap.h) and exits 1 on any failure, 4
 * (skip) when the kernel has no vm.cow_reuse_around, 2 on a usage error.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "cowtest.h"
#include "ktap.h"

#define PS 4096L
#define SYSCTL "/proc/sys/vm/cow_reuse_around"

static long npages = 1024;
static long *perm;

#define CHECK(cond, name, fmt, ...) do {					\
	if (cond)								\
		ktap_ok(name);							\
	else									\
		ktap_fail(name, fmt, ##__VA_ARGS__);				\
} while (0)

static unsigned long long vmstat(const char *key)
{
	unsigned long long v;

	return vmstat_value(key, &v) ? ~0ULL : v;
}

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static int get_window(void)
{
	char b[32];

	if (read_file(SYSCTL, b, sizeof(b)))
		return -1;
	return atoi(b);
}

static int set_window(int w)
{
	char v[16];

	snprintf(v, sizeof(v), "%d\n", w);
	return write_file(SYSCTL, v);
}

/* @n pages aligned to 16 pages, filled with page number + @seed, THP off. */
static unsigned char *region(long n, int seed)
{
	char *raw = mmap(NULL, (n + 16) * PS, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *m;

	if (raw == MAP_FAILED)
		return NULL;
	m = (unsigned char *)(((unsigned long)raw + 16 * PS - 1) & ~(16 * PS - 1));
	madvise(m, n * PS, MADV_NOHUGEPAGE);
	for (long i = 0; i < n; i++)
		memset(m + i * PS, (int)((i + seed) & 0xff), PS);
	return m;
}

static int page_is(const unsigned char *p, int v)
{
	for (long k = 0; k < PS; k++)
		if (p[k] != (unsigned char)v)
			return 0;
	return 1;
}

/* Fork a child that exits at once: the parent's pages are then mapped once, read-only. */
static void fork_and_reap(void)
{
	pid_t pid = fork();
	int st;

	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid(pid, &st, 0);
}

struct deltas {
	long traps;
	unsigned long long around, pages, cs_faults, cs_pages;
};

static struct cow_stats cs0, cs1;

/* Write one byte to each page of @m, in order or in @perm's order; count what it took. */
static struct deltas write_all(unsigned char *m, long n, const long *order, int v)
{
	unsigned long long a0, p0;
	struct deltas d;
	long f0;
	int have_cs;

	/* Touch the counters' buffers first so that only the loop faults. */
	vmstat("cow_reuse_around");
	have_cs = !cow_stats_read(&cs0);
	a0 = vmstat("cow_reuse_around");
	p0 = vmstat("cow_reuse_around_pages");
	if (have_cs)
		cow_stats_read(&cs0);
	minflt();
	f0 = minflt();
	for (long i = 0; i < n; i++)
		m[(order ? order[i] : i) * PS] = (unsigned char)v;
	d.traps = minflt() - f0;
	d.around = vmstat("cow_reuse_around") - a0;
	d.pages = vmstat("cow_reuse_around_pages") - p0;
	d.cs_faults = d.cs_pages = ~0ULL;
	if (have_cs && !cow_stats_read(&cs1)) {
		d.cs_faults = cow_stat(&cs1, "reuse_around_faults") - cow_stat(&cs0, "reuse_around_faults");
		d.cs_pages = cow_stat(&cs1, "reuse_around_pages") - cow_stat(&cs0, "reuse_around_pages");
	}
	return d;
}

static void check_sysctl(void)
{
	static const struct { int in, out; } v[] = {
		{ 0, 0 }, { 1, 0 }, { 2, 2 }, { 3, 2 }, { 12, 8 }, { 16, 16 },
	};
	char name[64];

	for (unsigned int i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		snprintf(name, sizeof(name), "sysctl-%d", v[i].in);
		CHECK(!set_window(v[i].in) && get_window() == v[i].out, name,
		      "wrote %d, read %d, want %d", v[i].in, get_window(), v[i].out);
	}
	CHECK(set_window(17) && get_window() == 16, "sysctl-17-refused", "read %d", get_window());
	CHECK(set_window(-1) && get_window() == 16, "sysctl-negative-refused", "read %d",
	      get_window());
}

static void check_counts(int w, int random_order)
{
	unsigned char *m = region(npages, 3);
	long want = w ? npages / w : npages;
	struct deltas d;
	char name[64];
	int ok = 1;

	if (!m) {
		CHECK(0, "counts-mmap", "%s", strerror(errno));
		return;
	}
	set_window(w);
	fork_and_reap();
	d = write_all(m, npages, random_order ? perm : NULL, 0xa5);
	snprintf(name, sizeof(name), "counts-w%d-%s", w, random_order ? "random" : "seq");
	ktap_print_msg("%s: %ld pages, traps %ld, cow_reuse_around %llu, cow_reuse_around_pages %llu",
	       name, npages, d.traps, d.around, d.pages);
	CHECK(d.traps == want, name, "traps %ld, want %ld", d.traps, want);
	snprintf(name, sizeof(name), "events-w%d-%s", w, random_order ? "random" : "seq");
	CHECK(d.around == (unsigned long long)(w ? want : 0) &&
	      d.pages == (unsigned long long)(w ? npages - want : 0), name,
	      "cow_reuse_around %llu, _pages %llu", d.around, d.pages);
	if (d.cs_faults != ~0ULL) {
		snprintf(name, sizeof(name), "cow_stats-w%d-%s", w, random_order ? "random" : "seq");
		CHECK(d.cs_faults == d.around && d.cs_pages == d.pages, name,
		      "reuse_around_faults %llu, reuse_around_pages %llu", d.cs_faults, d.cs_pages);
	}
	for (long i = 0; i < npages; i++) {
		m[i * PS] ^= 0xa5 ^ (unsigned char)((i + 3) & 0xff);
		ok &= page_is(m + i * PS, (int)((i + 3) & 0xff));
	}
	snprintf(name, sizeof(name), "data-w%d-%s", w, random_order ? "random" : "seq");
	CHECK(ok, name, "a page does not hold what the parent wrote");
	munmap(m, npages * PS);
}

static void check_isolation(int w)
{
	unsigned char *m = region(npages, 7);
	int go[2], ready[2], res[2], st;
	long want = npages / 2 + npages / w - 1;
	struct deltas d;
	char c = 0, name[64];
	pid_t b;
	int ok = 1;

	if (!m || pipe(go) || pipe(ready) || pipe(res)) {
		CHECK(0, "isolation-setup", "%s", strerror(errno));
		return;
	}
	set_window(w);
	fork_and_reap();			/* child A */
	b = fork();				/* child B stays */
	if (b == 0) {
		char r = 1;

		for (long i = 1; i < npages; i += 2)
			memset(m + i * PS, 0xb0 ^ (int)(i & 0x0f), PS);
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(3);
		for (long i = 0; i < npages; i++) {
			int v = (i & 1) ? 0xb0 ^ (int)(i & 0x0f) : (int)((i + 7) & 0xff);

			if (!page_is(m + i * PS, v)) {
				r = 0;
				break;
			}
		}
		_exit(write(res[1], &r, 1) == 1 ? 0 : 3);
	}
	if (b < 0 || read(ready[0], &c, 1) != 1) {
		CHECK(0, "isolation-child", "child B did not start");
		return;
	}
	m[1 * PS] = 0x11;			/* a reuse fault: the window's odd pages */
	d = write_all(m, npages, perm, 0x11);
	snprintf(name, sizeof(name), "isolation-w%d-traps", w);
	ktap_print_msg("%s: %ld pages, traps %ld, cow_reuse_around_pages %llu", name, npages, d.traps,
	       d.pages);
	CHECK(d.traps == want, name, "traps %ld, want %ld (N/2 COW faults + one reuse per window)",
	      d.traps, want);
	c = 1;
	if (write(go[1], &c, 1) != 1 || read(res[0], &c, 1) != 1)
		c = 0;
	waitpid(b, &st, 0);
	snprintf(name, sizeof(name), "isolation-w%d-child-data", w);
	CHECK(c == 1 && WIFEXITED(st) && !WEXITSTATUS(st), name,
	      "child B saw a write of the parent (or died: status %d)", st);
	for (long i = 0; i < npages; i++) {
		ok &= m[i * PS] == 0x11;
		m[i * PS] = (unsigned char)((i + 7) & 0xff);
		ok &= page_is(m + i * PS, (int)((i + 7) & 0xff));
	}
	snprintf(name, sizeof(name), "isolation-w%d-parent-data", w);
	CHECK(ok, name, "the parent does not read back its data");
	close(go[0]); close(go[1]); close(ready[0]); close(ready[1]); close(res[0]); close(res[1]);
	munmap(m, npages * PS);
}

static void check_soft_dirty(int w)
{
	unsigned char *m = region(npages, 5);
	int fd, dirty = 0;
	struct deltas d;
	uint64_t e;

	if (!m)
		return;
	set_window(w);
	if (write_file("/proc/self/clear_refs", "4")) {
		ktap_skip("soft-dirty", "clear_refs 4 refused (%s)", strerror(errno));
		munmap(m, npages * PS);
		return;
	}
	d = write_all(m, npages, NULL, 0x22);
	fd = open("/proc/self/pagemap", O_RDONLY);
	for (long i = 0; fd >= 0 && i < npages; i++)
		if (pread(fd, &e, sizeof(e), ((unsigned long)m / PS + i) * sizeof(e)) == sizeof(e))
			dirty += !!(e & (1ULL << 55));
	if (fd >= 0)
		close(fd);
	if (dirty == 0) {
		ktap_skip("soft-dirty", "no page reports soft-dirty (no CONFIG_MEM_SOFT_DIRTY)");
	} else {
		CHECK(d.traps == npages && d.pages == 0, "soft-dirty-traps",
		      "traps %ld, PTEs made writable %llu, want %ld and 0", d.traps, d.pages, npages);
		CHECK(dirty == npages, "soft-dirty-bits", "%d of %ld pages soft-dirty", dirty, npages);
	}
	munmap(m, npages * PS);
}

int main(int argc, char **argv)
{
	int old;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--pages") && i + 1 < argc) {
			npages = atol(argv[++i]);
		} else {
			fprintf(stderr, "usage: cow_reuse_around [--pages N]\n");
			return 2;
		}
	}
	if (npages < 16 || npages % 16) {
		fprintf(stderr, "cow_reuse_around: --pages must be a positive multiple of 16\n");
		return 2;
	}
	old = get_window();
	if (old < 0) {
		ktap_skip("reuse-around", "no %s in this kernel", SYSCTL);
		return ktap_finish();
	}
	ktap_header();
	/*
	 * One CPU: a page still in another CPU's LRU batch holds a reference, and
	 * the fault-around (as the reuse fault itself) drains only the local one.
	 */
	{
		cpu_set_t set;

		if (!sched_getaffinity(0, sizeof(set), &set)) {
			int cpu = 0;

			while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &set))
				cpu++;
			CPU_ZERO(&set);
			CPU_SET(cpu, &set);
			sched_setaffinity(0, sizeof(set), &set);
		}
	}
	perm = malloc(npages * sizeof(*perm));
	if (!perm)
		return 1;
	srandom(1);
	for (long i = 0; i < npages; i++)
		perm[i] = i;
	for (long i = npages - 1; i > 0; i--) {
		long j = random() % (i + 1), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	/* Every page of perm[] and of the counters' buffers private before any count. */
	vmstat("pgreuse");
	check_sysctl();
	for (int r = 0; r < 2; r++) {
		check_counts(0, r);
		check_counts(16, r);
		check_counts(4, r);
	}
	check_isolation(16);
	check_isolation(4);
	check_soft_dirty(16);
	set_window(old);
	return ktap_finish();
}
