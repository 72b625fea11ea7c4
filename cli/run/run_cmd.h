/*
 * cowbench run's own parts: --explain (explain.c), the closing summary on a
 * terminal (closing.c) and --kernel's one cell in a guest (run_guest.c).
 */
#ifndef COWBENCH_CLI_RUN_CMD_H
#define COWBENCH_CLI_RUN_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cowbench/matrix.h>
#include <cowbench/units.h>

#include "guest/kernel_axis.h"
#include "trial/run_options.h"

struct cb_report;
struct cb_row;
struct cb_run_spec;

/* cowbench run --explain (explain.c): rows in, a short summary for people out (stderr). */
struct cli_explain;
struct cli_explain *cli_explain_new(void);
void cli_explain_add(struct cli_explain *ex, const struct cb_row *row);
void cli_explain_print(const struct cli_explain *ex, FILE *fp);
void cli_explain_free(struct cli_explain *ex);

/* The closing summary of cowbench run on a terminal (closing.c). */
struct cli_closing;
struct cli_closing *cli_closing_new(void);
void cli_closing_add(struct cli_closing *cl, const struct cb_row *row);
/* One unrecorded --no-fork rep of the same writes: the reference the summary compares with. */
void cli_closing_reference(struct cli_closing *cl, const struct cb_run_spec *spec);
/* Whether that reference applies: a page-order workload's writes after a fork (not fork, snapshot, multi). */
bool cli_closing_wants_reference(const struct cli_closing *cl, const struct cb_run_spec *spec);
void cli_closing_print(const struct cli_closing *cl, FILE *fp);
void cli_closing_free(struct cli_closing *cl);

/* The closing summary's warnings (closing_warn.c), where hyperfine warns. */
#define CLI_TIMER_FLOOR_READS 3   /* a time under this many timer reads' cost is mostly the timer */
#define CLI_WIDE_INTERVAL 0.10    /* a 95 % interval wider than +-10 % of the mean is worth a warning */
struct cli_noise_input {
	const struct cb_row *rows; /* the run's ok timed reps */
	size_t n;
	const char *column;        /* the headline column: lat_p50_ns, fork_ns, slowdown */
	const char *what;          /* how the summary names it: "COW write p50" */
	bool time;                 /* the column is in ns */
	double timer_ns;           /* the clock's read cost (median of two back-to-back reads); 0: unknown */
};
/** Whether a time is within CLI_TIMER_FLOOR_READS reads of the timer's cost. */
bool cli_at_timer_floor(double v_ns, double timer_ns);
/** One line per warning (timer floor, outliers, a wide interval), each with its likely cause. */
void cli_noise_warnings(const struct cli_noise_input *in, FILE *fp, enum cb_units_style st);

/* run --kernel=K (run_guest.c): the one cell, its guest and the reps it still needs. */
struct run_guest {
	struct cb_matrix m;
	struct cb_cells cells;   /* one: kernel=K and the options given */
	struct mk_collapsed collapsed;
	unsigned char *done;     /* per rep: its row came back */
};
/* Check the options a guest can run and make its cell; -1 after printing why (run_guest_free all the same). */
int run_guest_plan(const struct run_opts *o, const struct run_given *given, struct run_guest *g);
/* Boot K and run the reps there, rows into rep: 0, 1 (a rep or the guest failed) or EXIT_RUN_FAILED. */
int run_guest_reps(const struct run_opts *o, struct run_guest *g, const struct cb_run_spec *spec,
		   struct cb_report *rep);
void run_guest_free(struct run_guest *g);

#endif
