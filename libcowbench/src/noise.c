#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cowbench/clock.h>
#include <cowbench/noise.h>
#include <cowbench/report.h>

int cb_sys_sample_read(const char *path, struct cb_sys_sample *s)
{
	FILE *fp = fopen(path ? path : "/proc/stat", "re");
	char line[512];
	bool have_cpu = false, have_running = false;

	memset(s, 0, sizeof(*s));
	if (!fp)
		return -errno;
	while (fgets(line, sizeof(line), fp)) {
		uint64_t f[8];

		/* cpu user nice system idle iowait irq softirq steal ... */
		if (!have_cpu && sscanf(line, "cpu %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
					      " %" SCNu64 " %" SCNu64, &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6],
				       &f[7]) == 8) {
			s->steal_ticks = f[7];
			have_cpu = true;
		} else if (sscanf(line, "procs_running %ld", &s->procs_running) == 1) {
			have_running = true;
		}
	}
	fclose(fp);
	s->ok = have_cpu && have_running;
	return s->ok ? 0 : -ENODATA;
}

void cb_sys_sample_fill_row(const struct cb_sys_sample *before, const struct cb_sys_sample *after,
			    struct cb_row *row)
{
	long hz = sysconf(_SC_CLK_TCK);

	if (!before->ok || !after->ok || hz <= 0)
		return;
	if (after->steal_ticks >= before->steal_ticks)
		row->steal_ns = (int64_t)((after->steal_ticks - before->steal_ticks) * (1000000000u / (uint64_t)hz));
	row->runq = before->procs_running > after->procs_running ? before->procs_running : after->procs_running;
}

/*
 * Read with open/read into the caller's stack buffer, not stdio: the
 * writer reads these just before and after its loop, inside the perf
 * probes' window, and a FILE buffer would add page faults of its own there.
 * Returns false when the file is missing or empty.
 */
static bool read_thread_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return true;
}

long cb_thread_migrations(void)
{
	char buf[4096];
	const char *p;

	if (!read_thread_file("/proc/thread-self/sched", buf, sizeof(buf)))
		return -1;
	p = strstr(buf, "se.nr_migrations");
	p = p ? strchr(p, ':') : NULL;
	return p ? strtol(p + 1, NULL, 10) : -1;
}

/* strtoull, not sscanf: sanitizers' sscanf allocates, and its page faults would land in the window. */
int64_t cb_thread_run_delay_ns(void)
{
	char buf[128], *end;
	unsigned long long delay;

	if (!read_thread_file("/proc/thread-self/schedstat", buf, sizeof(buf)))
		return -1;
	/* "sum_exec_runtime run_delay pcount", all in ns but the last */
	strtoull(buf, &end, 10);
	if (end == buf || *end != ' ')
		return -1;
	delay = strtoull(end + 1, &end, 10);
	if (*end != ' ' && *end != '\n' && *end != '\0')
		return -1;
	return delay > INT64_MAX ? -1 : (int64_t)delay;
}

/*
 * The probe's buffer belongs to the process that mapped it: a child forked
 * since (a fresh-child rep) does not have it (MADV_DONTFORK) and maps its
 * own. Without MADV_DONTFORK a fork would share the pages and the next
 * probe in the parent would take write faults on them.
 */
static struct {
	pid_t owner;
	char *buf;
} ref;

static char *ref_buffer(void)
{
	void *p;

	if (ref.buf && ref.owner == getpid())
		return ref.buf;
	p = mmap(NULL, CB_REF_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (madvise(p, CB_REF_BYTES, MADV_DONTFORK) < 0) {
		munmap(p, CB_REF_BYTES);
		return NULL;
	}
	memset(p, 1, CB_REF_BYTES); /* every page faulted in now, never during a probe */
	ref.buf = p;
	ref.owner = getpid();
	return ref.buf;
}

int64_t cb_ref_probe_ns(void)
{
	const size_t half = CB_REF_BYTES / 2 / 4096; /* pages per half; coprime to the strides below */
	char *buf = ref_buffer();
	uint64_t t0, t1;

	if (!buf)
		return -1;
	t0 = cb_monotonic_ns();
	/* Source and destination pages in two scattered orders, so no prefetcher streams a whole half. */
	for (size_t k = 0; k < CB_REF_COPIES; k++)
		memcpy(buf + (half + k * 7 % half) * 4096, buf + k * 13 % half * 4096, 4096);
	__asm__ volatile("" : : "r"(buf) : "memory"); /* the copies happen, and before t1 */
	t1 = cb_monotonic_ns();
	return (int64_t)(t1 - t0);
}

int cb_cpu_busy_ticks(const char *path, uint64_t *busy, int max_cpus)
{
	FILE *fp = fopen(path ? path : "/proc/stat", "re");
	char line[512];
	int n = 0;

	if (!fp)
		return -errno;
	for (int i = 0; i < max_cpus; i++)
		busy[i] = UINT64_MAX; /* not listed: offline */
	while (fgets(line, sizeof(line), fp)) {
		uint64_t f[8] = { 0 };
		int cpu;

		/* "cpu  N ..." is the sum over all CPUs: %d would skip the blanks and read its user ticks as a CPU. */
		if (strncmp(line, "cpu", 3) != 0 || line[3] < '0' || line[3] > '9')
			continue;
		if (sscanf(line, "cpu%d %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
				 " %" SCNu64, &cpu, &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7]) < 5 ||
		    cpu < 0 || cpu >= max_cpus)
			continue;
		/* idle (f[3]) and iowait (f[4]) are the quiet time; steal counts as busy: the CPU was not ours. */
		busy[cpu] = f[0] + f[1] + f[2] + f[5] + f[6] + f[7];
		n = cpu + 1 > n ? cpu + 1 : n;
	}
	fclose(fp);
	return n;
}

int cb_quiet_cpu(unsigned sample_ms)
{
	enum { MAXC = 1024 };
	uint64_t *a = malloc(2 * MAXC * sizeof(*a)), *b = a ? a + MAXC : NULL;
	struct timespec ts = { .tv_sec = sample_ms / 1000, .tv_nsec = (long)(sample_ms % 1000) * 1000000L };
	cpu_set_t set;
	int n, best = -1, allowed = 0;
	uint64_t best_busy = UINT64_MAX;

	if (!a || sched_getaffinity(0, sizeof(set), &set) < 0 || (n = cb_cpu_busy_ticks(NULL, a, MAXC)) <= 0) {
		free(a);
		return -1;
	}
	nanosleep(&ts, NULL);
	if (cb_cpu_busy_ticks(NULL, b, MAXC) < n)
		n = 0;
	for (int c = 0; c < n; c++) {
		uint64_t d;

		if (!CPU_ISSET(c, &set) || a[c] == UINT64_MAX || b[c] == UINT64_MAX)
			continue;
		allowed++;
		d = b[c] >= a[c] ? b[c] - a[c] : 0;
		/* Strictly less: on a tie the lower number wins, unless it is CPU 0 (interrupts). */
		if (best < 0 || d < best_busy || (d == best_busy && best == 0)) {
			best = c;
			best_busy = d;
		}
	}
	free(a);
	return allowed > 1 ? best : -1;
}
