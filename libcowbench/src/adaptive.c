#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/adaptive.h>
#include <cowbench/compare.h>
#include <cowbench/report.h>
#include <cowbench/repstats.h>
#include <cowbench/results.h>
#include <cowbench/stats.h>
#include <cowbench/workload.h>

static bool target_met(const struct cb_adaptive *a, const double *v, size_t n)
{
	struct cb_noise_verdict nv;
	size_t min = a->min_reps < 3 ? 3 : a->min_reps;

	if (n < min || cb_noise_judge(v, n, a->target, a->conf > 0 ? a->conf : 0.95, &nv) < 0)
		return false;
	return isfinite(nv.rel_half_width) && nv.rel_half_width <= a->target;
}

enum cb_stop cb_adaptive_stop(const struct cb_adaptive *a, const double *v, size_t n, size_t reps,
			      uint64_t elapsed_ns)
{
	if (a->target > 0 && target_met(a, v, n))
		return CB_STOP_TARGET;
	if (a->max_reps && reps >= a->max_reps)
		return CB_STOP_MAX_REPS;
	if (a->max_ns && elapsed_ns >= a->max_ns && reps >= a->min_reps) /* --reps is the least, always */
		return CB_STOP_MAX_TIME;
	return CB_STOP_NO;
}

/* num's and den's values of the rounds both ran, in num's order; 0 when a round id repeats (no pairing). */
static size_t round_pairs(const struct cb_round_values *num, const struct cb_round_values *den, double *a, double *b)
{
	size_t k = 0;

	for (size_t i = 0; i < num->n; i++) {
		long at = -1;

		for (size_t j = 0; j < den->n; j++)
			if (den->round[j] == num->round[i]) {
				if (at >= 0)
					return 0;
				at = (long)j;
			}
		for (size_t j = i + 1; j < num->n; j++)
			if (num->round[j] == num->round[i])
				return 0;
		if (at >= 0) {
			a[k] = num->v[i];
			b[k++] = den->v[at];
		}
	}
	return k;
}

/*
 * The engine's ratio over the rounds both ran (cb_estimate_change, as
 * summarize --baseline prints it) with both sides of its interval within
 * +-target of the ratio.
 */
bool cb_adaptive_ratio_met(const struct cb_round_values *num, const struct cb_round_values *den, double target,
			   size_t min_pairs, size_t *pairs)
{
	size_t cap = num->n ? num->n : 1, n;
	double *a = malloc(cap * sizeof(*a)), *b = malloc(cap * sizeof(*b));
	struct cb_change c;
	bool met = false;

	n = a && b ? round_pairs(num, den, a, b) : 0;
	*pairs = n;
	if (n >= min_pairs && n >= 3 && cb_estimate_change(b, n, a, n, 0.95, &c) == 0 && c.ratio && isfinite(c.lo) &&
	    isfinite(c.hi))
		met = (c.est - c.lo) / c.est <= target && (c.hi - c.est) / c.est <= target;
	free(a);
	free(b);
	return met;
}

const char *cb_stop_name(enum cb_stop s)
{
	switch (s) {
	case CB_STOP_TARGET:
		return "target";
	case CB_STOP_MAX_REPS:
		return "max-reps";
	case CB_STOP_MAX_TIME:
		return "max-time";
	default:
		return "";
	}
}

const char *cb_workload_headline(const struct cb_workload *w)
{
	if (w->headline)
		return w->headline;
	return w->page_order ? "lat_p50_ns" : "elapsed_ns";
}

bool cb_row_headline(const struct cb_row *row, const struct cb_workload *w, double *out)
{
	return cb_row_number(row, cb_workload_headline(w), out);
}
