#ifndef COWBENCH_CLI_GUEST_KERNEL_AXIS_H
#define COWBENCH_CLI_GUEST_KERNEL_AXIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * The `kernel` axis (kernel_axis.c): `host` runs here; `stock`, `patched`
 * (kernel/build.sh's 6.12 images) and a bzImage path run in a QEMU guest,
 * booted once per kernel value, whose rows come back over a serial port of
 * their own into the host's one output file. Shared by cowbench matrix
 * (the kernel axis) and cowbench run --kernel=K (a matrix of one cell);
 * it knows neither command.
 */

#define MK_AXIS "kernel"

struct cb_cell;
struct cb_cells;
struct cb_matrix;
struct cb_report;
struct cb_run_spec;

/* Axes that need the pre-copy patch: they collapse on kernels without it. */
bool mk_is_axis(const char *name);
/* Whether the cell runs in a guest (its kernel is not host). */
bool mk_cell_in_guest(const struct cb_cell *c);
/* Every kernel value is host, stock, patched or an existing file; -1 after printing why. */
int mk_check_values(const struct cb_cells *cells);
/*
 * Nothing heavy without asking: a guest kernel not yet built or QEMU's
 * packages missing need allowed (--build) or a yes on a terminal; else
 * -1 after one line naming the command that would do it, and its cost.
 */
int mk_check_builds(const struct cb_cells *cells, bool allowed);

/* What collapsed where, for notes and --dry-run. */
struct mk_collapsed {
	char line[8][200];
	size_t n;
};
/*
 * Drop from each cell the axes that do not apply to it: precopy and
 * precopy-depth on a kernel without the patch, precopy-depth where precopy
 * is not 1 (fixed depth); cells left with the same key become one.
 */
void mk_collapse(struct cb_cells *cells, struct mk_collapsed *out);

/* The guest part of a matrix run: the plan's cells, specs and done reps. */
struct mk_run {
	const struct cb_cells *cells;
	const struct cb_run_spec *spec; /* per cell */
	unsigned char *done;            /* cells x reps: set as rows come back */
	long reps, warmup;
	int order;                      /* enum cb_order_mode (cowbench/order.h) */
	uint64_t seed;                  /* of --order=shuffle */
	struct cb_report *report;
	bool progress;                  /* a progress line on stderr */
	void (*row_done)(void *arg);    /* after each row written (NULL: none): the interrupt note's count */
	void *row_arg;
};

/* --dry-run: the comparison sets of two cells or more (set_of[]: cowbench/order.h), as --order runs them. */
void mk_print_sets(const struct cb_cells *cells, const size_t *set_of, size_t nsets, int order, uint64_t seed,
		   FILE *fp);
/* --dry-run: each guest kernel's boot and its interleaved comparison sets. */
void mk_print_boots(const struct mk_run *r, const struct mk_collapsed *col, FILE *fp);
/*
 * Boot each guest kernel of the plan once and run its pending reps there.
 * 0; 1 when a rep or a guest failed (its rows say how); -1 when the
 * output could not be written (after printing why).
 */
int mk_run_guests(struct mk_run *r);

/*
 * In the guest: `cowbench matrix --plan FILE`, FILE holding "REP[:ROUND] KEY"
 * lines in the order to run (ROUND: the round id its row carries, 0: none).
 * Each distinct key becomes a group of m; the plan gives the order. -1
 * after printing why (mk_plan_free frees what was read all the same).
 */
struct mk_plan {
	char **keys;
	long *reps, *rounds;
	size_t n;
};
int mk_plan_load(const char *path, struct cb_matrix *m, struct mk_plan *plan);
void mk_plan_free(struct mk_plan *plan);

#endif
