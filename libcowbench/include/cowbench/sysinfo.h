#ifndef COWBENCH_SYSINFO_H
#define COWBENCH_SYSINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Facts about the machine, for `cowbench info` and for every result row. */

int cb_kernel_release(char *buf, size_t len);
/** "model name" of the first CPU in /proc/cpuinfo (or the architecture). */
int cb_cpu_model(char *buf, size_t len);
/** Selected THP mode ("always", "madvise", "never") or -ENOENT without THP. */
int cb_thp_mode(char *buf, size_t len);
/** A "Key:  N kB" line of a meminfo-format file, in bytes; -ENOENT when absent. */
int cb_meminfo_read(const char *path, const char *key, uint64_t *bytes);
/** MemAvailable of /proc/meminfo in bytes. */
int cb_mem_available(uint64_t *bytes);
/**
 * Memory this process's cgroups still allow (v1 memory.limit_in_bytes or
 * v2 memory.max, minus usage, the tightest over the cgroup and its
 * ancestors); UINT64_MAX without a limit. where[] names the limiting file.
 */
int cb_cgroup_mem_headroom(uint64_t *bytes, char *where, size_t len);
/** Configured NUMA nodes via libnuma; -ENOTSUP where NUMA is unavailable. */
int cb_numa_nodes(void);
bool cb_path_exists(const char *path);
/** Online CPUs this process may run on. */
int cb_cpu_allowed(int cpu);

#endif
