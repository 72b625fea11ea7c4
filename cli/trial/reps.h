/* How many reps a cell runs (reps.c): fixed, or until its interval is tight. */
#ifndef COWBENCH_CLI_REPS_H
#define COWBENCH_CLI_REPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cowbench/adaptive.h>

struct cb_row;
#define CLI_DEFAULT_MAX_REPS 50 /* --target-ci without --max-reps */

struct cli_reps_opts {
	double target;   /* --target-ci as a fraction; 0: fixed --reps */
	long max_reps;   /* 0: CLI_DEFAULT_MAX_REPS once --target-ci is given */
	uint64_t max_ns; /* --max-time per cell; 0: none */
};

/* Bounds need a target; a target fills in the default rep bound. -1 after printing why. */
int cli_reps_check(struct cli_reps_opts *o, long reps);

struct cb_workload;

/* One cell's reps so far (resumed ones included) and the rule that stops them. */
struct cli_reps {
	const struct cb_workload *w;
	struct cb_adaptive rule;
	long fixed;        /* > 0: exactly this many reps */
	size_t cap;        /* the most reps the cell can run */
	size_t reps;       /* reps counted, failed ones included */
	double *v;         /* headline values of the good ones */
	size_t n;
	uint64_t start_ns; /* --max-time counts from here */
	const char *ratio_metric; /* matrix --baseline: the column whose paired ratio must be tight too */
	double *rv;        /* its values in the good reps that carry a round id ... */
	int64_t *rround;   /* ... and those round ids */
	size_t rn;
};

int cli_reps_begin(struct cli_reps *r, const struct cli_reps_opts *o, long reps, const struct cb_workload *w);
/* Count one rep (measured now or read back from a resumed file). */
void cli_reps_count(struct cli_reps *r, const struct cb_row *row);
enum cb_stop cli_reps_judge(const struct cli_reps *r);
/* Write why the cell stopped into the row's stop column (empty for fixed reps). */
void cli_reps_mark(const struct cli_reps *r, enum cb_stop s, struct cb_row *row);
void cli_reps_end(struct cli_reps *r);
/* The stop the bounds alone call for (the target left out): a cell that must keep pairing its rounds. */
enum cb_stop cli_reps_judge_bounds(const struct cli_reps *r);
/*
 * matrix --baseline: whether the ratio num / den over the rounds both ran
 * has an interval (the engine's, as summarize --baseline prints it)
 * within +-target; *pairs gets how many rounds paired. False while fewer
 * than the rule's least reps paired up.
 */
bool cli_reps_ratio_met(const struct cli_reps *num, const struct cli_reps *den, double target,
			size_t *pairs);

#endif
