/* Page orders of the sparse writers (stride, hotset, burst): exact counts and page sets per seed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/run.h>
#include <cowbench/stats.h>
#include <cowbench/workload.h>

#include "testutil.h"

/* The order of workload name over npages pages with options "name=value" pairs (NULL-terminated). */
static long order_of(const char *name, size_t npages, uint64_t seed, const char *const *opts, size_t *order)
{
	const struct cb_workload *w = cb_workload_find(name);
	struct cb_wl_opts o;
	struct cb_order_ctx ctx = { .npages = npages, .seed = seed, .opts = &o };
	char why[256];

	ck_assert_ptr_nonnull(w);
	cb_options_default(w, &o);
	for (size_t i = 0; opts && opts[i]; i += 2)
		ck_assert_msg(cb_option_parse(cb_option_find(w, opts[i]), opts[i + 1], &o, why, sizeof(why)) == 0,
			      "%s", why);
	return w->page_order(&ctx, order);
}

/* Every entry in range and written once; returns the set as a bitmap (caller frees). */
static unsigned char *as_set(const size_t *order, long n, size_t npages)
{
	unsigned char *seen = calloc(npages, 1);

	ck_assert_ptr_nonnull(seen);
	for (long i = 0; i < n; i++) {
		ck_assert_uint_lt(order[i], npages);
		ck_assert_msg(!seen[order[i]], "page %zu written twice", order[i]);
		seen[order[i]] = 1;
	}
	return seen;
}

START_TEST(test_percent_rounding)
{
	ck_assert_uint_eq(cb_pages_percent(4096, 10), 409);
	ck_assert_uint_eq(cb_pages_percent(16384, 10), 1638);
	ck_assert_uint_eq(cb_pages_percent(10, 5), 1);   /* 0.5 pages: at least one */
	ck_assert_uint_eq(cb_pages_percent(1, 1), 1);
	ck_assert_uint_eq(cb_pages_percent(333, 100), 333);
	ck_assert_uint_eq(cb_pages_percent(999, 33), 329); /* floor(329.67) */
}
END_TEST

START_TEST(test_stride_pages)
{
	size_t order[100];
	const char *k3[] = { "stride", "3", NULL };

	ck_assert_int_eq(order_of("stride", 100, 1, k3, order), 34);
	for (size_t i = 0; i < 34; i++)
		ck_assert_uint_eq(order[i], 3 * i);
	ck_assert_int_eq(order_of("stride", 100, 1, NULL, order), 50); /* default K = 2 */
}
END_TEST

START_TEST(test_hotset_count_and_set)
{
	enum { N = 4096 };
	size_t *a = malloc(N * sizeof(*a)), *b = malloc(N * sizeof(*b)), *c = malloc(N * sizeof(*c));
	const char *p25[] = { "touch", "25", NULL };
	unsigned char *sa, *sc;
	size_t in_order = 0;
	long n;

	ck_assert_int_eq(order_of("hotset", N, 1, NULL, a), 409); /* default 10 % */
	free(as_set(a, 409, N));
	n = order_of("hotset", N, 7, p25, a);
	ck_assert_int_eq(n, 1024);
	ck_assert_int_eq(order_of("hotset", N, 7, p25, b), 1024);
	ck_assert_mem_eq(a, b, 1024 * sizeof(*a)); /* same seed, same pages, same order */
	ck_assert_int_eq(order_of("hotset", N, 8, p25, c), 1024);
	sa = as_set(a, n, N);
	sc = as_set(c, n, N);
	ck_assert(memcmp(sa, sc, N) != 0); /* another seed, another set */
	/* Random order, not ascending: few neighbours in order. */
	for (long i = 1; i < n; i++)
		in_order += a[i] > a[i - 1];
	ck_assert_uint_lt(in_order, 700);
	ck_assert_uint_gt(in_order, 324);
	ck_assert_int_eq(order_of("hotset", 100, 1, (const char *[]){ "touch", "100", NULL }, a), 100);
	free(as_set(a, 100, 100));
	free(sa);
	free(sc);
	free(a);
	free(b);
	free(c);
}
END_TEST

/* The exact set for a small case: what a seed means may never change silently. */
START_TEST(test_hotset_pinned)
{
	size_t order[20];
	static const size_t want[] = { 5, 9, 14, 15, 13 };
	const char *p25[] = { "touch", "25", NULL };

	ck_assert_int_eq(order_of("hotset", 20, 1, p25, order), 5);
	for (size_t i = 0; i < 5; i++)
		ck_assert_uint_eq(order[i], want[i]);
}
END_TEST

/* Runs: ascending consecutive pages; every run L long but the last written; total exactly P %. */
static void check_runs(const size_t *order, long n, size_t len, size_t npages)
{
	unsigned char *set = as_set(order, n, npages);
	long i = 0, runs = 0;

	while (i < n) {
		size_t l = 1;

		while (i + (long)l < n && l < len && order[i + l] == order[i] + l)
			l++;
		runs++;
		i += (long)l;
		if (i < n)
			ck_assert_uint_eq(l, len); /* only the last run may be short */
	}
	ck_assert_int_eq(runs, (n + (long)len - 1) / (long)len);
	free(set);
}

START_TEST(test_burst_count_and_runs)
{
	enum { N = 4096 };
	size_t *a = malloc(N * sizeof(*a)), *b = malloc(N * sizeof(*b));
	const char *l16[] = { "burst", "16", "touch", "10", NULL };
	const char *l7[] = { "burst", "7", "touch", "50", NULL };
	const char *full[] = { "burst", "64", "touch", "100", NULL };
	long n;

	n = order_of("burst", N, 1, l16, a);
	ck_assert_int_eq(n, 409); /* 25 runs of 16 and one of 9 */
	check_runs(a, n, 16, N);
	ck_assert_int_eq(order_of("burst", N, 1, l16, b), 409);
	ck_assert_mem_eq(a, b, 409 * sizeof(*a));
	ck_assert_int_eq(order_of("burst", N, 2, l16, b), 409);
	ck_assert(memcmp(a, b, 409 * sizeof(*a)) != 0);
	n = order_of("burst", N, 3, l7, a);
	ck_assert_int_eq(n, 2048);
	check_runs(a, n, 7, N);
	n = order_of("burst", N, 3, full, a); /* every page: runs tile the region */
	ck_assert_int_eq(n, N);
	check_runs(a, n, 64, N);
	/* A run longer than the region is refused by the order too. */
	ck_assert_int_eq(order_of("burst", 8, 1, (const char *[]){ "burst", "9", NULL }, a), -EINVAL);
	free(a);
	free(b);
}
END_TEST

START_TEST(test_burst_pinned)
{
	size_t order[40];
	static const size_t want[] = { 35, 36, 37, 38, 0, 1, 2, 3, 9, 10 }; /* runs of 4, 4 and the short 2 */
	const char *opts[] = { "burst", "4", "touch", "25", NULL };

	ck_assert_int_eq(order_of("burst", 40, 1, opts, order), 10);
	for (size_t i = 0; i < 10; i++)
		ck_assert_uint_eq(order[i], want[i]);
}
END_TEST

/* The check refuses --burst longer than the region before anything runs. */
START_TEST(test_burst_check)
{
	struct cb_run_spec s = { .size = 16 * 4096, .page_size = 4096, .cpu = -1 };
	char why[256] = "";

	cb_wl_params_default(&s.params);
	cb_run_spec_set_workload(&s, cb_workload_find("burst"));
	ck_assert_int_eq(cb_run_spec_set_option(&s, "burst", "17", why, sizeof(why)), 0);
	ck_assert_int_eq(cb_run_spec_check(&s, why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "--burst=17 is longer than the region (16 pages)");
	ck_assert_int_eq(cb_run_spec_set_option(&s, "burst", "16", why, sizeof(why)), 0);
	ck_assert_int_eq(cb_run_spec_check(&s, why, sizeof(why)), 0);
}
END_TEST

static Suite *orders_suite(void)
{
	Suite *s = suite_create("page_orders");
	TCase *tc = tcase_create("orders");

	tcase_add_test(tc, test_percent_rounding);
	tcase_add_test(tc, test_stride_pages);
	tcase_add_test(tc, test_hotset_count_and_set);
	tcase_add_test(tc, test_hotset_pinned);
	tcase_add_test(tc, test_burst_count_and_runs);
	tcase_add_test(tc, test_burst_pinned);
	tcase_add_test(tc, test_burst_check);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(orders_suite)
