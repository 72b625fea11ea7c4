/*
 * Inference against known answers: Mann-Whitney p-values (exact values
 * from complete enumeration of the permutations, and SciPy's documented
 * example), the false-alarm rate and power of compare's decision in seeded
 * simulations (coverage: check_estimate), and cowbench compare end to end.
 */
#include <errno.h>
#include <math.h>

#include <cowbench/compare.h>
#include <cowbench/report.h>

#include "testutil.h"

/* A seeded normal generator (Box-Muller over tu_uniform01). */

static double normal(struct tu_rng *r, double mean, double sd)
{
	double u1 = tu_uniform01(r), u2 = tu_uniform01(r);

	return mean + sd * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

static void draw(struct tu_rng *r, double *v, size_t n, double mean, double sd)
{
	for (size_t i = 0; i < n; i++)
		v[i] = normal(r, mean, sd);
}

START_TEST(test_mwu_exact_known)
{
	/* SciPy's mannwhitneyu example (method="exact"): U1 = 17, p = 0.1111. */
	const double males[] = { 19, 22, 16, 29, 24 }, females[] = { 20, 11, 17, 12 };
	const double lo[] = { 1, 2, 3, 4, 5 }, hi[] = { 6, 7, 8, 9, 10 };
	/* Enumerating all C(13, 6) = 1716 splits: two-sided p = 38/1716. */
	const double a[] = { 1.5, 2.25, 3.0, 4.75, 5.5, 6.0 }, b[] = { 4.0, 5.25, 6.5, 7.0, 7.75, 8.5, 9.0 };
	struct cb_mwu t;

	ck_assert_int_eq(cb_mann_whitney(males, 5, females, 4, &t), 0);
	ck_assert(t.exact);
	ck_assert_double_eq_tol(t.u, 17, 1e-12);
	ck_assert_double_eq_tol(t.p, 1.0 / 9, 1e-9);
	/* Complete separation: the smallest p there is, 2 / C(10, 5). */
	ck_assert_int_eq(cb_mann_whitney(lo, 5, hi, 5, &t), 0);
	ck_assert_double_eq_tol(t.u, 0, 1e-12);
	ck_assert_double_eq_tol(t.p, 2.0 / 252, 1e-12);
	ck_assert_double_eq_tol(cb_mwu_min_p(5, 5), 2.0 / 252, 1e-12);
	ck_assert_int_eq(cb_mann_whitney(hi, 5, lo, 5, &t), 0);
	ck_assert_double_eq_tol(t.u, 25, 1e-12);
	ck_assert_double_eq_tol(t.p, 2.0 / 252, 1e-12);
	ck_assert_int_eq(cb_mann_whitney(a, 6, b, 7, &t), 0);
	ck_assert_double_eq_tol(t.u, 5, 1e-12);
	ck_assert_double_eq_tol(t.p, 38.0 / 1716, 1e-9);
	ck_assert_int_eq(cb_mann_whitney(a, 0, b, 7, &t), -EINVAL);
}
END_TEST

START_TEST(test_mwu_ties_normal_approximation)
{
	/* The permutation p of this tied sample, by enumeration: 0.00991. */
	const double a[] = { 1, 2, 2, 3, 3, 3, 4 }, b[] = { 3, 4, 4, 5, 5, 6 };
	const double same[] = { 7, 7, 7, 7 };
	struct cb_mwu t;

	ck_assert_int_eq(cb_mann_whitney(a, 7, b, 6, &t), 0);
	ck_assert(!t.exact);
	ck_assert_double_eq_tol(t.u, 3.5, 1e-12);
	ck_assert_msg(fabs(t.p - 0.00991) < 0.01, "p %g", t.p);
	ck_assert_int_eq(cb_mann_whitney(same, 4, same, 4, &t), 0);
	ck_assert_double_eq(t.p, 1);
}
END_TEST

START_TEST(test_mwu_exact_agrees_with_normal_for_large_samples)
{
	struct tu_rng r = { 11 };
	double a[50], b[50], mn = 2500, var = 2500.0 / 12 * 101;
	struct cb_mwu t;

	draw(&r, a, 50, 100, 10);
	draw(&r, b, 50, 104, 10);
	ck_assert_int_eq(cb_mann_whitney(a, 50, b, 50, &t), 0);
	ck_assert(t.exact);
	ck_assert_msg(fabs(t.p - erfc((fabs(t.u - mn / 2) - 0.5) / sqrt(var) / M_SQRT2)) < 0.005, "p %g", t.p);
}
END_TEST

/* Signed-rank p-values by complete enumeration of the 2^n sign patterns (n = 5: 32). */
START_TEST(test_reps_needed)
{
	/* z^2 CV^2 / h^2 = 1.96^2 * 0.1^2 / 0.03^2 = 42.7, the 4 * 1.96^2 * CV^2 / eps^2 with eps = 0.06. */
	ck_assert_uint_eq(cb_reps_needed(0.10, 0.03, 0.95), 43);
	ck_assert_uint_eq(cb_reps_needed(0.05, 0.01, 0.95), 97);
	ck_assert_uint_eq(cb_reps_needed(0.001, 0.03, 0.95), 2);
	ck_assert_uint_eq(cb_reps_needed(NAN, 0.03, 0.95), 0);
	ck_assert_uint_eq(cb_reps_needed(0.1, 0, 0.95), 0);
}
END_TEST

START_TEST(test_same_distribution_is_not_significant)
{
	struct tu_rng r = { 42 };
	struct cb_compare_opts o = CB_COMPARE_DEFAULTS;
	struct cb_compare c, *set[1] = { &c };
	double a[20], b[20];
	int quiet = 0, trials = 500;

	for (int i = 0; i < trials; i++) {
		draw(&r, a, 20, 100, 10);
		draw(&r, b, 20, 100, 10);
		ck_assert_int_eq(cb_compare_samples(a, 20, b, 20, false, &o, &c), 0);
		ck_assert_int_eq(cb_compare_decide(set, 1, CB_ADJUST_BH, &o), 0);
		quiet += !c.significant;
	}
	ck_assert_msg(quiet >= 0.95 * trials, "'~' in only %d of %d trials", quiet, trials);
}
END_TEST

START_TEST(test_ten_percent_shift_is_significant)
{
	struct tu_rng r = { 1 };
	struct cb_compare_opts o = CB_COMPARE_DEFAULTS;
	struct cb_compare c, *set[1] = { &c };
	double a[20], b[20];
	int found = 0, trials = 200;

	o.threshold = 0; /* the test's power alone: any change whose interval excludes 1 */
	for (int i = 0; i < trials; i++) {
		draw(&r, a, 20, 100, 5); /* CV 5 %, a typical cell here */
		draw(&r, b, 20, 110, 5);
		ck_assert_int_eq(cb_compare_samples(a, 20, b, 20, false, &o, &c), 0);
		ck_assert_int_eq(cb_compare_decide(set, 1, CB_ADJUST_BH, &o), 0);
		found += c.significant && c.ratio > 1;
		ck_assert(c.can_be_significant);
	}
	ck_assert_msg(found >= 0.99 * trials, "significant in only %d of %d trials", found, trials);
	/* The last trial's numbers are consistent with each other. */
	ck_assert(c.old_lo <= c.old_center && c.old_center <= c.old_hi);
	ck_assert(c.ratio_lo <= c.ratio && c.ratio <= c.ratio_hi);
	ck_assert(c.change.ratio && c.change.level >= 0.95);
}
END_TEST

START_TEST(test_compare_small_samples_and_determinism)
{
	const double a[] = { 10, 11, 12 }, b[] = { 20, 21, 22 }, zero[] = { 0, 0, 0 };
	struct cb_compare_opts o = CB_COMPARE_DEFAULTS;
	struct cb_compare c1, c2;

	/* 3 + 3 values: even complete separation gives p = 0.1. */
	ck_assert_int_eq(cb_compare_samples(a, 3, b, 3, false, &o, &c1), 0);
	ck_assert(!c1.can_be_significant);
	ck_assert(!c1.significant);
	ck_assert_double_eq_tol(c1.p, 0.1, 1e-12);
	/* The ratio is the median of the 9 pairwise ratios: 21/11 sits in the middle. */
	ck_assert_double_eq_tol(c1.ratio, 21.0 / 11, 1e-9);
	ck_assert_int_eq(cb_compare_samples(a, 3, b, 3, false, &o, &c2), 0);
	ck_assert_double_eq(c1.ratio_lo, c2.ratio_lo);
	ck_assert_double_eq(c1.new_hi, c2.new_hi);
	/* Zeros: no ratio, a difference, still a test. */
	ck_assert_int_eq(cb_compare_samples(zero, 3, b, 3, false, &o, &c1), 0);
	ck_assert(isnan(c1.ratio) && !c1.change.ratio);
	ck_assert_double_eq_tol(c1.change.est, 21, 1e-12);
	ck_assert_int_eq(cb_compare_samples(a, 0, b, 3, false, &o, &c1), -EINVAL);
}
END_TEST

START_TEST(test_noise_verdicts)
{
	const double two[] = { 1, 2 }, tight[] = { 100, 100.5, 99.5, 100.2, 99.8 };
	const double noisy[] = { 100, 130, 80, 120, 70 }, wide[] = { 100, 106, 95, 103, 97 };
	struct cb_noise_verdict v;

	ck_assert_int_eq(cb_noise_judge(two, 2, 0.03, 0.95, &v), 0);
	ck_assert_int_eq(v.verdict, CB_NOISE_TOO_FEW);
	ck_assert_int_eq(cb_noise_judge(tight, 5, 0.03, 0.95, &v), 0);
	ck_assert_int_eq(v.verdict, CB_NOISE_OK);
	ck_assert(v.rel_half_width < 0.03);
	ck_assert_int_eq(cb_noise_judge(noisy, 5, 0.03, 0.95, &v), 0);
	ck_assert_int_eq(v.verdict, CB_NOISE_NOISY);
	ck_assert_str_eq(cb_noise_name(v.verdict), "noisy");
	ck_assert_int_eq(cb_noise_judge(wide, 5, 0.03, 0.95, &v), 0);
	ck_assert_int_eq(v.verdict, CB_NOISE_WIDE);
	/* At 5 values the interval is [min, max]: its larger side over the centre. */
	ck_assert(v.rel_half_width > 0.05 && v.rel_half_width < 0.07);
	ck_assert_uint_eq(v.reps_needed, cb_reps_needed(v.cv, 0.03, 0.95));
	ck_assert_uint_gt(v.reps_needed, 5);
}
END_TEST


/* ---- cowbench compare, end to end on fixtures ---- */

#define FX(name) CB_FIXTURE_DIR "/" name
#define OLD FX("compare_old.csv")
#define NEW FX("compare_new.csv")

/* The output line that holds both needles (NULL when none does). */
static char *line_with(const char *text, const char *a, const char *b)
{
	static char line[1024];

	for (const char *p = text; *p;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len < sizeof(line)) {
			memcpy(line, p, len);
			line[len] = '\0';
			if (strstr(line, a) && strstr(line, b))
				return line;
		}
		p += len + (e != NULL);
	}
	return NULL;
}

START_TEST(test_cli_table)
{
	const char *argv[] = { "cowbench", "compare", OLD, NEW, NULL };
	struct cli_result r = tu_run_cli(argv);
	char *l;

	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_uint_eq(r.err_len, 0);
	/* +20 % on 8 + 7 reps at CV 3 %: significant, and worse for a time (Hodges-Lehmann ratio 1.180). */
	l = line_with(r.out, "workload=seq size=1M fork=1 ", "elapsed_ns");
	ck_assert_msg(l && strstr(l, "worse") && strstr(l, "+18.0 % [+14.5 %, +21.2 %]") && strstr(l, "(0+1 failed)"),
		      "%s", r.out);
	l = line_with(r.out, "workload=seq size=1M fork=1 ", "faults");
	ck_assert_msg(l && strstr(l, "better") && strstr(l, "-75.0 %"), "%s", r.out);
	/* The same distribution on both sides: '~'. */
	l = line_with(r.out, "workload=seq size=1M fork=0 ", "elapsed_ns");
	ck_assert_msg(l && strstr(l, " ~") && !strstr(l, "worse") && !strstr(l, "better"), "%s", r.out);
	/* Noise too shows its change and interval. */
	ck_assert_msg(l && strstr(l, "+0.3 % [-3.0 %, +2.9 %]"), "%s", r.out);
	/* Equal counts: '~' with no note about a floor (nothing to lift). */
	l = line_with(r.out, "workload=seq size=1M fork=0 ", "faults");
	ck_assert_msg(l && strstr(l, " ~") && !strstr(l, "layout"), "%s", r.out);
	ck_assert_ptr_nonnull(line_with(r.out, "workload=random size=1M fork=1", "only in old"));
	ck_assert_ptr_nonnull(line_with(r.out, "workload=single size=1M fork=1", "only in new"));
	ck_assert_ptr_nonnull(strstr(r.out, "1 better, 1 worse, 0 changed, 4 ~"));
	/* The footer states the rule. */
	ck_assert_ptr_nonnull(strstr(r.out, "better/worse: p adjusted (Benjamini-Hochberg over 6 comparisons) < 0.05, "
					    "the change's interval beyond +-5 % and, for counts, more than 8 apart"));
	tu_free(&r);
}
END_TEST

/* --threshold and --correction change the rule, and the footer says how. */
START_TEST(test_cli_threshold_and_correction)
{
	const char *wide[] = { "cowbench", "compare", "--threshold=25", OLD, NEW, NULL };
	const char *holm[] = { "cowbench", "compare", "--correction=holm", OLD, NEW, NULL };
	struct cli_result r = tu_run_cli(wide);
	char *l;

	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	/* +18.0 % [+14.5 %, +21.2 %] reaches into +-25 %: no longer worse; -75 % faults still better. */
	l = line_with(r.out, "workload=seq size=1M fork=1 ", "elapsed_ns");
	ck_assert_msg(l && !strstr(l, "worse") && strstr(l, "+18.0 %"), "%s", r.out);
	ck_assert_ptr_nonnull(strstr(r.out, "0 better, 0 worse") == NULL ? strstr(r.out, "1 better, 0 worse") : NULL);
	ck_assert_ptr_nonnull(strstr(r.out, "beyond +-25 %"));
	tu_free(&r);
	r = tu_run_cli(holm);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "p adjusted (Holm over 6 comparisons)"));
	ck_assert_ptr_nonnull(strstr(r.out, "1 better, 1 worse"));
	tu_free(&r);
}
END_TEST

/* Field of a CSV record by header name. */
static const char *field(const struct cb_csv_record *h, const struct cb_csv_record *r, const char *name)
{
	for (size_t i = 0; i < h->nfields; i++)
		if (strcmp(h->field[i], name) == 0)
			return r->field[i];
	ck_abort_msg("no column %s", name);
	return NULL;
}

START_TEST(test_cli_csv_and_json)
{
	const char *csv[] = { "cowbench", "compare", "--format=csv", OLD, NEW, NULL };
	const char *json[] = { "cowbench", "compare", OLD, NEW, "--format", "json", NULL };
	struct cli_result r = tu_run_cli(csv), j;
	struct cb_csv_record h = { 0 }, rec = { 0 };
	FILE *fp;
	int rows = 0, worse = 0, same = 0, one_side = 0;

	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	fp = fmemopen(r.out, r.out_len, "r");
	ck_assert_int_eq(cb_csv_read_record(fp, &h), 1);
	ck_assert_uint_eq(h.nfields, 37);
	while (cb_csv_read_record(fp, &rec) == 1) {
		ck_assert_uint_eq(rec.nfields, h.nfields);
		rows++;
		if (strcmp(field(&h, &rec, "verdict"), "worse") == 0) {
			worse++;
			ck_assert_str_eq(field(&h, &rec, "metric"), "elapsed_ns");
			ck_assert_str_eq(field(&h, &rec, "significant"), "1");
			ck_assert(strtod(field(&h, &rec, "p"), NULL) < 0.05);
			ck_assert(strtod(field(&h, &rec, "change_ci_lo_pct"), NULL) > 0);
			ck_assert(strtod(field(&h, &rec, "ratio_ci_lo"), NULL) > 1);
			ck_assert_str_eq(field(&h, &rec, "n_new"), "7");
		}
		if (strcmp(field(&h, &rec, "verdict"), "~") == 0) {
			same++;
			ck_assert_str_eq(field(&h, &rec, "significant"), "0");
		}
		if (strcmp(field(&h, &rec, "present"), "both") != 0) {
			one_side++;
			ck_assert_str_eq(field(&h, &rec, "metric"), "");
		}
		cb_csv_record_free(&rec);
	}
	cb_csv_record_free(&rec);
	cb_csv_record_free(&h);
	fclose(fp);
	ck_assert_int_eq(rows, 8);
	ck_assert_int_eq(worse, 1);
	ck_assert_int_eq(same, 4);
	ck_assert_int_eq(one_side, 2);
	j = tu_run_cli(json);
	ck_assert_msg(j.status == 0, "exit %d: %s", j.status, j.err);
	ck_assert_int_eq(tu_count_lines(j.out), rows);
	for (char *p = j.out; *p; p = strchr(p, '\n') + 1)
		ck_assert_msg(*p == '{' && strchr(p, '\n')[-1] == '}', "not a JSON line: %s", p);
	ck_assert_ptr_nonnull(strstr(j.out, "\"verdict\":\"worse\""));
	ck_assert_ptr_nonnull(strstr(j.out, "\"present\":\"new\",\"verdict\":\"only-new\""));
	tu_free(&r);
	tu_free(&j);
}
END_TEST

START_TEST(test_cli_fail_above)
{
	const char *tight[] = { "cowbench", "compare", "--fail-above=10", OLD, NEW, NULL };
	const char *loose[] = { "cowbench", "compare", "--fail-above=25%", OLD, NEW, NULL };
	const char *same[] = { "cowbench", "compare", "--fail-above=0", OLD, OLD, NULL };
	struct cli_result r = tu_run_cli(tight);

	/* +18.0 % beyond 10 %: exit 1, the output still complete, the reason on stderr. */
	ck_assert_int_eq(r.status, 1);
	ck_assert_ptr_nonnull(line_with(r.out, "workload=seq size=1M fork=1 ", "worse"));
	ck_assert_int_eq(tu_count_lines(r.err), 1);
	ck_assert_ptr_nonnull(strstr(r.err, "regression beyond --fail-above=10%: workload=seq size=1M fork=1 elapsed_ns"));
	tu_free(&r);
	r = tu_run_cli(loose);
	ck_assert_int_eq(r.status, 0);
	tu_free(&r);
	/* A file against itself: nothing significant, even with a 0 % threshold. */
	r = tu_run_cli(same);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "0 better, 0 worse, 0 changed, 9 ~"));
	tu_free(&r);
}
END_TEST

START_TEST(test_cli_by_axis)
{
	const char *fork[] = { "cowbench", "compare", "--by=fork", OLD, NULL };
	const char *kernel[] = { "cowbench", "compare", "--by=kernel", "--format=csv", OLD, NEW, NULL };
	const char *base[] = { "cowbench", "compare", "--by=fork=1", "--metric=elapsed_ns", OLD, NULL };
	struct cli_result r = tu_run_cli(fork);
	char *l;

	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "old: fork=0\nnew: fork=1\n"));
	l = line_with(r.out, "workload=seq size=1M ", "elapsed_ns");
	ck_assert_msg(l && strstr(l, "worse"), "%s", r.out);
	ck_assert_ptr_nonnull(line_with(r.out, "workload=random size=1M", "only in new"));
	tu_free(&r);
	/* Two kernels in two files told apart by their kernel column, as a CI gate would. */
	r = tu_run_cli(kernel);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_ptr_nonnull(line_with(r.out, "kernel,kernel=6.12.0,kernel=6.12.0-cow,workload=seq size=1M fork=1,elapsed_ns",
					 ",worse"));
	ck_assert_ptr_nonnull(line_with(r.out, "workload=seq size=1M fork=0,elapsed_ns", ",~"));
	tu_free(&r);
	r = tu_run_cli(base);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "old: fork=1\nnew: fork=0\n"));
	ck_assert_ptr_nonnull(line_with(r.out, "workload=seq size=1M ", "better"));
	tu_free(&r);
}
END_TEST

/*
 * --by on an axis matrix --order interleaves is compared like every other
 * change, unpaired (one method): a 3 % change under 25 % round-to-round
 * drift is '~' at 20 + 20, and the line says how many reps would decide it.
 */
START_TEST(test_cli_by_axis_interleaved)
{
	const char *table[] = { "cowbench", "compare", "--by=precopy", "--threshold=1", FX("compare_rounds.csv"), NULL };
	const char *csv[] = { "cowbench", "compare", "--by=precopy", "--format=csv", "--threshold=1%",
			      FX("compare_rounds.csv"), NULL };
	struct cli_result r = tu_run_cli(table);
	char *l;

	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	l = line_with(r.out, "workload=seq size=1M ", "elapsed_ns");
	ck_assert_msg(l && strstr(l, "20+20") && strstr(l, "-2.8 % [-11.2 %, +6.0 %]") && strstr(l, " ~ ") &&
			      strstr(l, "needs >= 547 reps (from the spread, for the interval to clear +-1 %)"),
		      "%s", r.out);
	tu_free(&r);
	r = tu_run_cli(csv);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_ptr_nonnull(strstr(r.out, ",verdict,count,above_floor,p_adj,beyond_threshold,reps_needed,reps_basis,conditions\n"));
	ck_assert_ptr_nonnull(line_with(r.out, "elapsed_ns,both,20,20,", ",~,0,1,"));
	ck_assert_ptr_nonnull(line_with(r.out, "elapsed_ns,both,20,20,", ",547,spread,"));
	tu_free(&r);
}
END_TEST

/*
 * A stock and a patched guest in one file (cowbench matrix --kernel=stock,patched
 * --workload=seq,single --size=16M --precopy=2 --reps=10, measured here): the
 * stock cells have no precopy axis (it collapses there), and each patched
 * pre-copy cell is compared against the stock cell all the same, either way round.
 */
START_TEST(test_cli_by_kernel_collapsed_axis)
{
	const char *fwd[] = { "cowbench", "compare", "--by=kernel=stock", "--format=csv", FX("compare_kernels.csv"), NULL };
	const char *rev[] = { "cowbench", "compare", "--by=kernel=patched", "--format=csv", FX("compare_kernels.csv"), NULL };
	struct cli_result r = tu_run_cli(fwd);

	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_msg(line_with(r.out, "kernel=stock,kernel=patched,workload=seq size=16M precopy=2,faults,both", ",better"),
		      "%s", r.out);
	ck_assert_msg(line_with(r.out, "workload=seq size=16M precopy=2,elapsed_ns,both", ",better"), "%s", r.out);
	ck_assert_msg(line_with(r.out, "workload=single size=16M precopy=2,faults,both", ",~"), "%s", r.out);
	ck_assert_msg(!strstr(r.out, ",,old,") && !strstr(r.out, ",,new,"), "a cell left unmatched: %s", r.out);
	tu_free(&r);
	r = tu_run_cli(rev);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_msg(line_with(r.out, "kernel=patched,kernel=stock,workload=seq size=16M precopy=2,faults,both", ",worse"),
		      "%s", r.out);
	ck_assert_msg(!strstr(r.out, ",,old,") && !strstr(r.out, ",,new,"), "a cell left unmatched: %s", r.out);
	tu_free(&r);
}
END_TEST

START_TEST(test_cli_output_file)
{
	char path[] = "/tmp/cbtest-compareXXXXXX";
	int fd = mkstemp(path);
	const char *argv[] = { "cowbench", "compare", "--format=csv", "--output", path, OLD, NEW, NULL };
	struct cli_result r;
	char *text;

	ck_assert_int_ge(fd, 0);
	close(fd);
	r = tu_run_cli(argv);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_uint_eq(r.out_len, 0);
	text = tu_slurp(path, NULL);
	ck_assert_ptr_nonnull(text);
	ck_assert_int_eq(strncmp(text, "by,old,new,cell,metric,present,", 31), 0);
	ck_assert_int_eq(tu_count_lines(text), 9);
	free(text);
	unlink(path);
	tu_free(&r);
}
END_TEST

static const char *const bad_inputs[][8] = {
	{ "cowbench", "compare", OLD, NULL },
	{ "cowbench", "compare", OLD, NEW, OLD, NULL },
	{ "cowbench", "compare", OLD, "/nonexistent/new.csv", NULL },
	{ "cowbench", "compare", OLD, FX("results_garbage.csv"), NULL },
	{ "cowbench", "compare", OLD, FX("results_schema2.csv"), NULL },
	{ "cowbench", "compare", "--alpha=2", OLD, NEW, NULL },
	{ "cowbench", "compare", "--alpha=0", OLD, NEW, NULL },
	{ "cowbench", "compare", "--fail-above=-1", OLD, NEW, NULL },
	{ "cowbench", "compare", "--fail-above=ten", OLD, NEW, NULL },
	{ "cowbench", "compare", "--format=xml", OLD, NEW, NULL },
	{ "cowbench", "compare", "--metric=workload", OLD, NEW, NULL },
	{ "cowbench", "compare", "--metric=", OLD, NEW, NULL },
	{ "cowbench", "compare", "--by=nope", OLD, NULL },
	{ "cowbench", "compare", "--by=size", OLD, NULL },
	{ "cowbench", "compare", "--by=fork=7", OLD, NULL },
	{ "cowbench", "compare", "--by=Fork;rm", OLD, NULL },
	{ "cowbench", "compare", "--by=fork", NULL },
	{ "cowbench", "compare", "--output=/nonexistent/dir/x.csv", OLD, NEW, NULL },
	{ "cowbench", "compare", "--bogus", OLD, NEW, NULL },
	{ "cowbench", "compare", "--threshold=-1", OLD, NEW, NULL },
	{ "cowbench", "compare", "--threshold=100", OLD, NEW, NULL },
	{ "cowbench", "compare", "--threshold=5x", OLD, NEW, NULL },
	{ "cowbench", "compare", "--correction=bonferroni", OLD, NEW, NULL },
	{ "cowbench", "compare", "--correction=", OLD, NEW, NULL },
};

START_TEST(test_cli_bad_input)
{
	tu_assert_usage_error(bad_inputs[_i], NULL);
}
END_TEST

/*
 * A matrix of fork=1,0 against a run of fork=1 (issue 29): the fork=0 cell
 * has no partner, it must not be compared with the run's fork=1 rows.
 */
START_TEST(test_cli_cells_match_on_identity)
{
	char old[] = "/tmp/cbtest-cmpidoXXXXXX", new_[] = "/tmp/cbtest-cmpidnXXXXXX";
	const char *matrix[] = { "cowbench", "matrix", "-w", "seq", "-s", "256K", "--fork=1,0", "--reps=3", "--warmup=0",
				 "--probes=none", "--output", old, "--force", NULL };
	const char *run[] = { "cowbench", "run", "-w", "seq", "-s", "256K", "--reps=3", "--warmup=0", "--probes=none",
			      "--quiet", "--output", new_, "--force", NULL };
	const char *cmp[] = { "cowbench", "compare", "--format=csv", "--metric=faults", old, new_, NULL };
	struct cli_result r;

	close(mkstemp(old));
	close(mkstemp(new_));
	r = tu_run_cli(matrix);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_free(&r);
	r = tu_run_cli(run);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_free(&r);
	r = tu_run_cli(cmp);
	ck_assert_msg(r.status == 0, "%s", r.err);
	/* fork=1 against fork=1: the same fault count, no change; fork=0 only in old. */
	ck_assert_msg(strstr(r.out, "fork=1 probes=none,faults,"), "%s", r.out);
	ck_assert_msg(strstr(r.out, "fork=0 probes=none,,") && strstr(r.out, "only-old"), "%s", r.out);
	ck_assert_msg(!strstr(r.out, "worse"), "a cell compared with another configuration: %s", r.out);
	tu_free(&r);
	unlink(old);
	unlink(new_);
}
END_TEST

/*
 * Two files of one configuration each: they are partners only when they differ in where they were
 * measured (kernel, clock, CPU), never in what (size, writer, workload option, how COW breaks).
 */
static const struct {
	const char *old_opt, *new_opt, *workload;
	bool paired;
} one_config_files[] = {
	{ "--writer=child", "--writer=parent", "seq", false },
	{ "--size=256K", "--size=512K", "seq", false },
	{ "--stride=2", "--stride=4", "stride", false },
	{ "--break=fault", "--break=populate", "seq", false },
	{ "--seed=1", "--seed=2", "random", false },
	{ "--clock=tsc", "--clock=monotonic", "seq", true },
	{ "--writer=child", "--size=256K", "seq", true },
};

START_TEST(test_cli_one_config_files_pair_on_what_ran)
{
	char old[] = "/tmp/cbtest-cmp1oXXXXXX", new_[] = "/tmp/cbtest-cmp1nXXXXXX", wl[64];
	const char *cmp[] = { "cowbench", "compare", "--format=csv", "--metric=faults", old, new_, NULL };
	struct cli_result r;

	snprintf(wl, sizeof(wl), "--workload=%s", one_config_files[_i].workload);
	close(mkstemp(old));
	close(mkstemp(new_));
	for (int side = 0; side < 2; side++) {
		const char *opt = side ? one_config_files[_i].new_opt : one_config_files[_i].old_opt;
		const char *run[] = { "cowbench", "run", wl, "--reps=3", "--warmup=0", "--probes=none", "--quiet",
				      "--output", side ? new_ : old, "--force", "--size=256K", opt, NULL };

		r = tu_run_cli(run);
		if (strcmp(opt, "--clock=tsc") == 0 && !tu_have_tsc()) {
			/* A CPU without rdtscp (some machines of this kind): the refusal is what holds here. */
			ck_assert_msg(r.status == 2 && strstr(r.err, "not usable here"), "exit %d: %s", r.status, r.err);
			tu_free(&r);
			unlink(old);
			unlink(new_);
			tu_skip("%s vs %s: no TSC with rdtscp here, so no such file to pair", one_config_files[_i].old_opt,
				one_config_files[_i].new_opt);
			return;
		}
		ck_assert_msg(r.status == 0, "%s", r.err);
		tu_free(&r);
	}
	r = tu_run_cli(cmp);
	ck_assert_msg(r.status == 0, "%s", r.err);
	if (one_config_files[_i].paired)
		ck_assert_msg(strstr(r.out, ",both,"), "%s vs %s: not compared: %s", one_config_files[_i].old_opt,
			      one_config_files[_i].new_opt, r.out);
	else
		ck_assert_msg(!strstr(r.out, ",both,") && strstr(r.out, "only-old") && strstr(r.out, "only-new"),
			      "%s vs %s compared as one configuration: %s", one_config_files[_i].old_opt,
			      one_config_files[_i].new_opt, r.out);
	tu_free(&r);
	unlink(old);
	unlink(new_);
}
END_TEST

/* ---- one writer: compare and summarize write CSV and JSON alike (cowbench/report.h) ---- */

START_TEST(test_writer_numbers)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	cb_csv_number(fp, NAN, -1);
	fputc('|', fp);
	cb_csv_number(fp, INFINITY, 4);
	fputc('|', fp);
	cb_csv_number(fp, 0.5, 4);
	fputc('|', fp);
	cb_json_number(fp, "a", -INFINITY);
	cb_json_number(fp, "b", NAN);
	cb_json_number(fp, "c", 2.5);
	cb_record_end(fp);
	fclose(fp);
	ck_assert_str_eq(buf, "||0.5000|,\"a\":null,\"b\":null,\"c\":2.5" CB_RECORD_END);
	free(buf);
}
END_TEST

/* Every line ends in CB_RECORD_END alone, and no field says nan or inf. */
static void assert_records(const char *what, const char *out, bool json)
{
	ck_assert_msg(*out, "%s: no output", what);
	ck_assert_msg(!strchr(out, '\r'), "%s: a CR in %s", what, out);
	ck_assert_msg(out[strlen(out) - 1] == '\n', "%s: the last line has no line end", what);
	for (const char *p = out; *p; p = strchr(p, '\n') + 1) {
		size_t n = strcspn(p, "\n");
		char line[4096];

		snprintf(line, sizeof(line), "%.*s", (int)n, p);
		if (json)
			ck_assert_msg(line[0] == '{' && line[n - 1] == '}', "%s: not a JSON line: %s", what, line);
		for (char *t = strtok(line, ",:{}"); t; t = strtok(NULL, ",:{}"))
			ck_assert_msg(strcasecmp(t, "nan") && strcasecmp(t, "inf") && strcasecmp(t, "-inf") &&
				      strcasecmp(t, "-nan") && strcasecmp(t, "infinity"), "%s: '%s' in %.*s", what, t,
				      (int)n, p);
	}
}

START_TEST(test_cli_compare_and_summarize_write_alike)
{
	/* faults 0 in every old rep: no change in percent, and no CV of a zero mean. */
	const char *cmp[] = { "cowbench", "compare", "--format=csv", FX("compare_zero_old.csv"),
			      FX("compare_zero_new.csv"), NULL };
	const char *sum[] = { "cowbench", "summarize", "--quiet", "--metric=faults", "--format=csv",
			      FX("compare_zero_old.csv"), NULL };
	const char *fmt[] = { "csv", "json" };

	for (int f = 0; f < 2; f++) {
		char cf[32], sf[32];
		struct cli_result c, s;

		snprintf(cf, sizeof(cf), "--format=%s", fmt[f]);
		snprintf(sf, sizeof(sf), "--format=%s", fmt[f]);
		cmp[2] = cf;
		sum[4] = sf;
		c = tu_run_cli(cmp);
		s = tu_run_cli(sum);
		ck_assert_msg(c.status == 0, "compare exit %d: %s", c.status, c.err);
		ck_assert_msg(s.status == 0, "summarize exit %d: %s", s.status, s.err);
		assert_records("compare", c.out, f == 1);
		assert_records("summarize", s.out, f == 1);
		if (f == 0) { /* not measured: an empty field in both */
			ck_assert_ptr_nonnull(line_with(c.out, ",faults,both,", ",100,100,100,,,,"));
			ck_assert_ptr_nonnull(line_with(s.out, ",faults,", ",0,0,0,0,0,0,0.9609,,0,"));
		} else { /* and null in both */
			ck_assert_ptr_nonnull(strstr(c.out, "\"change_pct\":null"));
			ck_assert_ptr_nonnull(strstr(s.out, "\"cv\":null"));
		}
		tu_free(&c);
		tu_free(&s);
	}
}
END_TEST

static Suite *compare_suite(void)
{
	Suite *s = suite_create("compare");
	TCase *tc = tcase_create("inference");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_mwu_exact_known);
	tcase_add_test(tc, test_mwu_ties_normal_approximation);
	tcase_add_test(tc, test_mwu_exact_agrees_with_normal_for_large_samples);
	tcase_add_test(tc, test_reps_needed);
	tcase_add_test(tc, test_same_distribution_is_not_significant);
	tcase_add_test(tc, test_ten_percent_shift_is_significant);
	tcase_add_test(tc, test_compare_small_samples_and_determinism);
	tcase_add_test(tc, test_noise_verdicts);
	suite_add_tcase(s, tc);
	tc = tcase_create("cli");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_cli_table);
	tcase_add_test(tc, test_cli_csv_and_json);
	tcase_add_test(tc, test_cli_threshold_and_correction);
	tcase_add_test(tc, test_cli_fail_above);
	tcase_add_test(tc, test_cli_by_axis);
	tcase_add_test(tc, test_cli_by_axis_interleaved);
	tcase_add_test(tc, test_cli_by_kernel_collapsed_axis);
	tcase_add_test(tc, test_cli_output_file);
	tcase_add_test(tc, test_cli_cells_match_on_identity);
	tcase_add_loop_test(tc, test_cli_one_config_files_pair_on_what_ran, 0,
			    (int)(sizeof(one_config_files) / sizeof(one_config_files[0])));
	tcase_add_test(tc, test_writer_numbers);
	tcase_add_test(tc, test_cli_compare_and_summarize_write_alike);
	tcase_add_loop_test(tc, test_cli_bad_input, 0, sizeof(bad_inputs) / sizeof(bad_inputs[0]));
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(compare_suite)
