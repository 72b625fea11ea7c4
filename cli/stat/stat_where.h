#ifndef COWBENCH_STAT_WHERE_H
#define COWBENCH_STAT_WHERE_H

#include <stdbool.h>

#include <cowbench/output.h> /* enum cb_format */
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/*
 * cowbench stat --where: where a process tree's COW writes land. By
 * mapping: per-VMA Private_Dirty/Shared_Dirty movement from smaps (no root
 * needed) and, as root, every write fault on a present page from the
 * exceptions:page_fault_user tracepoint, each classified through pagemap
 * as a copy (new frame), a copy of the zero page, or a reuse in place. By
 * code: the same faults' user call chains, symbolised. Measurement here,
 * printing in stat_where_print.
 */

enum stat_where_mode { WHERE_NONE = 0, WHERE_MAPS, WHERE_CODE };

struct stat_where_opts {
	enum stat_where_mode mode;
	long top;              /* rows shown per table */
	long sample;           /* record 1 in N faults (code view) */
	const char *folded;    /* --folded=FILE, or NULL */
	bool force;            /* --force: --folded may replace a non-empty file */
	bool children;         /* follow forks */
	bool want_faults;      /* open the tracepoint even without --where (stat's fallback count) */
};

struct stat_where;

/**
 * Set up; the tracepoint is opened when the mode or want_faults asks and
 * the machine allows. *fault_err: 0 when write faults are recorded, else
 * why not (cb_wpfault_advice says what to change).
 */
struct stat_where *stat_where_new(const struct stat_where_opts *o, int *fault_err);
void stat_where_free(struct stat_where *w);
/** A process of the watched tree (ppid: its parent, 0 if unknown); at_start: its state now is the baseline. */
void stat_where_watch(struct stat_where *w, pid_t pid, pid_t ppid, bool at_start);
/** Between intervals: empty the kernel's buffers so that none overflows (call every few tens of ms). */
void stat_where_poll(struct stat_where *w);
/** The recorder, for waiting on its fork bells (cli_wait_watched); NULL when faults are not recorded. */
struct cb_wpfault *stat_where_recorder(const struct stat_where *w);
/** Forks of watched processes seen, and those whose page map could not be read (both sides gone first). */
void stat_where_forks(const struct stat_where *w, uint64_t *seen, uint64_t *unread);
/** At the end: every buffered write fault counted (the last interval's held-back ones too). */
void stat_where_finish(struct stat_where *w);
/** Once per interval: read the recorded faults, then smaps (and pagemap) of every live watched process. */
void stat_where_tick(struct stat_where *w);
/** Write faults on present pages of pid since it was first watched; -1 when not recorded. */
int64_t stat_where_faults_of(const struct stat_where *w, pid_t pid);
struct cb_fc_counts;
/** pid's write faults by cause (forkcow.h); false when not classified (no root, or pid unknown). */
bool stat_where_fork_counts(const struct stat_where *w, pid_t pid, struct cb_fc_counts *out);
/** true when write faults are attributed to forks (tracepoint and pagemap frames). */
bool stat_where_attributes(const struct stat_where *w);
/** The watched processes the tracepoint saw born (for stat's own table); fills up to max, returns the count. */
size_t stat_where_new_children(struct stat_where *w, pid_t *out, size_t max);

/* What stat measured for the same window, for the totals line. -1 when not measured. */
struct stat_where_totals {
	int64_t copies;        /* COW copies (taskstats) */
	const char *copies_source;
};

/** The tables, totals and advice (text or JSON Lines) at the end of the run. */
void stat_where_print(struct stat_where *w, const struct stat_where_totals *t, enum cb_format fmt, FILE *out);
/** Whether a file of --where (--folded) could not be written: the run then exits 1. */
bool stat_where_write_failed(const struct stat_where *w);

#endif
