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
	FILE *fp = fopen(path, "re");

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
