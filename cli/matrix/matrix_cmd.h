#ifndef COWBENCH_CLI_MATRIX_CMD_H
#define COWBENCH_CLI_MATRIX_CMD_H

/*
 * cowbench matrix, in three steps (one file each): its arguments
 * (matrix_args.c: options, axes, the matrix file), the plan
 * (matrix_plan.c: cells, their specs, what a resumed file holds) and the
 * running (matrix_run.c: the host's cells in --order, then the guests').
 * An axis is any `cowbench run` option (trial/run_options.h).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cowbench/cowbench.h>
#include <cowbench/matrix.h>
#include <cowbench/order.h>

#include "guest/kernel_axis.h"
#include "trial/reps.h"
#include "trial/run_options.h"

struct matrix_opts {
	struct cb_matrix m;
	const char *file;
	long reps, warmup;          /* -1: from the file, else the default */
	bool shuffle, dry_run, any_axis, quiet;
	uint64_t shuffle_seed;
	bool seed_given;
	unsigned shard_i, shard_n;
	const char *resume, *output;
	enum cb_format format;
	const char *columns; /* --columns: the table's */
	bool force;
	bool build;       /* --build: guest kernels and QEMU's packages may be built and installed */
	int out_fd;       /* the results file, opened and locked before it is read or written; -1: none */
	bool out_created; /* this run created it: removed again if nothing gets measured */
	const char *plan;           /* in a guest: run these (rep, cell) pairs in order (guest/kernel_axis.h) */
	struct mk_plan plan_lines;
	struct mk_collapsed collapsed;
	struct cb_reps_opts adaptive; /* --target-ci, --max-reps, --max-time */
	long cap;                      /* the most reps a cell can run: --reps, or --max-reps when adaptive */
	enum cb_order_mode order;      /* --order (cowbench/order.h) */
	bool order_given, order_seeded;
	uint64_t order_seed;
	const char *baseline;          /* --baseline NAME=VALUE (with --target-ci) */
	char base_name[64], base_value[64];
	const char *baseline_metric;   /* --baseline-metric; NULL: each cell's headline */
	int typed_argc;                /* the command line as typed (the parser moves the operands): */
	char **typed_argv;             /* the interrupt note's "continue with" repeats it */
};


/* ---- the arguments (matrix_args.c); each -1 after printing why ---- */

/* Options and the matrix file in any order ("matrix FILE --shard=1/8 --output part-1.csv"). */
int matrix_parse_args(int argc, char **argv, struct matrix_opts *o);
/* The default matrix: [cow] and each workload's own group. */
int matrix_set_default(struct matrix_opts *o);
/* The matrix file, with every axis given as an option applied to each of its groups. */
int matrix_load_file(struct matrix_opts *o);
/* --plan FILE (inside a guest): the host's cells and reps. */
int matrix_load_plan(struct matrix_opts *o);
/* Options that do not go together, and the defaults and seeds the rest leave open. */
int matrix_check_combination(struct matrix_opts *o);
/* Aliases, names, canonical order: a matrix every cell of which is a run. */
int matrix_resolve_axes(struct matrix_opts *o);

/* ---- the plan (matrix_plan.c): cells, their options, and what a resumed file already holds ---- */

struct matrix_plan {
	struct cb_cells cells;
	struct run_opts **opts;     /* per cell */
	struct cb_run_spec *spec;   /* per cell */
	unsigned char *done;        /* per cell x rep (cap of them): the rep is already in the resumed file */
	struct cb_reps *reps;      /* per cell: its reps so far and the rule that stops them */
	unsigned char *stopped;     /* per cell: the resumed file holds the row that stopped it */
	bool *ev_done;              /* per cell x evidence rep (CB_EVIDENCE_REPS): the same */
	struct run_spec_ctx ctx;        /* what making the cells' specs reads once */
	size_t todo_reps;           /* measured reps still to run */
	size_t resumed;             /* reps the resumed file already held */
	int64_t last_round;         /* the highest round id the resumed file holds (0: none) */
	size_t *partner;            /* per cell: its --baseline cell (SIZE_MAX: none, or it is one) */
};

/* Every cell and its spec, each checked before anything runs. */
int matrix_plan_build(struct matrix_opts *o, struct matrix_plan *p);
void matrix_plan_free(struct matrix_plan *p);
/* --resume: the reps the file holds are done (a half-written last row dropped). */
int matrix_plan_resume(const struct matrix_opts *o, struct matrix_plan *p);
/* --baseline NAME=VALUE: each host cell's partner in its comparison set. */
int matrix_pair_baselines(const struct matrix_opts *o, struct matrix_plan *p);
/* --target-ci runs on the host only. */
int matrix_adaptive_on_host_only(const struct matrix_opts *o, const struct matrix_plan *p);
/* --dry-run: the cells, the reps still to run, the comparison sets and the guests' boots. */
void matrix_plan_print(const struct matrix_opts *o, const struct matrix_plan *p);
/* Reps cell c may still run (adaptive: at most this many); evidence reps it still needs. */
size_t matrix_cell_todo(const struct matrix_plan *p, size_t c, long reps);
size_t matrix_cell_evidence_todo(const struct matrix_plan *p, size_t c);
/* The comparison sets of the cells that run on the host (guest cells: CB_ORDER_NO_SET); -ENOMEM. */
long matrix_host_sets(const struct matrix_plan *p, size_t *set_of);

/* ---- running (matrix_run.c) ---- */

/* The results file, opened and locked before --resume reads it. */
int matrix_lock_results(struct matrix_opts *o);
/* Run the plan: rows to the results file or stdout. The worst row's exit code. */
int matrix_run_plan(struct matrix_opts *o, struct matrix_plan *p);

#endif
