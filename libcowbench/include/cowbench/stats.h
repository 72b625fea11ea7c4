#ifndef COWBENCH_STATS_H
#define COWBENCH_STATS_H

#include <stddef.h>
#include <stdint.h>

/** Exact summary of a latency sample (nanoseconds). */
struct cb_lat_stats {
	size_t n;
	double min, mean, p50, p90, p99, p999, max;
};

/**
 * Summarise values[0..n) exactly. Percentiles use the nearest-rank
 * definition: the p-th percentile is the smallest value such that at
 * least p % of the sample is <= it (rank ceil(p/100 * n), 1-based).
 * The array is sorted in place. Returns -EINVAL when n == 0.
 */
int cb_lat_stats_compute(double *values, size_t n, struct cb_lat_stats *out);

/** Nearest-rank percentile of an already sorted array (n > 0, 0 < p <= 100). */
/** qsort comparator for doubles, ascending. */
int cb_cmp_double(const void *a, const void *b);
/** splitmix64: a tiny seeded generator, identical on every platform (permutations, bootstrap). */
uint64_t cb_splitmix64(uint64_t *state);
/** Unbiased draw in [0, bound) from cb_splitmix64 (rejection; bound > 0). */
uint64_t cb_rand_below(uint64_t *state, uint64_t bound);
/**
 * Seeded partial Fisher-Yates: a[0..k) becomes a uniformly random ordered
 * choice of k of a[0..n)'s entries (k = n: a whole permutation).
 */
void cb_shuffle_prefix(size_t *a, size_t n, size_t k, uint64_t *state);

double cb_percentile_sorted(const double *sorted, size_t n, double p);
/** Quantile p (0..1) of a sorted sample, interpolated between closest ranks (R type 7): a description, no interval. */
double cb_quantile_sorted(const double *s, size_t n, double p);

#endif
