#ifndef COWBENCH_PARAMS_H
#define COWBENCH_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Parameters of the self-driven workloads (snapshot, fork, multi) and of
 * the memory a region is made of (page type, NUMA placement). They live
 * in one struct nested in cb_run_spec so a new parameter touches one place.
 */

/** How the snapshot workload takes its checkpoint. */
enum cb_snapshot_method {
	CB_SNAP_FORK = 0, /* fork; a child with C threads copies and unmaps batches */
	CB_SNAP_UFFD_WP,  /* userfaultfd write-protect; copier threads save each page before its writer */
	CB_SNAP_MEMCPY,   /* stop the writers, copy, then let them go */
	CB_SNAP_NONE,     /* no snapshot: the writers alone */
	CB_SNAP_FORK_WAIT, /* fork, but the writers start once the child has copied and exited */
};

/** How the fork workload makes its child. */
enum cb_fork_method {
	CB_FORKM_FORK = 0,
	CB_FORKM_VFORK,
	CB_FORKM_POSIX_SPAWN, /* /bin/true: glibc spawns with CLONE_VM|CLONE_VFORK */
	CB_FORKM_CLONE_VM,    /* clone(CLONE_VM|SIGCHLD): shares the address space */
};

/** Transparent huge page advice for the region. */
enum cb_thp_advice {
	CB_THP_NEVER = 0, /* MADV_NOHUGEPAGE */
	CB_THP_MADVISE,   /* MADV_HUGEPAGE (what the plain --thp flag means) */
	CB_THP_ALWAYS,    /* no advice: the region follows the system mode */
};

/** How the multi workload's children share the writes. */
enum cb_multi_share {
	CB_SHARE_SPLIT = 0, /* each child writes its 1/N of the pages */
	CB_SHARE_ALL,       /* every child writes every page */
};

#define CB_MAX_NODES 64 /* node masks are uint64_t */

struct cb_wl_params {
	unsigned threads;          /* snapshot: writer threads (W) */
	unsigned checkpointers;    /* snapshot: copier threads (C) */
	uint64_t batch;            /* snapshot: bytes per copy batch, whole pages */
	enum cb_snapshot_method snapshot;
	enum cb_fork_method fork_method;
	unsigned children;         /* multi: children forked from one parent */
	enum cb_multi_share share;
	enum cb_thp_advice thp;
	bool hugetlb;              /* back the region with 2 MiB hugetlb pages */
	uint64_t dontfork;         /* bytes at the region's start marked MADV_DONTFORK */
	uint64_t wipeonfork;       /* bytes after those marked MADV_WIPEONFORK */
	uint64_t membind;          /* node mask for mbind(MPOL_BIND); 0: none */
	uint64_t interleave;       /* node mask for mbind(MPOL_INTERLEAVE); 0: none */
	uint64_t cpunodebind;      /* run every side on the CPUs of these nodes; 0: anywhere */
	uint64_t child_membind;    /* children re-bind the region here, so their COW copies land here */
	uint64_t child_cpunodebind; /* children (snapshot's checkpointer, multi's writers) run here */
};

/** The defaults (the seed's snapshot: 28 writers, 4 checkpointers, 2 MiB batches). */
void cb_wl_params_default(struct cb_wl_params *p);

const char *cb_snapshot_method_name(enum cb_snapshot_method m);
int cb_snapshot_method_parse(const char *s, enum cb_snapshot_method *out);
const char *cb_fork_method_name(enum cb_fork_method m);
int cb_fork_method_parse(const char *s, enum cb_fork_method *out);
const char *cb_thp_advice_name(enum cb_thp_advice a);
int cb_thp_advice_parse(const char *s, enum cb_thp_advice *out);
const char *cb_multi_share_name(enum cb_multi_share s);
int cb_multi_share_parse(const char *s, enum cb_multi_share *out);

/**
 * Check the parameters against a region of size bytes and page_size pages.
 * Returns 0, or -EINVAL with a one-line reason in why[] (no "cowbench:" prefix).
 */
int cb_wl_params_check(const struct cb_wl_params *p, uint64_t size, size_t page_size, char *why,
		       size_t len);

#endif
