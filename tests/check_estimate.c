/*
 * The statistics engine (cowbench/estimate.h) checked the way a reviewer of
 * a benchmark paper would: exact values by hand, seeded simulations of the
 * coverage of every interval at n = 5, 10 and 30 on log-normal and
 * heavy-tailed samples, the power of the default 5 + 5 reps against a big
 * change, and A/A sets that must stay quiet.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/compare.h>
#include <cowbench/estimate.h>

#include "testutil.h"


static double normal(struct tu_rng *r)
{
	double u1 = tu_uniform01(r), u2 = tu_uniform01(r);

	return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

enum shape { LOGNORMAL, LOG_T3, LOG_LAPLACE, NSHAPES };

static const char *const shape_names[] = { "log-normal", "log-t3", "log-Laplace" };

/* A noise term symmetric about 0 (the log of a value around its median). */
static double noise(struct tu_rng *r, enum shape s, double scale)
{
	if (s == LOG_T3) {
		double chi = 0;

		for (int i = 0; i < 3; i++) {
			double z = normal(r);

			chi += z * z;
		}
		return scale * normal(r) / sqrt(chi / 3);
	}
	if (s == LOG_LAPLACE) {
		double u = tu_uniform01(r) - 0.5;

		return -scale * (u < 0 ? -1 : 1) * log(1 - 2 * fabs(u));
	}
	return scale * normal(r);
}

/* ---- exact values ---- */

START_TEST(test_five_values)
{
	const double v[] = { 12, 10, 11, 14, 13 };
	struct cb_estimate e;

	ck_assert_int_eq(cb_estimate(v, 5, 0.95, &e), 0);
	/* n = 5 cannot reach 95 %: the widest interval, [min, max], covers 1 - 2/32. */
	ck_assert(e.log_scale);
	ck_assert_double_eq_tol(e.lo, 10, 1e-9);
	ck_assert_double_eq_tol(e.hi, 14, 1e-9);
	ck_assert_double_eq_tol(e.level, 0.9375, 1e-12);
	ck_assert(e.centre > 11.5 && e.centre < 12.5);
	ck_assert_uint_eq(e.n, 5);
	/* A 0 puts it on the raw scale: the median of the Walsh averages of 0..4 is 2. */
	{
		const double c[] = { 0, 1, 2, 3, 4 };

		ck_assert_int_eq(cb_estimate(c, 5, 0.95, &e), 0);
		ck_assert(!e.log_scale);
		ck_assert_double_eq_tol(e.centre, 2, 1e-12);
		ck_assert_double_eq_tol(e.lo, 0, 1e-12);
		ck_assert_double_eq_tol(e.hi, 4, 1e-12);
	}
	ck_assert_int_eq(cb_estimate(v, 1, 0.95, &e), 0);
	ck_assert(e.centre == 12 && isnan(e.lo) && isnan(e.level));
	ck_assert_int_eq(cb_estimate(v, 0, 0.95, &e), -EINVAL);
	ck_assert_int_eq(cb_estimate(v, 5, 1.0, &e), -EINVAL);
}
END_TEST

START_TEST(test_five_and_five)
{
	const double old[] = { 20, 21, 19, 22, 20.5 }, new_[] = { 12000, 12100, 11900, 12500, 12200 };
	struct cb_change c;

	ck_assert_int_eq(cb_estimate_change(old, 5, new_, 5, 0.95, &c), 0);
	/* Complete separation of 5 + 5: p = 2 / C(10, 5) = 0.0079; the interval is D_(3)..D_(23) at 1 - 2 * 4/252. */
	ck_assert(c.ratio && c.exact);
	ck_assert_double_eq_tol(c.p, 2.0 / 252, 1e-12);
	ck_assert_double_eq_tol(c.level, 1 - 8.0 / 252, 1e-12);
	ck_assert(c.lo < c.est && c.est < c.hi && c.lo > 500 && c.hi < 700);
	ck_assert_double_eq_tol(cb_mwu_min_p(5, 5), 2.0 / 252, 1e-12);
	ck_assert_uint_eq(cb_test_min_n(0.05), 4);
	ck_assert_uint_eq(cb_test_min_n(0.01), 5);
	/* The other way round: the reciprocal. */
	{
		struct cb_change back;

		ck_assert_int_eq(cb_estimate_change(new_, 5, old, 5, 0.95, &back), 0);
		ck_assert_double_eq_tol(back.est, 1 / c.est, 1e-9);
		ck_assert_double_eq_tol(back.lo, 1 / c.hi, 1e-9);
	}
	/* A count of 0 on one side: a difference, not a ratio. */
	{
		const double zero[] = { 0, 0, 1, 0, 0 }, some[] = { 4, 5, 4, 6, 5 };

		ck_assert_int_eq(cb_estimate_change(zero, 5, some, 5, 0.95, &c), 0);
		ck_assert(!c.ratio && !c.exact);
		ck_assert_double_eq_tol(c.est, 5, 1e-12);
	}
	ck_assert_int_eq(cb_estimate_change(old, 0, new_, 5, 0.95, &c), -EINVAL);
}
END_TEST

START_TEST(test_mann_whitney_by_hand)
{
	/* Hollander & Wolfe's classic: U and its exact p. */
	const double lo[] = { 1, 2, 3, 4, 5 }, hi[] = { 6, 7, 8, 9, 10 };
	const double a[] = { 1.1, 2.3, 3.2, 7.5, 8.4, 9.1 }, b[] = { 4.4, 5.2, 6.0, 6.6, 9.9, 10.3, 11.0 };
	struct cb_mwu t;

	ck_assert_int_eq(cb_mann_whitney(lo, 5, hi, 5, &t), 0);
	ck_assert(t.exact);
	ck_assert_double_eq(t.u, 0);
	ck_assert_double_eq_tol(t.p, 2.0 / 252, 1e-12);
	ck_assert_int_eq(cb_mann_whitney(hi, 5, lo, 5, &t), 0);
	ck_assert_double_eq(t.u, 25);
	ck_assert_double_eq_tol(t.p, 2.0 / 252, 1e-12);
	/* U of a = 3 + 6 + 6 + 10... counted: pairs a_i > b_j. */
	ck_assert_int_eq(cb_mann_whitney(a, 6, b, 7, &t), 0);
	ck_assert_double_eq(t.u, 0 + 0 + 0 + 4 + 4 + 4);
	ck_assert(t.p > 0.1 && t.p < 0.5);
	ck_assert_int_eq(cb_mann_whitney(a, 0, b, 7, &t), -EINVAL);
}
END_TEST

/* ---- coverage ---- */

#define TRIALS 2000

/* Share of TRIALS seeded trials whose interval covers the truth, and the mean level the engine claimed. */
static void coverage(enum shape s, size_t n, bool ratio, double *covered, double *claimed)
{
	struct tu_rng r = { 1000 * (uint64_t)n + 10 * (uint64_t)s + ratio };
	double a[30], b[30];
	size_t hit = 0;

	*claimed = 0;
	for (int t = 0; t < TRIALS; t++) {
		for (size_t i = 0; i < n; i++) {
			a[i] = 5000 * exp(noise(&r, s, 0.3));
			b[i] = 2 * 5000 * exp(noise(&r, s, 0.3)); /* the true ratio b / a is 2 */
		}
		if (ratio) {
			struct cb_change c;

			ck_assert_int_eq(cb_estimate_change(a, n, b, n, 0.95, &c), 0);
			hit += c.lo <= 2 && 2 <= c.hi;
			*claimed += c.level / TRIALS;
		} else {
			struct cb_estimate e;

			ck_assert_int_eq(cb_estimate(a, n, 0.95, &e), 0);
			hit += e.lo <= 5000 && 5000 <= e.hi; /* the median: the centre of the symmetric log */
			*claimed += e.level / TRIALS;
		}
	}
	*covered = (double)hit / TRIALS;
}

/*
 * Every interval covers the truth 93-97 % of the time, and as often as it
 * claims: the claim is exact for a continuous distribution symmetric on the
 * log scale, so the observed share lies within 3.5 standard errors of it
 * (about 1.7 points at 2000 trials; a seeded test, so the same every run).
 */
START_TEST(test_coverage)
{
	static const size_t ns[] = { 5, 10, 30 };

	for (int s = 0; s < NSHAPES; s++)
		for (size_t i = 0; i < 3; i++)
			for (int ratio = 0; ratio <= 1; ratio++) {
				double covered, claimed, se;

				coverage((enum shape)s, ns[i], ratio, &covered, &claimed);
				se = sqrt(claimed * (1 - claimed) / TRIALS);
				printf("coverage %-11s n=%-2zu %-6s %.1f %% (claimed %.2f %%)\n", shape_names[s], ns[i],
				       ratio ? "ratio" : "centre", 100 * covered, 100 * claimed);
				ck_assert_msg(claimed >= 0.93 && claimed <= 0.97, "%s n=%zu %s: level %.4f",
					      shape_names[s], ns[i], ratio ? "ratio" : "centre", claimed);
				ck_assert_msg(fabs(covered - claimed) < 3.5 * se, "%s n=%zu %s: covered %.4f, claimed %.4f",
					      shape_names[s], ns[i], ratio ? "ratio" : "centre", covered, claimed);
			}
}
END_TEST

/* ---- power and false alarms ---- */

#define ROWS 16

/* One compare of ROWS rows, old and new drawn alike but new times `factor`; how many rows the rule flags. */
static int flagged(struct tu_rng *r, size_t n, double factor, double sigma)
{
	struct cb_compare_opts o = CB_COMPARE_DEFAULTS;
	struct cb_compare c[ROWS], *set[ROWS];
	double a[32], b[32];
	int called = 0;

	for (int k = 0; k < ROWS; k++) {
		double median = 1000 * (k + 1);

		for (size_t i = 0; i < n; i++) {
			a[i] = median * exp(sigma * normal(r));
			b[i] = factor * median * exp(sigma * normal(r));
		}
		ck_assert_int_eq(cb_compare_samples(a, n, b, n, false, &o, &c[k]), 0);
		set[k] = &c[k];
	}
	ck_assert_int_eq(cb_compare_decide(set, ROWS, CB_ADJUST_BH, &o), 0);
	for (int k = 0; k < ROWS; k++)
		called += c[k].significant;
	return called;
}

START_TEST(test_power_at_default_reps)
{
	struct tu_rng r = { 600 };
	int all = 0, two = 0;

	/* 600x at 5 + 5: every row flagged in every trial (complete separation: p 0.008). */
	for (int t = 0; t < 50; t++)
		all += flagged(&r, 5, 600, 0.3) == ROWS;
	ck_assert_int_eq(all, 50);
	/* 2x at 5 + 5 with 10 % noise: flagged nearly always. */
	for (int t = 0; t < 50; t++)
		two += flagged(&r, 5, 2, 0.1);
	ck_assert_msg(two >= 50 * ROWS * 95 / 100, "2x flagged in %d of %d rows", two, 50 * ROWS);
}
END_TEST

START_TEST(test_aa_is_quiet)
{
	struct tu_rng r = { 16 };
	int quiet = 0, rows = 0;

	for (int t = 0; t < 200; t++) {
		int f = flagged(&r, 10, 1, 0.3);

		quiet += f == 0;
		rows += f;
	}
	/*
	 * BH at 5 % over 16 null rows: a flag in at most 5 % of compares in
	 * expectation (under no change at all its FDR is the chance of any), so
	 * at least 180 of 200 quiet (5 % + 3.4 standard errors), and under 1 %
	 * of the rows flagged.
	 */
	ck_assert_msg(quiet >= 180 && rows <= 200 * ROWS / 100, "A/A: quiet in only %d of 200 compares (%d rows flagged)",
		      quiet, rows);
}
END_TEST

/* Faults 2 -> 1 on every rep (the address-space layout, not the change): never flagged; equal values neither. */
START_TEST(test_counts_below_the_floor)
{
	double two[10], one[10], big[10];
	struct cb_compare_opts o = CB_COMPARE_DEFAULTS;
	struct cb_compare c, *set[1] = { &c };

	for (int i = 0; i < 10; i++) {
		two[i] = 2;
		one[i] = 1;
		big[i] = 4097 + i % 2;
	}
	ck_assert_int_eq(cb_compare_samples(two, 10, one, 10, true, &o, &c), 0);
	ck_assert_int_eq(cb_compare_decide(set, 1, CB_ADJUST_BH, &o), 0);
	ck_assert(c.p < 0.001 && c.beyond_threshold);
	ck_assert(!c.above_floor && !c.significant);
	ck_assert_uint_eq(c.reps_needed, 0); /* more reps would not lift it over the floor */
	ck_assert_int_eq(cb_compare_samples(two, 10, two, 10, true, &o, &c), 0);
	ck_assert_int_eq(cb_compare_decide(set, 1, CB_ADJUST_BH, &o), 0);
	ck_assert(!c.significant && c.p == 1);
	/* 1 -> 4097 faults (fork): far above the floor. */
	ck_assert_int_eq(cb_compare_samples(one, 10, big, 10, true, &o, &c), 0);
	ck_assert_int_eq(cb_compare_decide(set, 1, CB_ADJUST_BH, &o), 0);
	ck_assert(c.significant && c.ratio > 4000);
	ck_assert(cb_metric_is_count("faults") && cb_metric_is_count("cow_copies"));
	ck_assert(!cb_metric_is_count("elapsed_ns") && !cb_metric_is_count("lat_p50_ns") && !cb_metric_is_count("fork"));
}
END_TEST

/* Too few reps: the ratio and interval still come, with the n that would decide. */
START_TEST(test_what_n_would_decide)
{
	const double old[] = { 100, 104, 97 }, new_[] = { 130, 121, 138 };
	const double o5[] = { 100, 120, 85, 108, 95 }, n5[] = { 112, 135, 101, 118, 108 };
	struct cb_compare_opts o = CB_COMPARE_DEFAULTS;
	struct cb_compare c, *set[1] = { &c };

	ck_assert_int_eq(cb_compare_samples(old, 3, new_, 3, false, &o, &c), 0);
	ck_assert_int_eq(cb_compare_decide(set, 1, CB_ADJUST_BH, &o), 0);
	ck_assert(!c.can_be_significant && !c.significant);
	ck_assert(c.ratio > 1.2 && c.ratio < 1.4 && c.ratio_lo <= c.ratio && c.ratio <= c.ratio_hi);
	ck_assert_int_eq(c.reps_basis, CB_REPS_TEST_MIN);
	ck_assert_uint_eq(c.reps_needed, 4);
	/* +13 % under 13 % noise at 5 + 5: undecided, and the spread says how many would do. */
	ck_assert_int_eq(cb_compare_samples(o5, 5, n5, 5, false, &o, &c), 0);
	ck_assert_int_eq(cb_compare_decide(set, 1, CB_ADJUST_BH, &o), 0);
	ck_assert(!c.significant);
	ck_assert_int_eq(c.reps_basis, CB_REPS_SPREAD);
	ck_assert_uint_eq(c.reps_needed, cb_n_to_decide(&c.change, 0.05, 0, 0.95));
	ck_assert_uint_gt(c.reps_needed, 5);
}
END_TEST

START_TEST(test_ratio_text)
{
	char buf[64];

	cb_ratio_text(buf, sizeof(buf), 608.2, 412.4, 673);
	ck_assert_str_eq(buf, "608x [412x, 673x]");
	cb_ratio_text(buf, sizeof(buf), 1.2345, 1.1, 1.35);
	ck_assert_str_eq(buf, "1.23x [1.1x, 1.35x]");
	cb_ratio_text(buf, sizeof(buf), 4097, NAN, NAN);
	ck_assert_str_eq(buf, "4097x");
}
END_TEST

/* ---- order statistics of every pair, found without holding every pair ---- */

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* n values of few distinct levels (ties), one of them <= 0 so the estimate works on the values, not their logs. */
static double *tied_sample(struct tu_rng *r, size_t n, double shift)
{
	double *v = malloc(n * sizeof(*v));

	ck_assert_ptr_nonnull(v);
	for (size_t i = 0; i < n; i++)
		v[i] = floor(tu_uniform01(r) * 40) * 0.37 + shift;
	v[0] = -1.5;
	return v;
}

/* sorted[] holds the centre (median) and, for one k, lo = k-th smallest and hi = k-th largest. */
static void assert_order_stats(const double *sorted, size_t n, double centre, double lo, double hi, bool interval)
{
	double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
	bool found = !interval;

	ck_assert_msg(centre == median, "n=%zu: centre %.17g, median of every pair %.17g", n, centre, median);
	for (size_t k = 1; k <= (n + 1) / 2 && !found; k++)
		found = sorted[k - 1] == lo && sorted[n - k] == hi;
	ck_assert_msg(found, "n=%zu: [%.17g, %.17g] is not the k-th smallest and largest for any k", n, lo, hi);
}

/* Walsh averages and pairwise differences: what sorting all of them gives, ties and sizes around the exact limits included. */
START_TEST(test_pairs_match_sorting)
{
	static const size_t sizes[] = { 1, 2, 3, 8, 60, 61, 500, 2000 };
	struct tu_rng r = { .st = 40 };

	for (size_t t = 0; t < sizeof(sizes) / sizeof(sizes[0]); t++) {
		size_t n = sizes[t], nw = n * (n + 1) / 2, nb = n > 1500 ? 1500 : n + 3, nd = 0;
		double *v = tied_sample(&r, n, 0), *b = tied_sample(&r, nb, 0.5), *w = malloc(nw * sizeof(*w));
		double *d = malloc(n * nb * sizeof(*d)), *a = malloc(n * sizeof(*a));
		struct cb_estimate e;
		struct cb_change c;

		ck_assert_ptr_nonnull(w);
		ck_assert_ptr_nonnull(d);
		ck_assert_ptr_nonnull(a);
		ck_assert_int_eq(cb_estimate(v, n, 0.95, &e), 0);
		ck_assert(!e.log_scale);
		memcpy(a, v, n * sizeof(*a));
		qsort(a, n, sizeof(*a), cmp_dbl);
		nw = 0;
		for (size_t i = 0; i < n; i++)
			for (size_t j = i; j < n; j++)
				w[nw++] = (a[i] + a[j]) / 2;
		qsort(w, nw, sizeof(*w), cmp_dbl);
		assert_order_stats(w, nw, e.centre, e.lo, e.hi, n >= 2);
		if (n <= 1500) {
			ck_assert_int_eq(cb_estimate_change(v, n, b, nb, 0.95, &c), 0);
			ck_assert(!c.ratio);
			for (size_t i = 0; i < n; i++)
				for (size_t j = 0; j < nb; j++)
					d[nd++] = b[j] - a[i];
			qsort(d, nd, sizeof(*d), cmp_dbl);
			assert_order_stats(d, nd, c.est, c.lo, c.hi, true);
		}
		free(v);
		free(b);
		free(w);
		free(d);
		free(a);
	}
}
END_TEST

static Suite *estimate_suite(void)
{
	Suite *s = suite_create("estimate");
	TCase *tc = tcase_create("engine");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_five_values);
	tcase_add_test(tc, test_five_and_five);
	tcase_add_test(tc, test_mann_whitney_by_hand);
	tcase_add_test(tc, test_coverage);
	tcase_add_test(tc, test_power_at_default_reps);
	tcase_add_test(tc, test_aa_is_quiet);
	tcase_add_test(tc, test_counts_below_the_floor);
	tcase_add_test(tc, test_what_n_would_decide);
	tcase_add_test(tc, test_ratio_text);
	tcase_add_test(tc, test_pairs_match_sorting);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(estimate_suite)
