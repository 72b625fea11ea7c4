#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/error.h>
#include <cowbench/hist.h>
#include <cowbench/stats.h>

#include "testutil.h"

/* A deterministic generator for the property tests (xorshift64*). */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

/* Log-uniform over 1 ns .. ~10 ms: latencies span orders of magnitude. */
static double log_uniform(uint64_t *s)
{
	double u = (double)(next_rand(s) >> 11) / 9007199254740992.0;

	return floor(exp(u * log(1e7)));
}

static struct cb_hist *hist_new(void)
{
	struct cb_hist *h = malloc(sizeof(*h));

	ck_assert_ptr_nonnull(h);
	cb_hist_reset(h);
	return h;
}

START_TEST(test_buckets_tile_the_range)
{
	/* Every bucket starts right after the previous one ends: no gap, no overlap. */
	ck_assert_uint_eq(cb_hist_bucket_lo(0), 0);
	for (size_t b = 1; b < CB_HIST_BUCKETS; b++)
		ck_assert_uint_eq(cb_hist_bucket_lo(b), cb_hist_bucket_hi(b - 1) + 1);
	ck_assert_uint_eq(cb_hist_bucket_hi(CB_HIST_BUCKETS - 1), CB_HIST_MAX);
}
END_TEST

START_TEST(test_bucket_error_bound)
{
	uint64_t s = 42;

	/* Known values land in a bucket holding them, no wider than 1/128 of its start. */
	for (int i = 0; i < 20000; i++) {
		uint64_t v = (uint64_t)log_uniform(&s) * (1 + (uint64_t)(i % 97));
		size_t b = cb_hist_bucket(v);
		uint64_t lo = cb_hist_bucket_lo(b), hi = cb_hist_bucket_hi(b);
		double mid = ((double)lo + (double)hi) / 2;

		if (v > CB_HIST_MAX)
			continue;
		ck_assert_uint_le(lo, v);
		ck_assert_uint_ge(hi, v);
		ck_assert(lo < CB_HIST_SUB || (double)(hi - lo + 1) <= (double)lo / 128.0);
		ck_assert(fabs(mid - (double)v) <= (double)v / 256.0 + 0.5);
	}
	/* Below 256 ns every bucket is one ns wide: exact. */
	for (uint64_t v = 0; v < CB_HIST_SUB; v++)
		ck_assert_uint_eq(cb_hist_bucket_lo(cb_hist_bucket(v)), v);
}
END_TEST

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

START_TEST(test_percentiles_within_bound_of_exact)
{
	enum { N = 50001 };
	double *v = malloc(N * sizeof(*v));
	struct cb_hist *h = hist_new();
	static const double ps[] = { 0.01, 1, 10, 50, 90, 99, 99.9, 99.99, 100 };
	uint64_t s = 7;

	ck_assert_ptr_nonnull(v);
	for (int i = 0; i < N; i++) {
		v[i] = log_uniform(&s);
		cb_hist_record(h, v[i]);
	}
	qsort(v, N, sizeof(*v), cmp_double);
	ck_assert_uint_eq(h->total, N);
	ck_assert_uint_eq(h->min, (uint64_t)v[0]);
	ck_assert_uint_eq(h->max, (uint64_t)v[N - 1]);
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		double exact = cb_percentile_sorted(v, N, ps[i]);
		double approx = cb_hist_percentile(h, ps[i]);

		ck_assert_msg(fabs(approx - exact) <= exact / 256.0 + 0.5, "p%g: hist %.1f exact %.1f",
			      ps[i], approx, exact);
	}
	free(v);
	free(h);
}
END_TEST

START_TEST(test_merge_equals_union)
{
	struct cb_hist *a = hist_new(), *b = hist_new(), *u = hist_new();
	uint64_t s = 99;

	for (int i = 0; i < 30000; i++) {
		double x = log_uniform(&s);

		cb_hist_record(i % 3 ? a : b, x);
		cb_hist_record(u, x);
	}
	cb_hist_merge(a, b);
	ck_assert_int_eq(memcmp(a, u, sizeof(*a)), 0);
	free(a);
	free(b);
	free(u);
}
END_TEST

START_TEST(test_format_parse_round_trip)
{
	struct cb_hist *h = hist_new(), *back = hist_new();
	char *text = malloc(1 << 20);
	uint64_t s = 5;
	long n;

	ck_assert_ptr_nonnull(text);
	for (int i = 0; i < 20000; i++)
		cb_hist_record(h, log_uniform(&s));
	cb_hist_record(h, 1e30); /* clamped */
	n = cb_hist_format(h, text, 1 << 20);
	ck_assert_int_gt(n, 0);
	ck_assert_ptr_null(strpbrk(text, ",\"\n\r"));
	ck_assert_int_eq(cb_hist_parse(text, back), 0);
	ck_assert_int_eq(memcmp(h, back, sizeof(*h)), 0);
	ck_assert_int_eq(cb_hist_format(h, text, 10), -ENOSPC);
	ck_assert_str_eq(text, "");
	free(text);
	free(h);
	free(back);
}
END_TEST

START_TEST(test_parse_rejects)
{
	static const char *const bad[] = {
		"", "h1", "h1;", "h1;5;5", "h2;5;5;6:1", "h1;5;5;0:1", "h1;5;5;6:0", "h1;5;5;6:1;",
		"h1;5;6;6:1", "h1;6;5;6:1", "h1;5;5;6:1x", "h1;-5;5;6:1", "h1;5;5;6:1;0:2",
		"h1;5;5;6:18446744073709551615;1:1", "h1;5;5;99999:1", "h1;5;5;6:99999999999999999999",
		"h1;5;5;6:1;4346:1",
	};
	struct cb_hist *h = hist_new();

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(cb_hist_parse(bad[i], h) == CB_EFORMAT, "accepted \"%s\"", bad[i]);
		ck_assert_uint_eq(h->total, 0);
	}
	ck_assert_int_eq(cb_hist_parse("h1;5;7;6:2;2:1", h), 0);
	ck_assert_uint_eq(h->total, 3);
	ck_assert_double_eq(cb_hist_percentile(h, 50), 5);
	ck_assert_double_eq(cb_hist_percentile(h, 100), 7);
	free(h);
}
END_TEST

START_TEST(test_empty_and_extremes)
{
	struct cb_hist *h = hist_new();
	char text[64];

	ck_assert(isnan(cb_hist_percentile(h, 50)));
	ck_assert(isnan(cb_hist_mean(h)));
	ck_assert_int_eq(cb_hist_format(h, text, sizeof(text)), 0);
	ck_assert_str_eq(text, "");
	cb_hist_record(h, -3);
	cb_hist_record(h, NAN);
	ck_assert_uint_eq(h->counts[0], 2);
	cb_hist_record(h, 1e300);
	ck_assert_uint_eq(h->max, CB_HIST_MAX);
	ck_assert(isnan(cb_hist_percentile(h, 0)));
	ck_assert(isnan(cb_hist_percentile(h, 101)));
	free(h);
}
END_TEST

static bool count_cb(void *arg, uint64_t lo, uint64_t hi, uint64_t count, uint64_t cum)
{
	uint64_t *seen = arg;

	ck_assert_uint_le(lo, hi);
	seen[0] += count;
	ck_assert_uint_eq(seen[0], cum);
	seen[1]++;
	return true;
}

START_TEST(test_foreach_cumulates)
{
	struct cb_hist *h = hist_new();
	uint64_t seen[2] = { 0, 0 };

	for (int i = 1; i <= 1000; i++)
		cb_hist_record(h, i * 10.0);
	cb_hist_foreach(h, count_cb, seen);
	ck_assert_uint_eq(seen[0], 1000);
	ck_assert_uint_gt(seen[1], 100);
	free(h);
}
END_TEST

/*
 * Mutated texts (bytes flipped, cut, spliced, digits grown): each either
 * parses into a histogram that holds together, or is refused with h left
 * empty. Under ASan this is the parser's fuzz test.
 */
START_TEST(test_parse_mutations)
{
	static const char alphabet[] = "0123456789;:h1-x ";
	struct cb_hist *h = hist_new(), *src = hist_new();
	char good[4096], text[4200];
	uint64_t s = 11;
	size_t len;

	for (int i = 0; i < 300; i++)
		cb_hist_record(src, log_uniform(&s));
	ck_assert_int_gt(cb_hist_format(src, good, sizeof(good)), 0);
	len = strlen(good);
	for (int iter = 0; iter < 20000; iter++) {
		size_t n = len, edits = 1 + next_rand(&s) % 4;
		uint64_t sum = 0;

		memcpy(text, good, len + 1);
		for (size_t e = 0; e < edits; e++) {
			size_t at = (size_t)(next_rand(&s) % (n + 1));

			switch (next_rand(&s) % 4) {
			case 0: /* replace a byte */
				if (at < n)
					text[at] = alphabet[next_rand(&s) % (sizeof(alphabet) - 1)];
				break;
			case 1: /* cut the rest */
				n = at;
				text[n] = '\0';
				break;
			case 2: /* insert a byte */
				if (n + 1 < sizeof(text)) {
					memmove(text + at + 1, text + at, n - at + 1);
					text[at] = alphabet[next_rand(&s) % (sizeof(alphabet) - 1)];
					n++;
				}
				break;
			default: /* delete a byte */
				if (at < n) {
					memmove(text + at, text + at + 1, n - at);
					n--;
				}
				break;
			}
		}
		if (cb_hist_parse(text, h) != 0) {
			ck_assert_uint_eq(h->total, 0);
			continue;
		}
		for (size_t b = 0; b < CB_HIST_BUCKETS; b++)
			sum += h->counts[b];
		ck_assert_uint_eq(sum, h->total);
		ck_assert_uint_le(h->min, h->max);
		ck_assert(cb_hist_percentile(h, 50) >= (double)h->min && cb_hist_percentile(h, 50) <= (double)h->max);
	}
	free(h);
	free(src);
}
END_TEST

static Suite *hist_suite(void)
{
	Suite *s = suite_create("hist");
	TCase *tc = tcase_create("hist");

	tcase_add_test(tc, test_buckets_tile_the_range);
	tcase_add_test(tc, test_bucket_error_bound);
	tcase_add_test(tc, test_percentiles_within_bound_of_exact);
	tcase_add_test(tc, test_merge_equals_union);
	tcase_add_test(tc, test_format_parse_round_trip);
	tcase_add_test(tc, test_parse_rejects);
	tcase_add_test(tc, test_empty_and_extremes);
	tcase_add_test(tc, test_foreach_cumulates);
	tcase_add_test(tc, test_parse_mutations);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(hist_suite)
