#ifndef COWBENCH_ADAPTIVE_H
#define COWBENCH_ADAPTIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cowbench/compare.h>

/*
 * Adaptive repetitions: a cell keeps running reps until the engine's 95 %
 * interval (cb_estimate) of its headline metric (the workload's `headline` column)
 * is as tight as asked, or a bound is hit. The rule only looks at the
 * values it is given, so resumed rows count like fresh ones.
 */

struct cb_workload;
struct cb_row;

enum cb_stop {
	CB_STOP_NO,       /* keep going */
	CB_STOP_TARGET,   /* the interval's relative half-width is at most the target */
	CB_STOP_MAX_REPS, /* the rep bound was hit first */
	CB_STOP_MAX_TIME, /* the time bound was hit first */
};

/* Fewer values than this are never judged: an interval of 2 values that happen to agree is luck. */
#define CB_ADAPTIVE_MIN_REPS 5

struct cb_adaptive {
	double target;     /* relative half-width of the centre's interval (0.02 = +-2 %) */
	double conf;       /* level of that interval (0.95) */
	size_t min_reps;   /* judge from this many values on (at least 3; CB_ADAPTIVE_MIN_REPS by default) */
	size_t max_reps;   /* stop at this many reps (0: no bound) */
	uint64_t max_ns;   /* stop once the cell has run this long and has min_reps reps (0: no bound) */
};

/**
 * Whether a cell with headline values v[0..n) (its good reps), `reps`
 * reps in all (failed ones included) and `elapsed_ns` of running should
 * stop, and why. The target is checked first: a cell that meets it on its
 * last allowed rep stopped on the target.
 */
enum cb_stop cb_adaptive_stop(const struct cb_adaptive *a, const double *v, size_t n, size_t reps,
			      uint64_t elapsed_ns);

/* One cell's values of a metric in the reps that carry a round id (matrix --order), and those ids. */
struct cb_round_values {
	const double *v;
	const int64_t *round;
	size_t n;
};

/**
 * Whether the ratio num / den over the values of the rounds both ran has
 * an interval (cb_estimate_change, as summarize --baseline prints it) whose
 * both sides lie within +-target of the ratio. *pairs gets the number of
 * rounds both ran: 0 when a round id repeats on one side (rows of two
 * runs). False with fewer than min_pairs of them.
 */
bool cb_adaptive_ratio_met(const struct cb_round_values *num, const struct cb_round_values *den, double target,
			   size_t min_pairs, size_t *pairs);

/** "", "target", "max-reps", "max-time" (the `stop` column). */
const char *cb_stop_name(enum cb_stop s);

/** The column whose interval decides (the workload's headline; lat_p50_ns for page-order workloads). */
const char *cb_workload_headline(const struct cb_workload *w);

/** A row's headline value; false when the row has none (a failed rep). */
bool cb_row_headline(const struct cb_row *row, const struct cb_workload *w, double *out);

#endif
