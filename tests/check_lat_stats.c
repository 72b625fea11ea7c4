/* Exact latency statistics of a sample (cowbench/stats.h: cb_lat_stats_compute); check_stat.c tests the stat command. */
#include <math.h>

#include <cowbench/stats.h>

#include "testutil.h"

START_TEST(test_one_to_hundred)
{
	double v[100];
	struct cb_lat_stats st;

	for (int i = 0; i < 100; i++)
		v[i] = 100 - i; /* reversed: the function must sort */
	ck_assert_int_eq(cb_lat_stats_compute(v, 100, &st), 0);
	ck_assert_uint_eq(st.n, 100);
	ck_assert_double_eq(st.min, 1);
	ck_assert_double_eq(st.max, 100);
	ck_assert_double_eq_tol(st.mean, 50.5, 1e-12);
	ck_assert_double_eq(st.p50, 50);
	ck_assert_double_eq(st.p90, 90);
	ck_assert_double_eq(st.p99, 99);
	ck_assert_double_eq(st.p999, 100);
}
END_TEST

START_TEST(test_thousand)
{
	double v[1000];
	struct cb_lat_stats st;

	for (int i = 0; i < 1000; i++)
		v[i] = (i * 7919) % 1000 + 1; /* a permutation of 1..1000 */
	ck_assert_int_eq(cb_lat_stats_compute(v, 1000, &st), 0);
	ck_assert_double_eq(st.p50, 500);
	ck_assert_double_eq(st.p90, 900);
	ck_assert_double_eq(st.p99, 990);
	ck_assert_double_eq(st.p999, 999);
}
END_TEST

START_TEST(test_single_and_empty)
{
	double one = 42, none = 0;
	struct cb_lat_stats st;

	ck_assert_int_eq(cb_lat_stats_compute(&one, 1, &st), 0);
	ck_assert_double_eq(st.min, 42);
	ck_assert_double_eq(st.p50, 42);
	ck_assert_double_eq(st.p999, 42);
	ck_assert_double_eq(st.max, 42);
	ck_assert_int_lt(cb_lat_stats_compute(&none, 0, &st), 0);
}
END_TEST

START_TEST(test_small_nearest_rank)
{
	/* Nearest rank on {15, 20, 35, 40, 50}: p30 -> rank 2 -> 20, p40 -> 2 -> 20, p50 -> 3 -> 35, p100 -> 50. */
	double v[] = { 50, 15, 40, 35, 20 };
	struct cb_lat_stats st;

	ck_assert_int_eq(cb_lat_stats_compute(v, 5, &st), 0);
	ck_assert_double_eq(cb_percentile_sorted(v, 5, 30), 20);
	ck_assert_double_eq(cb_percentile_sorted(v, 5, 40), 20);
	ck_assert_double_eq(cb_percentile_sorted(v, 5, 50), 35);
	ck_assert_double_eq(cb_percentile_sorted(v, 5, 100), 50);
	ck_assert_double_eq(st.p50, 35);
	ck_assert_double_eq(st.mean, 32);
}
END_TEST

START_TEST(test_duplicates)
{
	double v[10] = { 5, 5, 5, 5, 5, 5, 5, 5, 5, 1000 };
	struct cb_lat_stats st;

	ck_assert_int_eq(cb_lat_stats_compute(v, 10, &st), 0);
	ck_assert_double_eq(st.p50, 5);
	ck_assert_double_eq(st.p90, 5);
	ck_assert_double_eq(st.p99, 1000);
	ck_assert_double_eq(st.max, 1000);
}
END_TEST

static Suite *stats_suite(void)
{
	Suite *s = suite_create("stats");
	TCase *tc = tcase_create("percentiles");

	tcase_add_test(tc, test_one_to_hundred);
	tcase_add_test(tc, test_thousand);
	tcase_add_test(tc, test_single_and_empty);
	tcase_add_test(tc, test_small_nearest_rank);
	tcase_add_test(tc, test_duplicates);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(stats_suite)
