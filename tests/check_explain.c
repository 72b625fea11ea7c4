/*
 * Unit: cowbench run --explain on fixture rows (cli/run/explain.c), table-driven:
 * never a negative share or one above 100 %, one statistic per comparison,
 * inconsistent inputs said so, pre-copy accounted apart.
 */
#include <math.h>

#include <cowbench/report.h>

#include "run/run_cmd.h"
#include "testutil.h"

/* A row with every cell "not measured", then what the fixture sets. */
static void blank_row(struct cb_row *row)
{
	size_t n;
	const struct cb_column *c = cb_columns(&n);

	memset(row, 0, sizeof(*row));
	for (size_t i = 0; i < n; i++) {
		char *p = (char *)row + c[i].offset;

		if (c[i].type == CB_COL_INT) {
			int64_t na = CB_NA;

			memcpy(p, &na, sizeof(na));
		} else if (c[i].type == CB_COL_FLOAT) {
			double nan = NAN;

			memcpy(p, &nan, sizeof(nan));
		}
	}
	strcpy(row->workload, "seq");
	strcpy(row->writer, "child");
	strcpy(row->status, "ok");
	row->fork = 1;
	row->size_bytes = 16777216;
	row->pages = row->touched = 4096;
}

struct fixture {
	const char *name;
	double p50, mean, memcpy;
	int64_t wpcopy, wpcopy_ns;                       /* taskstats, per rep */
	int64_t cow_faults, cow_path_ns, cow_copy_ns, pre; /* /proc/cow_stats, per rep */
	int64_t copies;                                   /* pagemap */
	const char *must, *must_not;
	double memcpy_cold;  /* the same copy into a freshly populated page (0: not in the rows) */
	bool prefault;       /* run --prefault */
};

static const struct fixture fixtures[] = {
	/* host: p50 2.9 µs, mean 4.6 µs, copy path 1.9 µs: a share of the mean only */
	{ "host", 2900, 4640, 430, 4097, 4097 * 1900, CB_NA, CB_NA, CB_NA, CB_NA, 4096,
	  "kernel copy path: allocate, charge, copy, map (41 % of the write)", "median fault", 0, false },
	/* medians and means disagree hard: the share is still mean over mean */
	{ "skewed", 3000, 9000, 400, 4096, 4096 * 2500, CB_NA, CB_NA, CB_NA, CB_NA, 4096, "(28 % of the write)",
	  "larger part here", 0, false },
	/* QEMU TCG: the kernel path longer than the write around it */
	{ "emulated", 1200, 2000, 300, 4096, 4096 * 5900, CB_NA, CB_NA, CB_NA, CB_NA, 4096, "inconsistent",
	  "remainder", 0, false },
	/* cowbench kernel: its own split of path and copy */
	{ "cowstats", 2500, 3000, 300, CB_NA, CB_NA, 4096, 4096 * 2000, 4096 * 600, 0, 4096,
	  "of which the copy itself (30 % of the path) [/proc/cow_stats", "few writes", 0, false },
	/* pre-copy 2: 64 faults, 4032 pages copied ahead */
	{ "precopy", 40, 300, 300, CB_NA, CB_NA, 64, 64 * 9000, 64 * 700, 4032, 4096,
	  "4032 of 4096 writes found their page already copied", "few writes copied", 0, false },
	/* pre-copy with taskstats: pagemap sees 4096 copies for 64 faults; the where line says why */
	{ "precopy-where", 40, 300, 300, 64, 64 * 2500, 64, 64 * 9000, 64 * 700, 4032, 4096,
	  "pre-copy the rest (4032 pages copied ahead)", "inconsistent", 0, false },
	/* a lazily backed VM (issue 38): a fresh page's first write 7 µs, a warm copy 250 ns, the path 8.5 µs */
	{ "lazy-vm", 9000, 10000, 250, 4096, 4096 * 8500, CB_NA, CB_NA, CB_NA, CB_NA, 4096,
	  "6.75 us    of which the host's first touch of the new page (79 % of the path", "no host share", 7000, false },
	/* the same VM with --prefault: nothing split off, and said why */
	{ "lazy-prefault", 3000, 3500, 250, 4096, 4096 * 1900, CB_NA, CB_NA, CB_NA, CB_NA, 4096,
	  "touched before each rep (--prefault)", "host's first touch of the new page", 7000, true },
	/* bare metal: a first write costs what a copy does */
	{ "bare", 2900, 4640, 430, 4097, 4097 * 1900, CB_NA, CB_NA, CB_NA, CB_NA, 4096,
	  "a first write to a freshly populated page: no host share in the copy path here", "prefault", 500, false },
	/* older rows without memcpy_cold_ns: said, not guessed */
	{ "no-cold", 2900, 4640, 430, 4097, 4097 * 1900, CB_NA, CB_NA, CB_NA, CB_NA, 4096,
	  "first-touch share is not split: these rows have no memcpy_cold_ns", "host's first touch", 0, false },
};

static char *explain(const struct fixture *f, int reps)
{
	struct cli_explain *ex = cli_explain_new();
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(ex);
	for (int r = 0; r < reps; r++) {
		struct cb_row row;

		blank_row(&row);
		row.lat_p50_ns = f->p50 * (1 + 0.01 * r);
		row.lat_mean_ns = f->mean;
		row.lat_p99_ns = f->p50 * 3;
		row.memcpy_ns = f->memcpy;
		row.memcpy_cold_ns = f->memcpy_cold > 0 ? f->memcpy_cold : NAN;
		row.prefault = f->prefault ? 1 : CB_NA;
		row.wpcopy_count = f->wpcopy;
		row.wpcopy_ns = f->wpcopy_ns;
		row.cow_faults = f->cow_faults;
		row.cow_path_ns = f->cow_path_ns;
		row.cow_copy_ns = f->cow_copy_ns;
		row.precopy_success = f->pre;
		row.cow_copies = f->copies;
		row.cow_reuses = 0;
		row.faults = 4096;
		cli_explain_add(ex, &row);
	}
	cli_explain_print(ex, fp);
	fclose(fp);
	cli_explain_free(ex);
	return text;
}

/* Every "N %" in the text lies in [0, 100]. */
static void assert_shares_sane(const char *name, const char *text)
{
	for (const char *p = strstr(text, " %"); p; p = strstr(p + 1, " %")) {
		const char *q = p;

		while (q > text && (q[-1] == '.' || (q[-1] >= '0' && q[-1] <= '9') || q[-1] == '-'))
			q--;
		if (q == p)
			continue; /* "%" not after a number */
		double v = strtod(q, NULL);

		ck_assert_msg(v >= 0 && v <= 100, "%s: share %g out of range in:\n%s", name, v, text);
	}
}

START_TEST(test_explain_fixture)
{
	const struct fixture *f = &fixtures[_i];
	char *text = explain(f, 3);

	ck_assert_msg(strstr(text, f->must), "%s: no '%s' in:\n%s", f->name, f->must, text);
	ck_assert_msg(!strstr(text, f->must_not), "%s: '%s' in:\n%s", f->name, f->must_not, text);
	assert_shares_sane(f->name, text);
	/* No negative time anywhere: a remainder below zero is an inconsistency, said as such. */
	ck_assert_msg(!strstr(text, " -0") && !strstr(text, " -1") && !strstr(text, " -2") && !strstr(text, " -3") &&
			      !strstr(text, " -4") && !strstr(text, " -5") && !strstr(text, " -6") &&
			      !strstr(text, " -7") && !strstr(text, " -8") && !strstr(text, " -9"),
		      "%s: a negative number in:\n%s", f->name, text);
	free(text);
}
END_TEST

START_TEST(test_explain_no_rows)
{
	struct cli_explain *ex = cli_explain_new();
	struct cb_row row;
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);

	blank_row(&row);
	strcpy(row.status, "child-killed:SIGKILL");
	cli_explain_add(ex, &row);
	cli_explain_print(ex, fp);
	fclose(fp);
	ck_assert_msg(strstr(text, "no successful repetition to explain (1 failed)"), "%s", text);
	cli_explain_free(ex);
	free(text);
}
END_TEST

static Suite *explain_suite(void)
{
	Suite *s = suite_create("explain");
	TCase *tc = tcase_create("explain");

	tcase_add_loop_test(tc, test_explain_fixture, 0, (int)(sizeof(fixtures) / sizeof(fixtures[0])));
	tcase_add_test(tc, test_explain_no_rows);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(explain_suite)
