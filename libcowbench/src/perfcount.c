#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cowbench/perfcount.h>

static const struct {
	unsigned long long config;
	const char *name;
} counters[CB_PERF_NCOUNTERS] = {
	[CB_PERF_MINFLT] = { PERF_COUNT_SW_PAGE_FAULTS_MIN, "minor-faults" },
	[CB_PERF_MAJFLT] = { PERF_COUNT_SW_PAGE_FAULTS_MAJ, "major-faults" },
	[CB_PERF_CS] = { PERF_COUNT_SW_CONTEXT_SWITCHES, "context-switches" },
	[CB_PERF_MIGRATIONS] = { PERF_COUNT_SW_CPU_MIGRATIONS, "cpu-migrations" },
};

static int open_one(unsigned long long config, pid_t pid)
{
	struct perf_event_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = config;
	attr.exclude_hv = 1;
	/* Context switches and migrations are counted in kernel context: keep the kernel in. */
	fd = syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

int cb_perfcount_open(struct cb_perfcount *pc, pid_t pid)
{
	for (int i = 0; i < CB_PERF_NCOUNTERS; i++)
		pc->fd[i] = -1;
	for (int i = 0; i < CB_PERF_NCOUNTERS; i++) {
		int fd = open_one(counters[i].config, pid);

		if (fd < 0) {
			cb_perfcount_close(pc);
			return fd;
		}
		pc->fd[i] = fd;
	}
	return 0;
}

int cb_perfcount_read(const struct cb_perfcount *pc, int64_t out[CB_PERF_NCOUNTERS])
{
	for (int i = 0; i < CB_PERF_NCOUNTERS; i++) {
		uint64_t v;

		if (pc->fd[i] < 0)
			return -EBADF;
		if (read(pc->fd[i], &v, sizeof(v)) != (ssize_t)sizeof(v))
			return errno ? -errno : -EIO;
		out[i] = (int64_t)v;
	}
	return 0;
}

void cb_perfcount_close(struct cb_perfcount *pc)
{
	for (int i = 0; i < CB_PERF_NCOUNTERS; i++) {
		if (pc->fd[i] >= 0)
			close(pc->fd[i]);
		pc->fd[i] = -1;
	}
}
