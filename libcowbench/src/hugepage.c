#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cowbench/error.h>
#include <cowbench/hugepage.h>
#include <cowbench/numa.h>
#include <cowbench/sysctl.h>

#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB (21 << MAP_HUGE_SHIFT)
#endif
#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define FREE_HUGEPAGES "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"

static int map_hugetlb(struct cb_region *r, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_HUGE_2MB, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	r->addr = r->map_addr = p;
	r->map_len = len;
	r->hugetlb = true;
	return 0;
}

/* 2 MiB alignment so THP can map whole PMDs from the first byte on. */
static int map_aligned(struct cb_region *r, size_t len)
{
	size_t slack = CB_HUGETLB_SIZE;
	char *p = mmap(NULL, len + slack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t a;

	if (p == MAP_FAILED)
		return -errno;
	a = ((uintptr_t)p + slack - 1) & ~(uintptr_t)(slack - 1);
	r->map_addr = p;
	r->map_len = len + slack;
	r->addr = (void *)a;
	return 0;
}

static int advise(struct cb_region *r, const struct cb_wl_params *p)
{
	char *a = r->addr;

	if (!r->hugetlb && p->thp != CB_THP_ALWAYS &&
	    madvise(a, r->len, p->thp == CB_THP_NEVER ? MADV_NOHUGEPAGE : MADV_HUGEPAGE) < 0)
		return -errno;
	if (p->dontfork && madvise(a, p->dontfork, MADV_DONTFORK) < 0)
		return -errno;
	if (p->wipeonfork && madvise(a + p->dontfork, p->wipeonfork, MADV_WIPEONFORK) < 0)
		return -errno;
	return cb_numa_place(a, r->len, p->membind, p->interleave);
}

int cb_region_map(struct cb_region *r, size_t len, const struct cb_wl_params *p)
{
	int err;

	memset(r, 0, sizeof(*r));
	r->len = len;
	err = p->hugetlb ? map_hugetlb(r, len) : map_aligned(r, len);
	if (err)
		return err;
	err = advise(r, p);
	if (err)
		cb_region_unmap(r);
	return err;
}

void cb_region_populate(const struct cb_region *r)
{
	/* Errors are left to the caller's writes: they fault (or SIGBUS) as they would have. */
	(void)madvise(r->addr, r->len, MADV_POPULATE_WRITE);
}

void cb_region_unmap(struct cb_region *r)
{
	if (r->map_addr)
		munmap(r->map_addr, r->map_len);
	r->map_addr = r->addr = NULL;
}

void cb_region_status(int err, bool hugetlb, char *status, size_t len)
{
	if (hugetlb && err == -EPERM)
		snprintf(status, len, "no-resource:hugetlb:needs root to reserve");
	else if (hugetlb && (err == -ENOMEM || err == -ENOENT))
		snprintf(status, len, "no-resource:hugetlb:no free 2M pages");
	else if (hugetlb && err == -EUSERS)
		snprintf(status, len, "no-resource:hugetlb:%d concurrent cowbench runs hold the reservation already "
			 "(the settings journal's limit)", CB_SYSCTL_MAX_OWNERS);
	else
		snprintf(status, len, "error:mmap:%s", cb_strerror(err));
}

int cb_hugetlb_reserve(size_t pages)
{
	long nr, free_now;
	int err = cb_sysctl_read_long(FREE_HUGEPAGES, &free_now);

	if (err)
		return err == -ENOENT ? -ENOENT : err;
	if ((size_t)free_now >= pages)
		return 0;
	err = cb_sysctl_read_long(CB_NR_HUGEPAGES_SYSCTL, &nr);
	if (err)
		return err;
	err = cb_sysctl_raise(CB_NR_HUGEPAGES_SYSCTL, nr + (long)pages - free_now);
	if (err)
		return err == -EACCES ? -EPERM : err;
	if (cb_sysctl_read_long(FREE_HUGEPAGES, &free_now) < 0 || (size_t)free_now < pages)
		return -ENOMEM;
	return 0;
}

/* smaps header lines start with the range in lower-case hex; field lines with a capital. */
static bool header_overlaps(const char *line, uintptr_t lo, uintptr_t hi, bool *is_header)
{
	uintptr_t s, e;

	*is_header = ((line[0] >= '0' && line[0] <= '9') || (line[0] >= 'a' && line[0] <= 'f')) &&
		     sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &s, &e) == 2;
	return *is_header && s < hi && e > lo;
}

int64_t cb_region_huge_bytes(const void *addr, size_t len)
{
	FILE *fp = fopen("/proc/self/smaps", "re");
	uintptr_t lo = (uintptr_t)addr, hi = lo + len;
	char line[512];
	bool in = false;
	int64_t total = 0;

	if (!fp)
		return -errno;
	while (fgets(line, sizeof(line), fp)) {
		bool is_header;
		bool overlap = header_overlaps(line, lo, hi, &is_header);
		unsigned long kb;

		if (is_header) {
			in = overlap;
			continue;
		}
		if (!in)
			continue;
		if (sscanf(line, "AnonHugePages: %lu kB", &kb) == 1 ||
		    sscanf(line, "Private_Hugetlb: %lu kB", &kb) == 1 ||
		    sscanf(line, "Shared_Hugetlb: %lu kB", &kb) == 1)
			total += (int64_t)kb * 1024;
	}
	fclose(fp);
	return total;
}

int64_t cb_vm_pte_kb(void)
{
	FILE *fp = fopen("/proc/self/status", "re");
	char line[256];
	long kb = -1;

	if (!fp)
		return -errno;
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "VmPTE: %ld kB", &kb) == 1)
			break;
	fclose(fp);
	return kb < 0 ? -ENOENT : kb;
}
