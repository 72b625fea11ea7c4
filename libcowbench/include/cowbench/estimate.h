#ifndef COWBENCH_ESTIMATE_H
#define COWBENCH_ESTIMATE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The statistics engine: the one method for each number cowbench prints
 * (docs/reference.md "Statistics" says why these and what they cover).
 *
 * - A sample's centre and interval (cb_estimate): the Hodges-Lehmann
 *   estimate on log values (the median of the Walsh averages, exp'd back),
 *   with the exact distribution-free interval from the Wilcoxon signed-rank
 *   distribution. Raw scale when a value is <= 0 (counts that can be 0).
 * - A change between two samples (cb_estimate_change), a ratio between two
 *   cells and a change between two files alike: the two-sample
 *   Hodges-Lehmann ratio (the median of all pairwise log differences,
 *   exp'd back) with the exact interval from the Mann-Whitney distribution
 *   (Lehmann; Bauer 1972), and the p-value of the Mann-Whitney U test.
 *   A raw-scale difference instead when a value is <= 0.
 *
 * Intervals are order statistics, so the level is a step function of n:
 * each interval is the narrowest whose exact level is at least the one
 * asked for, or the widest there is when n cannot reach it (one sample of
 * 5: [min, max] at 93.75 %); `level` says which. Nothing is random.
 */

/** One sample's centre and interval. */
struct cb_estimate {
	size_t n;
	double centre;  /* Hodges-Lehmann pseudo-median (on logs: a geometric one) */
	double lo, hi;  /* the interval; NAN for n < 2 */
	double level;   /* its exact coverage (0.9375 at n = 5); NAN for n < 2 */
	bool log_scale; /* computed on logs (every value > 0); false: on the values themselves */
};

/** Estimate v[0..n) at level conf (e.g. 0.95). -EINVAL when n is 0 or conf is not in (0, 1); -ENOMEM. */
int cb_estimate(const double *v, size_t n, double conf, struct cb_estimate *out);

/** Two-sided Mann-Whitney U test (Wilcoxon rank-sum) of samples a and b. */
struct cb_mwu {
	double u;   /* U of sample a: pairs (a_i, b_j) with a_i > b_j, ties counting 1/2 */
	double p;   /* two-sided p-value */
	bool exact; /* p from the exact null distribution (no ties, na * nb <= CB_MWU_EXACT_MAX) */
};

#define CB_MWU_EXACT_MAX 2500 /* na * nb up to which the exact distribution is computed */

/**
 * Exact p when there are no ties and the samples are small enough, else
 * the normal approximation with tie correction and continuity correction.
 * -EINVAL when a sample is empty; -ENOMEM.
 */
int cb_mann_whitney(const double *a, size_t na, const double *b, size_t nb, struct cb_mwu *out);

/** The smallest two-sided p an exact test of na and nb values can give (2 / C(na+nb, na)). */
double cb_mwu_min_p(size_t na, size_t nb);

/** The fewest values per side with which the U test can give p < alpha (4 at 0.05). */
size_t cb_test_min_n(double alpha);

/** A change from old to new. */
struct cb_change {
	size_t n_old, n_new;
	bool ratio;            /* est, lo, hi are ratios new/old (every value > 0); false: differences new - old */
	double est, lo, hi;    /* Hodges-Lehmann shift and its interval (NAN bounds when both sides have 1 value) */
	double level;          /* the interval's exact coverage */
	double p;              /* Mann-Whitney U, two-sided */
	bool exact;            /* p is exact */
	double spread;         /* pooled standard deviation of the logs (ratio) or of the values: for cb_n_to_decide */
};

/** Compare old[0..n_old) with new_[0..n_new) at level conf. -EINVAL when a side is empty; -ENOMEM. */
int cb_estimate_change(const double *old, size_t n_old, const double *new_, size_t n_new, double conf,
		       struct cb_change *out);

/**
 * Values per side with which the interval of a change like c, with c's
 * spread, would lie beyond the minimum effect: for a ratio, outside
 * [1 - threshold, 1 + threshold]; for a difference, beyond +-floor. From
 * the normal approximation of the Hodges-Lehmann interval (its efficiency
 * 3/pi relative to the mean). 0 when the estimate itself is inside the
 * minimum effect or nothing can be said (no spread).
 */
size_t cb_n_to_decide(const struct cb_change *c, double threshold, double floor, double conf);

/**
 * Repetitions needed for the conf-level interval of the centre to have a
 * relative half-width of at most `half_width` (0.03 = +-3 %) for a sample
 * with coefficient of variation cv: ceil(z^2 cv^2 / h^2), at least 2
 * (pyperf's n = 4 * 1.96^2 * CV^2 / eps^2 with eps = 2h the full width).
 * 0 when the inputs are not finite and positive. A plan, not an interval.
 */
size_t cb_reps_needed(double cv, double half_width, double conf);

/* ---- verdicts over a set of changes ---- */

/*
 * Multiple comparisons: one compare or summarize prints dozens of rows, and
 * at alpha 0.05 one in twenty unchanged ones would look changed.
 * Benjamini-Hochberg (the default) keeps the expected share of false
 * discoveries among the rows called changed at alpha; Holm the chance of any.
 */
enum cb_p_adjust { CB_ADJUST_BH = 0, CB_ADJUST_HOLM, CB_ADJUST_NONE };

/** "bh", "holm", "none"; and back (-EINVAL for another name). */
const char *cb_p_adjust_name(enum cb_p_adjust m);
int cb_p_adjust_parse(const char *text, enum cb_p_adjust *out);

/**
 * Adjusted p-values of p[0..n) by method m into adj[0..n) (adj may be p).
 * A NAN p is no comparison: it stays NAN and does not count in n.
 * -EINVAL on an unknown method; -ENOMEM.
 */
int cb_p_adjust(const double *p, size_t n, enum cb_p_adjust m, double *adj);

/*
 * The smallest absolute change of a count metric (faults, cow_copies: an
 * integer column that is not a time) worth a verdict. Reps inside one
 * process share its address-space layout, so a count that layout moves
 * (the no-fork fault count is 1, 2 or 3) differs between two runs by a few
 * events with every rep agreeing: the test then sees complete separation
 * and a tiny p. 8 events is four times the layout's +-2.
 */
#define CB_COUNT_FLOOR 8.0

/** Whether a result column is a count (an integer column that is neither a time nor an identity). */
bool cb_metric_is_count(const char *column);

/**
 * Text of a ratio with its interval, the one spelling every command, plot
 * and report prints: "608x [412x, 673x]", "1.23x [1.11x, 1.35x]"; each
 * factor as cb_fmt_ratio (cowbench/output.h) writes it; just "0.981x" when
 * the interval is not finite or reads as the point itself ("4097x").
 */
void cb_ratio_text(char *buf, size_t len, double r, double lo, double hi);

#endif
