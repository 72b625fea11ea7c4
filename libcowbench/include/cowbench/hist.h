#ifndef COWBENCH_HIST_H
#define COWBENCH_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A log-linear latency histogram (HdrHistogram's layout, written small:
 * Debian 12 ships no C HdrHistogram). Values are whole nanoseconds from 0
 * to CB_HIST_MAX; every power-of-two range above CB_HIST_SUB is split into
 * CB_HIST_SUB / 2 equal buckets, so a bucket is never wider than 1/128 of
 * its lower bound: a value read back from the histogram (the bucket's
 * midpoint) is within 0.4 % of the value recorded, and a percentile within
 * 0.4 % of the exact one. Fixed memory, no allocation while recording.
 */

#define CB_HIST_SUB_BITS 8
#define CB_HIST_SUB (1u << CB_HIST_SUB_BITS) /* 256 unit-wide buckets below 256 ns */
#define CB_HIST_MAX_BITS 40                   /* values up to 2^40 ns (18 minutes) */
#define CB_HIST_MAX ((UINT64_C(1) << CB_HIST_MAX_BITS) - 1)
/* Buckets: CB_HIST_SUB for [0, 256), then 128 per power of two up to 2^40. */
#define CB_HIST_BUCKETS (CB_HIST_SUB + (CB_HIST_MAX_BITS - CB_HIST_SUB_BITS) * (CB_HIST_SUB / 2))

struct cb_hist {
	uint64_t total;     /* values recorded */
	uint64_t min, max;  /* extremes as recorded (ns; min is UINT64_MAX while empty) */
	uint64_t counts[CB_HIST_BUCKETS];
};

/** Empty the histogram. */
void cb_hist_reset(struct cb_hist *h);
/**
 * Record one value in ns, rounded to a whole ns (so add 0.5 ns to the
 * relative error bound); negative or NaN counts as 0, above CB_HIST_MAX as
 * CB_HIST_MAX.
 */
void cb_hist_record(struct cb_hist *h, double ns);
/** Add every count of src to dst. */
void cb_hist_merge(struct cb_hist *dst, const struct cb_hist *src);

/** Bucket of a value, and the bucket's bounds [lo, hi] (inclusive, ns). */
size_t cb_hist_bucket(uint64_t ns);
uint64_t cb_hist_bucket_lo(size_t bucket);
uint64_t cb_hist_bucket_hi(size_t bucket);

/**
 * Nearest-rank percentile (0 < p <= 100) as the midpoint of the bucket that
 * holds it, clamped to [min, max]; NaN when empty. Within 0.4 % of the
 * exact nearest-rank value of the recorded sample.
 */
double cb_hist_percentile(const struct cb_hist *h, double p);
/** Mean of the bucket midpoints (NaN when empty). */
double cb_hist_mean(const struct cb_hist *h);

/**
 * Walk the non-empty buckets in increasing order: fn gets the bucket's
 * bounds, its count and the cumulative count up to and including it.
 * Stops early when fn returns false.
 */
void cb_hist_foreach(const struct cb_hist *h,
		     bool (*fn)(void *arg, uint64_t lo, uint64_t hi, uint64_t count, uint64_t cumulative),
		     void *arg);

/**
 * Text form for one CSV cell, no commas or quotes:
 *   "h1;MIN;MAX;GAP:COUNT;GAP:COUNT;..."
 * where GAP is the bucket index minus the previous non-empty bucket's index
 * (the first: minus -1). Returns the length written (excluding NUL), or
 * -ENOSPC when len is too small (out[] then holds ""); an empty histogram
 * writes "".
 */
long cb_hist_format(const struct cb_hist *h, char *out, size_t len);
/** Parse cb_hist_format's text into h; CB_EFORMAT on anything else (h then empty). */
int cb_hist_parse(const char *text, struct cb_hist *h);

#endif
