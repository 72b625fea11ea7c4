/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the cowbench guest test programs: /proc/cow_stats
 * parsing and vm.cow_* sysctls.  Everything here avoids touching fresh
 * memory after the first call, so that reading the statistics does not
 * itself cause COW faults in a freshly forked child.
 */
#ifndef COWTEST_H
#define COWTEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>

#define COW_STATS_PATH "/proc/cow_stats"
#define COW_MAX_KEYS 96

/* gup_test interface (mm/gup_test.h): /sys/kernel/debug/gup_test */
struct pin_longterm_test {
	uint64_t addr;
	uint64_t size;
	uint32_t flags;
};
#define PIN_LONGTERM_TEST_START	_IOW('g', 7, struct pin_longterm_test)
#define PIN_LONGTERM_TEST_STOP	_IO('g', 8)
#define PIN_LONGTERM_TEST_READ	_IOW('g', 9, uint64_t)
#define PIN_LONGTERM_TEST_FLAG_USE_WRITE 1

struct cow_stats {
	int n;
	char key[COW_MAX_KEYS][48];
	unsigned long long val[COW_MAX_KEYS];
};

static char cow_stats_buf[8192];

/* Returns 0 on success, -1 (errno set) when /proc/cow_stats is missing. */
static inline int cow_stats_read(struct cow_stats *s)
{
	int fd = open(COW_STATS_PATH, O_RDONLY);
	ssize_t len, off = 0;
	char *p, *line;

	if (fd < 0)
		return -1;
	while ((len = read(fd, cow_stats_buf + off, sizeof(cow_stats_buf) - 1 - off)) > 0)
		off += len;
	close(fd);
	cow_stats_buf[off] = 0;
	s->n = 0;
	for (line = cow_stats_buf; line && *line && s->n < COW_MAX_KEYS; line = p) {
		char *colon;

		p = strchr(line, '\n');
		if (p)
			*p++ = 0;
		colon = strstr(line, ": ");
		if (!colon)
			continue;
		*colon = 0;
		{
			size_t k = 0;

			while (line[k] && k < sizeof(s->key[0]) - 1) {
				s->key[s->n][k] = line[k];
				k++;
			}
			s->key[s->n][k] = 0;
		}
		s->val[s->n] = strtoull(colon + 2, NULL, 10);
		s->n++;
	}
	return 0;
}

/* Value of @key, or ~0ULL when absent. */
static inline unsigned long long cow_stat(const struct cow_stats *s, const char *key)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->key[i], key))
			return s->val[i];
	return ~0ULL;
}

static inline int cow_has_stat(const struct cow_stats *s, const char *key)
{
	return cow_stat(s, key) != ~0ULL;
}

static inline int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t r;

	if (fd < 0)
		return -1;
	r = write(fd, val, strlen(val));
	close(fd);
	return r == (ssize_t)strlen(val) ? 0 : -1;
}

static inline int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t r;

	if (fd < 0)
		return -1;
	r = read(fd, buf, len - 1);
	close(fd);
	if (r < 0)
		return -1;
	buf[r] = 0;
	return 0;
}

/* The whole of a /proc or /sys file (seq_file: one read() returns about a page). */
static inline int read_all(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	size_t off = 0;
	ssize_t r;

	if (fd < 0)
		return -1;
	while (off < len - 1 && (r = read(fd, buf + off, len - 1 - off)) > 0)
		off += r;
	close(fd);
	buf[off] = 0;
	return 0;
}

/* One /proc/vmstat event into *out; -1 when the kernel has none of that name. */
static inline int vmstat_value(const char *key, unsigned long long *out)
{
	static char buf[16384];
	size_t kl = strlen(key);

	if (read_all("/proc/vmstat", buf, sizeof(buf)))
		return -1;
	for (char *p = buf; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, kl) && p[kl] == ' ') {
			*out = strtoull(p + kl + 1, NULL, 10);
			return 0;
		}
	return -1;
}

/*
 * In the cowbench guest (kernel/vm-run.sh puts cowbench.accel= on its command
 * line)?  Changes to the system that nothing restores, such as mounting
 * cgroup2 over /sys/fs/cgroup, are made only there, never on a host that runs
 * a test program by hand.
 */
static inline int cowtest_in_guest(void)
{
	char cmdline[4096];

	return !read_file("/proc/cmdline", cmdline, sizeof(cmdline)) &&
	       strstr(cmdline, "cowbench.accel=") != NULL;
}

static inline int set_sysctl_int(const char *name, int v)
{
	char path[128], val[32];

	snprintf(path, sizeof(path), "/proc/sys/vm/%s", name);
	snprintf(val, sizeof(val), "%d\n", v);
	return write_file(path, val);
}

/* Set vm.cow_precopy and vm.cow_precopy_depth; -1 if unsupported. */
static inline int set_precopy(int mode, int depth)
{
	if (access("/proc/sys/vm/cow_precopy", F_OK))
		return mode == 0 ? 0 : -1;
	if (depth > 0 && set_sysctl_int("cow_precopy_depth", depth))
		return -1;
	return set_sysctl_int("cow_precopy", mode);
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

#endif
