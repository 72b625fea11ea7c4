#ifndef COWBENCH_COMPARE_H
#define COWBENCH_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Judging changes: a metric's old and new samples compared with the
 * engine's one method (cowbench/estimate.h), then the verdict over the
 * whole set of comparisons one command prints. What `cowbench compare`
 * and `summarize --baseline` use.
 */

#include <cowbench/estimate.h>

struct cb_compare_opts {
	double alpha; /* false-discovery rate over the set (0.05) */
	double conf;  /* level of every interval (0.95) */
	/*
	 * The smallest change worth a verdict (0.05 = 5 %): a change is better
	 * or worse only when its whole interval lies beyond +-threshold.
	 */
	double threshold;
};

#define CB_COMPARE_DEFAULTS { .alpha = 0.05, .conf = 0.95, .threshold = 0.05 }

/* Why cb_compare.reps_needed is what it is. */
enum cb_reps_basis {
	CB_REPS_NONE,     /* no estimate (decided, or nothing to go by) */
	CB_REPS_TEST_MIN, /* the fewest values with which the test can reach p < alpha at all */
	CB_REPS_SPREAD,   /* from the observed spread: the interval would clear the minimum effect */
};

struct cb_compare {
	size_t n_old, n_new;
	struct cb_estimate old, new_; /* each side's centre and interval */
	double old_center, old_lo, old_hi; /* = old.centre, old.lo, old.hi */
	double new_center, new_lo, new_hi;
	struct cb_change change;       /* the change and its test */
	/* change.est and its interval when it is a ratio (every value > 0); else NAN */
	double ratio, ratio_lo, ratio_hi;
	double p;                      /* = change.p: two-sided Mann-Whitney U */
	bool exact;                    /* that p is exact */
	bool count;                    /* a count metric: the absolute change must exceed CB_COUNT_FLOOR */
	/*
	 * Filled by cb_compare_decide() over the whole set: the adjusted p,
	 * whether the interval lies beyond the minimum effect, whether a
	 * count's change clears its floor, and the verdict. Until then p_adj = p.
	 */
	double p_adj;
	bool beyond_threshold;
	bool above_floor;
	bool significant;
	bool can_be_significant;       /* false when even complete separation cannot reach p < alpha */
	size_t test_min_n;             /* values per side from which the test can give p < alpha */
	size_t reps_needed;            /* per side, to settle an undecided change (see basis); 0: none known */
	enum cb_reps_basis reps_basis;
};

/**
 * Compare a metric's old and new samples; count: the metric is a count
 * (cb_metric_is_count). -EINVAL when a sample is empty; -ENOMEM.
 */
int cb_compare_samples(const double *old, size_t n_old, const double *new_, size_t n_new, bool count,
		       const struct cb_compare_opts *o, struct cb_compare *out);

/**
 * The verdict rule over a comparison set c[0..n): p_adj by method m, then
 * each is significant when p_adj < alpha, its interval lies entirely
 * beyond the minimum effect (+-threshold of a ratio; for a difference,
 * +-threshold of the old centre) and, for a count, the absolute change
 * of the centres exceeds CB_COUNT_FLOOR; reps_needed follows for the
 * undecided. -EINVAL on an unknown method; -ENOMEM.
 */
int cb_compare_decide(struct cb_compare *const *c, size_t n, enum cb_p_adjust m, const struct cb_compare_opts *o);

/* ---- noise verdict of one sample ---- */

enum cb_noise {
	CB_NOISE_OK,      /* the interval is as tight as asked */
	CB_NOISE_TOO_FEW, /* fewer than 3 values: no judgement */
	CB_NOISE_NOISY,   /* coefficient of variation above CB_NOISY_CV (repstats.h) */
	CB_NOISE_WIDE,    /* not noisy, but the interval is wider than asked: more reps needed */
};

struct cb_noise_verdict {
	enum cb_noise verdict;
	double cv;             /* sample stddev / |mean| */
	double rel_half_width; /* the engine's interval (cb_estimate): its larger side / the centre */
	size_t reps_needed;    /* cb_reps_needed(cv, target, conf); 0 when unknown */
};

/** Judge v[0..n) against a target relative half-width (e.g. 0.03) at level conf. */
int cb_noise_judge(const double *v, size_t n, double target, double conf, struct cb_noise_verdict *out);
/** "ok", "too-few", "noisy", "wide". */
const char *cb_noise_name(enum cb_noise n);

#endif
