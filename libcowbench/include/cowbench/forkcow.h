#ifndef COWBENCH_FORKCOW_H
#define COWBENCH_FORKCOW_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <cowbench/wpfault.h>

/*
 * Which write faults on present pages a fork caused. Fed the write faults
 * and the fork/exit/exec records of the exceptions:page_fault_user
 * tracepoint (cb_wpfault), it snapshots a forking process's private
 * writable mappings through pagemap when it sees the fork (root: page
 * frame numbers) and classifies each later write fault of the pair:
 *
 *   fork copy   the page was shared by the fork, the other side still maps
 *               it and has not written it: the kernel copies it
 *   fork reuse  shared by the fork, but the other side has written it
 *               (took its own copy) or is gone (exit, exec): written in place
 *   zero copy   the page was the shared zero page at the fork
 *   other       no fork of the watched processes covers it: write faults
 *               before any fork, pages absent at the fork, private file pages
 *
 * Exact for one fork at a time per page (a parent and its child); pages
 * shared by several live forks at once are attributed to the newest fork
 * the writer is part of. Records are buffered and processed in time order
 * at cb_forkcow_flush (the tracepoint's per-CPU buffers are not ordered
 * among themselves).
 */

enum cb_fc_class { CB_FC_FORK_COPY, CB_FC_FORK_REUSE, CB_FC_ZERO_COPY, CB_FC_OTHER, CB_FC_NCLASS };


/* A private writable mapping of a forking process, as the fork snapshot saw it. */
struct cb_fc_map {
	uint64_t start, end;   /* [start, end) */
	uint64_t offset;       /* file offset of start (0 for anonymous memory) */
	char perms[5];
	char path[128];        /* file, [heap], [stack], or "" for anonymous memory */
	unsigned index;        /* position among the snapshot's mappings */
};

/** The kind of a mapping for people and trace files: "heap", "stack", "anon", "file" or "special". */
const char *cb_fc_map_kind(const struct cb_fc_map *m);

/* One classified write fault of a watched process. */
struct cb_fc_write {
	pid_t pid;
	uint64_t time_ns;          /* CLOCK_MONOTONIC */
	uint64_t addr;             /* page aligned */
	enum cb_fc_class cls;
	/* When a fork covers the page (cls is not other): */
	const struct cb_fc_map *map; /* NULL otherwise */
	bool child;                /* the writer is the fork's child */
	bool first;                /* its first write to the page since the fork */
	pid_t parent, fork_child;  /* the fork's two sides */
	uint64_t fork_ns;          /* when it forked */
	uint64_t fork_id;          /* 1, 2, ... in the order of the forks seen */
};

struct cb_fc_counts {
	int64_t n[CB_FC_NCLASS];
};

struct cb_forkcow;

/**
 * Set up (root: pagemap must carry page frame numbers). follow_children:
 * a watched process's fork children are watched too. -EPERM when pagemap
 * gives no frame numbers, -ENOMEM.
 */
int cb_forkcow_new(bool follow_children, struct cb_forkcow **out);
void cb_forkcow_free(struct cb_forkcow *f);
/** Watch pid from now on (its write faults are classified and counted). */
void cb_forkcow_watch(struct cb_forkcow *f, pid_t pid);
/** Buffer a write fault on a present page (any process: unwatched ones are dropped at the flush). */
void cb_forkcow_fault(struct cb_forkcow *f, const struct cb_wpfault_sample *s);
/** Buffer a fork, exit or exec record. */
void cb_forkcow_task(struct cb_forkcow *f, const struct cb_wpfault_task *t);
/**
 * Process the buffered records older than until_ns in time order: forks are
 * snapshotted, faults classified and counted, and each watched one handed
 * to on_write (may be NULL); newer ones wait. Pass the CLOCK_MONOTONIC time
 * taken just before the cb_wpfault_drain: every record older than that is
 * in by then, whichever CPU's buffer holds it (a fork on one CPU and its
 * child's first faults on another arrive in order). UINT64_MAX: all.
 */
void cb_forkcow_flush(struct cb_forkcow *f, uint64_t until_ns, void (*on_write)(void *arg, const struct cb_fc_write *w),
		      void *arg);
/** A watched process's counts so far; false when pid is not watched. */
bool cb_forkcow_counts(const struct cb_forkcow *f, pid_t pid, struct cb_fc_counts *out);
/** Forks seen, and those that could not be snapshotted (both sides gone or unreadable by then). */
void cb_forkcow_forks(const struct cb_forkcow *f, uint64_t *seen, uint64_t *unsnapped);

#endif
