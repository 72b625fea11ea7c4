#ifndef COWBENCH_WORKLOAD_H
#define COWBENCH_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

/*
 * A workload is one file under workloads/ that defines one
 * `const struct cb_workload` with designated initialisers; workloads.def
 * lists every workload once and generates the table. A workload either
 * says in which order the fork-and-touch primitive writes the pages
 * (page_order) or drives its own measurement (setup/run/teardown).
 */

#define CB_WORKLOAD_ABI 1

/** What a page_order hook is told. */
struct cb_order_ctx {
	size_t npages;  /* pages in the region */
	uint64_t seed;  /* --seed, for workloads that randomise */
};

struct cb_run_spec;
struct cb_row;

/** Workload flags. */
#define CB_WL_USES_SEED 0x1u /* the order depends on --seed */

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
	/* Self-driven workloads (NULL for page-order ones): one rep per run() call. */
	int (*setup)(const struct cb_run_spec *spec, void **state);
	int (*run)(void *state, const struct cb_run_spec *spec, struct cb_row *row);
	void (*teardown)(void *state);
	/** NULL when the workload can run here, else a one-line reason. */
	const char *(*unsupported)(void);
	/**
	 * Optional: check the spec's parameters before anything runs; return 0,
	 * or a negative errno with a one-line reason in why[] (the CLI exits 2).
	 */
	int (*check)(const struct cb_run_spec *spec, char *why, size_t len);
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
