/*
 * A comparison set judged as benchstat would: Benjamini-Hochberg and Holm
 * against hand-computed values, seeded A/A simulations that must come out
 * quiet (and do not without the rule), and a 140x change on too few values
 * that is shown with its interval and the reps that would decide it.
 */
#include <errno.h>
#include <math.h>

#include <cowbench/compare.h>

#include "testutil.h"


/* A right-skewed time around `median` (lognormal, sigma s), as benchmark times are. */
static double skewed(struct tu_rng *r, double median, double s)
{
	double u1 = tu_uniform01(r), u2 = tu_uniform01(r);

	return median * exp(s * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2));
}

START_TEST(test_bh_and_holm_by_hand)
{
	/* Sorted: 0.005 0.01 0.03 0.04 0.5 (m = 5; the NAN is no comparison). */
	const double p[] = { 0.01, 0.04, 0.03, 0.005, NAN, 0.5 };
	/* BH: p m / rank = .025 .025 .05 .05 .5, then the running minimum from the top. */
	const double bh[] = { 0.025, 0.05, 0.05, 0.025, NAN, 0.5 };
	/* Holm: p (m - rank + 1) = .025 .04 .09 .08 .5, then the running maximum from the bottom. */
	const double holm[] = { 0.04, 0.09, 0.09, 0.025, NAN, 0.5 };
	double adj[6];

	ck_assert_int_eq(cb_p_adjust(p, 6, CB_ADJUST_BH, adj), 0);
	for (int i = 0; i < 6; i++)
		ck_assert_msg(isnan(bh[i]) ? isnan(adj[i]) : fabs(adj[i] - bh[i]) < 1e-12, "bh[%d] = %g", i, adj[i]);
	ck_assert_int_eq(cb_p_adjust(p, 6, CB_ADJUST_HOLM, adj), 0);
	for (int i = 0; i < 6; i++)
		ck_assert_msg(isnan(holm[i]) ? isnan(adj[i]) : fabs(adj[i] - holm[i]) < 1e-12, "holm[%d] = %g", i,
			      adj[i]);
	ck_assert_int_eq(cb_p_adjust(p, 6, CB_ADJUST_NONE, adj), 0);
	ck_assert_double_eq(adj[1], 0.04);
	/* In place, and capped at 1. */
	{
		double q[] = { 0.9, 0.8, 0.7 };

		ck_assert_int_eq(cb_p_adjust(q, 3, CB_ADJUST_HOLM, q), 0);
		ck_assert_double_eq(q[0], 1);
		ck_assert_double_eq(q[2], 1);
	}
	ck_assert_int_eq(cb_p_adjust(p, 6, (enum cb_p_adjust)7, adj), -EINVAL);
	ck_assert_int_eq(cb_p_adjust(p, 0, CB_ADJUST_BH, adj), 0);
}
END_TEST

START_TEST(test_names_and_test_minimum)
{
	enum cb_p_adjust m;

	ck_assert_int_eq(cb_p_adjust_parse("holm", &m), 0);
	ck_assert_int_eq(m, CB_ADJUST_HOLM);
	ck_assert_int_eq(cb_p_adjust_parse("BH", &m), -EINVAL);
	ck_assert_str_eq(cb_p_adjust_name(CB_ADJUST_BH), "bh");
	/* Rank-sum: 2 / C(6,3) = 0.1, 2 / C(8,4) = 0.029, 2 / C(10,5) = 0.0079. */
	ck_assert_uint_eq(cb_test_min_n(0.05), 4);
	ck_assert_uint_eq(cb_test_min_n(0.01), 5);
}
END_TEST

#define SET 30 /* comparisons in one simulated compare */

/*
 * One simulated A/A compare: SET metrics, both sides drawn from the same
 * distribution (CV about `s`), with or without a drift both sides of a
 * round share. How many the rule calls better or worse.
 */
static int aa_trial(struct tu_rng *r, size_t n, double s, bool drift, enum cb_p_adjust m, double threshold)
{
	struct cb_compare_opts o = CB_COMPARE_DEFAULTS;
	struct cb_compare c[SET], *set[SET];
	double a[32], b[32];
	int called = 0;

	o.threshold = threshold;
	for (int k = 0; k < SET; k++) {
		double median = 1000 * (k + 1);

		for (size_t i = 0; i < n; i++) {
			double round = drift ? skewed(r, 1, 0.2) : 1; /* drift both members of a round share */

			a[i] = round * skewed(r, median, s);
			b[i] = round * skewed(r, median, s);
		}
		ck_assert_int_eq(cb_compare_samples(a, n, b, n, false, &o, &c[k]), 0);
		set[k] = &c[k];
	}
	ck_assert_int_eq(cb_compare_decide(set, SET, m, &o), 0);
	for (int k = 0; k < SET; k++)
		called += c[k].significant;
	return called;
}

/* 100 seeded A/A trials of 30 comparisons: at least 95 call nothing better or worse. */
START_TEST(test_aa_is_quiet)
{
	struct tu_rng r = { 28 };
	int quiet_unpaired = 0, quiet_drift = 0, quiet_naive = 0;

	for (int t = 0; t < 100; t++) {
		quiet_unpaired += aa_trial(&r, 10, 0.1, false, CB_ADJUST_BH, 0.05) == 0;
		quiet_drift += aa_trial(&r, 10, 0.1, true, CB_ADJUST_BH, 0.05) == 0;
		quiet_naive += aa_trial(&r, 10, 0.1, false, CB_ADJUST_NONE, 0) == 0;
	}
	ck_assert_msg(quiet_unpaired >= 95, "unpaired A/A: quiet in only %d of 100 trials", quiet_unpaired);
	ck_assert_msg(quiet_drift >= 95, "A/A under drift: quiet in only %d of 100 trials", quiet_drift);
	/* Without correction and threshold, 30 tests at 0.05 raise a false alarm in most trials (1 - 0.95^30 = 79 %). */
	ck_assert_msg(quiet_naive <= 50, "naive A/A: quiet in %d of 100 trials: the test above proves nothing", quiet_naive);
}
END_TEST

/* A real 140x change on 3 + 3 values: shown with its interval, undecided, "needs >= 4 reps"; 4 + 4 decide it. */
START_TEST(test_big_change_on_too_few_values)
{
	struct tu_rng r = { 140 };
	struct cb_compare_opts o = CB_COMPARE_DEFAULTS;
	struct cb_compare c, *set[1] = { &c };
	double a[5], b[5];

	for (int i = 0; i < 5; i++) {
		a[i] = skewed(&r, 20, 0.1);
		b[i] = skewed(&r, 2800, 0.1);
	}
	ck_assert_int_eq(cb_compare_samples(a, 3, b, 3, false, &o, &c), 0);
	ck_assert_int_eq(cb_compare_decide(set, 1, CB_ADJUST_BH, &o), 0);
	ck_assert(!c.significant && !c.can_be_significant);
	ck_assert_double_eq_tol(c.p, 0.1, 1e-12);
	ck_assert(c.ratio > 100 && c.ratio < 200);
	ck_assert(c.ratio_lo > 100 && c.ratio_hi < 200 && c.ratio_lo <= c.ratio && c.ratio <= c.ratio_hi);
	ck_assert(c.beyond_threshold);
	ck_assert_uint_eq(c.reps_needed, 4);
	ck_assert_int_eq(c.reps_basis, CB_REPS_TEST_MIN);
	/* The default 5 + 5: p = 0.008, decided. */
	ck_assert_int_eq(cb_compare_samples(a, 5, b, 5, false, &o, &c), 0);
	ck_assert_int_eq(cb_compare_decide(set, 1, CB_ADJUST_BH, &o), 0);
	ck_assert(c.significant);
	ck_assert_double_eq_tol(c.p, 2.0 / 252, 1e-12);
	ck_assert_uint_eq(c.reps_needed, 0);
	ck_assert_int_eq(c.reps_basis, CB_REPS_NONE);
}
END_TEST

/*
 * A +12 % change under 20 % noise on 8 + 8: undecided, and the reps asked
 * for come from the spread (the n whose interval would clear +-5 %).
 */
START_TEST(test_reps_from_the_spread)
{
	const double old[] = { 100, 96, 104, 99, 101, 97, 103, 100 };
	const double new_[] = { 150, 90, 125, 95, 140, 105, 118, 112 };
	struct cb_compare_opts o = CB_COMPARE_DEFAULTS;
	struct cb_compare c, *set[1] = { &c };

	ck_assert_int_eq(cb_compare_samples(old, 8, new_, 8, false, &o, &c), 0);
	ck_assert_int_eq(cb_compare_decide(set, 1, CB_ADJUST_BH, &o), 0);
	ck_assert(!c.significant);
	ck_assert(c.ratio > 1.1 && c.ratio < 1.2);
	ck_assert_int_eq(c.reps_basis, CB_REPS_SPREAD);
	ck_assert_uint_eq(c.reps_needed, cb_n_to_decide(&c.change, 0.05, 0, 0.95));
	ck_assert_uint_gt(c.reps_needed, 8);
	/* The same change inside the threshold: no number of reps makes it a verdict. */
	o.threshold = 0.2;
	ck_assert_int_eq(cb_compare_decide(set, 1, CB_ADJUST_BH, &o), 0);
	ck_assert(!c.significant);
	ck_assert_int_eq(c.reps_basis, CB_REPS_NONE);
}
END_TEST

/* An interval inside the threshold is '~' even at a tiny p; one beyond it with a large adjusted p too. */
START_TEST(test_threshold_and_adjustment_both_needed)
{
	struct cb_compare small = { .p = 1e-6, .change = { .ratio = true, .est = 1.03, .lo = 1.02, .hi = 1.04 },
				    .n_old = 20, .n_new = 20 };
	struct cb_compare big = { .p = 0.04, .change = { .ratio = true, .est = 1.5, .lo = 1.3, .hi = 1.7 }, .n_old = 20,
				  .n_new = 20 };
	struct cb_compare other = { .p = 0.9, .change = { .ratio = true, .est = 1, .lo = 0.9, .hi = 1.1 }, .n_old = 20,
				    .n_new = 20 };
	struct cb_compare *set[] = { &small, &big, &other };
	struct cb_compare_opts o = CB_COMPARE_DEFAULTS;

	ck_assert_int_eq(cb_compare_decide(set, 3, CB_ADJUST_BH, &o), 0);
	ck_assert(!small.significant && !small.beyond_threshold);
	/* BH: 0.04 at rank 2 of 3 -> 0.06. */
	ck_assert_double_eq_tol(big.p_adj, 0.06, 1e-12);
	ck_assert(!big.significant && big.beyond_threshold);
	ck_assert_int_eq(cb_compare_decide(set, 1 + 1, CB_ADJUST_NONE, &o), 0);
	ck_assert(big.significant && !small.significant);
}
END_TEST

static Suite *compare_set_suite(void)
{
	Suite *s = suite_create("compare_set");
	TCase *tc = tcase_create("set");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_bh_and_holm_by_hand);
	tcase_add_test(tc, test_names_and_test_minimum);
	tcase_add_test(tc, test_aa_is_quiet);
	tcase_add_test(tc, test_big_change_on_too_few_values);
	tcase_add_test(tc, test_reps_from_the_spread);
	tcase_add_test(tc, test_threshold_and_adjustment_both_needed);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(compare_set_suite)
