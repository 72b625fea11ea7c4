/* Reading results back: the CSV reader, statistics, cowbench merge, summarize and plot. */
#include <errno.h>
#include <math.h>

#include <cowbench/error.h>
#include <cowbench/results.h>
#include <cowbench/estimate.h>
#include <cowbench/repstats.h>

#include "testutil.h"

#define FX(name) CB_FIXTURE_DIR "/" name

START_TEST(reads_known_file)
{
	struct cb_results res;
	char why[512];
	double v;

	ck_assert_msg(cb_results_read(FX("results_known.csv"), &res, why, sizeof(why)) == 0, "%s", why);
	ck_assert_uint_eq(res.n, 11);
	ck_assert(!res.torn);
	ck_assert(!res.same_columns); /* a subset of today's columns: still readable */
	ck_assert_str_eq(res.rows[0].cell, "workload=seq size=1M fork=1");
	ck_assert_int_eq(res.rows[0].elapsed_ns, 100000);
	ck_assert(cb_row_number(&res.rows[0], "faults", &v) && v == 256);
	/* A column the file lacks, and an empty cell: not measured. */
	ck_assert(!cb_row_number(&res.rows[0], "cow_faults", &v));
	ck_assert(!cb_row_number(&res.rows[5], "elapsed_ns", &v));
	ck_assert_str_eq(res.rows[5].status, "child-killed:SIGKILL");
	cb_results_free(&res);
}
END_TEST

START_TEST(torn_last_row_is_dropped)
{
	struct cb_results res;
	char why[512];

	ck_assert_msg(cb_results_read(FX("results_torn.csv"), &res, why, sizeof(why)) == 0, "%s", why);
	ck_assert_uint_eq(res.n, 1);
	ck_assert(res.torn);
	ck_assert_int_gt(res.torn_offset, 0);
	cb_results_free(&res);
}
END_TEST

static const struct {
	const char *file, *needle;
} bad_files[] = {
	{ "results_schema2.csv", "schema version" },
	{ "results_missing_col.csv", "missing column 'rep'" },
	{ "results_garbage.csv", "not a cowbench results CSV" },
	{ "results_badvalue.csv", "elapsed_ns" },
};

START_TEST(bad_files_rejected)
{
	struct cb_results res;
	char why[512], path[512];

	snprintf(path, sizeof(path), "%s/%s", CB_FIXTURE_DIR, bad_files[_i].file);
	ck_assert_int_eq(cb_results_read(path, &res, why, sizeof(why)), CB_EFORMAT);
	ck_assert_msg(strstr(why, bad_files[_i].needle), "'%s' not in '%s'", bad_files[_i].needle, why);
	ck_assert_ptr_nonnull(strstr(why, bad_files[_i].file));
}
END_TEST

START_TEST(summary_known_values)
{
	const double v[] = { 100, 200, 300, 400, 1000 };
	struct cb_summary s;

	ck_assert_int_eq(cb_summarize(v, 5, &s), 0);
	ck_assert_uint_eq(s.n, 5);
	ck_assert_double_eq(s.median, 300);
	ck_assert_double_eq(s.mean, 400);
	ck_assert_double_eq_tol(s.stddev, 353.5533906, 1e-6);
	ck_assert_double_eq_tol(s.cv, 0.8838834765, 1e-9);
	ck_assert_uint_eq(s.outliers, 1);
	/* 5 values: the interval is [min, max] at 1 - 2/32; the centre the geometric pseudo-median. */
	ck_assert_double_eq_tol(s.ci_lo, 100, 1e-9);
	ck_assert_double_eq_tol(s.ci_hi, 1000, 1e-9);
	ck_assert_double_eq_tol(s.ci_level, 0.9375, 1e-12);
	ck_assert(s.centre > 200 && s.centre < 400);
	ck_assert(v[0] == 100 && v[4] == 1000); /* input untouched */
	ck_assert_int_eq(cb_summarize(v, 0, &s), -EINVAL);
}
END_TEST

START_TEST(summary_edge_cases)
{
	const double one[] = { 7 }, even[] = { 4, 1, 3, 2 }, flat[] = { 5, 5, 5 };
	struct cb_summary s, t;

	ck_assert_int_eq(cb_summarize(one, 1, &s), 0);
	ck_assert_double_eq(s.median, 7);
	ck_assert(isnan(s.stddev) && isnan(s.cv) && isnan(s.ci_lo));
	ck_assert_int_eq(cb_summarize(even, 4, &s), 0);
	ck_assert_double_eq(s.median, 2.5);
	ck_assert_int_eq(cb_summarize(flat, 3, &s), 0);
	ck_assert_double_eq(s.stddev, 0);
	ck_assert_double_eq_tol(s.ci_lo, 5, 1e-12);
	ck_assert_double_eq_tol(s.ci_hi, 5, 1e-12);
	ck_assert_uint_eq(s.outliers, 0);
	/* Nothing random: the same input, the same interval. */
	ck_assert_int_eq(cb_summarize(even, 4, &s), 0);
	ck_assert_int_eq(cb_summarize(even, 4, &t), 0);
	ck_assert_double_eq(s.ci_lo, t.ci_lo);
	ck_assert_double_eq(s.centre, t.centre);
}
END_TEST

START_TEST(ratio_interval)
{
	const double a[] = { 200, 210, 190, 205 }, b[] = { 100, 105, 95, 100 };
	struct cb_change c;

	/* b is exactly a / 2 in some order: every pairwise ratio's median is 2 (200/100, 210/105, 190/95). */
	ck_assert_int_eq(cb_estimate_change(b, 4, a, 4, 0.95, &c), 0);
	ck_assert(c.ratio);
	ck_assert_double_eq_tol(c.est, 2, 1e-9);
	ck_assert(c.lo <= c.est && c.est <= c.hi);
	ck_assert(c.lo > 1.8 && c.hi < 2.3);
	ck_assert_int_eq(cb_estimate_change(b, 0, a, 4, 0.95, &c), -EINVAL);
}
END_TEST

START_TEST(natural_order)
{
	ck_assert_int_lt(cb_natural_cmp("size=16M", "size=128M"), 0);
	ck_assert_int_lt(cb_natural_cmp("size=512K", "size=1M"), 0);
	ck_assert_int_lt(cb_natural_cmp("size=2 x", "size=10 x"), 0);
	ck_assert_int_eq(cb_natural_cmp("a=1 b=2", "a=1 b=2"), 0);
	ck_assert_int_gt(cb_natural_cmp("workload=seq", "workload=random"), 0);
}
END_TEST

/* ---- the cowbench program ---- */

/* The value of column COL in the summarize CSV line for CELL and METRIC. */
static double summary_field(const char *csv, const char *cell, const char *metric, const char *col)
{
	FILE *fp = fmemopen((void *)csv, strlen(csv), "r");
	struct cb_csv_record h = { 0 }, r = { 0 };
	double v = NAN;
	size_t ci = 0;

	ck_assert_int_eq(cb_csv_read_record(fp, &h), 1);
	for (size_t i = 0; i < h.nfields; i++)
		if (strcmp(h.field[i], col) == 0)
			ci = i;
	ck_assert_uint_gt(ci, 0);
	while (cb_csv_read_record(fp, &r) == 1)
		if (strcmp(r.field[0], cell) == 0 && strcmp(r.field[1], metric) == 0)
			v = r.field[ci][0] ? strtod(r.field[ci], NULL) : NAN;
	cb_csv_record_free(&h);
	cb_csv_record_free(&r);
	fclose(fp);
	return v;
}

START_TEST(summarize_known_csv)
{
	const char *argv[] = { "cowbench", "summarize", "--format=csv", "--baseline", "fork=0",
			       FX("results_known.csv"), NULL };
	struct cli_result r = tu_run_cli(argv);
	const char *a = "workload=seq size=1M fork=1", *b = "workload=seq size=1M fork=0";

	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_double_eq(summary_field(r.out, a, "elapsed_ns", "n"), 5);
	ck_assert_double_eq(summary_field(r.out, a, "elapsed_ns", "failed"), 1);
	ck_assert_double_eq(summary_field(r.out, a, "elapsed_ns", "median"), 300000);
	ck_assert_double_eq(summary_field(r.out, a, "elapsed_ns", "mean"), 400000);
	ck_assert_double_eq_tol(summary_field(r.out, a, "elapsed_ns", "stddev"), 353553.39, 0.01);
	ck_assert_double_eq_tol(summary_field(r.out, a, "elapsed_ns", "cv"), 0.8839, 1e-4);
	ck_assert_double_eq(summary_field(r.out, a, "elapsed_ns", "outliers"), 1);
	ck_assert_double_eq(summary_field(r.out, a, "elapsed_ns", "noisy"), 1);
	/* Every baseline rep is 100 us: the Hodges-Lehmann ratio is the median of 1, 2, 3, 4, 10; its interval [1, 10] (96.8 %). */
	ck_assert_double_eq(summary_field(r.out, a, "elapsed_ns", "ratio"), 3);
	ck_assert_double_eq(summary_field(r.out, a, "elapsed_ns", "ratio_ci_lo"), 1);
	ck_assert_double_eq(summary_field(r.out, a, "elapsed_ns", "ratio_ci_hi"), 10);
	ck_assert_double_eq_tol(summary_field(r.out, a, "elapsed_ns", "change_ci_level"), 0.9683, 1e-4);
	ck_assert(isnan(summary_field(r.out, b, "elapsed_ns", "ratio"))); /* the baseline itself */
	ck_assert_double_eq(summary_field(r.out, b, "elapsed_ns", "stddev"), 0);
	ck_assert_double_eq(summary_field(r.out, b, "faults", "median"), 0);
	/* The noisy cell is named on stderr. */
	ck_assert_ptr_nonnull(strstr(r.err, "noisy cell"));
	ck_assert_ptr_nonnull(strstr(r.err, a));
	tu_free(&r);
}
END_TEST

/*
 * A depth cell's baseline is pre-copy off, which has no depth axis and ran at the boot's own
 * vm.cow_precopy_depth (identity column precopy_depth=1): it is still that cell's partner.
 */
START_TEST(summarize_depth_cell_pairs_with_precopy_off)
{
	const char *argv[] = { "cowbench", "summarize", "--quiet", "--format=csv", "--metric=elapsed_ns", "--baseline",
			       "precopy=0", FX("results_depth_baseline.csv"), NULL };
	struct cli_result r = tu_run_cli(argv);
	const char *depth = "kernel=patched workload=seq size=16M probes=taskstats precopy=1 precopy-depth=15 "
			    "precopy_depth=15";

	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_double_eq_tol(summary_field(r.out, depth, "elapsed_ns", "ratio"), 0.6625, 1e-4);
	ck_assert_double_eq_tol(summary_field(r.out, depth, "elapsed_ns", "change_ci_level"), 0.9, 1e-4); /* 3 + 3: the most there is */
	tu_free(&r);
}
END_TEST

/*
 * An evidence rep's times are of an instrumented machine: left out of every
 * latency statistic through cb_row_number, while its evidence columns count.
 */
START_TEST(evidence_rows_feed_only_evidence)
{
	const char *argv[] = { "cowbench", "summarize", "--format=csv", "--metric=elapsed_ns,lat_p50_ns,wpcopy_count",
			       FX("results_evidence.csv"), NULL };
	const char *merge[] = { "cowbench", "merge", FX("results_evidence.csv"), NULL };
	const char *a = "workload=seq size=1M fork=1 writer=child";
	struct cli_result r = tu_run_cli(argv), m;
	struct cb_results res;
	char why[512];
	double v;

	ck_assert_msg(cb_results_read(FX("results_evidence.csv"), &res, why, sizeof(why)) == 0, "%s", why);
	ck_assert(!cb_row_is_evidence(&res.rows[0]));
	ck_assert(cb_row_is_evidence(&res.rows[3]));
	ck_assert(cb_row_number(&res.rows[0], "lat_p50_ns", &v) && v == 1000.0);
	ck_assert(!cb_row_number(&res.rows[3], "lat_p50_ns", &v));
	ck_assert(!cb_row_number(&res.rows[3], "memcpy_ns", &v));
	ck_assert(cb_row_number(&res.rows[3], "wpcopy_count", &v) && v == 256.0);
	ck_assert(cb_row_number(&res.rows[3], "kernel_copy_ns_mean", &v) && v == 2000.0);
	cb_results_free(&res);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_double_eq(summary_field(r.out, a, "elapsed_ns", "n"), 3);
	ck_assert_double_eq(summary_field(r.out, a, "elapsed_ns", "median"), 200000);
	ck_assert_double_eq(summary_field(r.out, a, "lat_p50_ns", "n"), 3);
	ck_assert_double_eq(summary_field(r.out, a, "lat_p50_ns", "median"), 2000);
	ck_assert_double_eq(summary_field(r.out, a, "wpcopy_count", "n"), 1);
	ck_assert_double_eq(summary_field(r.out, a, "wpcopy_count", "median"), 256);
	tu_free(&r);
	/* Timed rep 1 and evidence rep 1 of one cell are two reps, not a duplicate. */
	m = tu_run_cli(merge);
	ck_assert_msg(m.status == 0, "%s", m.err);
	ck_assert_int_eq(tu_count_lines(m.out), 5);
	tu_free(&m);
}
END_TEST

/* The table names a noisy cell's diagnosis once, in its closing section, not again on stderr. */
START_TEST(summarize_table_diagnosis_once)
{
	const char *table[] = { "cowbench", "summarize", FX("results_known.csv"), NULL };
	struct cli_result t = tu_run_cli(table);

	ck_assert_int_eq(t.status, 0);
	ck_assert_ptr_nonnull(strstr(t.out, "Noisy cells and what co-varied"));
	ck_assert_ptr_null(strstr(t.err, "noisy cell"));
	tu_free(&t);
}
END_TEST

/*
 * Markdown (report.md, pull requests) of summarize --baseline: the first line is a baseline
 * cell, which has no ratio, yet the table has the ratio columns, and the fork cells say worse
 * (elapsed_ns: less is better) with the ratio in its one spelling.
 */
START_TEST(summarize_markdown_baseline)
{
	const char *md[] = { "cowbench", "summarize", "--quiet", "--format=markdown", "--baseline=fork=0",
			     "--metric=elapsed_ns", FX("stats_fork.csv"), NULL };
	struct cli_result r = tu_run_cli(md);

	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, "| ratio to baseline \\[CI\\] |") && strstr(r.out, "| verdict |"), "%s", r.out);
	ck_assert_msg(strstr(r.out, "| 158x \\[129x, 284x\\] |") && strstr(r.out, "| worse |"), "%s", r.out);
	ck_assert_ptr_null(strstr(r.out, "| higher |"));
	tu_free(&r);
}
END_TEST

START_TEST(summarize_table_and_json)
{
	const char *table[] = { "cowbench", "summarize", "--quiet", FX("results_known.csv"), NULL };
	const char *json[] = { "cowbench", "summarize", "--format=json", "--metric=elapsed_ns", FX("results_known.csv"),
			       NULL };
	struct cli_result t = tu_run_cli(table), j = tu_run_cli(json);

	ck_assert_int_eq(t.status, 0);
	ck_assert_uint_eq(t.err_len, 0);
	ck_assert_ptr_nonnull(strstr(t.out, "CI of centre"));
	ck_assert_ptr_nonnull(strstr(t.out, "centre: Hodges-Lehmann (on logs)"));
	ck_assert_ptr_nonnull(strstr(t.out, "2 cells, 11 rows"));
	ck_assert_int_eq(j.status, 0);
	ck_assert_int_eq(tu_count_lines(j.out), 2);
	ck_assert_ptr_nonnull(strstr(j.out, "{\"cell\":\"workload=seq size=1M fork=0\",\"metric\":\"elapsed_ns\",\"n\":5"));
	tu_free(&t);
	tu_free(&j);
}
END_TEST

static const char *const bad_inputs[] = {
	"results_schema2.csv", "results_missing_col.csv", "results_garbage.csv", "results_badvalue.csv",
	"no_such_results.csv",
};

START_TEST(summarize_bad_input)
{
	char path[512];
	const char *argv[] = { "cowbench", "summarize", path, NULL };

	snprintf(path, sizeof(path), "%s/%s", CB_FIXTURE_DIR, bad_inputs[_i]);
	tu_assert_usage_error(argv, bad_inputs[_i]);
}
END_TEST

START_TEST(summarize_bad_options)
{
	const char *metric[] = { "cowbench", "summarize", "--metric=workload", FX("results_known.csv"), NULL };
	const char *base[] = { "cowbench", "summarize", "--baseline", "precopy", FX("results_known.csv"), NULL };
	const char *none[] = { "cowbench", "summarize", NULL };

	tu_assert_usage_error(metric, "--metric");
	tu_assert_usage_error(base, "--baseline");
	tu_assert_usage_error(none, "summarize");
}
END_TEST

START_TEST(merge_shards)
{
	const char *argv[] = { "cowbench", "merge", FX("results_shard1.csv"), FX("results_shard2.csv"), NULL };
	struct cli_result r = tu_run_cli(argv);
	char path[] = "/tmp/cbtest-mergeXXXXXX";
	int fd = mkstemp(path);
	struct cb_results res;
	char why[512];

	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, r.out, r.out_len), (ssize_t)r.out_len);
	close(fd);
	ck_assert_msg(cb_results_read(path, &res, why, sizeof(why)) == 0, "%s", why);
	ck_assert_uint_eq(res.n, 8);
	ck_assert(res.same_columns); /* written with this build's full column table */
	ck_assert_str_eq(res.rows[7].cell, "workload=random size=1M fork=0");
	cb_results_free(&res);
	unlink(path);
	tu_free(&r);
}
END_TEST

START_TEST(merge_rejections)
{
	const char *dup[] = { "cowbench", "merge", FX("results_shard1.csv"), FX("results_dup.csv"), NULL };
	const char *self[] = { "cowbench", "merge", FX("results_shard1.csv"), FX("results_shard1.csv"), NULL };
	const char *schema[] = { "cowbench", "merge", FX("results_shard1.csv"), FX("results_schema2.csv"), NULL };
	const char *garbage[] = { "cowbench", "merge", FX("results_garbage.csv"), NULL };
	const char *none[] = { "cowbench", "merge", NULL };

	tu_assert_usage_error(dup, "duplicate cell: 'workload=random size=1M fork=1 writer=child thp=off clock=tsc' rep 1");
	tu_assert_usage_error(self, "duplicate cell");
	tu_assert_usage_error(schema, "schema version");
	tu_assert_usage_error(garbage, "not a cowbench results CSV");
	tu_assert_usage_error(none, "merge");
}
END_TEST

static bool file_starts_with(const char *path, const char *magic, size_t len, size_t min_size)
{
	size_t n;
	char *data = tu_slurp(path, &n);
	bool ok = data && n >= min_size && memcmp(data, magic, len) == 0;

	free(data);
	return ok;
}

/*
 * Every plot of the fixture as a real PNG and SVG, and the report. The first
 * plot and the report's first table answer what a write costs after fork;
 * plot lists every file it wrote on stdout, one per line; precopy.png is not
 * drawn from a stock kernel's single series, and a note says so.
 */
START_TEST(plot_renders_every_plot)
{
	char dir[] = "/tmp/cbtest-plotXXXXXX", path[512];
	const char *argv[] = { "cowbench", "plot", FX("results_plot.csv"), "--out", dir, NULL };
	const char *plots[] = { "cost", "cdf_seq", "cdf_random", "fork", "snapshot", "breakdown" };
	struct cli_result r;
	char *report, *dat;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	r = tu_run_cli(argv);
	ck_assert_msg(r.status == 0, "%s", r.err);
	snprintf(path, sizeof(path), "%s/report.md", dir);
	report = tu_slurp(path, NULL);
	ck_assert_ptr_nonnull(report);
	ck_assert_ptr_nonnull(strstr(report, "| workload=seq size=16M fork=1 | elapsed\\_ns | 3 |")); /* keys are text, not code spans */
	ck_assert_msg(strstr(report, "alone.\n\n## What a write costs after fork\n"), "%s", report);
	ck_assert_msg(strstr(report, "### What a write costs after fork") < strstr(report, "### First-write latency CDF"),
		      "the cost plot is not the first plot");
	for (size_t i = 0; i < sizeof(plots) / sizeof(plots[0]); i++) {
		char needle[600];

		snprintf(path, sizeof(path), "%s/%s.png", dir, plots[i]);
		ck_assert_msg(file_starts_with(path, "\x89PNG\r\n\x1a\n", 8, 2000), "%s is not a PNG", path);
		snprintf(needle, sizeof(needle), "%s\n", path);
		ck_assert_msg(strstr(r.out, needle), "plot did not list %s:\n%s", path, r.out);
		snprintf(path, sizeof(path), "%s/%s.svg", dir, plots[i]);
		ck_assert_msg(file_starts_with(path, "<?xml", 5, 2000), "%s is not an SVG", path);
		snprintf(needle, sizeof(needle), "%s\n", path);
		ck_assert_msg(strstr(r.out, needle), "plot did not list %s", path);
		snprintf(needle, sizeof(needle), "](%s.png)", plots[i]);
		ck_assert_msg(strstr(report, needle), "report.md lacks %s", needle);
	}
	snprintf(path, sizeof(path), "%s/report.md\n", dir);
	ck_assert_msg(strstr(r.out, path), "plot did not list report.md");
	ck_assert_int_eq(tu_count_lines(r.out), 2 * 6 + 1); /* nothing else on stdout */
	snprintf(path, sizeof(path), "%s/precopy.png", dir);
	ck_assert_int_ne(access(path, F_OK), 0);
	ck_assert_msg(strstr(r.err, "precopy plot skipped: the rows have one pre-copy mode (a stock kernel)"), "%s", r.err);
	/* The cost rows: seq 16M no fork 2.51 us... per write from the fixture: the label is the cell without fork. */
	snprintf(path, sizeof(path), "%s/data/cost.dat", dir);
	dat = tu_slurp(path, NULL);
	ck_assert_ptr_nonnull(dat);
	ck_assert_msg(strstr(dat, "\n\"seq 16M\"\t") && strstr(dat, "\n\"random 64M\"\t"), "%s", dat);
	ck_assert_int_eq(tu_count_lines(dat), 1 + 4); /* a comment, then the four fork cells with a twin */
	free(dat);
	/* Legends people read: "no fork" and "after fork", never fork=0/1. */
	snprintf(path, sizeof(path), "%s/data/cdf_seq.dat", dir);
	dat = tu_slurp(path, NULL);
	ck_assert_ptr_nonnull(dat);
	ck_assert_msg(strstr(dat, "\"16M no fork\"") && strstr(dat, "\"16M after fork\"") && !strstr(dat, "fork="), "%s", dat);
	free(dat);
	free(report);
	tu_free(&r);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(path), 0);
}
END_TEST

/*
 * fork.png draws the engine's centre, so its whiskers are that centre's
 * interval: six reps of 1 ms and one of 100 ms have a centre of 1 ms, and at
 * n = 7 the exact interval (95.3 %) runs to the third-highest Walsh average on
 * logs, sqrt(1 ms * 100 ms) = 10 ms (six of the seven pairs with the stall). A mean would sit
 * at 15 ms with whiskers far above: the bug this guards against.
 */
START_TEST(plot_fork_whiskers_are_the_centres)
{
	char dir[] = "/tmp/cbtest-plotXXXXXX", csv[600], path[700], *dat;
	const char *argv[] = { "cowbench", "plot", csv, "--out", path, NULL };
	static const char head[] = "schema,workload,size_bytes,pages,touched,writer,fork,rep,status,elapsed_ns,thp,clock,"
				   "method,fork_ns,ms_per_gib,cell\n";
	struct cli_result r;
	FILE *fp;
	double x, med, lo, hi;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(csv, sizeof(csv), "%s/r.csv", dir);
	fp = fopen(csv, "w");
	ck_assert_ptr_nonnull(fp);
	fputs(head, fp);
	for (int rep = 1; rep <= 7; rep++)
		fprintf(fp, "1,fork,16777216,4096,,child,1,%d,ok,%d,off,tsc,fork,%d,1,workload=fork size=16M\n", rep,
			rep == 7 ? 100000000 : 1000000, rep == 7 ? 100000000 : 1000000);
	fclose(fp);
	snprintf(path, sizeof(path), "%s/out", dir);
	r = tu_run_cli(argv);
	ck_assert_msg(r.status == 0, "%s", r.err);
	snprintf(path, sizeof(path), "%s/out/data/fork.dat", dir);
	dat = tu_slurp(path, NULL);
	ck_assert_ptr_nonnull(dat);
	ck_assert_msg(sscanf(strchr(dat, '\n') + 1, "%lf %lf %lf %lf", &x, &med, &lo, &hi) == 4, "%s", dat);
	ck_assert_msg(fabs(med - 1) < 1e-6 && fabs(lo - 1) < 1e-6 && fabs(hi - 10) < 1e-4,
		      "fork.dat: centre %g whiskers %g to %g", med, lo, hi);
	free(dat);
	tu_free(&r);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(path), 0);
}
END_TEST

/* Plots whose rows are absent are skipped, not drawn empty. */
START_TEST(plot_skips_absent_workloads)
{
	char dir[] = "/tmp/cbtest-plotXXXXXX", path[512];
	const char *argv[] = { "cowbench", "plot", FX("results_known.csv"), "--out", dir, NULL };
	struct cli_result r;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	r = tu_run_cli(argv);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_free(&r);
	snprintf(path, sizeof(path), "%s/cdf_seq.png", dir);
	ck_assert(file_starts_with(path, "\x89PNG", 4, 1000));
	snprintf(path, sizeof(path), "%s/fork.png", dir);
	ck_assert_int_ne(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/snapshot.svg", dir);
	ck_assert_int_ne(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(path), 0);
}
END_TEST

START_TEST(plot_bad_input)
{
	const char *garbage[] = { "cowbench", "plot", FX("results_garbage.csv"), "--out", "/tmp/cbtest-never", NULL };
	const char *no_out[] = { "cowbench", "plot", FX("results_known.csv"), NULL };

	tu_assert_usage_error(garbage, "not a cowbench results CSV");
	ck_assert_int_ne(access("/tmp/cbtest-never", F_OK), 0);
	tu_assert_usage_error(no_out, "--out");
}
END_TEST

/* A row's referred-to texts (CB_COL_REF) cross a pipe packed and come back as they were, in this thread's room. */
START_TEST(refs_cross_a_pipe)
{
	const struct cb_column *hist = cb_column_find("lat_hist"), *pages = cb_column_find("fault_pages_hist");
	const struct cb_column *path = cb_column_find("fault_path_hist");
	char buf[CB_ROW_REFS_MAX], small[8];
	struct cb_row row, back;

	ck_assert(hist && (hist->flags & CB_COL_REF) && pages && (pages->flags & CB_COL_REF) && path);
	{ /* every referred-to text at its widest still fits the pipe's room */
		size_t n, sum = 0;
		const struct cb_column *c = cb_columns(&n);

		for (size_t i = 0; i < n; i++)
			sum += c[i].flags & CB_COL_REF ? c[i].width : 0;
		ck_assert_uint_le(sum, CB_ROW_REFS_MAX);
	}
	memset(&row, 0, sizeof(row));
	row.lat_hist = "h1;10;20;11:7;10:9";
	row.fault_pages_hist = "1:30;2:4";
	ck_assert_int_eq(cb_row_pack_refs(&row, buf, sizeof(buf)), 0);
	ck_assert_int_eq(cb_row_pack_refs(&row, small, sizeof(small)), -ENOSPC);
	back = row;
	cb_row_drop_refs(&back);
	ck_assert_str_eq(cb_row_text(&back, hist), "");
	ck_assert_int_eq(cb_row_unpack_refs(&back, buf, sizeof(buf)), 0);
	ck_assert_str_eq(cb_row_text(&back, hist), "h1;10;20;11:7;10:9");
	ck_assert_ptr_ne(back.lat_hist, row.lat_hist); /* a copy, held by this thread */
	ck_assert_str_eq(back.fault_pages_hist, "1:30;2:4");
	ck_assert_ptr_null(back.fault_path_hist); /* empty stays empty */
	/* Cut short: nothing half-read is kept. */
	ck_assert_int_eq(cb_row_unpack_refs(&back, buf, 5), -ENOSPC);
	ck_assert_ptr_null(back.lat_hist);
}
END_TEST

static Suite *results_suite(void)
{
	Suite *s = suite_create("results");
	TCase *lib = tcase_create("library"), *cli = tcase_create("cli");

	tcase_add_test(lib, reads_known_file);
	tcase_add_test(lib, torn_last_row_is_dropped);
	tcase_add_test(lib, refs_cross_a_pipe);
	tcase_add_loop_test(lib, bad_files_rejected, 0, sizeof(bad_files) / sizeof(bad_files[0]));
	tcase_add_test(lib, summary_known_values);
	tcase_add_test(lib, summary_edge_cases);
	tcase_add_test(lib, ratio_interval);
	tcase_add_test(lib, natural_order);
	tcase_add_test(cli, summarize_known_csv);
	tcase_add_test(cli, summarize_depth_cell_pairs_with_precopy_off);
	tcase_add_test(cli, summarize_table_and_json);
	tcase_add_test(cli, summarize_markdown_baseline);
	tcase_add_test(cli, summarize_table_diagnosis_once);
	tcase_add_loop_test(cli, summarize_bad_input, 0, sizeof(bad_inputs) / sizeof(bad_inputs[0]));
	tcase_add_test(cli, summarize_bad_options);
	tcase_add_test(cli, merge_shards);
	tcase_add_test(cli, merge_rejections);
	tcase_add_test(cli, evidence_rows_feed_only_evidence);
	tcase_add_test(cli, plot_renders_every_plot);
	tcase_add_test(cli, plot_fork_whiskers_are_the_centres);
	tcase_add_test(cli, plot_skips_absent_workloads);
	tcase_add_test(cli, plot_bad_input);
	tcase_set_timeout(cli, 60);
	suite_add_tcase(s, lib);
	suite_add_tcase(s, cli);
	return s;
}

TU_MAIN(results_suite)
