/*
 * What reading a big results file costs: 10,000 rows (a matrix of two cells
 * at 5000 reps) through summarize, merge and compare, each in its own
 * process, its peak resident set from wait4's rusage. A row refers to its
 * latency histogram (CB_COL_REF) and the statistics never tabulate every
 * pair, so the peak is the rows themselves (~1.4 KB each) and the program;
 * a row that held its 24 KiB histogram again, or a sorted table of every
 * Walsh average, costs hundreds of MB.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cowbench/hist.h>
#include <cowbench/report.h>

#include "testutil.h"

enum { ROWS = 10000 };

/*
 * Peak RSS allowed (KiB): 20 MiB for one file of 10,000 rows, the budget
 * issue 40 set (measured here: 19.0 MiB, of which 13.7 MiB are the rows at
 * 1440 bytes and 3.2 MiB the program itself); 40 MiB for compare's two.
 */
#define ONE_FILE_KB (20 * 1024)

/* A row as `matrix --workloads=seq --sizes=64K --fork=1,0` writes it: 16 writes, their histogram. */
static void fill_row(struct cb_row *row, size_t i, struct cb_hist *h, char *hist, size_t hist_len, char *stamp,
		     size_t stamp_len)
{
	size_t n;
	const struct cb_column *c = cb_columns(&n);

	memset(row, 0, sizeof(*row));
	for (size_t k = 0; k < n; k++) {
		int64_t na = CB_NA;
		double nan = NAN;

		if (c[k].type == CB_COL_INT)
			memcpy((char *)row + c[k].offset, &na, sizeof(na));
		else if (c[k].type == CB_COL_FLOAT)
			memcpy((char *)row + c[k].offset, &nan, sizeof(nan));
	}
	row->schema = CB_SCHEMA_VERSION;
	row->fork = (int64_t)(i % 2);
	row->rep = (int64_t)(i / 2 + 1);
	row->size_bytes = 65536;
	row->pages = row->touched = 16;
	row->elapsed_ns = 700 + (int64_t)(i % 97) * (row->fork ? 300 : 3);
	row->ns_per_page = (double)row->elapsed_ns / 16;
	row->faults = row->fork ? 16 : 0;
	row->lat_p50_ns = 20 + (double)(i % 13);
	row->memcpy_ns = 40.1;
	row->numa_nodes = 1;
	snprintf(row->workload, sizeof(row->workload), "seq");
	snprintf(row->writer, sizeof(row->writer), "child");
	snprintf(row->status, sizeof(row->status), "ok");
	snprintf(row->thp, sizeof(row->thp), "off");
	snprintf(row->clock, sizeof(row->clock), "tsc");
	snprintf(row->kernel, sizeof(row->kernel), "6.12.0-test");
	row->host = "host";
	row->thp_mode = "madvise";
	row->git_revision = "66b186032abf";
	snprintf(row->cpu_model, sizeof(row->cpu_model), "Test CPU @ 2.0GHz");
	snprintf(stamp, stamp_len, "2026-11-27T02:%02zu:%02zuZ", i / 60 % 60, i % 60);
	row->timestamp = stamp;
	snprintf(row->cell, sizeof(row->cell), "workload=seq size=64K fork=%d", (int)row->fork);
	snprintf(row->thp_advice, sizeof(row->thp_advice), "never");
	snprintf(row->boot, sizeof(row->boot), "e95f7260-482f-4aa4-8910-0963b330fa53");
	snprintf(row->rep_kind, sizeof(row->rep_kind), "timed");
	cb_hist_reset(h);
	for (int w = 0; w < 16; w++)
		cb_hist_record(h, 10 + (double)((i + (size_t)w * 7) % 40) * (row->fork ? 50 : 1));
	ck_assert_int_gt(cb_hist_format(h, hist, hist_len), 0);
	row->lat_hist = hist;
}

static void write_rows(const char *path)
{
	FILE *fp = fopen(path, "w");
	struct cb_hist *h = malloc(sizeof(*h));
	char hist[CB_LAT_HIST_LEN], stamp[32];
	struct cb_report rep;
	struct cb_row row;

	ck_assert_ptr_nonnull(fp);
	ck_assert_ptr_nonnull(h);
	cb_report_init(&rep, fp, CB_FORMAT_CSV, false);
	for (size_t i = 0; i < ROWS; i++) {
		fill_row(&row, i, h, hist, sizeof(hist), stamp, sizeof(stamp));
		ck_assert_int_eq(cb_report_row(&rep, &row), 0);
	}
	ck_assert_int_eq(cb_report_finish(&rep), 0);
	ck_assert_int_eq(fclose(fp), 0);
	free(h);
}

/* Run the cowbench program with argv (output to /dev/null); its exit status, *kb its peak RSS. */
static int run_peak(const char *const *argv, long *kb)
{
	posix_spawn_file_actions_t fa;
	struct rusage ru;
	pid_t pid;
	int ws;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	ck_assert_int_eq(posix_spawn(&pid, CB_CLI_PATH, &fa, NULL, (char *const *)argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	ck_assert_int_eq(wait4(pid, &ws, 0, &ru), pid);
	*kb = ru.ru_maxrss;
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

#if defined(__SANITIZE_ADDRESS__)
static const bool sanitized = true;
#else
static const bool sanitized = false;
#endif

START_TEST(test_ten_thousand_rows)
{
	char dir[] = "/tmp/cbtest-rssXXXXXX", a[64], b[64];
	struct {
		const char *what;
		const char *argv[6];
		long bound_kb;
	} runs[] = {
		{ "summarize", { "cowbench", "summarize", a, NULL }, (long)ONE_FILE_KB },
		{ "merge", { "cowbench", "merge", a, NULL }, (long)ONE_FILE_KB },
		{ "compare", { "cowbench", "compare", a, b, NULL }, (long)(2 * ONE_FILE_KB) },
	};

	if (sanitized) {
		tu_skip("peak RSS under AddressSanitizer is its shadow and quarantine, not cowbench's");
		return;
	}
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a.csv", dir);
	snprintf(b, sizeof(b), "%s/b.csv", dir);
	write_rows(a);
	write_rows(b);
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		long kb = 0;

		ck_assert_int_eq(run_peak(runs[i].argv, &kb), 0);
		printf("%s of %d rows: peak RSS %ld KiB (bound %ld)\n", runs[i].what, ROWS, kb, runs[i].bound_kb);
		ck_assert_msg(kb > 0 && kb < runs[i].bound_kb, "%s of %d rows peaked at %ld KiB, over %ld", runs[i].what,
			      ROWS, kb, runs[i].bound_kb);
	}
	unlink(a);
	unlink(b);
	rmdir(dir);
}
END_TEST

static Suite *rows_rss_suite(void)
{
	Suite *s = suite_create("rows_rss");
	TCase *tc = tcase_create("read");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_ten_thousand_rows);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(rows_rss_suite)
