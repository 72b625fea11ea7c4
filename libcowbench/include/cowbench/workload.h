#ifndef COWBENCH_WORKLOAD_H
#define COWBENCH_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cowbench/option.h>

/*
 * A workload is one file under workloads/ that defines one
 * `const struct cb_workload` with designated initialisers, and one line
 * CB_WORKLOAD(NAME) in workloads/workloads.def: the build compiles
 * workloads/NAME.c and the line generates the table. A workload either
 * says in which order the fork-and-touch primitive writes the pages
 * (page_order) or drives its own measurement (run). Its options are a
 * table over its own struct (cowbench/option.h): the CLI, the matrix,
 * --help and the rows' `options` column all come from that table.
 */

#define CB_WORKLOAD_ABI 2

struct cb_page_run; /* cowbench/touch.h */

/** What a page_order hook is told. */
struct cb_order_ctx {
	size_t npages;               /* pages in the region */
	uint64_t seed;               /* --seed, for workloads that randomise */
	const struct cb_wl_opts *opts; /* the workload's parsed options (its own struct) */
	int writer;                  /* the run's enum cb_writer (touch.h): who writes after the fork */
	/*
	 * Optional pacing (replay --gaps): room for npages entries. A workload that keeps recorded times fills
	 * at_ns[i], the nanoseconds after the first write at which write i is due (non-decreasing), and sets
	 * *paced; the writer then waits for each. Others leave both alone.
	 */
	uint64_t *at_ns;
	bool *paced;
	/*
	 * Optional (--break=populate; NULL otherwise): room for npages runs. A workload that knows which pages
	 * it will write as a program would (replay: per recorded mapping) fills break_runs with the ranges to
	 * populate, one MADV_POPULATE_WRITE each, and sets *break_nruns; others leave both alone (one call over
	 * the whole region).
	 */
	struct cb_page_run *break_runs;
	size_t *break_nruns;
};

/** The workload's options struct inside a cb_wl_opts, e.g. CB_WL_OPTS(ctx->opts, struct stride_opts). */
#define CB_WL_OPTS(o, type) ((const type *)(const void *)(o)->bytes)

/** P % of npages pages, rounded down but at least 1: how many pages a --touch=P workload writes. */
static inline size_t cb_pages_percent(size_t npages, unsigned percent)
{
	size_t n = npages / 100 * percent + npages % 100 * percent / 100;

	return n ? n : 1;
}

struct cb_run_spec;
struct cb_row;

/** Workload flags. */
#define CB_WL_USES_SEED 0x1u /* the order depends on --seed */
#define CB_WL_NEEDS_INPUT 0x2u /* runs only with an input option given (replay's --trace): loops over
				  the table without options skip it */

struct cb_workload {
	unsigned abi;      /* CB_WORKLOAD_ABI: the table check rejects other values */
	const char *name;  /* [a-z0-9_-]+, unique */
	const char *help;  /* one line, no trailing period */
	unsigned flags;    /* CB_WL_* */
	/**
	 * Fill order[] (room for ctx->npages entries) with page indices in
	 * write order; return how many (1..npages) or a negative errno.
	 */
	long (*page_order)(const struct cb_order_ctx *ctx, size_t *order);
	/* Self-driven workloads (NULL for page-order ones): one rep per call, into row. */
	int (*run)(const struct cb_run_spec *spec, struct cb_row *row);
	/**
	 * Optional: check the spec (size, options, region) before anything runs;
	 * return 0, or a negative errno with a one-line reason in why[] (the CLI
	 * exits 2). Runs for every workload, after the generic checks.
	 */
	int (*check)(const struct cb_run_spec *spec, char *why, size_t len);
	/* Optional: the workload's options, a table ending with { 0 } over a struct of options_size bytes. */
	const struct cb_option *options;
	size_t options_size;
	/* Optional: --size when none is given ("1G"); when the check refuses it, the usual 64M. */
	const char *default_size;
	/*
	 * Optional: the region the workload's input needs (replay: its trace's
	 * mappings), in *bytes; without --size the region is that size (it wins
	 * over default_size). 0, or a negative errno with a reason in why[].
	 */
	int (*input_size)(const struct cb_run_spec *spec, uint64_t *bytes, char *why, size_t len);
	/*
	 * Optional: the axes of this workload's group in the default matrix
	 * ("size=64M snapshot=fork,uffd-wp,memcpy"), NULL for none.
	 */
	const char *matrix;
	/*
	 * Optional: the numeric column that is this workload's answer, whose
	 * interval adaptive repetitions (--target-ci) tighten; NULL: lat_p50_ns
	 * for page-order workloads, elapsed_ns otherwise (cowbench/adaptive.h).
	 */
	const char *headline;
};

/** Number of registered workloads. */
size_t cb_workload_count(void);
/** The i-th registered workload (NULL past the end). */
const struct cb_workload *cb_workload_at(size_t i);
/** Look a workload up by name; NULL when unknown. */
const struct cb_workload *cb_workload_find(const char *name);
/** Comma-separated list of every name, for error messages. */
const char *cb_workload_names(void);

/**
 * Check one entry; on failure returns CB_EREGISTRY and writes a reason
 * that names the entry into why[].
 */
int cb_workload_check(const struct cb_workload *w, char *why, size_t len);
/** Check a whole table (every entry, plus unique names). */
int cb_workload_table_check(const struct cb_workload *const *table, size_t n, char *why, size_t len);
/** Check the built-in table. */
int cb_registry_check(char *why, size_t len);

#endif
