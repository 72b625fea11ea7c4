// SPDX-License-Identifier: GPL-2.0
/*
 * cow_populate: MADV_POPULATE_WRITE over memory a forked child still shares
 * copy-on-write with its parent breaks COW in batches of up to 16 pages (one
 * scan, one mmu notifier range, one PTE lock round trip, one TLB flush)
 * instead of one write fault per page.  Checked here, in exact counts (the
 * child's minor faults, which include the faults GUP takes for it, and the
 * cow_populate_batch_pages event of /proc/vmstat) and byte by byte:
 *
 *   shared      the child populates N shared pages (aligned to 2 MiB): every
 *               page batched, no fault; the child then writes every page
 *               without a fault; the parent's data, and the child's, intact
 *   partial     the child wrote [0, N/4) before, the parent every 8th page
 *               after fork(): those the child sees as private or mapped once
 *               are left to GUP (one reuse fault each for the parent's), the
 *               others batched: batch + faults = 3N/4, faults = 3N/32
 *   hole        5 pages MADV_DONTNEED'ed in the middle: batch + faults = N,
 *               faults >= 5 (the hole is faulted, not batched)
 *   ksm         pages [64, 128) of the same content, merged by ksmd before
 *               fork(): KSM pages are left to GUP (faults >= the pages
 *               merged), the others batched, batch + faults = N; ksmd's
 *               settings are put back afterwards
 *   soft-dirty  after clear_refs 4 (soft-dirty tracking armed) nothing is
 *               batched: N faults, each page soft-dirty afterwards
 *   fresh       a fresh mapping (no fork): nothing batched, N faults
 *   race        in the child, one thread populates the range while another
 *               rewrites every page from the end (each page whole): every
 *               page must end with the writer's data, the parent's intact
 *               (a batch installs only pages whose PTE did not change)
 *   memcg-high  the child in a cgroup with memory.high = usage + N pages, on
 *               one CPU: a batch never takes the cgroup within its pages
 *               and a charge batch (64) of memory.high, so at least the
 *               last 16 pages are left to GUP (faults >= 16),
 *               memory.events "high" stays 0 (the populate's own charges
 *               fit exactly) and every page is populated
 *
 *   cow_populate [--pages N]     (N a multiple of 64, at least 128; default 1024)
 *
 * vm.cow_precopy and vm.cow_reuse_around are set to 0 while it runs (and
 * restored), so that the faults GUP takes copy nothing ahead.  Reports one
 * KTAP result per check (ktap.h); exits 1 on any failure, 4 (skip) when the
 * kernel has no cow_populate_batch_pages event, 2 on a usage error.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "cowtest.h"
#include "ktap.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define PS 4096L
#define PMD_PAGES 512L
#define EVENT "cow_populate_batch_pages"
#define CG "/sys/fs/cgroup/cowbench-populate"
/* C_KSM: pages [KSM_A, KSM_B) hold KSM_BYTE in every byte (generation KSM_GEN). */
#define KSM_A		64
#define KSM_B		128
#define KSM_BYTE	0x33
#define KSM_GEN		(-2)

static long npages = 1024;

/* One /proc/vmstat event, -1 when the kernel has none of that name. */
static long long vmstat(const char *key)
{
	unsigned long long v;

	return vmstat_value(key, &v) ? -1 : (long long)v;
}

/*
 * Not inlined: its rusage buffer is then at the same stack address at every
 * call from one function, so only the first call can take a COW fault on it.
 */
static __attribute__((noinline)) long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static int wait_child(pid_t pid)
{
	int status = 0;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Page @i of generation @seed: every byte (i + seed), its number at offset 64. */
static void fill(unsigned char *p, long i, int seed)
{
	memset(p, (int)((i + seed) & 0xff), PS);
	memcpy(p + 64, &i, sizeof(i));
}

/* 0 when page @i holds generation @seed (-1: all zero, KSM_GEN: all KSM_BYTE), else 1. */
static int bad_page(const unsigned char *p, long i, int seed)
{
	unsigned char v = (unsigned char)((i + seed) & 0xff);
	long got;

	if (seed < 0) {
		v = seed == KSM_GEN ? KSM_BYTE : 0;
		for (long k = 0; k < PS; k++)
			if (p[k] != v)
				return 1;
		return 0;
	}
	memcpy(&got, p + 64, sizeof(got));
	if (got != i)
		return 1;
	for (long k = 0; k < PS; k++)
		if ((k < 64 || k >= 64 + (long)sizeof(got)) && p[k] != v)
			return 1;
	return 0;
}

/* @n pages aligned to 2 MiB (batches then never straddle a page table), THP off. */
static unsigned char *region(long n, int seed)
{
	char *raw = mmap(NULL, (n + PMD_PAGES) * PS, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *m;

	if (raw == MAP_FAILED)
		return NULL;
	m = (unsigned char *)(((unsigned long)raw + PMD_PAGES * PS - 1) & ~(PMD_PAGES * PS - 1));
	madvise(m, n * PS, MADV_NOHUGEPAGE);
	if (seed >= 0)
		for (long i = 0; i < n; i++)
			fill(m + i * PS, i, seed);
	return m;
}

enum pcase { C_SHARED, C_PARTIAL, C_HOLE, C_SOFT_DIRTY, C_MEMCG, C_KSM, C_RACE };


#define HOLE_AT(n)	((n) / 2 + 3)
#define HOLE_LEN	5

/* What the child saw, sent to the parent. */
struct result {
	int rc;			/* 0, or where the child failed */
	long faults;		/* minor faults during the populate */
	long long batch;	/* cow_populate_batch_pages during the populate */
	long bad;		/* pages that did not hold what they should after it */
	long write_faults;	/* faults while rewriting every page afterwards */
	long soft_dirty;	/* pages soft-dirty in pagemap after it (C_SOFT_DIRTY) */
};

/* The generation the child expects in page @i after the populate (-1: zero). */
static int child_expect(enum pcase c, long i)
{
	if (c == C_PARTIAL && i < npages / 4)
		return 2;
	if (c == C_HOLE && i >= HOLE_AT(npages) && i < HOLE_AT(npages) + HOLE_LEN)
		return -1;
	if (c == C_KSM && i >= KSM_A && i < KSM_B)
		return KSM_GEN;
	return 1;
}

static long count_soft_dirty(const unsigned char *m, long n)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	long sd = 0;

	if (fd < 0)
		return -1;
	for (long i = 0; i < n; i++) {
		uint64_t e;

		if (pread(fd, &e, sizeof(e), ((unsigned long)m / PS + i) * sizeof(e)) != sizeof(e)) {
			sd = -1;
			break;
		}
		sd += (e >> 55) & 1;
	}
	close(fd);
	return sd;
}

/*
 * Join CG on CPU 0 and set memory.high to usage + @room pages.  Return the
 * descriptor of memory.high, kept open so that lifting the limit later
 * charges nothing, or a negative error code.
 */
static int join_memcg(long room)
{
	cpu_set_t cpus;
	char b[64];
	int fd;

	/* One CPU: the memcg charge stock is per CPU. */
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		return -20;
	snprintf(b, sizeof(b), "%d\n", getpid());
	if (write_file(CG "/cgroup.procs", b))
		return -21;
	fd = open(CG "/memory.high", O_WRONLY);
	if (fd < 0 || read_file(CG "/memory.current", b, sizeof(b)))
		return -22;
	snprintf(b, sizeof(b), "%ld\n", atol(b) + room * PS);
	if (write(fd, b, strlen(b)) != (ssize_t)strlen(b))
		return -23;
	return fd;
}

/* C_RACE: the second thread rewrites every page, from the last one down. */
static void *race_writer(void *arg)
{
	unsigned char *m = arg;

	for (long i = npages - 1; i >= 0; i--)
		fill(m + i * PS, i, 5);
	return NULL;
}

/* C_RACE: populate while race_writer() writes; every page must hold its data. */
static __attribute__((noinline)) int race_child(unsigned char *m, struct result *r)
{
	pthread_t t;

	if (pthread_create(&t, NULL, race_writer, m))
		return 30;
	for (int k = 0; k < 4; k++)
		if (madvise(m, npages * PS, MADV_POPULATE_WRITE))
			return 31;
	if (pthread_join(t, NULL))
		return 32;
	for (long i = 0; i < npages; i++)
		r->bad += bad_page(m + i * PS, i, 5);
	return 0;
}

static int child(enum pcase c, unsigned char *m, int out, int in)
{
	struct result r = { 0 };
	int high_fd = -1;
	long long b0;
	long f0;
	char go;

	if (c == C_PARTIAL)
		for (long i = 0; i < npages / 4; i++)
			fill(m + i * PS, i, 2);
	if (c == C_HOLE && madvise(m + HOLE_AT(npages) * PS, HOLE_LEN * PS, MADV_DONTNEED))
		return 10;
	if (c == C_SOFT_DIRTY && write_file("/proc/self/clear_refs", "4"))
		return 11;
	/* Wait for the parent's own writes (C_PARTIAL). */
	if (read(in, &go, 1) != 1)
		return 12;
	/* Touch the counters' buffers and the stack first: only the populate faults. */
	vmstat(EVENT);
	minflt();
	b0 = vmstat(EVENT);
	if (c == C_RACE) {
		r.rc = race_child(m, &r);
		r.batch = vmstat(EVENT) - b0;
		if (!r.rc)
			for (long i = 0; i < npages; i++)
				fill(m + i * PS, i, 3);
		goto out;
	}
	if (c == C_MEMCG) {
		/*
		 * memory.high = usage + N pages: the populate's own charges
		 * (N pages, 64 at a time, the first from the CPU's stock)
		 * never go above it, and the last batch (16 pages plus a
		 * charge batch of 64) cannot fit: it must be left to GUP.
		 */
		high_fd = join_memcg(npages);
		if (high_fd < 0) {
			r.rc = -high_fd;
			goto out;
		}
	}
	/*
	 * The window's own calls once more, just before it (a zero-length
	 * populate does nothing): any stack page they touch first after
	 * fork() takes its COW fault here, not inside the window.
	 */
	minflt();
	getpid();
	madvise(m, 0, MADV_POPULATE_WRITE);
	minflt();
	f0 = minflt();
	if (madvise(m, npages * PS, MADV_POPULATE_WRITE)) {
		r.rc = 13;
		goto out;
	}
	r.faults = minflt() - f0;
	/* Lift the limit before anything else is charged (the next open()). */
	if (high_fd >= 0 && write(high_fd, "max\n", 4) != 4) {
		r.rc = 17;
		goto out;
	}
	r.batch = vmstat(EVENT) - b0;
	if (c == C_SOFT_DIRTY)
		r.soft_dirty = count_soft_dirty(m, npages);
	for (long i = 0; i < npages; i++)
		r.bad += bad_page(m + i * PS, i, child_expect(c, i));
	f0 = minflt();
	for (long i = 0; i < npages; i++)
		fill(m + i * PS, i, 3);
	r.write_faults = minflt() - f0;
out:
	if (write(out, &r, sizeof(r)) != sizeof(r))
		return 14;
	/* The parent checks its side while we live; then ours once more. */
	if (read(in, &go, 1) != 1)
		return 15;
	for (long i = 0; i < npages; i++)
		if (bad_page(m + i * PS, i, 3))
			return 16;
	return 0;
}

/* The generation the parent expects in page @i. */
static int parent_expect(enum pcase c, long i)
{
	if (c == C_KSM && i >= KSM_A && i < KSM_B)
		return KSM_GEN;
	return c == C_PARTIAL && i % 8 == 0 ? 4 : 1;
}

/* ksmd's settings before the C_KSM case, restored after it */
static const char * const ksm_knobs[] = { "pages_to_scan", "sleep_millisecs", "run" };
static char ksm_saved[3][32];

static void ksm_restore(void)
{
	char path[64];

	/* Unmerge what the case merged, then put every knob back (run last). */
	write_file("/sys/kernel/mm/ksm/run", "2");
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "/sys/kernel/mm/ksm/%s", ksm_knobs[i]);
		if (ksm_saved[i][0])
			write_file(path, ksm_saved[i]);
	}
}

/*
 * C_KSM: give pages [KSM_A, KSM_B) of @m one content and let ksmd merge
 * them (at most 30 s).  Return the pages sharing a KSM page, or -1 when the
 * kernel has no KSM (or refuses MADV_MERGEABLE).
 */
static long ksm_merge(unsigned char *m)
{
	long shared = 0;
	char b[64];

	if (access("/sys/kernel/mm/ksm/run", W_OK))
		return -1;
	memset(m + KSM_A * PS, KSM_BYTE, (KSM_B - KSM_A) * PS);
	if (madvise(m, npages * PS, MADV_MERGEABLE))
		return -1;
	for (int i = 0; i < 3; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/sys/kernel/mm/ksm/%s", ksm_knobs[i]);
		if (read_file(path, ksm_saved[i], sizeof(ksm_saved[i])))
			ksm_saved[i][0] = 0;
	}
	write_file("/sys/kernel/mm/ksm/pages_to_scan", "1000");
	write_file("/sys/kernel/mm/ksm/sleep_millisecs", "1");
	write_file("/sys/kernel/mm/ksm/run", "1");
	for (int i = 0; i < 600 && shared < KSM_B - KSM_A - 1; i++) {
		usleep(50000);
		if (!read_file("/sys/kernel/mm/ksm/pages_sharing", b, sizeof(b)))
			shared = atol(b);
	}
	/* Stop ksmd, keeping what it merged: it must not merge the child's copies again. */
	write_file("/sys/kernel/mm/ksm/run", "0");
	return shared;
}

/* Pages ksmd had merged when the last C_KSM case forked. */
static long ksm_shared;

/* Fork, let the child populate, check both sides; 0 and *@r filled, -1 failed, 1 skipped. */
static int run_case(const char *name, enum pcase c, struct result *r)
{
	unsigned char *m = region(npages, 1);
	int up[2], down[2], rc = -1;
	pid_t pid = -1;
	long bad = 0;

	if (!m || pipe(up) || pipe(down)) {
		ktap_fail(name, "setup: %s", strerror(errno));
		return -1;
	}
	if (c == C_KSM) {
		ksm_shared = ksm_merge(m);
		if (ksm_shared < 0) {
			ktap_skip(name, "no KSM");
			rc = 1;
			goto out;
		}
	}
	pid = fork();
	if (pid == 0) {
		close(up[0]);
		close(down[1]);
		_exit(child(c, m, up[1], down[0]));
	}
	if (c == C_PARTIAL)
		for (long i = 0; i < npages; i += 8)
			fill(m + i * PS, i, 4);
	if (pid < 0 || write(down[1], "g", 1) != 1 || read(up[0], r, sizeof(*r)) != sizeof(*r)) {
		ktap_fail(name, "no result from the child");
		goto out;
	}
	for (long i = 0; i < npages; i++)
		bad += bad_page(m + i * PS, i, parent_expect(c, i));
	if (write(down[1], "g", 1) != 1)
		bad = -1;
	rc = wait_child(pid);
	pid = -1;
	if (r->rc || rc || bad) {
		ktap_fail(name, "child setup %d, child exit %d, parent's pages changed %ld",
			  r->rc, rc, bad);
		rc = -1;
		goto out;
	}
	rc = 0;
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		wait_child(pid);
	}
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
	if (c == C_KSM && ksm_shared >= 0)
		ksm_restore();
	munmap(m, npages * PS);
	return rc;
}

static void report(const char *name, int ok, const struct result *r, const char *want)
{
	if (ok)
		ktap_okf(name, "batch %lld, faults %ld, bad %ld, faults writing after %ld",
			 r->batch, r->faults, r->bad, r->write_faults);
	else
		ktap_fail(name, "batch %lld, faults %ld, bad %ld, faults writing after %ld; want %s",
			  r->batch, r->faults, r->bad, r->write_faults, want);
}

/* Every case: nothing wrong in the data, and no fault writing after the populate. */
static int clean(const struct result *r)
{
	return r->bad == 0 && r->write_faults == 0;
}

static void case_shared(void)
{
	struct result r;

	if (run_case("shared", C_SHARED, &r))
		return;
	report("shared", clean(&r) && r.batch == npages && r.faults == 0, &r,
	       "batch N, no fault");
}

static void case_partial(void)
{
	long parent = (npages - npages / 4) / 8;
	struct result r;

	if (run_case("partial", C_PARTIAL, &r))
		return;
	report("partial", clean(&r) && r.faults == parent && r.batch == npages * 3 / 4 - parent,
	       &r, "faults 3N/32 (the parent's pages), the rest of 3N/4 batched");
}

static void case_hole(void)
{
	struct result r;

	if (run_case("hole", C_HOLE, &r))
		return;
	report("hole", clean(&r) && r.batch + r.faults == npages && r.faults >= HOLE_LEN &&
	       r.faults <= 2 * HOLE_LEN, &r, "batch + faults = N, 5 <= faults <= 10");
}

static void case_ksm(void)
{
	struct result r;

	if (run_case("ksm", C_KSM, &r))
		return;
	if (ksm_shared < (KSM_B - KSM_A) / 2) {
		ktap_fail("ksm", "ksmd merged only %ld of %d pages", ksm_shared, KSM_B - KSM_A);
		return;
	}
	report("ksm", clean(&r) && r.batch + r.faults == npages && r.faults >= ksm_shared &&
	       r.batch > 0, &r, "batch + faults = N, faults >= the pages KSM merged, batch > 0");
}

static void case_race(void)
{
	struct result r;

	if (run_case("race", C_RACE, &r))
		return;
	if (r.bad == 0)
		ktap_okf("race", "batch %lld while the writer ran", r.batch);
	else
		ktap_fail("race", "%ld pages without the writer's data (batch %lld)", r.bad, r.batch);
}

static void case_soft_dirty(void)
{
	struct result r;

	if (run_case("soft-dirty", C_SOFT_DIRTY, &r))
		return;
	if (r.soft_dirty == 0 && r.batch == npages) {
		ktap_skip("soft-dirty", "no soft-dirty tracking in this kernel");
		return;
	}
	report("soft-dirty", clean(&r) && r.batch == 0 && r.faults == npages &&
	       r.soft_dirty == npages, &r, "no batch, N faults, N pages soft-dirty");
}

static void case_fresh(void)
{
	unsigned char *m = region(npages, -1);
	struct result r = { 0 };
	long long b0;
	long f0;

	if (!m) {
		ktap_fail("fresh", "mmap: %s", strerror(errno));
		return;
	}
	vmstat(EVENT);
	minflt();
	b0 = vmstat(EVENT);
	f0 = minflt();
	if (madvise(m, npages * PS, MADV_POPULATE_WRITE)) {
		ktap_fail("fresh", "MADV_POPULATE_WRITE: %s", strerror(errno));
		munmap(m, npages * PS);
		return;
	}
	r.faults = minflt() - f0;
	r.batch = vmstat(EVENT) - b0;
	for (long i = 0; i < npages; i++)
		r.bad += bad_page(m + i * PS, i, -1);
	f0 = minflt();
	for (long i = 0; i < npages; i++)
		fill(m + i * PS, i, 3);
	r.write_faults = minflt() - f0;
	report("fresh", clean(&r) && r.batch == 0 && r.faults == npages, &r,
	       "no batch, N faults");
	munmap(m, npages * PS);
}

/* The integer value of "@key N" in @path, or -1. */
static long file_key(const char *path, const char *key)
{
	static char b[8192];
	size_t kl = strlen(key);

	if (read_file(path, b, sizeof(b)))
		return -1;
	for (char *p = b; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, kl) && p[kl] == ' ')
			return atol(p + kl + 1);
	return -1;
}

static void case_memcg(void)
{
	struct result r;
	char b[256] = "";
	long high;

	mkdir("/sys/fs/cgroup", 0755);
	if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) && cowtest_in_guest())
		mount("none", "/sys/fs/cgroup", "cgroup2", 0, NULL);
	if (read_file("/sys/fs/cgroup/cgroup.controllers", b, sizeof(b)) || !strstr(b, "memory")) {
		ktap_skip("memcg-high", "no memory controller");
		return;
	}
	write_file("/sys/fs/cgroup/cgroup.subtree_control", "+memory");
	rmdir(CG);
	if (mkdir(CG, 0755)) {
		ktap_fail("memcg-high", "mkdir " CG ": %s", strerror(errno));
		return;
	}
	if (!run_case("memcg-high", C_MEMCG, &r)) {
		high = file_key(CG "/memory.events", "high");
		if (clean(&r) && r.batch + r.faults == npages && r.batch > 0 && r.faults >= 16 &&
		    high == 0)
			ktap_okf("memcg-high", "batch %lld, faults %ld, memory.events high %ld",
				 r.batch, r.faults, high);
		else
			ktap_fail("memcg-high", "batch %lld, faults %ld, bad %ld, faults writing "
				  "after %ld, memory.events high %ld; want batch + faults = N, batch "
				  "> 0, faults >= 16, high 0", r.batch, r.faults, r.bad, r.write_faults, high);
	}
	rmdir(CG);
}

/* vm.@name, or -1 when the kernel has no such sysctl. */
static int get_vm(const char *name)
{
	char path[128], b[32];

	snprintf(path, sizeof(path), "/proc/sys/vm/%s", name);
	return read_file(path, b, sizeof(b)) ? -1 : atoi(b);
}

int main(int argc, char **argv)
{
	int precopy = get_vm("cow_precopy"), around = get_vm("cow_reuse_around");

	for (int i = 1; i < argc; i++) {
		char *end;

		if (!strcmp(argv[i], "--pages") && i + 1 < argc) {
			npages = strtol(argv[++i], &end, 10);
			if (*end || npages < 128 || npages % 64 || npages > (1L << 20)) {
				fprintf(stderr, "cow_populate: --pages must be a multiple of 64 "
					"from 128 to 1048576\n");
				return 2;
			}
		} else {
			fprintf(stderr, "usage: cow_populate [--pages N]\n");
			return 2;
		}
	}
	ktap_header();
	if (vmstat(EVENT) < 0) {
		ktap_skip("cow-populate", "no " EVENT " in /proc/vmstat");
		return ktap_finish();
	}
	ktap_plan(8);
	if (precopy > 0)
		set_sysctl_int("cow_precopy", 0);
	if (around > 0)
		set_sysctl_int("cow_reuse_around", 0);
	case_shared();
	case_partial();
	case_hole();
	case_ksm();
	case_soft_dirty();
	case_fresh();
	case_memcg();
	case_race();
	if (precopy > 0)
		set_sysctl_int("cow_precopy", precopy);
	if (around > 0)
		set_sysctl_int("cow_reuse_around", around);
	return ktap_finish();
}
