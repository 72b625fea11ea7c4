#ifndef COWBENCH_COMPARE_H
#define COWBENCH_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Inference for benchmark samples: is a difference real or noise, how
 * sure are we of a central value, and how many repetitions would make it
 * sure enough. What `cowbench compare` and `bench_overhead` use.
 *
 * Everything random is seeded (splitmix64): the same input and seed give
 * the same interval on every machine.
 */

/** Two-sided Mann-Whitney U test (Wilcoxon rank-sum) of samples a and b. */
struct cb_mwu {
	double u;      /* U of sample a: pairs (a_i, b_j) with a_i > b_j, ties counting 1/2 */
	double p;      /* two-sided p-value */
	bool exact;    /* p from the exact null distribution (no ties, na * nb <= CB_MWU_EXACT_MAX) */
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

/*
 * CB_CENTER_TRIMMED: the mean of what is left once the lowest and the highest
 * CB_TRIM_SHARE of the values (rounded down) are set aside. Robust to a rep
 * the host stalled (a 99 us write among 6 us ones) yet as efficient as the
 * mean where there is none.
 */
enum cb_center { CB_CENTER_MEDIAN, CB_CENTER_MEAN, CB_CENTER_TRIMMED };
#define CB_TRIM_SHARE 0.1

/** "mean", "median", "trimmed"; and back (-EINVAL for another name). */
const char *cb_center_name(enum cb_center c);
int cb_center_parse(const char *text, enum cb_center *out);

/** Quantile p (0..1) of a sorted sample, interpolated between closest ranks (R type 7). */
double cb_quantile_sorted(const double *s, size_t n, double p);

/** Median (mean of the two middle values for even n), mean or trimmed mean of v[0..n); v is left unchanged. */
double cb_center_of(const double *v, size_t n, enum cb_center c);

/**
 * Percentile-bootstrap interval at level conf (e.g. 0.95) of the centre
 * of one sample, from `resamples` resamples. lo = hi = NAN for n < 2.
 */
int cb_boot_center_ci(const double *v, size_t n, enum cb_center c, double conf, size_t resamples, uint64_t seed,
		      double *lo, double *hi);

/**
 * centre(num) / centre(den) with its percentile-bootstrap interval
 * (each sample resampled on its own). lo = hi = NAN when both samples
 * have one value. -EINVAL when a sample is empty or centre(den) is 0.
 */
int cb_boot_ratio_ci(const double *num, size_t nn, const double *den, size_t nd, enum cb_center c, double conf,
		     size_t resamples, uint64_t seed, double *ratio, double *lo, double *hi);

/**
 * The same over n pairs measured side by side (num[i] with den[i], e.g. one
 * round of an interleaved matrix): the interval resamples whole pairs, so
 * drift both members of a pair saw cancels. lo = hi = NAN for n < 2.
 */
int cb_boot_ratio_ci_paired(const double *num, const double *den, size_t n, enum cb_center c, double conf,
			    size_t resamples, uint64_t seed, double *ratio, double *lo, double *hi);

/** Quantile of Student's t distribution with df degrees of freedom (0 < p < 1, df >= 1). */
double cb_t_quantile(double p, double df);

/** Student-t interval of the mean at level conf. NAN bounds for n < 2. */
int cb_t_mean_ci(const double *v, size_t n, double conf, double *mean, double *lo, double *hi);

/**
 * Repetitions needed for the conf-level interval of the mean to have a
 * relative half-width of at most `half_width` (0.03 = +-3 %) for a
 * sample with coefficient of variation cv: ceil(z^2 cv^2 / h^2), at least 2.
 * This is pyperf's n = 4 * 1.96^2 * CV^2 / eps^2 with eps = 2h the full width.
 * 0 when the inputs are not finite and positive.
 */
size_t cb_reps_needed(double cv, double half_width, double conf);

/**
 * Two-sided Wilcoxon signed-rank test of n pairs: the differences
 * b[i] - a[i], zeros dropped, ranked by size (mid-ranks for ties).
 */
struct cb_wsr {
	double w_plus; /* rank sum of the positive differences */
	size_t n;      /* non-zero differences */
	double p;      /* two-sided p-value (1 when every difference is 0) */
	bool exact;    /* p from the exact null distribution (no tied |differences|, n <= CB_WSR_EXACT_MAX) */
};

#define CB_WSR_EXACT_MAX 60 /* non-zero differences up to which the exact distribution is computed */

/** Exact p without ties among |b - a| for up to CB_WSR_EXACT_MAX pairs, else the normal approximation with tie and continuity corrections. -EINVAL when n is 0; -ENOMEM. */
int cb_wilcoxon_signed_rank(const double *a, const double *b, size_t n, struct cb_wsr *out);

/** The smallest two-sided p the test can give over n pairs: 2 / 2^n. */
double cb_wsr_min_p(size_t n);

/* ---- comparing two samples ---- */

struct cb_compare_opts {
	double alpha;     /* significance level (0.05) */
	double conf;      /* level of every interval (0.95) */
	size_t resamples; /* bootstrap resamples (2000) */
	uint64_t seed;
	/*
	 * The smallest change worth a verdict (0.05 = 5 %): a change is better
	 * or worse only when its whole interval lies beyond +-threshold.
	 */
	double threshold;
};

#define CB_COMPARE_DEFAULTS { .alpha = 0.05, .conf = 0.95, .resamples = 2000, .seed = 20261122u, .threshold = 0.05 }

/* Why cb_compare.reps_needed is what it is. */
enum cb_reps_basis {
	CB_REPS_NONE,     /* no estimate (no ratio, or no spread to go by) */
	CB_REPS_TEST_MIN, /* the fewest values with which the test can reach p < alpha at all */
	CB_REPS_CV,       /* pyperf's n from the observed spread and the effect beyond the threshold */
};

struct cb_compare {
	size_t n_old, n_new;
	double old_center, old_lo, old_hi; /* median of each side and its bootstrap interval */
	double new_center, new_lo, new_hi;
	/* median(new) / median(old), paired: the median of new/old per pair; bootstrap interval; NAN on a 0 */
	double ratio, ratio_lo, ratio_hi;
	struct cb_mwu test;  /* unpaired */
	struct cb_wsr wsr;   /* paired */
	bool paired;         /* cb_compare_paired: pairs of one round, so the test is the signed-rank one */
	double p;            /* the two-sided p of the test made */
	bool exact;          /* that p is exact */
	/*
	 * Significant: p < alpha and the ratio's interval excludes 1, so a change
	 * reported as real never has an interval that says "maybe none".
	 */
	bool significant;
	bool can_be_significant; /* false when even complete separation cannot reach p < alpha */
	/*
	 * Filled by cb_compare_decide() over the whole comparison set: the p
	 * adjusted for the number of comparisons, and whether the ratio's
	 * interval lies entirely beyond +-threshold. Until then p_adj = p.
	 */
	double p_adj;
	bool beyond_threshold;
	/* Relative spread of the ratio: of the per-pair ratios, or sqrt(cv_old^2 + cv_new^2) unpaired. */
	double ratio_cv;
	size_t test_min_n;        /* values per side from which the test can give p < alpha */
	size_t reps_needed;       /* per side, to settle this change (see basis); 0: none known */
	enum cb_reps_basis reps_basis;
};

/** Compare a metric's old and new samples. -EINVAL when a sample is empty; -ENOMEM. */
int cb_compare_samples(const double *old, size_t n_old, const double *new_, size_t n_new,
		       const struct cb_compare_opts *o, struct cb_compare *out);

/**
 * The same for n pairs measured side by side (old[i] and new_[i] ran in one
 * round of an interleaved matrix): a Wilcoxon signed-rank test of the pairs,
 * and as the ratio the median of the per-pair ratios new/old with its
 * bootstrap interval (NAN where an old value is 0), so what drifted for
 * both members of a pair divides out. -EINVAL when n is 0; -ENOMEM.
 */
int cb_compare_paired(const double *old, const double *new_, size_t n, const struct cb_compare_opts *o,
		      struct cb_compare *out);

/* ---- a set of comparisons ---- */

/*
 * Multiple comparisons: compare prints dozens of metrics at once, and at
 * alpha 0.05 one in twenty unchanged ones would look changed. Benjamini-
 * Hochberg controls the expected share of false discoveries among those
 * called changed (the default); Holm the chance of any (stricter).
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

/**
 * The verdict rule over a comparison set c[0..n): p_adj by method m, then
 * each is significant when p_adj < alpha and its ratio's interval lies
 * entirely beyond +-o->threshold (where there is a ratio); reps_needed
 * follows (the larger of the test's minimum and pyperf's n for the effect
 * beyond the threshold). -EINVAL on an unknown method; -ENOMEM.
 */
int cb_compare_decide(struct cb_compare *const *c, size_t n, enum cb_p_adjust m, const struct cb_compare_opts *o);

/** Fewest values per side with which a test can give p < alpha: paired (signed-rank) or not (rank-sum). */
size_t cb_test_min_n(bool paired, double alpha);

/* ---- noise verdict of one sample ---- */

enum cb_noise {
	CB_NOISE_OK,      /* the interval is as tight as asked */
	CB_NOISE_TOO_FEW, /* fewer than 3 values: no judgement */
	CB_NOISE_NOISY,   /* coefficient of variation above CB_NOISY_CV (summary.h) */
	CB_NOISE_WIDE,    /* not noisy, but the interval is wider than asked: more reps needed */
};

struct cb_noise_verdict {
	enum cb_noise verdict;
	double cv;             /* sample stddev / |mean| */
	double rel_half_width; /* t-interval half-width of the mean / |mean| */
	size_t reps_needed;    /* cb_reps_needed(cv, target, conf); 0 when unknown */
};

/** Judge v[0..n) against a target relative half-width (e.g. 0.03) at level conf. */
int cb_noise_judge(const double *v, size_t n, double target, double conf, struct cb_noise_verdict *out);
/** "ok", "too-few", "noisy", "wide". */
const char *cb_noise_name(enum cb_noise n);

#endif
