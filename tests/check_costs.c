/* Cost columns, lat_hist and --samples from the cowbench program: what always holds. */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/hist.h>
#include <cowbench/report.h>
#include <cowbench/stats.h>

#include "testutil.h"

#define MAXROWS 8

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Remove a test's output directory and everything in it. */
static void remove_tree(const char *dir)
{
	ck_assert_int_eq(nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

struct rows {
	struct cb_csv_record header, row[MAXROWS + 1];
	int n;
};

static void read_rows(const char *text, struct rows *t)
{
	FILE *fp = fmemopen((void *)text, strlen(text), "r");
	int rc;

	memset(t, 0, sizeof(*t));
	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(cb_csv_read_record(fp, &t->header), 1);
	while ((rc = cb_csv_read_record(fp, &t->row[t->n])) == 1)
		ck_assert_int_lt(++t->n, MAXROWS);
	ck_assert_int_eq(rc, 0);
	fclose(fp);
}

static void free_rows(struct rows *t)
{
	cb_csv_record_free(&t->header);
	for (int i = 0; i <= t->n; i++)
		cb_csv_record_free(&t->row[i]);
}

static const char *cell(const struct rows *t, int row, const char *col)
{
	for (size_t i = 0; i < t->header.nfields; i++)
		if (strcmp(t->header.field[i], col) == 0)
			return t->row[row].field[i];
	ck_abort_msg("no column %s", col);
	return NULL;
}

static double num(const struct rows *t, int row, const char *col)
{
	const char *c = cell(t, row, col);

	ck_assert_msg(*c, "column %s is empty", col);
	return strtod(c, NULL);
}

/* The histogram of every row holds every write, and its percentiles are the exact ones within 0.4 %. */
START_TEST(test_lat_hist_matches_exact_percentiles)
{
	const char *argv[] = { "cowbench", "run", "--workload=hotset", "--touch=50", "--size=1M", "--reps=2",
			       "--warmup=0", NULL };
	static const struct { const char *col; double p; } ps[] = {
		{ "lat_min_ns", 0.0001 }, { "lat_p50_ns", 50 }, { "lat_p90_ns", 90 }, { "lat_p99_ns", 99 },
		{ "lat_p999_ns", 99.9 }, { "lat_max_ns", 100 },
	};
	struct cli_result r = tu_run_cli(argv);
	struct cb_hist *h = malloc(sizeof(*h));
	struct rows t;

	ck_assert_msg(r.status == 0, "%s", r.err);
	read_rows(r.out, &t);
	ck_assert_int_eq(t.n, 3); /* 2 timed reps, then the evidence rep of the default probes: each holds its own */
	for (int i = 0; i < t.n; i++) {
		ck_assert_int_eq(cb_hist_parse(cell(&t, i, "lat_hist"), h), 0);
		ck_assert_uint_eq(h->total, (uint64_t)num(&t, i, "touched"));
		ck_assert_uint_eq(h->total, 128);
		for (size_t k = 0; k < sizeof(ps) / sizeof(ps[0]); k++) {
			double exact = num(&t, i, ps[k].col), approx = cb_hist_percentile(h, ps[k].p);

			/* 1/256 of the value, 0.5 ns for rounding to whole ns, 0.05 for the row's one decimal. */
			ck_assert_msg(fabs(approx - exact) <= exact / 256.0 + 0.55, "%s: hist %.1f row %.1f",
				      ps[k].col, approx, exact);
		}
	}
	free(h);
	free_rows(&t);
	tu_free(&r);
}
END_TEST

/* --samples: every measured write once, in write order, with the pages the row says were touched. */
START_TEST(test_samples_file)
{
	char path[] = "/tmp/cbtest-samplesXXXXXX";
	int fd = mkstemp(path);
	char arg[64];
	const char *argv[] = { "cowbench", "run", "--workload=burst", "--burst=4", "--touch=25", "--size=256K",
			       "--reps=2", "--warmup=1", arg, NULL };
	struct cli_result r;
	struct rows t;
	char *text;
	unsigned char seen[2][64];

	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(arg, sizeof(arg), "--samples=%s", path);
	r = tu_run_cli(argv);
	ck_assert_msg(r.status == 0, "%s", r.err);
	read_rows(r.out, &t);
	text = tu_slurp(path, NULL);
	ck_assert_ptr_nonnull(text);
	ck_assert_int_eq(strncmp(text, "rep,index,page,latency_ns\r\n", 27), 0);
	ck_assert_int_eq(tu_count_lines(text), 1 + 2 * 16); /* 64 pages, 25 %: 16 writes per rep, no warm-up */
	memset(seen, 0, sizeof(seen));
	{
		FILE *fp = fmemopen(text, strlen(text), "r");
		struct cb_csv_record rec = { 0 };
		int line = 0;

		ck_assert_int_eq(cb_csv_read_record(fp, &rec), 1);
		while (cb_csv_read_record(fp, &rec) == 1) {
			int rep = atoi(rec.field[0]), idx = atoi(rec.field[1]), page = atoi(rec.field[2]);

			ck_assert_uint_eq(rec.nfields, 4);
			ck_assert_int_eq(rep, 1 + line / 16);
			ck_assert_int_eq(idx, line % 16);
			ck_assert(page >= 0 && page < 64 && !seen[rep - 1][page]);
			seen[rep - 1][page] = 1;
			ck_assert(strtod(rec.field[3], NULL) > 0);
			line++;
		}
		ck_assert_int_eq(line, 32);
		cb_csv_record_free(&rec);
		fclose(fp);
	}
	ck_assert_mem_eq(seen[0], seen[1], 64); /* same seed, same pages in both reps */
	ck_assert_str_eq(cell(&t, 0, "touched"), "16");
	free(text);
	unlink(path);
	free_rows(&t);
	tu_free(&r);
}
END_TEST

/* Bad --samples input: exit 2, one line, and neither file left behind. */
START_TEST(test_samples_bad_input)
{
	char out[] = "/tmp/cbtest-outputXXXXXX", arg[80];
	int fd = mkstemp(out);
	const char *bad_dir[] = { "cowbench", "run", "--size=64K", "--samples=/nonexistent/dir/s.csv", arg, NULL };
	const char *self_driven[] = { "cowbench", "run", "--workload=fork", "--samples=/tmp/cbtest-never.csv", NULL };
	const char *empty[] = { "cowbench", "run", "--samples=", NULL };
	const char *same[] = { "cowbench", "run", "--size=64K", "--samples=/tmp/cbtest-same.csv",
			       "--output=/tmp/cbtest-same.csv", NULL };
	const char *same_dir[] = { "cowbench", "run", "--size=64K", "--samples=/tmp/./cbtest-same.csv",
				   "--output=/tmp/cbtest-same.csv", NULL };

	ck_assert_int_ge(fd, 0);
	close(fd);
	unlink(out);
	snprintf(arg, sizeof(arg), "--output=%s", out);
	tu_assert_usage_error(bad_dir, "/nonexistent/dir/s.csv");
	ck_assert_int_eq(access(out, F_OK), -1); /* the output opened first is removed again */
	tu_assert_usage_error(self_driven, "--samples");
	ck_assert_int_eq(access("/tmp/cbtest-never.csv", F_OK), -1);
	tu_assert_usage_error(empty, "--samples");
	tu_assert_usage_error(same, "same file");
	tu_assert_usage_error(same_dir, "same file");
	ck_assert_int_eq(access("/tmp/cbtest-same.csv", F_OK), -1);
}
END_TEST

/*
 * Root: the cost columns add up. copied_pages = cow_copies + precopy_wasted;
 * without pre-copy nothing unwritten is copied; the writer's private memory
 * grows by at least the pages copied.
 */
START_TEST(test_cost_columns_add_up)
{
	const char *argv[] = { "cowbench", "run", "--workload=stride", "--stride=2", "--size=4M", "--reps=2",
			       "--warmup=0", NULL };
	long page_kb = sysconf(_SC_PAGESIZE) / 1024;
	struct cli_result r;
	struct rows t;

	if (tu_skip_unless_root("pagemap frame numbers"))
		return;
	r = tu_run_cli(argv);
	ck_assert_msg(r.status == 0, "%s", r.err);
	read_rows(r.out, &t);
	for (int i = 0; i < t.n; i++) {
		double touched = num(&t, i, "touched"), copied = num(&t, i, "copied_pages");

		ck_assert_double_eq(touched, 512);
		ck_assert_double_eq(copied, num(&t, i, "cow_copies") + num(&t, i, "precopy_wasted"));
		if (!*cell(&t, i, "precopy") || num(&t, i, "precopy") == 0) {
			ck_assert_double_eq(num(&t, i, "precopy_wasted"), 0);
			ck_assert_double_eq(copied, touched);
		}
		ck_assert_double_ge(num(&t, i, "anon_growth_kb"), copied * (double)page_kb);
		ck_assert_double_le(num(&t, i, "anon_growth_kb"), copied * (double)page_kb + 1024);
	}
	free_rows(&t);
	tu_free(&r);
}
END_TEST

/* The baseline has nothing shared: no pagemap costs, but a histogram all the same. */
START_TEST(test_no_fork_costs_empty)
{
	const char *argv[] = { "cowbench", "run", "--size=64K", "--reps=1", "--warmup=0", "--no-fork", NULL };
	struct cli_result r = tu_run_cli(argv);
	struct rows t;

	ck_assert_msg(r.status == 0, "%s", r.err);
	read_rows(r.out, &t);
	ck_assert_str_eq(cell(&t, 0, "copied_pages"), "");
	ck_assert_str_eq(cell(&t, 0, "precopy_wasted"), "");
	ck_assert_int_eq(strncmp(cell(&t, 0, "lat_hist"), "h1;", 3), 0);
	free_rows(&t);
	tu_free(&r);
}
END_TEST

/* plot: every write's CDF and tail from lat_hist (no six-point cdf_WL then), index from --samples. */
START_TEST(test_plot_distributions)
{
	char dir[] = "/tmp/cbtest-plotXXXXXX", csv[4200], samples[4200], sarg[4300], path[4300];
	const char *run[] = { "cowbench", "run", "--workload=hotset", "--touch=50", "--size=256K", "--reps=2",
			      "--warmup=0", NULL, NULL, NULL };
	const char *plot[] = { "cowbench", "plot", csv, sarg, "--out", dir, NULL };
	struct cli_result r;
	char *dat;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(csv, sizeof(csv), "%s/r.csv", dir);
	snprintf(samples, sizeof(samples), "%s/s.csv", dir);
	snprintf(path, sizeof(path), "--output=%s", csv);
	snprintf(sarg, sizeof(sarg), "--samples=%s", samples);
	run[7] = path;
	run[8] = sarg;
	r = tu_run_cli(run);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_free(&r);
	r = tu_run_cli(plot);
	ck_assert_msg(r.status == 0, "%s", r.err);
	snprintf(path, sizeof(path), "%s/dist_hotset.png", dir);
	ck_assert_int_eq(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/index_1.svg", dir);
	ck_assert_int_eq(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/cdf_hotset.png", dir);
	ck_assert_int_eq(access(path, F_OK), -1);
	/* index_1: one titled block per rep, so the key has one entry per colour. */
	snprintf(path, sizeof(path), "%s/data/index_1.dat", dir);
	dat = tu_slurp(path, NULL);
	ck_assert_ptr_nonnull(dat);
	ck_assert_msg(strncmp(dat, "\"rep 1\"\t\"latency\"\n", strlen("\"rep 1\"\t\"latency\"\n")) == 0 && strstr(dat, "\n\n\n\"rep 2\"\t\"latency\"\n"),
		      "%.200s", dat);
	free(dat);
	snprintf(path, sizeof(path), "%s/data/index_1.gp", dir);
	dat = tu_slurp(path, NULL);
	ck_assert_ptr_nonnull(dat);
	ck_assert_str_eq(dat, "N = 2\n");
	free(dat);
	/* Many points: one per non-empty bucket, the last at CDF 1 with no tail. */
	snprintf(path, sizeof(path), "%s/data/dist_hotset.dat", dir);
	dat = tu_slurp(path, NULL);
	ck_assert_ptr_nonnull(dat);
	ck_assert_int_gt(tu_count_lines(dat), 10);
	ck_assert_ptr_nonnull(strstr(dat, "\t1.00000000\tnan\n"));
	free(dat);
	tu_free(&r);
	remove_tree(dir);
}
END_TEST

/* A --samples file that is not one: exit 2, one line, nothing written. */
START_TEST(test_plot_bad_samples)
{
	char bad[] = "/tmp/cbtest-badsXXXXXX", arg[64];
	int fd = mkstemp(bad);
	const char *plot[] = { "cowbench", "plot", CB_FIXTURE_DIR "/results_precopy.csv", arg, "--out",
			       "/tmp/cbtest-never-plot", NULL };

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "rep,index,page,latency_ns\n1,0,5,2.5\n1,1,x,3\n", 44), 44);
	close(fd);
	snprintf(arg, sizeof(arg), "--samples=%s", bad);
	tu_assert_usage_error(plot, "line 3");
	ck_assert_int_eq(access("/tmp/cbtest-never-plot", F_OK), -1);
	unlink(bad);
}
END_TEST

/*
 * The trade-off from a fixture of stride-2 rows in three pre-copy modes
 * (synthetic numbers: faults halved and quartered, one and two copies
 * wasted per write, p99 doubled and tripled): the report says exactly that.
 */
START_TEST(test_plot_tradeoff)
{
	char dir[] = "/tmp/cbtest-tradeXXXXXX", path[4200];
	const char *plot[] = { "cowbench", "plot", CB_FIXTURE_DIR "/results_precopy.csv", "--out", dir, NULL };
	struct cli_result r;
	char *report, *dat;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	r = tu_run_cli(plot);
	ck_assert_msg(r.status == 0, "%s", r.err);
	snprintf(path, sizeof(path), "%s/report.md", dir);
	report = tu_slurp(path, NULL);
	ck_assert_ptr_nonnull(report);
	ck_assert_ptr_nonnull(strstr(report, "## Pre-copy: what it saves and what it costs"));
	ck_assert_msg(strstr(report, "| depth 1 | 512 → 256 | 50.0 % | 512 | 256 | +1.00 MiB | 2.00x ("), "%s", report);
	ck_assert_msg(strstr(report, "| adaptive | 512 → 128 | 75.0 % | 512 | 512 | +2.00 MiB | 3.00x ("), "%s", report);
	snprintf(path, sizeof(path), "%s/data/tradeoff.dat", dir);
	dat = tu_slurp(path, NULL);
	ck_assert_ptr_nonnull(dat);
	ck_assert_int_eq(tu_count_lines(dat), 3); /* a comment, then one line per mode */
	ck_assert_ptr_nonnull(strstr(dat, "\"stride 4M depth 1\"\t50.00\t50.00\t1.000\t2\t"));
	ck_assert_msg(strstr(dat, "\t1\t1\n") && strstr(dat, "\t2\t2\n"), "mode index column: %s", dat);
	free(dat);
	/* The key's names: modes made from numbers, one per colour. */
	snprintf(path, sizeof(path), "%s/data/tradeoff.gp", dir);
	dat = tu_slurp(path, NULL);
	ck_assert_ptr_nonnull(dat);
	ck_assert_msg(strstr(dat, "M = 2\nmode1 = 'depth 1'\nmode2 = 'adaptive'\n"), "%s", dat);
	snprintf(path, sizeof(path), "%s/tradeoff.png", dir);
	ck_assert_int_eq(access(path, F_OK), 0);
	/* Three pre-copy modes: precopy.png is drawn (only a single series is skipped). */
	snprintf(path, sizeof(path), "%s/precopy.png", dir);
	ck_assert_int_eq(access(path, F_OK), 0);
	free(dat);
	free(report);
	tu_free(&r);
	remove_tree(dir);
}
END_TEST

static Suite *costs_suite(void)
{
	Suite *s = suite_create("costs");
	TCase *tc = tcase_create("costs");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_lat_hist_matches_exact_percentiles);
	tcase_add_test(tc, test_samples_file);
	tcase_add_test(tc, test_samples_bad_input);
	tcase_add_test(tc, test_cost_columns_add_up);
	tcase_add_test(tc, test_no_fork_costs_empty);
	tcase_add_test(tc, test_plot_distributions);
	tcase_add_test(tc, test_plot_bad_samples);
	tcase_add_test(tc, test_plot_tradeoff);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(costs_suite)
