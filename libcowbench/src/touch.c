#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cowbench/error.h>
#include <cowbench/hugepage.h>
#include <cowbench/noise.h>
#include <cowbench/stats.h>
#include <cowbench/touch.h>

const char *cb_writer_name(enum cb_writer w)
{
	return w == CB_WRITER_PARENT ? "parent" : "child";
}

int cb_writer_parse(const char *s, enum cb_writer *out)
{
	if (strcmp(s, "child") == 0)
		*out = CB_WRITER_CHILD;
	else if (strcmp(s, "parent") == 0)
		*out = CB_WRITER_PARENT;
	else
		return -EINVAL;
	return 0;
}

const char *cb_break_name(enum cb_break b)
{
	return b == CB_BREAK_POPULATE ? "populate" : "fault";
}

int cb_break_parse(const char *s, enum cb_break *out)
{
	if (strcmp(s, "fault") == 0)
		*out = CB_BREAK_FAULT;
	else if (strcmp(s, "populate") == 0)
		*out = CB_BREAK_POPULATE;
	else
		return -EINVAL;
	return 0;
}

/* What the writer hands back to the caller across the fork (lives in a MAP_SHARED page). */
struct shared_result {
	int err;
	uintptr_t region; /* where the writer's region is (a --no-fork child maps its own) */
	long minflt, majflt;
	long nivcsw, cpu, migrations; /* noise around the loop (cowbench/noise.h); -1: unknown */
	int64_t run_delay_ns;         /* -1: unknown */
	uint64_t elapsed_ticks;
	uint64_t first_ticks; /* the window's start to the end of its first write */
	uint64_t break_ticks; /* --break=populate: the madvise alone */
	int break_err;        /* its -errno, 0 when it succeeded */
	uint64_t lat[]; /* per-write ticks */
};

/*
 * The region under test: anonymous, private, mapped by cb_region_map as
 * the workload's region asks (4 KiB, THP advice or hugetlb pages, NUMA
 * policy), every page written before the fork so each is a real anonymous
 * page shared after it.
 */
static int map_region(const struct cb_touch_params *p, struct cb_region *r)
{
	struct cb_wl_params plain;
	int err;

	if (!p->region)
		cb_wl_params_default(&plain);
	err = cb_region_map(r, p->size, p->region ? p->region : &plain);
	if (err)
		return err;
	cb_region_populate(r);
	for (size_t off = 0; off < p->size; off += p->page_size)
		*(volatile uint64_t *)((char *)r->addr + off) = off | 1; /* non-zero: never the zero page */
	return 0;
}

/* A buffer the writer owns outright: mapped and populated after the fork, so writing it never faults. */
static uint64_t *map_private_populated(size_t bytes)
{
	void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int pin_to_cpu(int cpu, cpu_set_t *old)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	if (old && sched_getaffinity(0, sizeof(*old), old) < 0)
		return -errno;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) < 0 ? -errno : 0;
}

#if defined(__x86_64__) || defined(__i386__)
/* Each loop returns the tick at which its first write ended (the run's fixed costs end there). */
static uint64_t touch_loop_tsc(char *base, const size_t *order, size_t count, size_t ps, uint64_t *lat)
{
	uint64_t first_end = 0;

	for (size_t i = 0; i < count; i++) {
		volatile uint64_t *word = (volatile uint64_t *)(base + order[i] * ps);
		uint64_t t0 = cb_tsc_begin(), t1;

		*word = i;
		t1 = cb_tsc_end();
		lat[i] = t1 - t0;
		if (i == 0)
			first_end = t1;
	}
	return first_end;
}
#endif

static uint64_t touch_loop_monotonic(char *base, const size_t *order, size_t count, size_t ps, uint64_t *lat)
{
	uint64_t first_end = 0;

	for (size_t i = 0; i < count; i++) {
		volatile uint64_t *word = (volatile uint64_t *)(base + order[i] * ps);
		uint64_t t0 = cb_monotonic_ns(), t1;

		*word = i;
		t1 = cb_monotonic_ns();
		lat[i] = t1 - t0;
		if (i == 0)
			first_end = t1;
	}
	return first_end;
}

/* Wait for the monotonic clock to reach when: asleep while far, spinning for the last 200 us. */
static void wait_until(uint64_t when)
{
	uint64_t now;

	while ((now = cb_monotonic_ns()) < when) {
		if (when - now > 200000) {
			uint64_t ns = when - now - 100000;
			struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u) };

			nanosleep(&ts, NULL);
		}
	}
}

/* --gaps: each write waits for its recorded time; its latency is timed alone, without the wait. */
static uint64_t touch_loop_paced(const struct cb_touch_params *p, char *base, uint64_t *lat)
{
	uint64_t start = cb_monotonic_ns(), first_end = 0;

	for (size_t i = 0; i < p->count; i++) {
		volatile uint64_t *word = (volatile uint64_t *)(base + p->order[i] * p->page_size);
		uint64_t t0, t1;

		wait_until(start + p->at_ns[i]);
		t0 = cb_clock_read(p->clock);
		*word = i;
		t1 = cb_clock_read(p->clock);
		lat[i] = t1 - t0;
		if (i == 0)
			first_end = t1;
	}
	return first_end;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/*
 * --break=populate: break COW for the whole region in one call (or for each
 * of the workload's runs, one call each), inside the timed window (what the writer would pay to have every page private before
 * it writes). Returns its ticks; *err gets -errno when the kernel refused.
 */
static uint64_t break_populate(const struct cb_touch_params *p, char *base, int *err)
{
	uint64_t t0 = cb_clock_read(p->clock);

	*err = 0;
	if (!p->break_runs)
		*err = madvise(base, p->size, MADV_POPULATE_WRITE) < 0 ? -errno : 0;
	/* The workload's runs (replay: the written pages of each mapping), one call each, timed together. */
	for (size_t i = 0; p->break_runs && i < p->break_nruns && !*err; i++)
		*err = madvise(base + p->break_runs[i].first * p->page_size, p->break_runs[i].count * p->page_size,
			       MADV_POPULATE_WRITE) < 0 ? -errno : 0;
	return cb_clock_read(p->clock) - t0;
}

/* The measured part, run by whichever process writes; results go to out. */
static void write_pages(const struct cb_touch_params *p, char *base, struct shared_result *out)
{
	struct rusage r0, r1;
	uint64_t *lat = map_private_populated(p->count * sizeof(uint64_t));
	uint64_t t0, t1, first_end;
	long mig0, mig1;
	int64_t wait0, wait1;

	if (!lat) {
		out->err = -ENOMEM;
		return;
	}
	/* Noise counters are read outside the timed loop, so they cost it nothing. */
	mig0 = cb_thread_migrations();
	wait0 = cb_thread_run_delay_ns();
	getrusage(RUSAGE_SELF, &r0);
	t0 = cb_clock_read(p->clock);
	out->break_err = 0;
	out->break_ticks = p->brk == CB_BREAK_POPULATE ? break_populate(p, base, &out->break_err) : 0;
	if (p->at_ns)
		first_end = touch_loop_paced(p, base, lat);
	else
#if defined(__x86_64__) || defined(__i386__)
	if (p->clock->kind == CB_CLOCK_TSC)
		first_end = touch_loop_tsc(base, p->order, p->count, p->page_size, lat);
	else
#endif
		first_end = touch_loop_monotonic(base, p->order, p->count, p->page_size, lat);
	t1 = cb_clock_read(p->clock);
	getrusage(RUSAGE_SELF, &r1);
	out->cpu = sched_getcpu();
	mig1 = cb_thread_migrations();
	wait1 = cb_thread_run_delay_ns();
	out->migrations = mig0 >= 0 && mig1 >= mig0 ? mig1 - mig0 : -1;
	out->run_delay_ns = wait0 >= 0 && wait1 >= wait0 ? wait1 - wait0 : -1;
	out->nivcsw = r1.ru_nivcsw - r0.ru_nivcsw;

	out->elapsed_ticks = t1 - t0;
	out->first_ticks = first_end >= t0 && first_end <= t1 ? first_end - t0 : 0;
	out->minflt = r1.ru_minflt - r0.ru_minflt;
	out->majflt = r1.ru_majflt - r0.ru_majflt;
	memcpy(out->lat, lat, p->count * sizeof(uint64_t));
	munmap(lat, p->count * sizeof(uint64_t));
	out->err = out->break_err; /* a refused populate measured faults, not what was asked */
}

/* true when a byte came, false at EOF (the other side is gone). */
static bool read_byte(int fd)
{
	ssize_t n;
	char c;

	while ((n = read(fd, &c, 1)) < 0 && errno == EINTR)
		;
	return n == 1;
}

static int write_byte(int fd)
{
	ssize_t n;

	do
		n = write(fd, "x", 1);
	while (n < 0 && errno == EINTR);
	return n == 1 ? 0 : -errno;
}

/* Reap pid; describe how it ended. 0 when it exited with status 0. */
static int reap(pid_t pid, char *status, size_t len)
{
	int ws, err = cb_wait_status(pid, &ws);

	if (err < 0) {
		snprintf(status, len, "error:waitpid:%s", cb_strerror(err));
		return err;
	}
	return cb_status_from_wait(ws, status, len);
}

static void close_pair(int fd[2])
{
	close(fd[0]);
	close(fd[1]);
}

/*
 * Two pipes, then fork: 0 in the child, the pid in the parent, or a
 * negative errno with nothing left open. Each side closes the ends it
 * does not use.
 */
static pid_t fork_with_pipes(int a[2], int b[2])
{
	pid_t pid;
	int err;

	if (pipe2(a, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(b, O_CLOEXEC) < 0) {
		err = -errno;
		close_pair(a);
		return err;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close_pair(a);
		close_pair(b);
		return err;
	}
	return pid;
}

static void kill_and_reap(pid_t pid)
{
	char ignored[CB_STATUS_LEN];

	kill(pid, SIGKILL);
	reap(pid, ignored, sizeof(ignored));
}

static void call_hook(const struct cb_touch_params *p, bool after, pid_t writer, pid_t writer_tid,
		      pid_t snapshot, void *region)
{
	struct cb_touch_sides s = {
		.writer = writer, .writer_tid = writer_tid, .snapshot = snapshot, .region = region,
		.pages = p->size / p->page_size,
	};
	void (*fn)(void *, const struct cb_touch_sides *);

	if (!p->hooks)
		return;
	fn = after ? p->hooks->after : p->hooks->before;
	if (fn)
		fn(p->hooks->arg, &s);
}

/*
 * Child writes (fork: the parent keeps the snapshot; no-fork: the child maps
 * its own private pages). The child says "ready" before waiting for go and
 * "done" after its loop, then stays until the parent closes go, so the
 * hooks see it alive on both sides of the loop.
 */
/*
 * Under memory pressure (a cgroup limit) the OOM killer must take the
 * measured child, never the process that records the row: the row then
 * says child-killed:SIGKILL instead of nothing being written at all.
 */
static void prefer_oom_victim(void)
{
	int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		(void)!write(fd, "1000", 4);
		close(fd);
	}
}

static int run_child_writer(const struct cb_touch_params *p, char *base, struct shared_result *out,
			    char *status)
{
	int go[2], done[2];
	pid_t pid = fork_with_pipes(go, done);
	int err = 0;

	if (pid < 0)
		return pid;
	if (pid == 0) {
		close(go[1]);
		close(done[0]);
		prefer_oom_victim();
		if (pin_to_cpu(p->cpu, NULL) < 0)
			_exit(3);
		write_byte(done[1]);
		read_byte(go[0]);
		if (p->inject_child_signal > 0)
			raise(p->inject_child_signal);
		if (!p->fork) {
			struct cb_region own; /* --no-fork: pages private from the start; exit unmaps them */

			if (map_region(p, &own) < 0)
				_exit(4);
			base = own.addr;
		}
		out->region = (uintptr_t)base;
		write_pages(p, base, out);
		write_byte(done[1]);
		read_byte(go[0]); /* EOF: the parent has looked */
		_exit(out->err ? 5 : 0);
	}
	close(go[0]);
	close(done[1]);
	/* No "ready": the child died before the loop; writing go would raise SIGPIPE here. */
	if (read_byte(done[0])) {
		call_hook(p, false, pid, pid, p->fork ? getpid() : 0, p->fork ? base : NULL);
		err = write_byte(go[1]);
		if (err == 0 && read_byte(done[0]))
			call_hook(p, true, pid, pid, p->fork ? getpid() : 0, (void *)out->region);
	}
	close(go[1]);
	close(done[0]);
	if (err < 0) {
		kill_and_reap(pid);
		return err;
	}
	return reap(pid, status, CB_STATUS_LEN);
}

/* Parent writes while the child holds the snapshot open until released. */
static int run_parent_writer(const struct cb_touch_params *p, char *base, struct shared_result *out,
			     char *status)
{
	int ready[2], release[2];
	cpu_set_t old;
	pid_t pid = fork_with_pipes(ready, release);
	int err;

	if (pid < 0)
		return pid;
	if (pid == 0) {
		close(ready[0]);
		close(release[1]);
		prefer_oom_victim();
		if (p->inject_child_signal > 0)
			raise(p->inject_child_signal);
		write_byte(ready[1]);
		read_byte(release[0]); /* returns at EOF: the parent is done writing */
		_exit(0);
	}
	close(ready[1]);
	close(release[0]);
	read_byte(ready[0]); /* EOF too if the child died: we still measure, the status tells */
	close(ready[0]);
	err = pin_to_cpu(p->cpu, &old);
	if (err == 0) {
		call_hook(p, false, getpid(), gettid(), pid, base);
		write_pages(p, base, out);
		call_hook(p, true, getpid(), gettid(), pid, base);
		if (p->cpu >= 0)
			sched_setaffinity(0, sizeof(old), &old);
	}
	close(release[1]);
	if (err < 0) {
		kill_and_reap(pid);
		return err;
	}
	return reap(pid, status, CB_STATUS_LEN);
}

/* --no-fork with the parent as writer: this process, already-private pages. */
static int run_in_process(const struct cb_touch_params *p, char *base, struct shared_result *out)
{
	cpu_set_t old;
	int err = pin_to_cpu(p->cpu, &old);

	if (err < 0)
		return err;
	call_hook(p, false, getpid(), gettid(), 0, base);
	write_pages(p, base, out);
	call_hook(p, true, getpid(), gettid(), 0, base);
	if (p->cpu >= 0)
		sched_setaffinity(0, sizeof(old), &old);
	return out->err;
}

static int convert_result(const struct cb_touch_params *p, const struct shared_result *sr,
			  struct cb_touch_result *res)
{
	res->lat_ns = malloc((p->count ? p->count : 1) * sizeof(double));
	if (!res->lat_ns)
		return -ENOMEM;
	for (size_t i = 0; i < p->count; i++)
		res->lat_ns[i] = cb_clock_ns(p->clock, sr->lat[i]);
	res->count = p->count;
	res->elapsed_ns = (uint64_t)(cb_clock_ns(p->clock, sr->elapsed_ticks) + 0.5);
	res->first_ns = sr->first_ticks ? (int64_t)(cb_clock_ns(p->clock, sr->first_ticks) + 0.5) : -1;
	res->break_ns = p->brk == CB_BREAK_POPULATE ? (int64_t)(cb_clock_ns(p->clock, sr->break_ticks) + 0.5) : -1;
	res->minflt = sr->minflt;
	res->majflt = sr->majflt;
	res->nivcsw = sr->nivcsw;
	res->cpu = sr->cpu;
	res->migrations = sr->migrations;
	res->run_delay_ns = sr->run_delay_ns;
	return 0;
}

/* Every --break run non-empty and inside the region. */
static bool runs_fit(const struct cb_touch_params *p)
{
	size_t npages = p->page_size ? p->size / p->page_size : 0;

	for (size_t i = 0; p->break_runs && i < p->break_nruns; i++)
		if (!p->break_runs[i].count || p->break_runs[i].first >= npages ||
		    p->break_runs[i].count > npages - p->break_runs[i].first)
			return false;
	return !p->break_runs || p->break_nruns;
}

int cb_touch_run(const struct cb_touch_params *p, struct cb_touch_result *res)
{
	size_t shared_len = sizeof(struct shared_result) + p->count * sizeof(uint64_t);
	struct shared_result *sr;
	struct cb_region region = { 0 };
	char *base = NULL;
	int err;

	memset(res, 0, sizeof(*res));
	res->huge_bytes = -1;
	res->break_ns = -1;
	res->first_ns = -1;
	snprintf(res->status, sizeof(res->status), "ok");
	if (p->size == 0 || p->page_size == 0 || p->size % p->page_size || !p->order ||
	    (p->brk != CB_BREAK_FAULT && p->brk != CB_BREAK_POPULATE) ||
	    p->count == 0 || !p->clock || !runs_fit(p)) {
		res->err = -EINVAL;
		snprintf(res->status, sizeof(res->status), "error:invalid-parameters");
		return res->err;
	}
	/* Created before the fork and populated, so it is shared, never copied. */
	sr = mmap(NULL, shared_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (sr == MAP_FAILED) {
		res->err = -errno;
		snprintf(res->status, sizeof(res->status), "error:mmap:%s", strerror(errno));
		return res->err;
	}
	sr->err = -ECANCELED; /* stays so unless the writer finishes */
	if (p->fork || p->writer == CB_WRITER_PARENT) {
		err = map_region(p, &region);
		if (err) {
			cb_region_status(err, p->region && p->region->hugetlb, res->status, sizeof(res->status));
			goto out;
		}
		base = region.addr;
		res->huge_bytes = cb_region_huge_bytes(base, p->size);
	}
	if (!p->fork && p->writer == CB_WRITER_PARENT)
		err = run_in_process(p, base, sr);
	else if (p->writer == CB_WRITER_PARENT)
		err = run_parent_writer(p, base, sr, res->status);
	else
		err = run_child_writer(p, base, sr, res->status);

	if (err == 0 && sr->err)
		err = sr->err;
	if (err == 0 || (err == CB_ECHILD && sr->err == 0))
		err = convert_result(p, sr, res) ?: err;
	if (err && err != CB_ECHILD)
		snprintf(res->status, sizeof(res->status), "error:%s", strerror(-err));
out:
	cb_region_unmap(&region);
	munmap(sr, shared_len);
	res->err = err;
	return err;
}

void cb_touch_result_free(struct cb_touch_result *res)
{
	free(res->lat_ns);
	res->lat_ns = NULL;
	res->count = 0;
}

double cb_memcpy_page_ns(const struct cb_clock *clk, size_t page_size, size_t pages)
{
	struct cb_memcpy_cost c;

	return cb_memcpy_page_cost(clk, page_size, pages, &c) == 0 ? c.warm_ns : -1;
}

int cb_memcpy_page_cost(const struct cb_clock *clk, size_t page_size, size_t pages, struct cb_memcpy_cost *out)
{
	size_t len = page_size * (pages ? pages : 1);
	char *src = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	char *dst = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	double *cold = malloc((pages ? pages : 1) * sizeof(double) * 2), *warm;
	int err = -ENOMEM;

	out->warm_ns = out->cold_ns = -1;
	if (src != MAP_FAILED && dst != MAP_FAILED && cold) {
		pages = pages ? pages : 1;
		warm = cold + pages;
		memset(src, 0x5a, len);
		/*
		 * Each destination page twice: the first copy is the first user write to a page the kernel
		 * has just populated (on a lazily backed VM the host traps it: cold), the second the copy
		 * itself on a page already written (warm), what the copy inside a COW fault costs at best.
		 */
		for (size_t i = 0; i < pages; i++) {
			for (int pass = 0; pass < 2; pass++) {
				uint64_t t0 = cb_clock_read(clk);

				memcpy(dst + i * page_size, src + i * page_size, page_size);
				__asm__ __volatile__("" ::: "memory"); /* the copy must happen here */
				(pass ? warm : cold)[i] = cb_clock_ns(clk, cb_clock_read(clk) - t0);
			}
		}
		qsort(cold, pages, sizeof(cold[0]), cb_cmp_double);
		qsort(warm, pages, sizeof(warm[0]), cb_cmp_double);
		out->cold_ns = cold[pages / 2]; /* raw, like the fault latencies they are compared with */
		out->warm_ns = warm[pages / 2];
		err = 0;
	}
	if (src != MAP_FAILED)
		munmap(src, len);
	if (dst != MAP_FAILED)
		munmap(dst, len);
	free(cold);
	return err;
}
