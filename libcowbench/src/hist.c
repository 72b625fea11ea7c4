#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/error.h>
#include <cowbench/hist.h>

#define HALF (CB_HIST_SUB / 2) /* buckets per power of two above CB_HIST_SUB */

void cb_hist_reset(struct cb_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

static unsigned log2_floor(uint64_t v)
{
	return 63u - (unsigned)__builtin_clzll(v);
}

size_t cb_hist_bucket(uint64_t ns)
{
	unsigned k;

	if (ns > CB_HIST_MAX)
		ns = CB_HIST_MAX;
	if (ns < CB_HIST_SUB)
		return (size_t)ns;
	k = log2_floor(ns); /* CB_HIST_SUB_BITS .. CB_HIST_MAX_BITS - 1 */
	return CB_HIST_SUB + (size_t)(k - CB_HIST_SUB_BITS) * HALF +
	       (size_t)((ns >> (k - CB_HIST_SUB_BITS + 1)) - HALF);
}

uint64_t cb_hist_bucket_lo(size_t b)
{
	unsigned k;
	size_t sub;

	if (b < CB_HIST_SUB)
		return b;
	k = CB_HIST_SUB_BITS + (unsigned)((b - CB_HIST_SUB) / HALF);
	sub = (b - CB_HIST_SUB) % HALF;
	return (uint64_t)(HALF + sub) << (k - CB_HIST_SUB_BITS + 1);
}

uint64_t cb_hist_bucket_hi(size_t b)
{
	unsigned k;

	if (b < CB_HIST_SUB)
		return b;
	k = CB_HIST_SUB_BITS + (unsigned)((b - CB_HIST_SUB) / HALF);
	return cb_hist_bucket_lo(b) + (UINT64_C(1) << (k - CB_HIST_SUB_BITS + 1)) - 1;
}

void cb_hist_record(struct cb_hist *h, double ns)
{
	uint64_t v;

	if (!(ns > 0)) /* negative and NaN */
		v = 0;
	else if (ns >= (double)CB_HIST_MAX)
		v = CB_HIST_MAX;
	else
		v = (uint64_t)llround(ns);
	h->counts[cb_hist_bucket(v)]++;
	h->total++;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

void cb_hist_merge(struct cb_hist *dst, const struct cb_hist *src)
{
	for (size_t b = 0; b < CB_HIST_BUCKETS; b++)
		dst->counts[b] += src->counts[b];
	dst->total += src->total;
	if (src->total && src->min < dst->min)
		dst->min = src->min;
	if (src->total && src->max > dst->max)
		dst->max = src->max;
}

/* The bucket's midpoint, clamped to what was actually recorded. */
static double bucket_value(const struct cb_hist *h, size_t b)
{
	double mid = ((double)cb_hist_bucket_lo(b) + (double)cb_hist_bucket_hi(b)) / 2.0;

	if (mid < (double)h->min)
		return (double)h->min;
	if (mid > (double)h->max)
		return (double)h->max;
	return mid;
}

double cb_hist_percentile(const struct cb_hist *h, double p)
{
	uint64_t rank, seen = 0;
	double r;

	if (h->total == 0 || !(p > 0) || p > 100)
		return NAN;
	/* Nearest rank, as cb_percentile_sorted: the epsilon absorbs binary fractions. */
	r = ceil(p * (double)h->total / 100.0 - 1e-9);
	rank = r < 1 ? 1 : (uint64_t)r;
	if (rank > h->total)
		rank = h->total;
	for (size_t b = 0; b < CB_HIST_BUCKETS; b++) {
		seen += h->counts[b];
		if (seen >= rank)
			return bucket_value(h, b);
	}
	return (double)h->max; /* not reached: counts sum to total */
}

double cb_hist_mean(const struct cb_hist *h)
{
	double sum = 0;

	if (h->total == 0)
		return NAN;
	for (size_t b = 0; b < CB_HIST_BUCKETS; b++)
		if (h->counts[b])
			sum += (double)h->counts[b] * bucket_value(h, b);
	return sum / (double)h->total;
}

void cb_hist_foreach(const struct cb_hist *h,
		     bool (*fn)(void *arg, uint64_t lo, uint64_t hi, uint64_t count, uint64_t cumulative),
		     void *arg)
{
	uint64_t cum = 0;

	for (size_t b = 0; b < CB_HIST_BUCKETS; b++) {
		if (!h->counts[b])
			continue;
		cum += h->counts[b];
		if (!fn(arg, cb_hist_bucket_lo(b), cb_hist_bucket_hi(b), h->counts[b], cum))
			return;
	}
}

long cb_hist_format(const struct cb_hist *h, char *out, size_t len)
{
	size_t used;
	long prev = -1;
	int n;

	if (len == 0)
		return -ENOSPC;
	out[0] = '\0';
	if (h->total == 0)
		return 0;
	n = snprintf(out, len, "h1;%" PRIu64 ";%" PRIu64, h->min, h->max);
	if (n < 0 || (size_t)n >= len)
		goto nospace;
	used = (size_t)n;
	for (size_t b = 0; b < CB_HIST_BUCKETS; b++) {
		if (!h->counts[b])
			continue;
		n = snprintf(out + used, len - used, ";%ld:%" PRIu64, (long)b - prev, h->counts[b]);
		if (n < 0 || (size_t)n >= len - used)
			goto nospace;
		used += (size_t)n;
		prev = (long)b;
	}
	return (long)used;
nospace:
	out[0] = '\0';
	return -ENOSPC;
}

/* A decimal uint64 at *p (digits only, no sign, no overflow); advances *p. */
static bool parse_u64(const char **p, uint64_t *out)
{
	uint64_t v = 0;
	const char *s = *p;

	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*p = s;
	*out = v;
	return true;
}

static int parse_buckets(const char *p, struct cb_hist *h, size_t *first, size_t *last)
{
	uint64_t idx = UINT64_MAX; /* -1: the first gap counts from before bucket 0 */

	while (*p == ';') {
		uint64_t gap, count;

		p++;
		if (!parse_u64(&p, &gap) || *p++ != ':' || !parse_u64(&p, &count))
			return CB_EFORMAT;
		if (gap == 0 || gap > CB_HIST_BUCKETS || count == 0)
			return CB_EFORMAT;
		idx += gap; /* wraps from UINT64_MAX on the first bucket, by design */
		if (idx >= CB_HIST_BUCKETS || h->total > UINT64_MAX - count)
			return CB_EFORMAT;
		if (h->total == 0)
			*first = (size_t)idx;
		*last = (size_t)idx;
		h->counts[idx] = count;
		h->total += count;
	}
	return *p == '\0' && h->total ? 0 : CB_EFORMAT;
}

int cb_hist_parse(const char *text, struct cb_hist *h)
{
	const char *p = text;
	uint64_t min, max;
	size_t first = 0, last = 0;

	cb_hist_reset(h);
	if (strncmp(p, "h1;", 3) != 0)
		return CB_EFORMAT;
	p += 3;
	if (!parse_u64(&p, &min) || *p++ != ';' || !parse_u64(&p, &max))
		goto bad;
	if (min > max || max > CB_HIST_MAX || parse_buckets(p, h, &first, &last) != 0)
		goto bad;
	/* The extremes must lie in the first and last non-empty buckets. */
	if (cb_hist_bucket(min) != first || cb_hist_bucket(max) != last)
		goto bad;
	h->min = min;
	h->max = max;
	return 0;
bad:
	cb_hist_reset(h);
	return CB_EFORMAT;
}
