#ifndef COWBENCH_SUMMARY_H
#define COWBENCH_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

/*
 * Statistics of one cell's repetitions: what `cowbench summarize` prints.
 * Confidence intervals are percentile bootstraps with a fixed seed, so the
 * same input always gives the same numbers.
 */

#define CB_BOOTSTRAP_RESAMPLES 2000
#define CB_NOISY_CV 0.10 /* a cell whose coefficient of variation exceeds this is flagged */

struct cb_summary {
	size_t n;
	double median;     /* middle value (mean of the two middle ones for even n) */
	double mean;
	double stddev;     /* sample standard deviation (n - 1); NAN for n < 2 */
	double ci_lo, ci_hi; /* 95 % bootstrap interval of the mean; NAN for n < 2 */
	double cv;         /* stddev / mean; NAN for n < 2 or mean 0 */
	size_t outliers;   /* outside Tukey's fences: [Q1 - 1.5 IQR, Q3 + 1.5 IQR] */
};

/** Summarise v[0..n) (v is left unchanged). -EINVAL when n == 0. */
int cb_summarize(const double *v, size_t n, uint64_t seed, struct cb_summary *out);

/**
 * Ratio of means a / b with a 95 % bootstrap interval (each sample
 * resampled on its own). -EINVAL when a sample is empty or b's mean is 0.
 */
int cb_ratio_ci(const double *a, size_t na, const double *b, size_t nb, uint64_t seed,
		double *ratio, double *lo, double *hi);

#endif
