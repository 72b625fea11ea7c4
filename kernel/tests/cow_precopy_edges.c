// SPDX-License-Identifier: GPL-2.0
/*
 * cow_precopy_edges: the neighbours of a COW-faulting page that speculative
 * pre-copy must leave alone or handle exactly like a write fault, and the
 * operations that may race with it.  A child writes every page of memory it
 * shares with its parent, in order, so that the pre-copy window sweeps over
 * pages that are KSM-merged, swapped out or in the swap cache, mlocked,
 * GUP-pinned (gup_test), vmspliced into a pipe, registered as io_uring fixed
 * buffers, uffd-wp protected or hardware-poisoned (MADV_HWPOISON); then
 * threads run munmap / mremap / MADV_DONTNEED / MADV_PAGEOUT / fork / exit
 * while another thread writes, and right after a stream has left a
 * read-only marker page (the adaptive mode's pipelined batches); in a
 * two-node guest, a region bound to the far node whose zone is below its low
 * watermark (numa-watermark).  After every phase: both processes see
 * exactly their own data, pinned pages did not move and still show what the
 * pinning process sees, the child's RssAnon did not grow by the pages it
 * copied (anon replaces anon), and AnonPages went back to where it was once
 * the child exited.  The kernel itself reports bad RSS counters at exit
 * ("BUG: Bad rss-counter", caught by vm-run.sh).
 *
 *   cow_precopy_edges [PHASE...]     (default: all; run as root)
 *
 * Reports one KTAP result per check (ktap.h: "ok N phase", "ok N phase # SKIP
 * why", "not ok N phase # why"); exits 1 if anything failed.
 */
#define _GNU_SOURCE
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include "cowtest.h"
#include "ktap.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#ifndef MADV_HWPOISON
#define MADV_HWPOISON 100
#endif

#define PS 4096L
#define NPAGES 256L

#define FAILF(phase, ...) ktap_fail(phase, __VA_ARGS__)

static uint64_t base_word(long p, int w)
{
	return 0xB5ull << 56 | (uint64_t)p << 16 | (uint64_t)w;
}

static uint64_t mark_word(long p, int who)
{
	return 0xC0ull << 56 | (uint64_t)who << 32 | (uint64_t)p;
}

static char *region(long n)
{
	char *m = mmap(NULL, n * PS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return NULL;
	madvise(m, n * PS, MADV_NOHUGEPAGE);
	for (long p = 0; p < n; p++)
		for (int w = 0; w < 512; w++)
			((uint64_t *)(m + p * PS))[w] = base_word(p, w);
	return m;
}

/* Same content in pages [a, b) (for KSM). */
static void same_content(char *m, long a, long b)
{
	for (long p = a; p < b; p++)
		memset(m + p * PS, 0x33, PS);
}

/* Word 0 of page p is the writer's mark, or base; every other word is base
 * (or 0x33 bytes for KSM pages).  Returns the number of bad pages. */
static long check(const char *m, long n, int who, const char *written, long ksm_a, long ksm_b)
{
	long bad = 0;

	for (long p = 0; p < n; p++) {
		const uint64_t *q = (const uint64_t *)(m + p * PS);
		int ksm = p >= ksm_a && p < ksm_b;

		for (int w = 0; w < 512; w++) {
			uint64_t want = ksm ? 0x3333333333333333ull : base_word(p, w);

			if (w == 0 && written && written[p])
				want = mark_word(p, who);
			if (q[w] != want) {
				if (bad < 3)
					printf("# page %ld word %d: want %016llx got %016llx\n", p, w,
					       (unsigned long long)want, (unsigned long long)q[w]);
				bad++;
				break;
			}
		}
	}
	return bad;
}

/* The "KEY: N kB" value of @key in the file at @path, or -1. */
static long file_kb(const char *path, const char *key)
{
	static char buf[8192];
	char *p;

	if (read_file(path, buf, sizeof(buf)))
		return -1;
	p = strstr(buf, key);
	return p ? atol(p + strlen(key)) : -1;
}

static long status_kb(const char *key)
{
	return file_kb("/proc/self/status", key);
}

static long meminfo_kb(const char *key)
{
	return file_kb("/proc/meminfo", key);
}

static uint64_t pfn_of(const void *addr)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	uint64_t e = 0;

	if (fd < 0)
		return 0;
	if (pread(fd, &e, 8, ((uintptr_t)addr / PS) * 8) != 8)
		e = 0;
	close(fd);
	return (e & (1ull << 63)) ? e & ((1ull << 55) - 1) : 0;
}

static unsigned long long stat_delta(const struct cow_stats *a, const char *key)
{
	static struct cow_stats b;

	cow_stats_read(&b);
	return cow_stat(&b, key) - cow_stat(a, key);
}

/*
 * The child's side of every neighbour phase: write word 0 of every page in
 * order (the pre-copy window runs over the special pages), check its view
 * and that its RssAnon did not grow by the copies.  Exit status: bad pages.
 */
static int child_sweep(char *m, long n, long ksm_a, long ksm_b, const char *skip)
{
	char written[NPAGES] = { 0 };
	long rss0 = status_kb("RssAnon:"), rss1, bad;

	for (long p = 0; p < n; p++) {
		if (skip && skip[p])
			continue;
		((uint64_t *)(m + p * PS))[0] = mark_word(p, 2);
		written[p] = 1;
	}
	bad = check(m, n, 2, written, ksm_a, ksm_b);
	rss1 = status_kb("RssAnon:");
	/* COW replaces an anon page by an anon page: RSS stays (per-CPU batching aside). */
	if (rss1 > rss0 + 512) {
		printf("# child RssAnon grew from %ld to %ld kB\n", rss0, rss1);
		bad++;
	}
	return bad > 100 ? 100 : (int)bad;
}

static int wait_child(pid_t pid)
{
	int status = 0;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* AnonPages must come back once the child is gone (per-CPU drift allowed). */
static void check_anon_back(const char *phase, long anon0)
{
	long anon1 = meminfo_kb("AnonPages:");

	if (anon1 > anon0 + 1024)
		FAILF(phase, "AnonPages %ld kB before the child, %ld kB after it exited", anon0, anon1);
}

/* Generic neighbour phase: fork, child sweeps, parent checks its own view. */
static void sweep_phase(const char *phase, char *m, long n, long ksm_a, long ksm_b, const char *skip,
			const char *stat_key)
{
	long anon0 = meminfo_kb("AnonPages:");
	struct cow_stats s0;
	pid_t pid;
	int rc;

	cow_stats_read(&s0);
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(child_sweep(m, n, ksm_a, ksm_b, skip));
	rc = wait_child(pid);
	if (rc)
		FAILF(phase, "child saw %d bad pages (or died: %d)", rc, rc);
	if (check(m, n, 1, NULL, ksm_a, ksm_b))
		FAILF(phase, "the parent's view changed");
	check_anon_back(phase, anon0);
	if (stat_key)
		printf("# %s: %s +%llu, precopy_success +%llu\n", phase, stat_key, stat_delta(&s0, stat_key),
		       stat_delta(&s0, "precopy_success"));
}

static void phase_ksm(void)
{
	const char *ph = "ksm";
	char *m = region(NPAGES);
	char b[64];
	long shared = 0;

	if (access("/sys/kernel/mm/ksm/run", W_OK)) {
		ktap_skip(ph, "no KSM");
		return;
	}
	same_content(m, 64, 128);
	if (madvise(m, NPAGES * PS, MADV_MERGEABLE)) {
		ktap_skip(ph, "MADV_MERGEABLE: %s", strerror(errno));
		return;
	}
	write_file("/sys/kernel/mm/ksm/pages_to_scan", "1000");
	write_file("/sys/kernel/mm/ksm/sleep_millisecs", "1");
	write_file("/sys/kernel/mm/ksm/run", "1");
	for (int i = 0; i < 600 && shared < 32; i++) {
		usleep(50000);
		if (!read_file("/sys/kernel/mm/ksm/pages_sharing", b, sizeof(b)))
			shared = atol(b);
	}
	if (shared < 32) {
		FAILF(ph, "ksmd merged only %ld pages", shared);
	} else {
		sweep_phase(ph, m, NPAGES, 64, 128, NULL, "precopy_skip_ksm");
		ktap_okf(ph, "%ld pages sharing", shared);
	}
	write_file("/sys/kernel/mm/ksm/run", "2");	/* unmerge everything */
	munmap(m, NPAGES * PS);
}

static void phase_swap(void)
{
	const char *ph = "swapcache";
	char *m = region(NPAGES);
	long anon0 = meminfo_kb("AnonPages:");
	long swap = meminfo_kb("SwapTotal:");
	pid_t pid;
	int rc;

	if (swap <= 0) {
		ktap_skip(ph, "no swap");
		return;
	}
	/* Parent's pages 64..127 go to swap before the fork. */
	if (madvise(m + 64 * PS, 64 * PS, MADV_PAGEOUT)) {
		ktap_skip(ph, "MADV_PAGEOUT: %s", strerror(errno));
		return;
	}
	pid = fork();
	if (pid == 0) {
		volatile uint64_t sink = 0;

		/* Read half of them back: in the swap cache, mapped read-only. */
		for (long p = 64; p < 96; p++)
			sink += ((uint64_t *)(m + p * PS))[5];
		(void)sink;
		_exit(child_sweep(m, NPAGES, 0, 0, NULL));
	}
	rc = wait_child(pid);
	if (rc)
		FAILF(ph, "child saw %d bad pages (or died)", rc);
	if (check(m, NPAGES, 1, NULL, 0, 0))
		FAILF(ph, "the parent's view changed");
	check_anon_back(ph, anon0 + 64 * 4);
	if (!rc)
		ktap_ok(ph);
	munmap(m, NPAGES * PS);
}

static void phase_mlock(void)
{
	const char *ph = "mlock";
	char *m = region(NPAGES);
	long lck;
	pid_t pid;
	int rc;

	if (mlock(m, NPAGES * PS)) {
		ktap_skip(ph, "mlock: %s", strerror(errno));
		return;
	}
	lck = status_kb("VmLck:");
	sweep_phase(ph, m, NPAGES, 0, 0, NULL, NULL);
	if (status_kb("VmLck:") != lck)
		FAILF(ph, "parent VmLck %ld kB -> %ld kB", lck, status_kb("VmLck:"));
	/* mlock() in the child breaks COW through GUP write faults: pre-copy runs under GUP. */
	pid = fork();
	if (pid == 0) {
		if (mlock(m, NPAGES * PS))
			_exit(90);
		if (status_kb("VmLck:") < NPAGES * 4)
			_exit(91);
		_exit(child_sweep(m, NPAGES, 0, 0, NULL));
	}
	rc = wait_child(pid);
	if (rc)
		FAILF(ph, "mlock in the child: status %d", rc);
	if (check(m, NPAGES, 1, NULL, 0, 0))
		FAILF(ph, "the parent's view changed");
	else if (!rc)
		ktap_ok(ph);
	munlock(m, NPAGES * PS);
	munmap(m, NPAGES * PS);
}

/* Pin pages [a, a + n) of the parent with gup_test; the parent writes them
 * after the child's sweep and must read its own data through the pin. */
static void phase_gup(int before_fork, int write)
{
	char ph[48];
	char *m = region(NPAGES);
	struct pin_longterm_test t = { 0 };
	uint64_t pfn[16], buf_addr;
	char *buf = malloc(16 * PS);
	int fd = open("/sys/kernel/debug/gup_test", O_RDWR);
	long anon0 = meminfo_kb("AnonPages:");
	pid_t pid = -1;
	int rc = 0, bad = 0;

	snprintf(ph, sizeof(ph), "gup-pin-%s-%s", before_fork ? "before-fork" : "after-fork", write ? "rw" : "ro");
	if (fd < 0) {
		ktap_skip(ph, "no /sys/kernel/debug/gup_test");
		return;
	}
	t.addr = (uintptr_t)(m + 100 * PS);
	t.size = 16 * PS;
	t.flags = write ? PIN_LONGTERM_TEST_FLAG_USE_WRITE : 0;
	if (!before_fork) {
		pid = fork();
		if (pid == 0) {
			usleep(200000);	/* let the parent pin first */
			_exit(child_sweep(m, NPAGES, 0, 0, NULL));
		}
	}
	if (ioctl(fd, PIN_LONGTERM_TEST_START, &t)) {
		ktap_skip(ph, "PIN_LONGTERM_TEST_START: %s", strerror(errno));
		if (pid > 0)
			wait_child(pid);
		close(fd);
		return;
	}
	for (int i = 0; i < 16; i++)
		pfn[i] = pfn_of(m + (100 + i) * PS);
	if (before_fork) {
		pid = fork();
		if (pid == 0)
			_exit(child_sweep(m, NPAGES, 0, 0, NULL));
	}
	rc = wait_child(pid);
	if (rc)
		FAILF(ph, "child saw %d bad pages (or died)", rc);
	for (int i = 0; i < 16; i++) {
		uint64_t *q = (uint64_t *)(m + (100 + i) * PS);

		if (pfn_of(q) != pfn[i])
			bad++;
		q[1] = 0xdeadbeef00000000ull | i;
	}
	if (bad)
		FAILF(ph, "%d pinned pages moved", bad);
	buf_addr = (uintptr_t)buf;
	if (ioctl(fd, PIN_LONGTERM_TEST_READ, &buf_addr)) {
		FAILF(ph, "PIN_LONGTERM_TEST_READ: %s", strerror(errno));
	} else if (memcmp(buf, m + 100 * PS, 16 * PS)) {
		FAILF(ph, "the pin does not show what the parent wrote");
	} else if (!rc && !bad) {
		ktap_ok(ph);
	}
	ioctl(fd, PIN_LONGTERM_TEST_STOP);
	close(fd);
	for (int i = 0; i < 16; i++)
		((uint64_t *)(m + (100 + i) * PS))[1] = base_word(100 + i, 1);
	if (check(m, NPAGES, 1, NULL, 0, 0))
		FAILF(ph, "the parent's view changed");
	check_anon_back(ph, anon0);
	free(buf);
	munmap(m, NPAGES * PS);
}

/* The child vmsplices pages, sweeps, exits; the parent then writes them:
 * the pipe must still hold the data of the vmsplice() time. */
static void phase_vmsplice(void)
{
	const char *ph = "vmsplice";
	char *m = region(NPAGES);
	static char got[16 * PS];
	int fds[2];
	pid_t pid;
	int rc;

	if (pipe(fds) || fcntl(fds[0], F_SETPIPE_SZ, 64 * PS) < 0) {
		ktap_skip(ph, "pipe");
		return;
	}
	pid = fork();
	if (pid == 0) {
		struct iovec iov = { .iov_base = m + 100 * PS, .iov_len = 16 * PS };

		if (vmsplice(fds[1], &iov, 1, 0) != 16 * PS)
			_exit(95);
		_exit(child_sweep(m, NPAGES, 0, 0, NULL));
	}
	rc = wait_child(pid);
	if (rc)
		FAILF(ph, "child status %d", rc);
	for (long p = 100; p < 116; p++)
		((uint64_t *)(m + p * PS))[2] = 0xfeedull << 32 | p;
	close(fds[1]);
	if (read(fds[0], got, sizeof(got)) != (ssize_t)sizeof(got)) {
		FAILF(ph, "short read from the pipe");
	} else {
		long bad = 0;

		for (long p = 100; p < 116; p++)
			for (int w = 0; w < 512; w++)
				if (((uint64_t *)(got + (p - 100) * PS))[w] != base_word(p, w))
					bad++;
		if (bad)
			FAILF(ph, "%ld words in the pipe changed after vmsplice()", bad);
		else if (!rc)
			ktap_ok(ph);
	}
	close(fds[0]);
	munmap(m, NPAGES * PS);
}

/* io_uring fixed buffers (a FOLL_LONGTERM write pin) registered by the parent
 * after the fork: its pages must not move while the child sweeps. */
static void phase_io_uring(void)
{
	const char *ph = "io_uring-fixed-buffer";
	char *m = region(NPAGES);
	struct { uint32_t sq_entries, cq_entries, flags, sq_thread_cpu, sq_thread_idle, features,
		 wq_fd, resv[3]; uint64_t sq_off[5], cq_off[5]; } params;
	struct iovec iov = { .iov_base = m + 100 * PS, .iov_len = 16 * PS };
	uint64_t pfn[16];
	int fd, rc, bad = 0;
	pid_t pid;

	memset(&params, 0, sizeof(params));
	fd = syscall(__NR_io_uring_setup, 4, &params);
	if (fd < 0) {
		ktap_skip(ph, "io_uring_setup: %s", strerror(errno));
		return;
	}
	pid = fork();
	if (pid == 0) {
		usleep(200000);
		_exit(child_sweep(m, NPAGES, 0, 0, NULL));
	}
	if (syscall(__NR_io_uring_register, fd, 0 /* IORING_REGISTER_BUFFERS */, &iov, 1)) {
		ktap_skip(ph, "IORING_REGISTER_BUFFERS: %s", strerror(errno));
		wait_child(pid);
		close(fd);
		return;
	}
	for (int i = 0; i < 16; i++)
		pfn[i] = pfn_of(m + (100 + i) * PS);
	rc = wait_child(pid);
	for (int i = 0; i < 16; i++)
		bad += pfn_of(m + (100 + i) * PS) != pfn[i];
	if (rc)
		FAILF(ph, "child status %d", rc);
	if (bad)
		FAILF(ph, "%d registered pages moved", bad);
	if (check(m, NPAGES, 1, NULL, 0, 0))
		FAILF(ph, "the parent's view changed");
	else if (!rc && !bad)
		ktap_ok(ph);
	syscall(__NR_io_uring_register, fd, 1 /* IORING_UNREGISTER_BUFFERS */, NULL, 0);
	close(fd);
	munmap(m, NPAGES * PS);
}

/* uffd-wp: every written page must still be reported to the handler. */
static int uffd_fd;
static volatile long uffd_events;

static void *uffd_handler(void *arg)
{
	struct uffd_msg msg;

	(void)arg;
	for (;;) {
		struct pollfd pfd = { .fd = uffd_fd, .events = POLLIN };
		struct uffdio_writeprotect wp;

		if (poll(&pfd, 1, 2000) <= 0)
			return NULL;
		if (read(uffd_fd, &msg, sizeof(msg)) != sizeof(msg))
			continue;
		if (msg.event != UFFD_EVENT_PAGEFAULT || !(msg.arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP))
			continue;
		uffd_events++;
		wp.range.start = msg.arg.pagefault.address & ~(PS - 1);
		wp.range.len = PS;
		wp.mode = 0;
		ioctl(uffd_fd, UFFDIO_WRITEPROTECT, &wp);
	}
}

static void phase_uffd_wp(void)
{
	const char *ph = "uffd-wp";
	char *m = region(NPAGES);
	pid_t pid;
	int rc;

	pid = fork();
	if (pid == 0) {
		struct uffdio_api api = { .api = UFFD_API };
		struct uffdio_register reg = { 0 };
		struct uffdio_writeprotect wp = { 0 };
		pthread_t th;
		int bad;

		uffd_fd = syscall(__NR_userfaultfd, O_CLOEXEC);
		if (uffd_fd < 0 || ioctl(uffd_fd, UFFDIO_API, &api))
			_exit(97);
		reg.range.start = (uintptr_t)m;
		reg.range.len = NPAGES * PS;
		reg.mode = UFFDIO_REGISTER_MODE_WP;
		if (ioctl(uffd_fd, UFFDIO_REGISTER, &reg))
			_exit(97);
		wp.range = reg.range;
		wp.mode = UFFDIO_WRITEPROTECT_MODE_WP;
		if (ioctl(uffd_fd, UFFDIO_WRITEPROTECT, &wp))
			_exit(98);
		pthread_create(&th, NULL, uffd_handler, NULL);
		bad = child_sweep(m, NPAGES, 0, 0, NULL);
		if (uffd_events != NPAGES) {
			printf("# uffd-wp events %ld for %ld written pages\n", uffd_events, NPAGES);
			bad++;
		}
		_exit(bad);
	}
	rc = wait_child(pid);
	if (rc == 97 || rc == 98) {
		ktap_skip(ph, "userfaultfd wp not available");
	} else if (rc) {
		FAILF(ph, "child status %d", rc);
	} else if (check(m, NPAGES, 1, NULL, 0, 0)) {
		FAILF(ph, "the parent's view changed");
	} else {
		ktap_ok(ph);
	}
	munmap(m, NPAGES * PS);
}

static void sigbus_note(int sig)
{
	(void)sig;	/* MADV_HWPOISON signals the caller; the test goes on */
}

static void phase_hwpoison(void)
{
	const char *ph = "hwpoison";
	char *m = region(NPAGES);
	char skip[NPAGES] = { 0 };
	pid_t pid;
	int rc;

	pid = fork();
	if (pid == 0) {
		/* Poison page 130 (shared with the parent), then sweep around it. */
		signal(SIGBUS, sigbus_note);
		if (madvise(m + 130 * PS, PS, MADV_HWPOISON))
			_exit(errno == EINVAL || errno == EPERM || errno == ENOSYS ? 99 : 98);
		skip[130] = 1;
		for (long p = 0; p < NPAGES; p++) {
			if (p == 130)
				continue;
			((uint64_t *)(m + p * PS))[0] = mark_word(p, 2);
		}
		for (long p = 0; p < NPAGES; p++) {
			if (p != 130 && ((uint64_t *)(m + p * PS))[0] != mark_word(p, 2))
				_exit(1);
		}
		_exit(0);
	}
	rc = wait_child(pid);
	if (rc == 99) {
		ktap_skip(ph, "MADV_HWPOISON not available");
	} else if (rc) {
		FAILF(ph, "child status %d", rc);
	} else {
		/* The parent's mapping of the poisoned page is gone too: do not touch it. */
		long bad = 0;

		for (long p = 0; p < NPAGES; p++)
			if (p != 130 && ((uint64_t *)(m + p * PS))[3] != base_word(p, 3))
				bad++;
		if (bad)
			FAILF(ph, "%ld parent pages changed", bad);
		else
			ktap_ok(ph);
	}
	(void)skip;
	munmap(m, NPAGES * PS);
}

/*
 * Races: in a child, one thread writes the shared memory in order again and
 * again (pre-copying) while another unmaps, moves, drops and pages out parts
 * of it and forks short-lived grandchildren.  Writes to a range that is gone
 * fault with SIGSEGV, which the writer skips.  Nothing may crash the kernel;
 * the values found must be one of: the base pattern, the writer's mark, or
 * zero (dropped pages).
 */
#define RACE_PAGES 2048L
static char *race_mem;
static volatile int race_stop;
static __thread sigjmp_buf race_jmp;
static __thread volatile int race_armed;

static void race_segv(int sig)
{
	(void)sig;
	if (race_armed)
		siglongjmp(race_jmp, 1);
	_exit(70);
}

static void *race_writer(void *arg)
{
	volatile long skipped = 0;

	(void)arg;
	while (!race_stop) {
		for (volatile long p = 0; p < RACE_PAGES && !race_stop; p++) {
			race_armed = 1;
			if (sigsetjmp(race_jmp, 1)) {
				skipped++;
				continue;
			}
			((volatile uint64_t *)(race_mem + p * PS))[0] = mark_word(p, 3);
			race_armed = 0;
		}
	}
	race_armed = 0;
	return (void *)(long)skipped;
}

static int race_child(void)
{
	struct sigaction sa = { .sa_handler = race_segv, .sa_flags = SA_NODEFER };
	pthread_t th;
	void *skipped;
	long bad = 0;

	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	pthread_create(&th, NULL, race_writer, NULL);
	for (int i = 0; i < 60; i++) {
		long a = (i * 37) % (RACE_PAGES - 64);
		char *p = race_mem + a * PS;
		pid_t gc;

		switch (i % 5) {
		case 0:
			madvise(p, 32 * PS, MADV_DONTNEED);
			break;
		case 1:
			madvise(p, 32 * PS, MADV_PAGEOUT);
			break;
		case 2: {
			/* Move 16 pages away and back. */
			char *q = mremap(p, 16 * PS, 16 * PS, MREMAP_MAYMOVE | MREMAP_FIXED,
					 race_mem + RACE_PAGES * PS + 64 * PS);

			if (q != MAP_FAILED)
				mremap(q, 16 * PS, 16 * PS, MREMAP_MAYMOVE | MREMAP_FIXED, p);
			break;
		}
		case 3:
			/* Unmap 8 pages and map fresh ones back. */
			munmap(p, 8 * PS);
			mmap(p, 8 * PS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			break;
		case 4:
			gc = fork();
			if (gc == 0) {
				for (long q = 0; q < RACE_PAGES; q += 3)
					((volatile uint64_t *)(race_mem + q * PS))[1] ^= 1;
				_exit(0);
			}
			if (gc > 0)
				waitpid(gc, NULL, 0);
			break;
		}
		usleep(2000);
	}
	race_stop = 1;
	pthread_join(th, &skipped);
	for (long p = 0; p < RACE_PAGES; p++) {
		uint64_t v = ((uint64_t *)(race_mem + p * PS))[0];

		if (v != base_word(p, 0) && v != mark_word(p, 3) && v != 0)
			bad++;
	}
	if (bad)
		printf("# race: %ld pages hold a foreign value\n", bad);
	return bad ? 1 : 0;
}

/*
 * The end of a race phase: the parent's view of its @n pages at @m is
 * unchanged, the region goes, and AnonPages is back to @anon0.
 */
static void end_race_phase(const char *ph, char *m, long n, long anon0, int bad)
{
	if (check(m, n, 1, NULL, 0, 0)) {
		FAILF(ph, "the parent's view changed");
		bad++;
	}
	munmap(m, n * PS);
	if (meminfo_kb("AnonPages:") > anon0 + 1024) {
		FAILF(ph, "AnonPages %ld kB before, %ld kB after", anon0, meminfo_kb("AnonPages:"));
		bad++;
	}
	if (!bad)
		ktap_ok(ph);
}

static void phase_races(void)
{
	const char *ph = "races";
	long anon0 = meminfo_kb("AnonPages:");
	int rc, bad = 0;

	/* Room after the region for mremap() to move into. */
	race_mem = mmap(NULL, (RACE_PAGES + 128) * PS, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (race_mem == MAP_FAILED) {
		FAILF(ph, "mmap");
		return;
	}
	munmap(race_mem + RACE_PAGES * PS, 128 * PS);
	madvise(race_mem, RACE_PAGES * PS, MADV_NOHUGEPAGE);
	for (long p = 0; p < RACE_PAGES; p++)
		for (int w = 0; w < 512; w++)
			((uint64_t *)(race_mem + p * PS))[w] = base_word(p, w);
	for (int round = 0; round < 2; round++) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(race_child());
		rc = wait_child(pid);
		if (rc) {
			FAILF(ph, "round %d: child status %d", round, rc);
			bad++;
		}
	}
	end_race_phase(ph, race_mem, RACE_PAGES, anon0, bad);
}

static void phase_exit(void)
{
	const char *ph = "exit-while-precopying";
	char *m = region(4 * NPAGES);
	long anon0 = meminfo_kb("AnonPages:");

	/* Children killed in the middle of their sweep, over and over. */
	for (int i = 0; i < 20; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			for (long p = 0; ; p = (p + 1) % (4 * NPAGES))
				((volatile uint64_t *)(m + p * PS))[0] = mark_word(p, 4);
		}
		usleep(1000 + i * 1500);
		kill(pid, SIGKILL);
		wait_child(pid);
	}
	if (check(m, 4 * NPAGES, 1, NULL, 0, 0))
		FAILF(ph, "the parent's view changed");
	else if (meminfo_kb("AnonPages:") > anon0 + 1024)
		FAILF(ph, "AnonPages %ld kB before, %ld kB after", anon0, meminfo_kb("AnonPages:"));
	else
		ktap_ok(ph);
	munmap(m, 4 * NPAGES * PS);
}

/*
 * The end of a stream: a child writes the first 2 to 61 pages of a shared
 * region in order, which (past 20 pages, in the adaptive mode) leaves a
 * batch copied ahead whose last page is a read-only, exclusive marker, and
 * then at once exits, unmaps the region, moves it, or forks a grandchild
 * (the marker is shared again) and both write the same pages.  Every
 * process sees its own data; the counters are checked at exit.
 */
#define WRACE_PAGES 512L

static int wrace_child(char *m, int how)
{
	char written[WRACE_PAGES] = { 0 };
	long head = 2 + (how * 7) % 60;
	char *q;
	pid_t gc;

	for (long p = 0; p < head; p++) {
		((volatile uint64_t *)(m + p * PS))[0] = mark_word(p, 5);
		written[p] = 1;
	}
	switch (how % 4) {
	case 0:
		_exit(0);	/* the queued request outlives the mm's users */
	case 1:
		munmap(m, WRACE_PAGES * PS);
		q = region(WRACE_PAGES);	/* may reuse the range */
		_exit(q && !check(q, WRACE_PAGES, 5, NULL, 0, 0) ? 0 : 1);
	case 2:
		q = mremap(m, WRACE_PAGES * PS, WRACE_PAGES * PS, MREMAP_MAYMOVE | MREMAP_FIXED,
			   m + WRACE_PAGES * PS);
		if (q == MAP_FAILED)
			_exit(2);
		for (long p = head; p < WRACE_PAGES; p += 5) {
			((volatile uint64_t *)(q + p * PS))[0] = mark_word(p, 5);
			written[p] = 1;
		}
		_exit(check(q, WRACE_PAGES, 5, written, 0, 0) ? 1 : 0);
	default:
		gc = fork();
		if (gc == 0) {
			char gw[WRACE_PAGES] = { 0 };

			for (long p = 0; p < WRACE_PAGES; p++) {
				((volatile uint64_t *)(m + p * PS))[0] = mark_word(p, 6);
				gw[p] = 1;
			}
			_exit(check(m, WRACE_PAGES, 6, gw, 0, 0) ? 1 : 0);
		}
		for (long p = head; p < WRACE_PAGES; p++) {
			((volatile uint64_t *)(m + p * PS))[0] = mark_word(p, 5);
			written[p] = 1;
		}
		if (gc < 0 || wait_child(gc))
			_exit(3);
		_exit(check(m, WRACE_PAGES, 5, written, 0, 0) ? 1 : 0);
	}
}

static void phase_marker_races(void)
{
	const char *ph = "marker-races";
	/* Twice the room, so that mremap() has a free place to move to. */
	char *m = region(2 * WRACE_PAGES);
	long anon0 = meminfo_kb("AnonPages:");
	int bad = 0;

	if (!m) {
		FAILF(ph, "mmap");
		return;
	}
	munmap(m + WRACE_PAGES * PS, WRACE_PAGES * PS);
	for (int i = 0; i < 80 && bad < 3; i++) {
		pid_t pid = fork();
		int rc;

		if (pid == 0)
			wrace_child(m, i);
		rc = wait_child(pid);
		if (rc) {
			FAILF(ph, "round %d (case %d): child status %d", i, i % 4, rc);
			bad++;
		}
	}
	end_race_phase(ph, m, WRACE_PAGES, anon0, bad);
}

/*
 * Memory cgroups: the child moves into a fresh cgroup and writes 16 MiB it
 * shares with its parent.  Above memory.high, pre-copy must stand back
 * (precopy_skip_memcg_high); at memory.max without swap the child is
 * OOM-killed, possibly while pre-copying.  Either way the cgroup's charge
 * must drop to nothing once the child is gone.
 */
#define CG "/sys/fs/cgroup/cowbench-edges"

/* Anonymous memory charged to the cgroup (memory.stat "anon"), bytes. */
static long cg_anon(void)
{
	static char b[8192];
	char *p;

	if (read_file(CG "/memory.stat", b, sizeof(b)))
		return -1;
	p = strstr(b, "anon ");
	return p == b || (p && p[-1] == '\n') ? atol(p + 5) : -1;
}

static int memcg_child(char *m, long n)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d\n", getpid());
	if (write_file(CG "/cgroup.procs", pid))
		return 96;
	for (long p = 0; p < n; p++)
		((volatile uint64_t *)(m + p * PS))[0] = mark_word(p, 5);
	for (long p = 0; p < n; p++)
		if (((uint64_t *)(m + p * PS))[0] != mark_word(p, 5))
			return 1;
	return 0;
}

static void memcg_case(const char *ph, const char *high, const char *max, const char *swap_max, int want_kill)
{
	long n = 4096;
	char *m = region(n);
	struct cow_stats s0;
	long cur;
	pid_t pid;
	int rc;

	rmdir(CG);
	if (mkdir(CG, 0755) || write_file(CG "/memory.high", high) || write_file(CG "/memory.max", max)) {
		FAILF(ph, "cannot set up " CG ": %s", strerror(errno));
		return;
	}
	write_file(CG "/memory.swap.max", swap_max);
	cow_stats_read(&s0);
	pid = fork();
	if (pid == 0)
		_exit(memcg_child(m, n));
	rc = wait_child(pid);
	for (int i = 0; i < 50 && (cur = cg_anon()) != 0; i++)
		usleep(100000);	/* uncharging after exit may lag a little */
	if (want_kill && rc != 128 + SIGKILL)
		FAILF(ph, "child status %d, expected an OOM kill", rc);
	else if (!want_kill && rc)
		FAILF(ph, "child status %d", rc);
	else if (cur != 0)
		FAILF(ph, "anon %ld bytes charged after the child exited (charge leak)", cur);
	else if (check(m, n, 1, NULL, 0, 0))
		FAILF(ph, "the parent's view changed");
	else
		ktap_okf(ph, "status %d, precopy_skip_memcg_high +%llu, precopy_skip_nomem +%llu, "
			 "precopy_success +%llu", rc, stat_delta(&s0, "precopy_skip_memcg_high"),
		       stat_delta(&s0, "precopy_skip_nomem"), stat_delta(&s0, "precopy_success"));
	if (!want_kill && !strcmp(max, "max") && stat_delta(&s0, "precopy_skip_memcg_high") == 0 &&
	    stat_delta(&s0, "precopy_success") > 0)
		FAILF(ph, "pre-copied above memory.high without ever standing back");
	rmdir(CG);
	munmap(m, n * PS);
}

static void phase_memcg(void)
{
	char b[256] = "";

	mkdir("/sys/fs/cgroup", 0755);
	if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) && cowtest_in_guest())
		mount("none", "/sys/fs/cgroup", "cgroup2", 0, NULL);
	if (read_file("/sys/fs/cgroup/cgroup.controllers", b, sizeof(b)) || !strstr(b, "memory")) {
		ktap_skip("memcg", "no memory controller");
		return;
	}
	write_file("/sys/fs/cgroup/cgroup.subtree_control", "+memory");
	memcg_case("memcg-high", "2M", "max", "max", 0);
	memcg_case("memcg-max-oom", "max", "4M", "0", 1);
}

/* The integer value of "@key N" in the cgroup file @file of @cg, or -1. */
static long cg_key(const char *cg, const char *file, const char *key)
{
	static char b[8192];
	char path[256], *p;
	size_t kl = strlen(key);

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	if (read_file(path, b, sizeof(b)))
		return -1;
	for (p = b; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, kl) && p[kl] == ' ')
			return atol(p + kl + 1);
	return -1;
}

/* The vm.* sysctl @name, or -1. */
static int get_sysctl_int(const char *name)
{
	char path[128], b[32];

	snprintf(path, sizeof(path), "/proc/sys/vm/%s", name);
	return read_file(path, b, sizeof(b)) ? -1 : atoi(b);
}

/*
 * memory.high just above usage: a speculative round must leave room for its
 * own pages and one per-CPU charge batch (64 pages) below memory.high, or
 * not run.  The child joins a fresh cgroup, sets memory.high to its usage
 * plus @room pages, then writes @k shared pages 17 apart with fixed
 * pre-copy of depth 16.  With room 72 (< 16 + 64) the check must stand back
 * (precopy_skip_memcg_high) and the cgroup must never go above memory.high
 * (memory.events "high" stays 0: v3 crossed it and throttled the task).
 * Some pages may still be copied ahead: memory.current counts the pages
 * precharged into the CPU's charge stock, which the child's own faults
 * then use without a new charge, so a round can fit.  With room 400,
 * pre-copy runs (the check does not stand back for nothing).
 */
#define CGH "/sys/fs/cgroup/cowbench-headroom"

struct headroom_result {
	unsigned long long success, skip_high;
};

/*
 * Measured in the child, from the moment memory.high is set: the parent's
 * own COW faults after fork (its stack, its buffers) may copy ahead too,
 * outside the cgroup, and must not count here.
 */
static int headroom_child(char *m, long k, long room, int out)
{
	struct headroom_result r;
	struct cow_stats a;
	cpu_set_t cpus;
	char b[64];
	long cur;

	/* One CPU: the charge stock is per CPU. */
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		return 94;
	snprintf(b, sizeof(b), "%d\n", getpid());
	if (write_file(CGH "/cgroup.procs", b))
		return 96;
	if (read_file(CGH "/memory.current", b, sizeof(b)))
		return 98;
	cur = atol(b);
	snprintf(b, sizeof(b), "%ld\n", cur + room * PS);
	if (write_file(CGH "/memory.high", b))
		return 99;
	cow_stats_read(&a);
	for (long i = 0; i < k; i++)
		((volatile uint64_t *)(m + i * 17 * PS))[0] = mark_word(i * 17, 6);
	r.success = stat_delta(&a, "precopy_success");
	r.skip_high = stat_delta(&a, "precopy_skip_memcg_high");
	for (long i = 0; i < k; i++)
		if (((uint64_t *)(m + i * 17 * PS))[0] != mark_word(i * 17, 6))
			return 1;
	return write(out, &r, sizeof(r)) == sizeof(r) ? 0 : 95;
}

static void headroom_case(const char *ph, long room, int want_precopy)
{
	long k = 8, n = k * 17 + 17, high;
	struct headroom_result r = { 0, 0 };
	char *m = region(n);
	int p[2];
	pid_t pid;
	int rc;

	rmdir(CGH);
	if (!m || pipe(p) || mkdir(CGH, 0755) || write_file(CGH "/memory.max", "max")) {
		FAILF(ph, "cannot set up " CGH ": %s", strerror(errno));
		return;
	}
	pid = fork();
	if (pid == 0)
		_exit(headroom_child(m, k, room, p[1]));
	rc = wait_child(pid);
	if (!rc && read(p[0], &r, sizeof(r)) != sizeof(r))
		rc = -1;
	close(p[0]);
	close(p[1]);
	high = cg_key(CGH, "memory.events", "high");
	if (rc)
		FAILF(ph, "child status %d", rc);
	else if (want_precopy && r.success == 0)
		FAILF(ph, "room %ld pages: nothing pre-copied (skip_memcg_high +%llu)", room,
		      r.skip_high);
	else if (!want_precopy && (!r.skip_high || high != 0))
		FAILF(ph, "room %ld pages: precopy_success +%llu, precopy_skip_memcg_high +%llu, "
		      "memory.events high %ld (want >0 and 0)", room, r.success, r.skip_high, high);
	else if (check(m, n, 6, NULL, 0, 0))
		FAILF(ph, "the parent's view changed");
	else
		ktap_okf(ph, "room %ld pages: precopy_success +%llu, precopy_skip_memcg_high +%llu, "
			 "memory.events high %ld", room, r.success, r.skip_high, high);
	rmdir(CGH);
	munmap(m, n * PS);
}

static void phase_memcg_headroom(void)
{
	int mode = get_sysctl_int("cow_precopy"), depth = get_sysctl_int("cow_precopy_depth");
	char b[256] = "";

	mkdir("/sys/fs/cgroup", 0755);
	if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) && cowtest_in_guest())
		mount("none", "/sys/fs/cgroup", "cgroup2", 0, NULL);
	if (read_file("/sys/fs/cgroup/cgroup.controllers", b, sizeof(b)) || !strstr(b, "memory")) {
		ktap_skip("memcg-headroom", "no memory controller");
		return;
	}
	write_file("/sys/fs/cgroup/cgroup.subtree_control", "+memory");
	if (set_precopy(1, 16)) {
		FAILF("memcg-headroom", "cannot set fixed pre-copy of depth 16: %s", strerror(errno));
		return;
	}
	headroom_case("memcg-headroom-72", 72, 0);
	headroom_case("memcg-headroom-400", 400, 1);
	set_precopy(mode, depth);
}

/*
 * A fault taken for another process never copies ahead: the parent writes
 * every page it shares with a forked child into the child with
 * process_vm_writev() (GUP with FOLL_REMOTE breaks COW in the child, in
 * the parent's context), with fixed pre-copy of depth 16 and in the
 * adaptive mode.  precopy_success must not move, precopy_skip_remote must,
 * and the child sees exactly what was written, the parent its own data.
 */
/* Touch 256 KiB of stack, so that later calls fault no stack page. */
static void __attribute__((noinline)) warm_stack(void)
{
	volatile char buf[256 * 1024];

	for (size_t i = 0; i < sizeof(buf); i += PS)
		buf[i] = 1;
}

static void remote_case(const char *ph, int mode)
{
	long n = NPAGES;
	char *m = region(n), *src = malloc(n * PS), *written = calloc(n, 1);
	int go[2], done[2], use_mem = 0, memfd = -1;
	struct cow_stats s0;
	char path[64];
	char c = 'x';
	pid_t pid;
	int rc;

	if (!m || !src || !written || pipe(go) || pipe(done)) {
		FAILF(ph, "setup: %s", strerror(errno));
		return;
	}
	for (long p = 0; p < n; p++)
		written[p] = 1;	/* before fork: the child checks against it */
	memcpy(src, m, n * PS);
	for (long p = 0; p < n; p++)
		((uint64_t *)(src + p * PS))[0] = mark_word(p, 7);
	set_precopy(mode, 16);
	pid = fork();
	if (pid == 0) {
		if (write(done[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		_exit(check(m, n, 7, written, 0, 0) ? 1 : 0);
	}
	if (read(done[0], &c, 1) != 1) {
		FAILF(ph, "child did not start");
		return;
	}
	/*
	 * The parent's own pages (stack, buffers) are COW-shared with the
	 * child too: take their faults, and whatever they copy ahead, before
	 * the counters are read.
	 */
	warm_stack();
	cow_stats_read(&s0);
	stat_delta(&s0, "precopy_success");
	cow_stats_read(&s0);
	/*
	 * One page per call, in order: a stream, if remote faults counted.
	 * process_vm_writev() (CROSS_MEMORY_ATTACH) where the kernel has it,
	 * else /proc/PID/mem (what ptrace users write through): both break
	 * COW in the child with remote GUP, from the parent's context.
	 */
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	for (long p = 0; p < n; p++) {
		struct iovec l = { src + p * PS, PS }, r = { m + p * PS, PS };

		if (!use_mem && process_vm_writev(pid, &l, 1, &r, 1, 0) == PS)
			continue;
		if (!use_mem && errno != ENOSYS) {
			FAILF(ph, "process_vm_writev page %ld: %s", p, strerror(errno));
			break;
		}
		if (!use_mem) {
			use_mem = 1;
			memfd = open(path, O_RDWR);
		}
		if (memfd < 0 || pwrite(memfd, src + p * PS, PS, (off_t)(uintptr_t)(m + p * PS)) != PS) {
			FAILF(ph, "write to %s page %ld: %s", path, p, strerror(errno));
			break;
		}
	}
	if (memfd >= 0)
		close(memfd);
	if (stat_delta(&s0, "precopy_success") || !stat_delta(&s0, "precopy_skip_remote"))
		FAILF(ph, "precopy_success +%llu, precopy_skip_remote +%llu (want 0, >0)",
		      stat_delta(&s0, "precopy_success"), stat_delta(&s0, "precopy_skip_remote"));
	else
		ktap_okf(ph, "%s: faults +%llu, precopy_skip_remote +%llu, precopy_success 0",
		       use_mem ? "/proc/PID/mem" : "process_vm_writev", stat_delta(&s0, "faults"),
		       stat_delta(&s0, "precopy_skip_remote"));
	/*
	 * The child was written by its parent; the child's own view is
	 * checked above, on the pages process_vm_writev() wrote.
	 */
	if (write(go[1], &c, 1) != 1)
		FAILF(ph, "cannot release the child");
	rc = wait_child(pid);
	if (rc)
		FAILF(ph, "child status %d: it does not see what was written into it", rc);
	if (check(m, n, 7, NULL, 0, 0))
		FAILF(ph, "the parent's view changed");
	close(go[0]); close(go[1]); close(done[0]); close(done[1]);
	free(src);
	free(written);
	munmap(m, n * PS);
}

static void phase_remote(void)
{
	int mode = get_sysctl_int("cow_precopy"), depth = get_sysctl_int("cow_precopy_depth");

	if (mode < 0) {
		ktap_skip("remote", "no vm.cow_precopy");
		return;
	}
	remote_case("remote-precopy1", 1);
	remote_case("remote-precopy2", 2);
	set_precopy(mode, depth);
}

/*
 * The watermark that decides is the one of the node the page came from: the
 * task runs on node 0's CPU, its region is bound to node 1 (mbind
 * MPOL_BIND), and node 1 is filled until its free pages lie between its
 * zone's min and low watermarks.  A child writing the bound region in order
 * with fixed pre-copy of depth 16 must copy nothing ahead (every page it
 * would copy comes from node 1's low-min band: precopy_skip_watermark) and
 * still see its data.  Controls in the same boot: node 1 not filled (pages
 * are copied ahead, onto node 1), and node 1 filled but the region bound to
 * node 0 (copied ahead: node 1's state does not matter then).  v3 looked at
 * the first zone of the local node (node 0 here, far above its watermark)
 * and copied ahead from node 1's band.  vm.watermark_scale_factor is raised
 * for the phase so that the band is wide (10 % of the zone) and restored.
 * Needs a two-node guest (vm-run.sh --numa 2 --smp 2); skipped on one node.
 */
#ifndef MPOL_BIND
#define MPOL_BIND 2
#endif
#ifndef MPOL_F_NODE
#define MPOL_F_NODE (1 << 0)
#define MPOL_F_ADDR (1 << 1)
#endif
#define NUMA_PAGES 256L

struct zone_wm {
	long free, min, low, high, managed;
};

/* The zone of node @nid with the most managed pages (the one its user pages
 * come from), from /proc/zoneinfo.  Returns 0, or -1 if there is none. */
static int zone_of_node(int nid, struct zone_wm *z)
{
	static char b[256 * 1024];
	char head[32];
	int in = 0, found = -1;
	struct zone_wm cur = { 0 };
	char *line, *next;

	if (read_all("/proc/zoneinfo", b, sizeof(b)))
		return -1;
	snprintf(head, sizeof(head), "Node %d, zone", nid);
	memset(z, 0, sizeof(*z));
	for (line = b; line && *line; line = next) {
		char *s = line;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (!strncmp(line, "Node ", 5)) {
			if (in && cur.managed > z->managed) {
				*z = cur;
				found = 0;
			}
			in = !strncmp(line, head, strlen(head));
			memset(&cur, 0, sizeof(cur));
			continue;
		}
		if (!in)
			continue;
		while (*s == ' ')
			s++;
		if (!strncmp(s, "pages free ", 11))
			cur.free = atol(s + 11);
		else if (!strncmp(s, "min ", 4))
			cur.min = atol(s + 4);
		else if (!strncmp(s, "low ", 4))
			cur.low = atol(s + 4);
		else if (!strncmp(s, "high ", 5))
			cur.high = atol(s + 5);
		else if (!strncmp(s, "managed ", 8))
			cur.managed = atol(s + 8);
	}
	if (in && cur.managed > z->managed) {
		*z = cur;
		found = 0;
	}
	return found;
}

/* The value of @key in /proc/vmstat, or -1. */
static long long vmstat_val(const char *key)
{
	static char b[16384];
	size_t kl = strlen(key);
	char *p;

	if (read_all("/proc/vmstat", b, sizeof(b)))
		return -1;
	for (p = b; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, kl) && p[kl] == ' ')
			return atoll(p + kl + 1);
	return -1;
}

static int bind_to(void *addr, size_t len, int node)
{
	unsigned long mask = 1ul << node;

	return syscall(__NR_mbind, addr, len, MPOL_BIND, &mask, 8 * sizeof(mask), 0) ? -1 : 0;
}

/* The node of the page at @addr, or -1. */
static int node_of(void *addr)
{
	int node = -1;

	if (syscall(__NR_get_mempolicy, &node, NULL, 0, addr, MPOL_F_NODE | MPOL_F_ADDR))
		return -1;
	return node;
}

struct numa_result {
	long long precopy;		/* /proc/vmstat cow_precopy delta (v3: precopy_success) */
	unsigned long long skip_wm;	/* precopy_skip_watermark delta */
	unsigned long long faults;	/* cow_stats faults delta */
	long on_node, bad;		/* written pages on the wanted node; bad pages */
};

static int numa_child(char *m, int node, int go, int out)
{
	static char written[NUMA_PAGES];
	struct numa_result r = { 0 };
	struct cow_stats a;
	long long v0;
	char c;

	/* Take the COW faults of our own buffers (and what they copy ahead) before counting. */
	warm_stack();
	memset(written, 0, sizeof(written));
	cow_stats_read(&a);
	stat_delta(&a, "faults");
	vmstat_val("cow_precopy");
	if (read(go, &c, 1) != 1)
		return 97;
	cow_stats_read(&a);
	v0 = vmstat_val("cow_precopy");
	for (long p = 0; p < NUMA_PAGES; p++)
		((volatile uint64_t *)(m + p * PS))[0] = mark_word(p, 8);
	/* v3 had no vmstat event: precopy_success (the same count in v4) then. */
	r.precopy = v0 >= 0 ? vmstat_val("cow_precopy") - v0 : (long long)stat_delta(&a, "precopy_success");
	r.skip_wm = stat_delta(&a, "precopy_skip_watermark");
	r.faults = stat_delta(&a, "faults");
	for (long p = 0; p < NUMA_PAGES; p++) {
		written[p] = 1;
		r.on_node += node_of(m + p * PS) == node;
	}
	r.bad = check(m, NUMA_PAGES, 8, written, 0, 0);
	return write(out, &r, sizeof(r)) == sizeof(r) ? 0 : 95;
}

/* One fork: the child writes a region bound to @node; 0 and its result, or -1 (failed). */
static int numa_case(const char *ph, int node, struct numa_result *r)
{
	char *m = mmap(NULL, NUMA_PAGES * PS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int go[2], out[2], rc;
	pid_t pid;
	char c = 'g';

	memset(r, 0, sizeof(*r));
	if (m == MAP_FAILED || pipe(go) || pipe(out)) {
		FAILF(ph, "setup: %s", strerror(errno));
		return -1;
	}
	madvise(m, NUMA_PAGES * PS, MADV_NOHUGEPAGE);
	if (bind_to(m, NUMA_PAGES * PS, node)) {
		FAILF(ph, "mbind(MPOL_BIND, node %d): %s", node, strerror(errno));
		munmap(m, NUMA_PAGES * PS);
		return -1;
	}
	for (long p = 0; p < NUMA_PAGES; p++)
		for (int w = 0; w < 512; w++)
			((uint64_t *)(m + p * PS))[w] = base_word(p, w);
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(numa_child(m, node, go[0], out[1]));
	/* Our own COW faults after fork (stack, buffers) before the child counts. */
	warm_stack();
	if (write(go[1], &c, 1) != 1)
		FAILF(ph, "cannot start the child");
	rc = wait_child(pid);
	if (!rc && read(out[0], r, sizeof(*r)) != sizeof(*r))
		rc = -2;
	close(go[0]); close(go[1]); close(out[0]); close(out[1]);
	if (rc)
		FAILF(ph, "child status %d", rc);
	else if (r->bad)
		FAILF(ph, "the child saw %ld bad pages", r->bad);
	else if (check(m, NUMA_PAGES, 1, NULL, 0, 0))
		FAILF(ph, "the parent's view changed");
	else if (r->on_node != NUMA_PAGES)
		FAILF(ph, "only %ld of %ld written pages on node %d", r->on_node, NUMA_PAGES, node);
	else
		rc = 0;
	munmap(m, NUMA_PAGES * PS);
	return rc ? -1 : 0;
}

/* Touch pages of @fill (bound to @nid) until node @nid's free pages are at most @target. */
static long fill_node(char *fill, long max, int nid, long target, struct zone_wm *z)
{
	long done = 0;

	for (int i = 0; i < 64; i++) {
		long want;

		if (zone_of_node(nid, z))
			return -1;
		if (z->free <= target)
			break;
		/* Half of the distance at a time once close: per-CPU lists lag the count. */
		want = z->free - target;
		if (want > 512)
			want = want * 3 / 4;
		for (long k = 0; k < want && done < max; k++, done++)
			((volatile char *)fill)[done * PS] = 1;
		if (done >= max)
			break;
	}
	zone_of_node(nid, z);
	return done;
}

static void phase_numa_watermark(void)
{
	const char *ph = "numa-watermark";
	int mode = get_sysctl_int("cow_precopy"), depth = get_sysctl_int("cow_precopy_depth");
	int batch = get_sysctl_int("cow_precopy_batch"), wsf = get_sysctl_int("watermark_scale_factor");
	struct numa_result r0, r1, r2;
	struct zone_wm z, z1;
	char b[64] = "";
	cpu_set_t cpus, old;
	long fill_pages, filled, target;
	char *fill;

	if (access("/sys/devices/system/node/node1", F_OK)) {
		ktap_skip(ph, "one NUMA node (boot with vm-run.sh --numa 2)");
		return;
	}
	if (mode < 0 || wsf < 0) {
		ktap_skip(ph, "no vm.cow_precopy");
		return;
	}
	/* Run on node 0's first CPU: node 1 is the far node. */
	if (read_file("/sys/devices/system/node/node0/cpulist", b, sizeof(b)) || sched_getaffinity(0, sizeof(old), &old)) {
		FAILF(ph, "node 0's CPUs: %s", strerror(errno));
		return;
	}
	CPU_ZERO(&cpus);
	CPU_SET(atoi(b), &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus)) {
		FAILF(ph, "sched_setaffinity(CPU %d): %s", atoi(b), strerror(errno));
		return;
	}
	/* A wide low-min band (10 % of the zone) to park node 1 in. */
	if (set_sysctl_int("watermark_scale_factor", 1000) || set_sysctl_int("cow_precopy_batch", 16) ||
	    set_precopy(1, 16)) {
		FAILF(ph, "cannot set the sysctls: %s", strerror(errno));
		goto restore;
	}
	if (zone_of_node(1, &z) || z.low - z.min < 4 * NUMA_PAGES) {
		FAILF(ph, "node 1's zone: min %ld low %ld (want a band of %ld pages)", z.min, z.low, 4 * NUMA_PAGES);
		goto restore;
	}
	printf("# task on CPU %d (node 0); node 1 zone: free %ld min %ld low %ld high %ld managed %ld\n",
	       atoi(b), z.free, z.min, z.low, z.high, z.managed);

	/* Control: node 1 not filled, the region bound to node 1: pages are copied ahead. */
	if (numa_case("numa-watermark-unfilled", 1, &r0))
		goto restore;
	if (r0.precopy <= 0)
		FAILF("numa-watermark-unfilled", "node 1 not filled: cow_precopy +%lld (want > 0)", r0.precopy);
	else
		ktap_okf("numa-watermark-unfilled", "bound to node 1: faults +%llu, cow_precopy +%lld, "
			 "precopy_skip_watermark +%llu", r0.faults, r0.precopy, r0.skip_wm);

	/*
	 * Fill node 1 to a third of the band above min: the child's own 256 COW
	 * copies (and page tables) still fit above min, no pre-copy page fits
	 * above low.  No swap: what is touched stays; nothing is OOM-killed.
	 */
	target = z.min + (z.low - z.min) / 3 + NUMA_PAGES;
	fill_pages = z.free;
	fill = mmap(NULL, fill_pages * PS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (fill == MAP_FAILED || madvise(fill, fill_pages * PS, MADV_NOHUGEPAGE) ||
	    bind_to(fill, fill_pages * PS, 1)) {
		FAILF(ph, "fill region: %s", strerror(errno));
		goto restore;
	}
	filled = fill_node(fill, fill_pages, 1, target, &z);
	printf("# filled %ld pages on node 1: free %ld (min %ld, low %ld, target %ld)\n", filled, z.free, z.min,
	       z.low, target);
	if (filled < 0 || z.free >= z.low - NUMA_PAGES || z.free <= z.min + NUMA_PAGES) {
		FAILF(ph, "could not park node 1 between min and low: free %ld, min %ld, low %ld", z.free, z.min,
		      z.low);
		goto unfill;
	}
	if (!numa_case(ph, 1, &r1)) {
		zone_of_node(1, &z1);
		if (r1.precopy != 0 || r1.skip_wm == 0)
			FAILF(ph, "node 1 free %ld in [min %ld, low %ld): cow_precopy +%lld, precopy_skip_watermark "
			      "+%llu (want 0 and > 0)", z.free, z.min, z.low, r1.precopy, r1.skip_wm);
		else
			ktap_okf(ph, "bound to node 1, free %ld -> %ld in [min %ld, low %ld): faults +%llu, "
				 "cow_precopy +%lld, precopy_skip_watermark +%llu", z.free, z1.free, z.min, z.low,
				 r1.faults, r1.precopy, r1.skip_wm);
	}
	/* Control: node 1 still filled, the region bound to node 0: node 1 does not matter. */
	if (!numa_case("numa-watermark-node0", 0, &r2)) {
		if (r2.precopy <= 0)
			FAILF("numa-watermark-node0", "bound to node 0 with node 1 filled: cow_precopy +%lld "
			      "(want > 0)", r2.precopy);
		else
			ktap_okf("numa-watermark-node0", "bound to node 0, node 1 filled: faults +%llu, "
				 "cow_precopy +%lld, precopy_skip_watermark +%llu", r2.faults, r2.precopy,
				 r2.skip_wm);
	}
unfill:
	munmap(fill, fill_pages * PS);
restore:
	set_sysctl_int("watermark_scale_factor", wsf);
	if (batch > 0)
		set_sysctl_int("cow_precopy_batch", batch);
	set_precopy(mode, depth);
	sched_setaffinity(0, sizeof(old), &old);
}

static const struct {
	const char *name;
	void (*fn)(void);
} phases[] = {
	{ "ksm", phase_ksm },
	{ "swapcache", phase_swap },
	{ "mlock", phase_mlock },
	{ "gup", NULL },
	{ "vmsplice", phase_vmsplice },
	{ "io_uring", phase_io_uring },
	{ "uffd-wp", phase_uffd_wp },
	{ "hwpoison", phase_hwpoison },
	{ "races", phase_races },
	{ "exit", phase_exit },
	{ "marker-races", phase_marker_races },
	{ "memcg", phase_memcg },
	{ "memcg-headroom", phase_memcg_headroom },
	{ "remote", phase_remote },
	{ "numa-watermark", phase_numa_watermark },
};

static void run_phase(int i)
{
	if (!phases[i].fn) {
		phase_gup(1, 1);
		phase_gup(0, 0);
		phase_gup(0, 1);
	} else {
		phases[i].fn();
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int n = sizeof(phases) / sizeof(phases[0]);

	ktap_header();
	if (argc == 1) {
		for (int i = 0; i < n; i++)
			run_phase(i);
	}
	for (int a = 1; a < argc; a++) {
		int found = 0;

		for (int i = 0; i < n; i++)
			if (!strcmp(argv[a], phases[i].name)) {
				run_phase(i);
				found = 1;
			}
		if (!found) {
			fprintf(stderr, "cow_precopy_edges: unknown phase %s\n", argv[a]);
			return 2;
		}
	}
	return ktap_finish();
}
