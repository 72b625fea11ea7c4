#ifndef COWBENCH_TOUCH_H
#define COWBENCH_TOUCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cowbench/clock.h>
#include <cowbench/params.h>

/*
 * The fork-and-touch primitive: map an anonymous private region, populate
 * every page, fork, and let one side write one word per page in a given
 * order while the other side keeps the snapshot; every first write is
 * timed on its own.
 */

enum cb_writer {
	CB_WRITER_CHILD = 0, /* the child writes, the parent keeps the snapshot */
	CB_WRITER_PARENT,    /* the parent writes, the child keeps the snapshot */
};

const char *cb_writer_name(enum cb_writer w);
int cb_writer_parse(const char *s, enum cb_writer *out);

/*
 * How the writer's pages stop being shared (--break). fault: each first
 * write traps and the kernel copies that page (the COW write fault).
 * populate: one madvise(MADV_POPULATE_WRITE) over the whole region first
 * (the same in-kernel copy path, no user trap per page), then the writes
 * land on private pages. Together with fork=0 they give a COW write's
 * three native unit costs: fault, trap-free copy, private write.
 */
enum cb_break {
	CB_BREAK_FAULT = 0,
	CB_BREAK_POPULATE,
};

const char *cb_break_name(enum cb_break b);
int cb_break_parse(const char *s, enum cb_break *out);

/* Pages [first, first + count) of the region: one MADV_POPULATE_WRITE call of --break=populate. */
struct cb_page_run {
	size_t first;
	size_t count;
};

/* Who is who during one touch, as the hooks see it. */
struct cb_touch_sides {
	pid_t writer;      /* the writing process */
	pid_t writer_tid;  /* the thread that writes */
	pid_t snapshot;    /* the side keeping the snapshot; 0 when there is none (no fork) */
	void *region;      /* the region's address in the writer; NULL while not mapped yet */
	size_t pages;
};

/*
 * Optional probes around the loop. before() runs once the writer is ready
 * and not yet released; after() once it finished writing, while both sides
 * are still alive (a child writer is held until after() returns). Neither
 * runs inside the timed loop.
 */
struct cb_touch_hooks {
	void (*before)(void *arg, const struct cb_touch_sides *s);
	void (*after)(void *arg, const struct cb_touch_sides *s);
	void *arg;
};

struct cb_touch_params {
	uint64_t size;              /* bytes, a whole number of pages */
	size_t page_size;
	enum cb_writer writer;
	bool fork;                  /* false: the --no-fork baseline (pages already private) */
	enum cb_break brk;          /* populate: one MADV_POPULATE_WRITE inside the timed loop, before the writes */
	/* populate: NULL, one call over the whole region; else one call per run, in this order (replay) */
	const struct cb_page_run *break_runs;
	size_t break_nruns;
	/* Page type and NUMA placement, mapped by cb_region_map; NULL: 4 KiB pages, no policy. */
	const struct cb_wl_params *region;
	int cpu;                    /* pin the writer to this CPU; -1: no pinning */
	const struct cb_clock *clock;
	const size_t *order;        /* page indices in write order */
	size_t count;               /* entries in order[] */
	/* NULL, or per write: ns after the first write at which it is due; the writer waits for it (replay --gaps) */
	const uint64_t *at_ns;
	/* Test aid: when > 0, the child kills itself with this signal before writing. */
	int inject_child_signal;
	const struct cb_touch_hooks *hooks; /* NULL: no probes */
};

#define CB_STATUS_LEN 48

struct cb_touch_result {
	int err;                    /* 0 or a negative code */
	char status[CB_STATUS_LEN]; /* "ok", "child-killed:SIGKILL", "child-exit:3", "error:..." */
	uint64_t elapsed_ns;        /* wall time of the whole touch loop (with --break=populate, the madvise too) */
	int64_t break_ns;           /* --break=populate: the madvise alone (ns); -1 for fault */
	int64_t first_ns;           /* the loop's start to the end of its first write (ns; in elapsed_ns); -1: not known */
	long minflt, majflt;        /* writer's faults during the loop (getrusage delta) */
	long nivcsw;                /* writer's involuntary context switches, same window */
	long cpu, migrations;       /* CPU the loop ended on; migrations during it (-1: not known) */
	int64_t run_delay_ns;       /* writer's time waiting for a CPU during the loop (-1: not known) */
	double *lat_ns;             /* count per-write latencies (malloc'd; cb_touch_result_free) */
	size_t count;
	int64_t huge_bytes;         /* region bytes on huge pages once populated; -1: not known */
};

/**
 * Run the primitive once. Every child it makes is reaped before it returns,
 * on every path. A child that dies is reported in res->status with
 * res->err == CB_ECHILD; other failures return their negative errno.
 */
int cb_touch_run(const struct cb_touch_params *p, struct cb_touch_result *res);
void cb_touch_result_free(struct cb_touch_result *res);

/**
 * Median time (ns) to memcpy one page between two private, populated
 * buffers whose destination was written before (a warm copy): what the
 * copy inside a COW fault costs at best. Uses `pages` distinct
 * source/destination pages (at least 1); -1 when out of memory.
 */
double cb_memcpy_page_ns(const struct cb_clock *clk, size_t page_size, size_t pages);

/** A page copy's two costs (ns, medians): into a page written before, and into a freshly populated one. */
struct cb_memcpy_cost {
	double warm_ns; /* the copy itself (cb_memcpy_page_ns) */
	double cold_ns; /* the first user write to a page the kernel just populated: on a lazily backed
			   VM the host's first-touch trap is in it, as it is in every COW copy's new page */
};
/** Both costs over `pages` pages; 0 or -ENOMEM. */
int cb_memcpy_page_cost(const struct cb_clock *clk, size_t page_size, size_t pages, struct cb_memcpy_cost *out);

#endif
