#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/summary.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Linear interpolation between closest ranks (R type 7) of a sorted sample. */
static double quantile(const double *s, size_t n, double p)
{
	double h = p * (double)(n - 1);
	size_t lo = (size_t)floor(h);

	if (lo + 1 >= n)
		return s[n - 1];
	return s[lo] + (h - (double)lo) * (s[lo + 1] - s[lo]);
}

static uint64_t next_random(uint64_t *st)
{
	uint64_t z = (*st += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double resampled_mean(const double *v, size_t n, uint64_t *st)
{
	double sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += v[next_random(st) % n];
	return sum / (double)n;
}

static double mean_of(const double *v, size_t n)
{
	double sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += v[i];
	return sum / (double)n;
}

/* 2.5th and 97.5th percentiles of B resampled statistics. */
static void percentile_ci(double *stat, size_t b, double *lo, double *hi)
{
	qsort(stat, b, sizeof(*stat), cmp_double);
	*lo = quantile(stat, b, 0.025);
	*hi = quantile(stat, b, 0.975);
}

int cb_summarize(const double *v, size_t n, uint64_t seed, struct cb_summary *out)
{
	double *s, *boot, ss = 0, q1, q3, iqr;
	uint64_t st = seed;

	if (n == 0)
		return -EINVAL;
	s = malloc(n * sizeof(*s));
	boot = malloc(CB_BOOTSTRAP_RESAMPLES * sizeof(*boot));
	if (!s || !boot) {
		free(s);
		free(boot);
		return -ENOMEM;
	}
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	memset(out, 0, sizeof(*out));
	out->n = n;
	out->median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	out->mean = mean_of(s, n);
	out->stddev = out->ci_lo = out->ci_hi = out->cv = NAN;
	if (n >= 2) {
		for (size_t i = 0; i < n; i++)
			ss += (s[i] - out->mean) * (s[i] - out->mean);
		out->stddev = sqrt(ss / (double)(n - 1));
		if (out->mean != 0)
			out->cv = out->stddev / fabs(out->mean);
		for (size_t b = 0; b < CB_BOOTSTRAP_RESAMPLES; b++)
			boot[b] = resampled_mean(v, n, &st);
		percentile_ci(boot, CB_BOOTSTRAP_RESAMPLES, &out->ci_lo, &out->ci_hi);
	}
	q1 = quantile(s, n, 0.25);
	q3 = quantile(s, n, 0.75);
	iqr = q3 - q1;
	for (size_t i = 0; i < n; i++)
		out->outliers += s[i] < q1 - 1.5 * iqr || s[i] > q3 + 1.5 * iqr;
	free(s);
	free(boot);
	return 0;
}

int cb_ratio_ci(const double *a, size_t na, const double *b, size_t nb, uint64_t seed,
		double *ratio, double *lo, double *hi)
{
	double *boot;
	uint64_t st = seed;
	size_t k = 0;

	if (na == 0 || nb == 0 || mean_of(b, nb) == 0)
		return -EINVAL;
	*ratio = mean_of(a, na) / mean_of(b, nb);
	*lo = *hi = NAN;
	if (na < 2 && nb < 2)
		return 0;
	boot = malloc(CB_BOOTSTRAP_RESAMPLES * sizeof(*boot));
	if (!boot)
		return -ENOMEM;
	for (size_t i = 0; i < CB_BOOTSTRAP_RESAMPLES; i++) {
		double ma = resampled_mean(a, na, &st), mb = resampled_mean(b, nb, &st);

		if (mb != 0)
			boot[k++] = ma / mb;
	}
	if (k > 0)
		percentile_ci(boot, k, lo, hi);
	free(boot);
	return 0;
}
