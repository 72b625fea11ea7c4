#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <numa.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cowbench/sysinfo.h>

#include "fileutil.h"

int cb_kernel_release(char *buf, size_t len)
{
	struct utsname u;

	if (uname(&u) < 0)
		return -errno;
	snprintf(buf, len, "%s", u.release);
	return 0;
}

int cb_cpu_model(char *buf, size_t len)
{
	char line[512];
	FILE *fp = fopen("/proc/cpuinfo", "re");

	if (fp) {
		while (fgets(line, sizeof(line), fp)) {
			char *colon = strchr(line, ':');

			if (strncmp(line, "model name", 10) != 0 || !colon)
				continue;
			colon++;
			while (*colon == ' ' || *colon == '\t')
				colon++;
			colon[strcspn(colon, "\n")] = '\0';
			snprintf(buf, len, "%s", colon);
			fclose(fp);
			return 0;
		}
		fclose(fp);
	}
	struct utsname u;

	if (uname(&u) < 0)
		return -errno;
	snprintf(buf, len, "%s", u.machine);
	return 0;
}

int cb_thp_mode(char *buf, size_t len)
{
	char text[256], *open, *close;
	int err = cb_read_text_file("/sys/kernel/mm/transparent_hugepage/enabled", text, sizeof(text));

	if (err < 0)
		return err;
	/* "always [madvise] never": the bracketed word is the mode in force. */
	open = strchr(text, '[');
	close = open ? strchr(open, ']') : NULL;
	if (!open || !close)
		return -EINVAL;
	*close = '\0';
	snprintf(buf, len, "%s", open + 1);
	return 0;
}

int cb_meminfo_read(const char *path, const char *key, uint64_t *bytes)
{
	char line[256];
	size_t klen = strlen(key);
	FILE *fp = cb_fopen_regular(path);

	if (!fp)
		return -errno;
	while (fgets(line, sizeof(line), fp)) {
		unsigned long long kb;

		if (strncmp(line, key, klen) != 0 || line[klen] != ':')
			continue;
		fclose(fp);
		if (sscanf(line + klen + 1, "%llu kB", &kb) != 1)
			return -EINVAL;
		*bytes = (uint64_t)kb * 1024;
		return 0;
	}
	fclose(fp);
	return -ENOENT;
}

int cb_mem_available(uint64_t *bytes)
{
	/* A test may point cowbench at a fixture meminfo. */
	const char *path = getenv("COWBENCH_MEMINFO");

	return cb_meminfo_read(path && *path ? path : "/proc/meminfo", "MemAvailable", bytes);
}

int cb_numa_nodes(void)
{
	if (numa_available() < 0)
		return -ENOTSUP;
	return numa_num_configured_nodes();
}

bool cb_path_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

int cb_cpu_allowed(int cpu)
{
	cpu_set_t set;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return 0;
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -errno;
	return CPU_ISSET(cpu, &set) ? 1 : 0;
}

/* One number from a cgroup file ("max" or a v1 'unlimited' near 2^63: UINT64_MAX). */
static int cgroup_number(const char *dir, const char *file, uint64_t *v)
{
	char path[4096], buf[64], *end;
	unsigned long long x;
	int n;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	n = cb_read_text_file(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	if (strncmp(buf, "max", 3) == 0) {
		*v = UINT64_MAX;
		return 0;
	}
	errno = 0;
	x = strtoull(buf, &end, 10);
	if (errno || end == buf)
		return -EINVAL;
	*v = x >= (1ull << 62) ? UINT64_MAX : x;
	return 0;
}

/* A "key N" line of dir/memory.stat (0 when absent): page cache the kernel can reclaim. */
static uint64_t cgroup_stat(const char *dir, const char *key)
{
	char path[4096], line[256];
	size_t klen = strlen(key);
	unsigned long long v = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/memory.stat", dir);
	fp = cb_fopen_regular(path);
	if (!fp)
		return 0;
	while (fgets(line, sizeof(line), fp))
		if (strncmp(line, key, klen) == 0 && line[klen] == ' ' && sscanf(line + klen, "%llu", &v) == 1)
			break;
	fclose(fp);
	return v;
}

/* The smallest limit minus usage (less reclaimable cache) from dir up to the hierarchy's root (top). */
static void cgroup_walk(char *dir, size_t top, const char *limit, const char *usage, uint64_t *headroom,
			char *where, size_t wlen)
{
	for (;;) {
		uint64_t lim, use;

		if (cgroup_number(dir, limit, &lim) == 0 && lim != UINT64_MAX && cgroup_number(dir, usage, &use) == 0) {
			uint64_t cache = cgroup_stat(dir, strcmp(limit, "memory.max") ? "total_inactive_file" : "inactive_file");
			uint64_t room;

			use = use > cache ? use - cache : 0;
			room = use < lim ? lim - use : 0;

			if (room < *headroom) {
				*headroom = room;
				snprintf(where, wlen, "%s/%s", dir, limit);
			}
		}
		char *slash = strrchr(dir, '/');

		if (!slash || (size_t)(slash - dir) < top)
			break;
		*slash = '\0';
	}
}

int cb_cgroup_mem_headroom(uint64_t *bytes, char *where, size_t wlen)
{
	const char *proc = getenv("COWBENCH_PROC_CGROUP"), *root = getenv("COWBENCH_CGROUP_ROOT");
	char line[1024], dir[4096];
	FILE *fp;

	*bytes = UINT64_MAX;
	if (wlen)
		where[0] = '\0';
	fp = cb_fopen_regular(proc && *proc ? proc : "/proc/self/cgroup");
	if (!fp)
		return -errno;
	root = root && *root ? root : "/sys/fs/cgroup";
	while (fgets(line, sizeof(line), fp)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL, *nl;
		size_t top;

		if (!c2)
			continue;
		if ((nl = strchr(c2, '\n')))
			*nl = '\0';
		*c2 = '\0';
		if (c1[1] == '\0') { /* v2: "0::/path", mounted at root or root/unified */
			snprintf(dir, sizeof(dir), "%s/unified", root);
			if (!cb_path_exists(dir))
				snprintf(dir, sizeof(dir), "%s", root);
			top = strlen(dir);
			snprintf(dir + top, sizeof(dir) - top, "%s", strcmp(c2 + 1, "/") ? c2 + 1 : "");
			cgroup_walk(dir, top, "memory.max", "memory.current", bytes, where, wlen);
		} else if (strstr(c1 + 1, "memory")) { /* v1: "N:memory:/path" */
			snprintf(dir, sizeof(dir), "%s/memory", root);
			top = strlen(dir);
			snprintf(dir + top, sizeof(dir) - top, "%s", strcmp(c2 + 1, "/") ? c2 + 1 : "");
			if (!cb_path_exists(dir)) /* a container sees its own cgroup as the mount's root */
				dir[top] = '\0';
			cgroup_walk(dir, top, "memory.limit_in_bytes", "memory.usage_in_bytes", bytes, where, wlen);
		}
	}
	fclose(fp);
	return 0;
}
