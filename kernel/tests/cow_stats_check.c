// SPDX-License-Identifier: GPL-2.0
/*
 * cow_stats_check: functional checks of /proc/cow_stats and the vm.cow_*
 * sysctls.  Run as root in an otherwise idle guest.  Reports one KTAP
 * result per check (ktap.h); exits 1 if any failed, 4 (skip) on a kernel
 * without /proc/cow_stats.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "cowtest.h"
#include "ktap.h"

#define CHECK(cond, name, ...) do {					\
	if (cond)							\
		ktap_ok(name);						\
	else								\
		ktap_fail(name, __VA_ARGS__);				\
} while (0)

struct delta {
	unsigned long long faults, hist, copy_ns, path_ns, success, attempts, skips;
	unsigned long long batches, markers, hits, max_pages;
	unsigned long long written;	/* distinct pages the child wrote */
	unsigned long long vm_faults, vm_precopy;	/* /proc/vmstat cow_fault, cow_precopy */
	int ok;
};

/* The /proc/vmstat event @key, or 0 when it is missing. */
static unsigned long long vmstat(const char *key)
{
	static char b[16384];
	size_t kl = strlen(key);

	if (read_file("/proc/vmstat", b, sizeof(b)))
		return 0;
	for (char *p = b; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, kl) && p[kl] == ' ')
			return strtoull(p + kl + 1, NULL, 10);
	return 0;
}

static unsigned long long hist_sum(const struct cow_stats *s)
{
	unsigned long long sum = 0;

	for (int i = 0; i < s->n; i++)
		if (!strncmp(s->key[i], "copy_hist_", 10))
			sum += s->val[i];
	return sum;
}

static unsigned long long skip_sum(const struct cow_stats *s)
{
	unsigned long long sum = 0;

	for (int i = 0; i < s->n; i++)
		if (!strncmp(s->key[i], "precopy_skip_", 13))
			sum += s->val[i];
	return sum;
}

/*
 * Map @n pages, fill them, fork; the child writes one byte in pages of the
 * region and reports the /proc/cow_stats deltas over its write loop:
 * @stride > 0: every @stride-th page, in order; 0: pairs of adjacent pages
 * 8 pages apart; < 0: bursts of -@stride pages, 2 * -@stride pages apart.
 * With @holes > 0 the child first writes every @holes-th page (making it
 * private), then every page in order, and checks what it reads back.
 */
static int holes;

static int written_by_pattern(long i, int stride)
{
	if (stride > 0)
		return i % stride == 0;
	if (stride == 0)
		return i % 8 < 2;
	return i % (2 * -stride) < -stride;
}

static struct delta child_writes(long n, int stride)
{
	char *mem = mmap(NULL, n * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct delta d = { 0 };
	int go[2], res[2], status;
	long step = stride > 0 ? stride : 1;
	char c = 'g';
	pid_t pid;

	if (mem == MAP_FAILED || pipe(go) || pipe(res))
		return d;
	madvise(mem, n * 4096, MADV_NOHUGEPAGE);
	for (long i = 0; i < n; i++)
		memset(mem + i * 4096, 0x5a, 4096);
	pid = fork();
	if (pid == 0) {
		struct cow_stats a, b;
		unsigned long long vf, vp;

		cow_stats_read(&a);
		cow_stats_read(&b);
		vf = vmstat("cow_fault");
		vp = vmstat("cow_precopy");
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		if (holes > 0)
			for (long i = 0; i < n; i += holes)
				mem[i * 4096 + 7] = 2;
		/* A reset makes precopy_fault_pages_max this loop's own. */
		write_file(COW_STATS_PATH, "1\n");
		cow_stats_read(&a);
		vf = vmstat("cow_fault");
		vp = vmstat("cow_precopy");
		for (long i = 0; i < n; i++) {
			if (holes > 0 || written_by_pattern(i, stride)) {
				mem[i * 4096 + 7] = 1;
				d.written++;
			}
		}
		(void)step;
		cow_stats_read(&b);
		d.vm_faults = vmstat("cow_fault") - vf;
		d.vm_precopy = vmstat("cow_precopy") - vp;
		for (long i = 0; i < n; i++) {
			const char *p = mem + i * 4096;
			int want = holes > 0 || written_by_pattern(i, stride);

			if (p[7] != (want ? 1 : 0x5a) || p[0] != 0x5a || p[4095] != 0x5a)
				_exit(4);
		}
		d.faults = cow_stat(&b, "faults") - cow_stat(&a, "faults");
		d.hist = hist_sum(&b) - hist_sum(&a);
		d.copy_ns = cow_stat(&b, "copy_ns_total") - cow_stat(&a, "copy_ns_total");
		d.path_ns = cow_stat(&b, "path_ns_total") - cow_stat(&a, "path_ns_total");
		if (cow_has_stat(&b, "precopy_success")) {
			d.success = cow_stat(&b, "precopy_success") - cow_stat(&a, "precopy_success");
			d.attempts = cow_stat(&b, "precopy_attempts") - cow_stat(&a, "precopy_attempts");
			d.skips = skip_sum(&b) - skip_sum(&a);
			d.batches = cow_stat(&b, "precopy_batches") - cow_stat(&a, "precopy_batches");
			d.markers = cow_stat(&b, "precopy_marker_faults") - cow_stat(&a, "precopy_marker_faults");
			d.hits = cow_stat(&b, "precopy_seq_hits") - cow_stat(&a, "precopy_seq_hits");
			d.max_pages = cow_stat(&b, "precopy_fault_pages_max");
		}
		d.ok = 1;
		if (write(res[1], &d, sizeof(d)) != sizeof(d))
			_exit(3);
		_exit(0);
	}
	memset(&d, 0, sizeof(d));
	status = 0;
	if (pid < 0 || write(go[1], &c, 1) != 1 || read(res[0], &d, sizeof(d)) != sizeof(d))
		d.ok = 0;
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		d.ok = 0;	/* 4: the child read back wrong data */
	for (long i = 0; i < n; i++)
		if (mem[i * 4096 + 7] != 0x5a)
			d.ok = 0;	/* the parent must still see its own data */
	close(go[0]); close(go[1]); close(res[0]); close(res[1]);
	munmap(mem, n * 4096);
	return d;
}

static void check_format(void)
{
	static const char * const required[] = {
		"faults", "zero_faults", "unshares", "timed",
		"copy_ns_total", "copy_ns_max", "path_ns_total", "copy_hist_128",
		"copy_hist_256", "copy_hist_inf", "precopy_attempts", "precopy_success",
		"precopy_skip_exclusive", "precopy_skip_pinned", "precopy_skip_ksm",
		"precopy_skip_zero", "precopy_skip_large", "precopy_skip_raced",
		"precopy_skip_hwpoison", "precopy_skip_watermark", "precopy_skip_memcg_high",
		"precopy_skip_signal", "precopy_skip_remote", "precopy_ns_total", "precopy_batches",
		"precopy_fault_pages_max", "precopy_fault_pages_0", "precopy_fault_pages_1",
		"precopy_fault_pages_16", "precopy_fault_hist_128",
		"precopy_fault_hist_inf", "precopy_seq_hits", "precopy_seq_misses",
		"precopy_marker_faults",
	};
	char raw[8192];
	int bad = 0, lines = 0;
	struct cow_stats s;

	CHECK(!read_file(COW_STATS_PATH, raw, sizeof(raw)), "stats-readable", "%s", strerror(errno));
	for (char *l = raw, *e; *l; l = e + 1) {
		char *p = l;

		e = strchr(l, '\n');
		if (!e)
			break;
		*e = 0;
		lines++;
		while (*p && (islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_'))
			p++;
		if (p == l || p[0] != ':' || p[1] != ' ' || !isdigit((unsigned char)p[2])) {
			bad++;
		} else {
			for (p += 2; isdigit((unsigned char)*p); p++)
				;
			if (*p)
				bad++;
		}
		if (bad == 1)
			ktap_print_msg("bad line: '%s'", l), bad++;
	}
	CHECK(!bad && lines > 10, "stats-format", "%d malformed of %d lines", bad, lines);
	cow_stats_read(&s);
	for (unsigned int i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		CHECK(cow_has_stat(&s, required[i]), required[i], "key missing");
	/* The cap is 16 pages ahead: no bucket above it. */
	CHECK(!cow_has_stat(&s, "precopy_fault_pages_32"), "no-pages-bucket-32", "key present");
	CHECK(cow_stat(&s, "precopy_attempts") == cow_stat(&s, "precopy_success") + skip_sum(&s),
	      "precopy-attempts-sum", "attempts %llu != success %llu + skips %llu",
	      cow_stat(&s, "precopy_attempts"), cow_stat(&s, "precopy_success"), skip_sum(&s));
}

static void check_exact(long n)
{
	struct delta d;
	char name[64];

	set_precopy(0, 1);
	d = child_writes(n, 1);
	snprintf(name, sizeof(name), "exact-faults-%ld", n);
	CHECK(d.ok && d.faults == (unsigned long long)n, name, "child wrote %ld pages, faults +%llu", n, d.faults);
	CHECK(d.ok && d.vm_faults == (unsigned long long)n, "vmstat-cow-fault",
	      "/proc/vmstat cow_fault +%llu for %ld pages", d.vm_faults, n);
	CHECK(d.ok && d.hist == (unsigned long long)n, "exact-histogram", "histogram +%llu", d.hist);
	CHECK(d.ok && d.copy_ns > 0 && d.path_ns >= d.copy_ns, "copy-and-path-time",
	      "copy_ns +%llu path_ns +%llu", d.copy_ns, d.path_ns);
	CHECK(d.ok && d.attempts == 0, "no-precopy-when-off", "precopy_attempts +%llu", d.attempts);
	d = child_writes(n, 2);
	CHECK(d.ok && d.faults == (unsigned long long)(n + 1) / 2, "exact-faults-stride2",
	      "child wrote %ld pages, faults +%llu", (n + 1) / 2, d.faults);
}

static void check_reset(void)
{
	struct cow_stats s;
	int fd, status, nonzero = 0;
	pid_t pid;

	child_writes(64, 1);
	cow_stats_read(&s);
	CHECK(cow_stat(&s, "faults") > 0, "nonzero-before-reset", "faults %llu", cow_stat(&s, "faults"));

	/*
	 * Unprivileged: cannot open for reading (the times are a side channel)
	 * or writing, and cannot write through a root descriptor.
	 */
	fd = open(COW_STATS_PATH, O_WRONLY);
	pid = fork();
	if (pid == 0) {
		int r, e0, e1, e2;

		if (setgid(65534) || setuid(65534))
			_exit(10);
		r = open(COW_STATS_PATH, O_RDONLY);
		e0 = errno;
		if (r >= 0)
			_exit(14);
		r = open(COW_STATS_PATH, O_WRONLY);
		e1 = errno;
		if (r >= 0)
			_exit(11);
		r = write(fd, "1\n", 2);
		e2 = errno;
		if (r >= 0)
			_exit(12);
		_exit(e0 == EACCES && e1 == EACCES && e2 == EPERM ? 0 : 13);
	}
	waitpid(pid, &status, 0);
	close(fd);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "nonroot-cannot-reset",
	      "child status %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	cow_stats_read(&s);
	CHECK(cow_stat(&s, "faults") > 0, "nonroot-write-did-not-reset", "faults %llu", cow_stat(&s, "faults"));

	CHECK(!write_file(COW_STATS_PATH, "1\n"), "root-reset-write", "%s", strerror(errno));
	cow_stats_read(&s);
	for (int i = 0; i < s.n; i++)
		if (s.val[i])
			ktap_print_msg("after reset: %s = %llu", s.key[i], s.val[i]), nonzero++;
	CHECK(nonzero == 0, "reset-zeroes-all", "%d keys nonzero", nonzero);
}

static void check_sysctls(void)
{
	char b[64];

	CHECK(set_sysctl_int("cow_precopy", 3) && errno == EINVAL, "precopy-rejects-3", "accepted");
	CHECK(set_sysctl_int("cow_stats_timing", 2) && errno == EINVAL, "timing-rejects-2", "accepted");
	CHECK(set_sysctl_int("cow_precopy", -1) && errno == EINVAL, "precopy-rejects-neg", "accepted");
	CHECK(set_sysctl_int("cow_precopy_depth", 0) && errno == EINVAL, "depth-rejects-0", "accepted");
	CHECK(set_sysctl_int("cow_precopy_depth", 17) && errno == EINVAL, "depth-rejects-17", "accepted");
	CHECK(!set_sysctl_int("cow_precopy_depth", 16), "depth-accepts-16", "%s", strerror(errno));
	CHECK(!read_file("/proc/sys/vm/cow_precopy_batch", b, sizeof(b)) && atoi(b) == 16,
	      "batch-default-16", "'%s'", b);
	CHECK(set_sysctl_int("cow_precopy_batch", 0) && errno == EINVAL, "batch-rejects-0", "accepted");
	CHECK(set_sysctl_int("cow_precopy_batch", 17) && errno == EINVAL, "batch-rejects-17", "accepted");
	CHECK(!set_sysctl_int("cow_precopy_batch", 16), "batch-accepts-16", "%s", strerror(errno));
	set_sysctl_int("cow_precopy_batch", 16);
	for (int m = 0; m <= 2; m++) {
		char name[32];

		snprintf(name, sizeof(name), "precopy-accepts-%d", m);
		CHECK(!set_sysctl_int("cow_precopy", m) && !read_file("/proc/sys/vm/cow_precopy", b, sizeof(b)) &&
		      atoi(b) == m, name, "read back '%s'", b);
	}
	set_precopy(0, 1);
	/* No printk from the fault path: the v3 sampling sysctl is gone. */
	CHECK(access("/proc/sys/vm/cow_sample_interval", F_OK) && errno == ENOENT,
	      "no-sample-interval", "/proc/sys/vm/cow_sample_interval exists");
}

static void check_precopy(long n)
{
	struct delta d;

	set_precopy(1, 1);
	d = child_writes(n, 1);
	CHECK(d.ok && d.vm_precopy == d.success, "vmstat-cow-precopy",
	      "/proc/vmstat cow_precopy +%llu, precopy_success +%llu", d.vm_precopy, d.success);
	CHECK(d.ok && d.attempts == d.success + d.skips, "precopy1-attempts-sum",
	      "attempts %llu success %llu skips %llu", d.attempts, d.success, d.skips);
	CHECK(d.ok && d.faults + d.success == (unsigned long long)n, "precopy1-faults-plus-success",
	      "faults %llu + success %llu != %ld", d.faults, d.success, n);
	CHECK(d.ok && d.faults >= (unsigned long long)n / 2 && d.faults <= (unsigned long long)n / 2 + 16,
	      "precopy1-halves-faults", "faults %llu for %ld pages", d.faults, n);
	set_precopy(1, 4);
	d = child_writes(n, 1);
	CHECK(d.ok && d.faults + d.success == (unsigned long long)n && d.faults <= (unsigned long long)n / 5 + 16,
	      "precopy-depth4", "faults %llu success %llu for %ld pages", d.faults, d.success, n);
	set_precopy(2, 1);
	d = child_writes(n, 1);
	CHECK(d.ok && d.faults + d.success == (unsigned long long)n && d.faults * 20 <= (unsigned long long)n,
	      "precopy2-adaptive", "faults %llu success %llu for %ld pages", d.faults, d.success, n);
	CHECK(d.ok && d.markers > 0 && (d.faults + d.markers) * 5 <= (unsigned long long)n,
	      "precopy2-pipelined", "copy faults %llu + marker faults %llu for %ld pages",
	      d.faults, d.markers, n);
	CHECK(d.ok && d.batches > 0 && d.batches * 16 >= d.success && d.batches <= d.success,
	      "precopy2-batched", "batches %llu for %llu pages", d.batches, d.success);
	CHECK(d.ok && d.max_pages == 16, "precopy2-cap-reached-16",
	      "precopy_fault_pages_max %llu", d.max_pages);
	/* The cap holds for every batch size: no fault copies more than B pages ahead. */
	for (int cap = 1; cap <= 16; cap *= 4) {
		char name[48];

		set_sysctl_int("cow_precopy_batch", cap);
		d = child_writes(n, 1);
		snprintf(name, sizeof(name), "precopy2-cap-%d", cap);
		CHECK(d.ok && d.max_pages >= 1 && d.max_pages <= (unsigned long long)cap &&
		      d.faults + d.success == (unsigned long long)n, name,
		      "precopy_fault_pages_max %llu, faults %llu success %llu", d.max_pages, d.faults,
		      d.success);
		set_precopy(1, 16);
		d = child_writes(n, 1);
		snprintf(name, sizeof(name), "precopy1-depth16-cap-%d", cap);
		CHECK(d.ok && d.max_pages == (unsigned long long)cap, name,
		      "precopy_fault_pages_max %llu", d.max_pages);
		set_precopy(2, 1);
	}
	set_sysctl_int("cow_precopy_batch", 16);
	/* Sparse writers never confirm a stream: nothing is copied for them. */
	d = child_writes(n, 2);
	CHECK(d.ok && d.success == 0 && d.faults == (unsigned long long)(n + 1) / 2, "precopy2-stride2-no-waste",
	      "faults %llu success %llu", d.faults, d.success);
	d = child_writes(n, 0);
	CHECK(d.ok && d.success == 0 && d.faults == d.written, "precopy2-pairs-no-waste",
	      "faults %llu success %llu written %llu", d.faults, d.success, d.written);
	/* Bursts: at most 5 % of the pages written were copied for nothing. */
	for (int burst = 8; burst <= 128; burst *= 4) {
		unsigned long long wasted;
		char name[48];

		d = child_writes(n, -burst);
		wasted = d.faults + d.success - d.written;
		snprintf(name, sizeof(name), "precopy2-burst%d-waste-5pc", burst);
		CHECK(d.ok && d.faults + d.success >= d.written && wasted * 20 <= d.written, name,
		      "faults %llu success %llu written %llu wasted %llu", d.faults, d.success,
		      d.written, wasted);
	}
	/*
	 * Pages made private before the sequential pass (every 37th): the copies
	 * ahead stop there and the stream steps over them; every page is either
	 * faulted, copied ahead or was private already, never two of these.
	 */
	holes = 37;
	d = child_writes(n, 1);
	CHECK(d.ok && d.faults + d.success + (n + 36) / 37 == (unsigned long long)n &&
	      d.success * 2 >= (unsigned long long)n && d.max_pages <= 16, "precopy2-holes-stream",
	      "faults %llu success %llu holes %ld max %llu", d.faults, d.success, (n + 36) / 37,
	      d.max_pages);
	holes = 0;
	set_precopy(0, 1);
}

/* vm.cow_stats_timing = 0: faults still counted exactly, no time, no histogram. */
static void check_timing_off(long n)
{
	struct delta d;

	if (access("/proc/sys/vm/cow_stats_timing", F_OK)) {
		CHECK(0, "timing-sysctl", "no /proc/sys/vm/cow_stats_timing");
		return;
	}
	set_precopy(0, 1);
	CHECK(!set_sysctl_int("cow_stats_timing", 0), "timing-off", "%s", strerror(errno));
	d = child_writes(n, 1);
	CHECK(d.ok && d.faults == (unsigned long long)n && d.copy_ns == 0 && d.path_ns == 0 && d.hist == 0,
	      "timing-off-counts-only", "faults +%llu copy_ns +%llu path_ns +%llu hist +%llu",
	      d.faults, d.copy_ns, d.path_ns, d.hist);
	CHECK(!set_sysctl_int("cow_stats_timing", 1), "timing-on", "%s", strerror(errno));
	d = child_writes(n, 1);
	CHECK(d.ok && d.faults == (unsigned long long)n && d.copy_ns > 0 && d.hist == (unsigned long long)n,
	      "timing-on-again", "faults +%llu copy_ns +%llu hist +%llu", d.faults, d.copy_ns, d.hist);
}

/*
 * What each /proc/vmstat event counts (Documentation/filesystems/proc.rst):
 * cow_zero_fault the write faults that replaced the shared zero page (no
 * copy), cow_fault every page copied (write faults and GUP unshare), and
 * cow_unshare the unshare requests among those.  The unshares come from a
 * R/O longterm pin (gup_test) of pages the child shares with its parent.
 */
static void check_events(long n)
{
	unsigned long long z0, f0, u0, res[4];
	volatile char sink;
	int p[2], status = 0;
	char *m;
	pid_t pid;

	m = mmap(NULL, n * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		CHECK(0, "events-zero-page", "mmap: %s", strerror(errno));
		return;
	}
	madvise(m, n * 4096, MADV_NOHUGEPAGE);
	for (long i = 0; i < n; i++)
		sink = m[i * 4096];	/* maps the shared zero page */
	(void)sink;
	z0 = vmstat("cow_zero_fault");
	f0 = vmstat("cow_fault");
	u0 = vmstat("cow_unshare");
	for (long i = 0; i < n; i++)
		m[i * 4096] = 1;
	z0 = vmstat("cow_zero_fault") - z0;
	f0 = vmstat("cow_fault") - f0;
	u0 = vmstat("cow_unshare") - u0;
	CHECK(z0 == (unsigned long long)n && f0 == 0 && u0 == 0, "events-zero-page",
	      "%ld writes over the zero page: cow_zero_fault +%llu cow_fault +%llu cow_unshare +%llu",
	      n, z0, f0, u0);
	munmap(m, n * 4096);

	m = mmap(NULL, n * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || pipe(p)) {
		CHECK(0, "events-unshare", "mmap/pipe: %s", strerror(errno));
		return;
	}
	madvise(m, n * 4096, MADV_NOHUGEPAGE);
	for (long i = 0; i < n; i++)
		memset(m + i * 4096, 0x5a, 4096);
	pid = fork();
	if (pid == 0) {
		struct pin_longterm_test t = { .addr = (uintptr_t)m, .size = n * 4096, .flags = 0 };
		int fd = open("/sys/kernel/debug/gup_test", O_RDWR);

		memset(res, 0, sizeof(res));
		if (fd < 0)
			_exit(write(p[1], res, sizeof(res)) == sizeof(res) ? 5 : 3);
		/* vmstat()'s buffer is shared with the parent: copy it before counting. */
		vmstat("cow_fault");
		f0 = vmstat("cow_fault");
		u0 = vmstat("cow_unshare");
		if (ioctl(fd, PIN_LONGTERM_TEST_START, &t))
			_exit(6);
		res[0] = vmstat("cow_fault") - f0;
		res[1] = vmstat("cow_unshare") - u0;
		f0 = vmstat("cow_fault");
		for (long i = 0; i < n; i++)
			m[i * 4096 + 7] = 1;	/* exclusive now: reused, not copied */
		res[2] = vmstat("cow_fault") - f0;
		res[3] = 1;
		ioctl(fd, PIN_LONGTERM_TEST_STOP);
		close(fd);
		_exit(write(p[1], res, sizeof(res)) == sizeof(res) ? 0 : 3);
	}
	memset(res, 0, sizeof(res));
	if (pid < 0 || read(p[0], res, sizeof(res)) != sizeof(res))
		res[3] = 0;
	waitpid(pid, &status, 0);
	close(p[0]);
	close(p[1]);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 5) {
		ktap_skip("events-unshare", "no /sys/kernel/debug/gup_test");
	} else {
		CHECK(res[3] && res[0] == (unsigned long long)n && res[1] == (unsigned long long)n,
		      "events-unshare", "R/O pin of %ld shared pages: cow_fault +%llu cow_unshare +%llu (exit %d)",
		      n, res[0], res[1], WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		CHECK(res[3] && res[2] == 0, "events-no-copy-after-unshare",
		      "writes after the unshare: cow_fault +%llu", res[2]);
	}
	for (long i = 0; i < n; i++)
		if (m[i * 4096 + 7] != 0x5a)
			status = -1;
	CHECK(status != -1, "events-parent-data", "the parent sees the child's writes");
	munmap(m, n * 4096);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	struct cow_stats s;

	ktap_header();
	if (cow_stats_read(&s)) {
		/* Not the patched kernel: nothing here applies. */
		ktap_skip("stats-present", "%s: %s", COW_STATS_PATH, strerror(errno));
		return ktap_finish();
	}
	{
		char b[32] = "";

		/* Off by default: the fault path reads no clock until asked to. */
		CHECK(!read_file("/proc/sys/vm/cow_stats_timing", b, sizeof(b)) && atoi(b) == 0,
		      "timing-default-off", "'%s'", b);
		CHECK(!set_sysctl_int("cow_stats_timing", 1), "timing-switch-on", "%s", strerror(errno));
	}
	check_format();
	check_exact(n);
	check_reset();
	check_timing_off(n);
	check_events(n);
	if (!access("/proc/sys/vm/cow_precopy", F_OK)) {
		check_sysctls();
		check_precopy(n);
	}
	return ktap_finish();
}
