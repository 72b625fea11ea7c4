#ifndef COWBENCH_HUGEPAGE_H
#define COWBENCH_HUGEPAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cowbench/params.h>
#include <cowbench/sysctl.h> /* CB_NR_HUGEPAGES_SYSCTL */

/*
 * Regions for the self-driven workloads: anonymous private memory with a
 * page type (4 KiB, THP advice, 2 MiB hugetlb) and a NUMA placement, plus
 * the facts that show what the kernel made of them.
 */

#define CB_HUGETLB_SIZE (2ul << 20)

struct cb_region {
	void *addr;       /* 2 MiB aligned */
	size_t len;       /* what was asked for (a multiple of the page size; of 2 MiB for hugetlb) */
	size_t map_len;   /* what to munmap (alignment slack included) */
	void *map_addr;
	bool hugetlb;
};

/**
 * Map a region as p asks (thp advice, hugetlb, membind/interleave, dontfork,
 * wipeonfork); not populated. -ENOMEM for hugetlb means no free huge pages.
 */
int cb_region_map(struct cb_region *r, size_t len, const struct cb_wl_params *p);
/**
 * Fault every page of a mapped region in, for writing, in one call
 * (MADV_POPULATE_WRITE, Linux 5.14): the same pages, placement and page
 * table entries as a write to each page, without a fault exception per page,
 * so a rep spends less of its time getting ready. Best effort: on an older
 * kernel, or short of memory, the caller's own writes fault the rest in.
 */
void cb_region_populate(const struct cb_region *r);
/** Unmap a region (a zeroed or already unmapped one is left alone). */
void cb_region_unmap(struct cb_region *r);
/**
 * The row status for a region that could not be had: no-resource:hugetlb:...
 * when hugetlb pages were missing (or needed root), else error:mmap:WHAT.
 */
void cb_region_status(int err, bool hugetlb, char *status, size_t len);

/**
 * Make sure `pages` free 2 MiB hugetlb pages exist, raising vm.nr_hugepages
 * with cb_sysctl_override when root (the caller restores it with
 * cb_sysctl_restore_all). -EPERM without root, -ENOMEM when the kernel
 * could not find them, -ENOENT without hugetlb support.
 */
int cb_hugetlb_reserve(size_t pages);

/**
 * Bytes of the range backed by huge pages now (AnonHugePages, or
 * Private_Hugetlb + Shared_Hugetlb, of the /proc/self/smaps entries that
 * overlap it). Negative errno when smaps cannot be read.
 */
int64_t cb_region_huge_bytes(const void *addr, size_t len);

/** VmPTE of /proc/self/status in KiB (page-table memory of this process). */
int64_t cb_vm_pte_kb(void);

#endif
