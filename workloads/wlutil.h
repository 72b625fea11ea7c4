/* Helpers shared by the self-driven workloads (snapshot, fork, multi); private to workloads/. */
#ifndef COWBENCH_WLUTIL_H
#define COWBENCH_WLUTIL_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cowbench/clock.h>
#include <cowbench/error.h>
#include <cowbench/hugepage.h>
#include <cowbench/numa.h>
#include <cowbench/pagemap.h>
#include <cowbench/report.h>
#include <cowbench/run.h>

/* Time stamps comparable across processes and threads. */
static inline uint64_t wl_now(void)
{
	return cb_monotonic_ns();
}

/* The value page i's first word holds at fork time: never 0, never what a writer writes. */
static inline uint64_t wl_pattern(size_t i)
{
	return (uint64_t)i * 0x9e3779b97f4a7c15ull | 1;
}

static inline void wl_status(struct cb_row *row, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline void wl_status(struct cb_row *row, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(row->status, sizeof(row->status), fmt, ap);
	va_end(ap);
}

/* Why a region could not be had, as a row status. */
static inline void wl_region_status(struct cb_row *row, int err, bool hugetlb)
{
	cb_region_status(err, hugetlb, row->status, sizeof(row->status));
}

/*
 * Map the region of spec (hugetlb pages reserved first, for the region and
 * `copies` COW copies of it), populate every
 * page with wl_pattern words, and record what the kernel made of it.
 */
static inline int wl_region_prepare(const struct cb_run_spec *spec, struct cb_row *row,
				    struct cb_region *r, unsigned copies)
{
	const struct cb_wl_params *p = &spec->params;
	char *where;
	size_t len;
	int err = 0;
	int64_t v;

	if (p->hugetlb)
		err = cb_hugetlb_reserve(spec->size / CB_HUGETLB_SIZE * (1 + copies));
	if (!err)
		err = cb_region_map(r, spec->size, p);
	if (err) {
		wl_region_status(row, err, p->hugetlb);
		return err;
	}
	cb_region_populate(r);
	for (size_t i = 0; i < spec->size / spec->page_size; i++)
		((uint64_t *)((char *)r->addr + i * spec->page_size))[0] = wl_pattern(i);
	v = cb_region_huge_bytes(r->addr, r->len);
	row->huge_bytes = v >= 0 ? v : CB_NA;
	v = cb_vm_pte_kb();
	row->vm_pte_kb = v >= 0 ? v : CB_NA;
	where = cb_row_room(row, &row->pages_nodes, &len); /* the rep's own buffer (CB_COL_REF) */
	if (!where || cb_numa_where(r->addr, r->len, spec->page_size, where, len) < 0)
		row->pages_nodes = NULL;
	return 0;
}

/*
 * In a child: move to the child's nodes and re-bind its view of the region
 * (the policy is per mapping, so the copies its writes make land there).
 * Returns 0 or a negative errno; the caller exits with it.
 */
static inline int wl_child_numa(const struct cb_run_spec *spec, void *addr, size_t len)
{
	int err = cb_numa_run_on(spec->params.child_cpunodebind);

	if (!err)
		err = cb_numa_place(addr, len, spec->params.child_membind, 0);
	return err;
}

/* A MAP_SHARED anonymous area: results a child hands back to its parent. */
static inline void *wl_shared_map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * Page frame numbers of npages pages from addr (/proc/self/pagemap);
 * 0 for a page not present. -EPERM when the kernel hides PFNs (not root).
 */
static inline int wl_pfns(const void *addr, size_t npages, size_t page_size, uint64_t *pfn)
{
	int err = cb_pagemap_read(0, addr, npages, page_size, pfn);
	bool any = false;

	if (err)
		return err;
	for (size_t i = 0; i < npages; i++) {
		pfn[i] = (pfn[i] & CB_PM_PRESENT) ? (pfn[i] & CB_PM_PFN_MASK) : 0;
		any |= pfn[i] != 0;
	}
	return any ? 0 : -EPERM;
}

static inline int64_t wl_tv_ns(const struct timeval *tv)
{
	return (int64_t)tv->tv_sec * 1000000000 + (int64_t)tv->tv_usec * 1000;
}

#endif
