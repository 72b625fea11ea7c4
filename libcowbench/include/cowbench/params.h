#ifndef COWBENCH_PARAMS_H
#define COWBENCH_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Parameters of the memory a region is made of (page type, NUMA placement),
 * common to every workload. A workload's own options live in its option
 * table (cowbench/option.h), never here.
 */

/** Transparent huge page advice for the region. */
enum cb_thp_advice {
	CB_THP_NEVER = 0, /* MADV_NOHUGEPAGE */
	CB_THP_MADVISE,   /* MADV_HUGEPAGE (what the plain --thp flag means) */
	CB_THP_ALWAYS,    /* no advice: the region follows the system mode */
};

#define CB_MAX_NODES 64 /* node masks are uint64_t */

struct cb_wl_params {
	enum cb_thp_advice thp;
	bool hugetlb;              /* back the region with 2 MiB hugetlb pages */
	uint64_t dontfork;         /* bytes at the region's start marked MADV_DONTFORK (set by a workload) */
	uint64_t wipeonfork;       /* bytes after those marked MADV_WIPEONFORK (set by a workload) */
	uint64_t membind;          /* node mask for mbind(MPOL_BIND); 0: none */
	uint64_t interleave;       /* node mask for mbind(MPOL_INTERLEAVE); 0: none */
	uint64_t cpunodebind;      /* run every side on the CPUs of these nodes; 0: anywhere */
	uint64_t child_membind;    /* children re-bind the region here, so their COW copies land here */
	uint64_t child_cpunodebind; /* children (snapshot's checkpointer, multi's writers) run here */
};

/** The defaults: 4 KiB pages (MADV_NOHUGEPAGE), no hugetlb, no NUMA policy. */
void cb_wl_params_default(struct cb_wl_params *p);

const char *cb_thp_advice_name(enum cb_thp_advice a);
int cb_thp_advice_parse(const char *s, enum cb_thp_advice *out);

/**
 * Check the region parameters against a region of size bytes and
 * page_size pages. Returns 0, or -EINVAL with a one-line reason in why[]
 * (no "cowbench:" prefix).
 */
int cb_wl_params_check(const struct cb_wl_params *p, uint64_t size, size_t page_size, char *why,
		       size_t len);

#endif
