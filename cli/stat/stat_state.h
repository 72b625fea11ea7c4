/* cowbench stat's state (cmd_stat.c) and its sampling of the watched processes (stat_sample.c). */
#ifndef COWBENCH_CLI_STAT_STATE_H
#define COWBENCH_CLI_STAT_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>

#include <cowbench/cowbench.h>
#include <cowbench/evidence.h>
#include <cowbench/forkcow.h>

#include "stat_where.h"

#define MAX_PROCS 4096

struct stat_opts {
	pid_t pid;
	double interval;
	long count;
	bool children, system;
	enum cb_format format;
	const char *columns; /* --columns: the table's */
	struct stat_where_opts where;
};

/* One process's counters; -1 where not measured. */
struct sample {
	int64_t copies, copy_ns, minflt, majflt, private_dirty_kb;
	int64_t cause[CB_FC_NCLASS]; /* write faults by cause: fork copy, fork reuse, zero page, other */
};

#define UNMEASURED { -1, -1, -1, -1, -1, { -1, -1, -1, -1 } }
#define ZERO_SAMPLE { 0, 0, 0, 0, 0, { 0, 0, 0, 0 } }

struct proc {
	pid_t pid;
	bool gone;
	struct sample base, prev, cur;
};

/* An exit record not yet known to be ours: its parent may show up later (stat_sample.c). */
struct pending_exit {
	struct cb_taskstats_exit x;
	long tick; /* the line it arrived in */
};
#define MAX_PENDING_EXITS 4096

struct stat_state {
	struct stat_opts o;
	struct cb_taskstats_sock *ts;
	struct cb_taskstats_sock *exits; /* final records of exiting tasks; NULL when not allowed */
	struct pending_exit *pend; /* MAX_PENDING_EXITS of them */
	size_t npend;
	long tick;           /* lines sampled so far */
	int ts_err;          /* why taskstats does not count (0: it does) */
	struct stat_where *where; /* --where, and the tracepoint that counts when taskstats cannot */
	int fault_err;       /* why the tracepoint does not record (0: it does) */
	bool copies_from_faults; /* cow_copies are write faults on present pages (tracepoint) */
	bool causes;         /* write faults attributed to forks (tracepoint + pagemap frames, root) */
	struct proc *procs;
	size_t nprocs;
	pid_t root;
	bool own_child;      /* root is our child: its end is caught before it is reaped */
	bool have_cowstats;
	bool system_only;    /* --system without a process: COW faults of the whole machine */
	struct cb_cowstats cs_base, cs_prev, cs_cur;
	double t0;
};

/* Test aid (documented): read another file than /proc/cow_stats (NULL: that one). */
static inline const char *stat_cowstats_path(void)
{
	return getenv("COWBENCH_COWSTATS");
}

/* ---- stat_sample.c: the processes watched, and their counters each interval ---- */

struct proc *stat_find_proc(struct stat_state *st, pid_t pid);
/* Watch pid (a child of ppid; at_start: there before stat began, so its counters start from now). */
void stat_add_proc(struct stat_state *st, pid_t pid, pid_t ppid, bool at_start);
/* --children: every descendant not yet watched, from /proc/PID/task/TID/children. */
void stat_discover_children(struct stat_state *st, bool at_start);
/* Sample every watched process (the ones born since the last look and the exits' final records too). */
void stat_sample_all(struct stat_state *st);
/*
 * Read the exit records that arrived (between two lines too: the kernel's
 * buffer holds what the whole machine's exits send, so it is read as they
 * come, and a short-lived child's final record is never dropped for room).
 */
void stat_drain_exits(struct stat_state *st);
/* A line was printed: the next one counts from here (exit records read meanwhile go to it). */
void stat_mark_line(struct stat_state *st);
/* The write faults' causes settled once the watch ends. */
void stat_finish_causes(struct stat_state *st);


#endif
