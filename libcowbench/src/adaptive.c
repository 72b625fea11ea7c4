#include <math.h>
#include <stddef.h>

#include <cowbench/adaptive.h>
#include <cowbench/compare.h>
#include <cowbench/report.h>
#include <cowbench/results.h>
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
