#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/adaptive.h>
#include <cowbench/compare.h>
#include <cowbench/report.h>
#include <cowbench/summary.h>
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

/* v with its k lowest and k highest values pulled in to the nearest kept one (winsorized), into w. */
static void winsorize(const double *v, size_t n, size_t k, double *w, double *tmp)
{
	memcpy(tmp, v, n * sizeof(*tmp));
	qsort(tmp, n, sizeof(*tmp), cb_cmp_double);
	for (size_t i = 0; i < n; i++)
		w[i] = fmin(fmax(v[i], tmp[k]), tmp[n - 1 - k]);
}

/*
 * The delta method's relative half-width of centre(a) / centre(b), with a t
 * quantile; for trimmed means over the winsorized pairs (Tukey and McLaughlin's
 * standard error). It is cheap, so the bootstrap runs only once this one is
 * tight; asking both keeps small samples honest: a percentile bootstrap of
 * 20 pairs is narrower than it should be, and stopping on a lucky one would
 * cover the true ratio in only about 77 % of seeded trials (85 % and up with both).
 */
static double delta_half_width(const double *a, const double *b, size_t n, enum cb_center c)
{
	size_t k = c == CB_CENTER_TRIMMED ? (size_t)(CB_TRIM_SHARE * (double)n) : 0;
	double *w = malloc(3 * n * sizeof(*w)), ca = cb_center_of(a, n, c), cb = cb_center_of(b, n, c), r, md = 0,
	       ss = 0, half = INFINITY;
	const double *wa = a, *wb = b;

	if (!w || !(ca > 0) || !(cb > 0) || n < 2 * k + 2) {
		free(w);
		return INFINITY;
	}
	if (k) {
		winsorize(a, n, k, w, w + 2 * n);
		winsorize(b, n, k, w + n, w + 2 * n);
		wa = w;
		wb = w + n;
	}
	r = ca / cb;
	for (size_t i = 0; i < n; i++)
		md += (wa[i] - r * wb[i]) / (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (wa[i] - r * wb[i] - md) * (wa[i] - r * wb[i] - md);
	half = cb_t_quantile(0.975, (double)(n - 2 * k - 1)) * sqrt(ss / (double)(n - 1) / (double)n) /
	       (1 - 2 * (double)k / (double)n) / cb / r;
	free(w);
	return half;
}

bool cb_adaptive_ratio_met(const struct cb_round_values *num, const struct cb_round_values *den, enum cb_center c,
			   double target, size_t min_pairs, uint64_t seed, size_t *pairs)
{
	size_t cap = num->n ? num->n : 1, n;
	double *a = malloc(cap * sizeof(*a)), *b = malloc(cap * sizeof(*b)), ratio, lo, hi;
	bool met = false;

	n = a && b ? round_pairs(num, den, a, b) : 0;
	*pairs = n;
	if (n >= min_pairs && n >= 3 && delta_half_width(a, b, n, c) <= target &&
	    cb_boot_ratio_ci_paired(a, b, n, c, 0.95, CB_BOOTSTRAP_RESAMPLES, seed, &ratio, &lo, &hi) == 0 &&
	    ratio > 0 && isfinite(lo) && isfinite(hi))
		met = (ratio - lo) / ratio <= target && (hi - ratio) / ratio <= target;
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
