#ifndef COWBENCH_CLI_INFO_DAMON_H
#define COWBENCH_CLI_INFO_DAMON_H

/*
 * DAMON for `cowbench info`'s tune block: which kdamond threads scan memory
 * (DAMON sysfs interface, damon_reclaim / damon_lru_sort / damon_stat
 * modules), with which operations set, schemes and intervals, and how much
 * CPU they used over the block's sampling window. Read only.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define DAMON_MAX_KDAMONDS 8
#define DAMON_MAX_CONTEXTS 4
#define DAMON_MAX_SCHEMES 8
#define DAMON_MAX_THREADS 16
#define DAMON_NR_MODULES 3
#define DAMON_WORD 24 /* longest sysfs word kept (operations, action, state) */

struct damon_context {
	char ops[DAMON_WORD];             /* vaddr, fvaddr, paddr; "?" when unreadable */
	long long sample_us, aggr_us;     /* -1 when unreadable */
	int nr_schemes;                   /* -1 when unreadable */
	char action[DAMON_MAX_SCHEMES][DAMON_WORD];
};

struct damon_kdamond {
	char state[DAMON_WORD];           /* on, off; "?" when unreadable */
	long long pid;                    /* -1 when off or unreadable */
	int nr_contexts;                  /* -1 when unreadable */
	struct damon_context ctx[DAMON_MAX_CONTEXTS];
};

struct damon_module {
	const char *name;                 /* damon_reclaim, ... */
	bool present;                     /* /sys/module/NAME/parameters exists */
	char enabled[DAMON_WORD];         /* Y, N; "?" when unreadable */
	long long pid, sample_us, aggr_us; /* -1 when absent or unreadable */
};

struct damon_thread {
	char comm[DAMON_WORD];            /* kdamond.N */
	long pid;
	uint64_t ns0, ns1;                /* CPU time at the window's start and end */
	bool gone;                        /* unreadable at the end: it exited */
	bool ticks;                       /* from utime+stime, not schedstat: 1/HZ resolution */
};

enum damon_sysfs { DAMON_SYSFS_ABSENT, DAMON_SYSFS_UNREADABLE, DAMON_SYSFS_READ };

struct damon_info {
	enum damon_sysfs sysfs;
	int sysfs_errno;                  /* why nr_kdamonds was unreadable (EACCES: not root) */
	int nr_kdamonds;                  /* as nr_kdamonds says (may exceed DAMON_MAX_KDAMONDS) */
	struct damon_kdamond kd[DAMON_MAX_KDAMONDS];
	struct damon_module mod[DAMON_NR_MODULES];
	int nr_threads;
	struct damon_thread th[DAMON_MAX_THREADS];
	double window_ns;                 /* between the two CPU snapshots */
	uint64_t t0;
};

/* The configuration and the kdamond threads' CPU time at the window's start; root "" is "/". */
void damon_read(const char *root, struct damon_info *d);

/* The kdamond threads' CPU time at the window's end. */
void damon_sample_end(const char *root, struct damon_info *d);

/* The tune block's DAMON lines. */
void damon_print(FILE *fp, const struct damon_info *d);

#endif
