#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include <cowbench/stats.h>

int cb_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

uint64_t cb_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t cb_rand_below(uint64_t *state, uint64_t bound)
{
	uint64_t limit = UINT64_MAX - UINT64_MAX % bound, r;

	do
		r = cb_splitmix64(state);
	while (r >= limit);
	return r % bound;
}

void cb_shuffle_prefix(size_t *a, size_t n, size_t k, uint64_t *state)
{
	for (size_t i = 0; i < k && i + 1 < n; i++) {
		size_t j = i + (size_t)cb_rand_below(state, n - i), tmp = a[i];

		a[i] = a[j];
		a[j] = tmp;
	}
}

double cb_percentile_sorted(const double *sorted, size_t n, double p)
{
	/* The epsilon keeps 99.9 % of 1000 at rank 999 despite binary fractions. */
	double rank = ceil(p * (double)n / 100.0 - 1e-9);
	size_t idx;

	if (rank < 1)
		rank = 1;
	idx = (size_t)rank - 1;
	if (idx >= n)
		idx = n - 1;
	return sorted[idx];
}

double cb_quantile_sorted(const double *s, size_t n, double p)
{
	double h = p * (double)(n - 1);
	size_t lo = (size_t)floor(h);

	if (lo + 1 >= n)
		return s[n - 1];
	return s[lo] + (h - (double)lo) * (s[lo + 1] - s[lo]);
}

int cb_lat_stats_compute(double *values, size_t n, struct cb_lat_stats *out)
{
	double sum = 0;

	if (n == 0)
		return -EINVAL;
	qsort(values, n, sizeof(*values), cb_cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += values[i];
	out->n = n;
	out->min = values[0];
	out->max = values[n - 1];
	out->mean = sum / (double)n;
	out->p50 = cb_percentile_sorted(values, n, 50);
	out->p90 = cb_percentile_sorted(values, n, 90);
	out->p99 = cb_percentile_sorted(values, n, 99);
	out->p999 = cb_percentile_sorted(values, n, 99.9);
	return 0;
}
