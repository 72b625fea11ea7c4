/*
 * The closing summary's warnings (cli/run/closing_warn.c) on rows made here:
 * a time at the timer's floor, reps outside Tukey's fences and an interval
 * wider than +-10 % each get their line; a tight run gets none.
 */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include <cowbench/report.h>
#include <cowbench/workload.h>

#include "trial/run_notes.h"
#include "run/run_cmd.h"
#include "testutil.h"

static struct cb_row rows[8];

/* n rows whose column has the values v (ns or plain); every other measurement left unmeasured. */
static void make_rows(const char *column, const double *v, size_t n)
{
	memset(rows, 0, sizeof(rows));
	for (size_t i = 0; i < n; i++) {
		struct cb_row *r = &rows[i];

		r->schema = CB_SCHEMA_VERSION;
		snprintf(r->workload, sizeof(r->workload), "%s", "seq");
		snprintf(r->status, sizeof(r->status), "%s", "ok");
		r->rep = (int64_t)i + 1;
		r->fork_ns = CB_NA;
		r->lat_p50_ns = NAN;
		r->slowdown = NAN;
		if (!strcmp(column, "lat_p50_ns"))
			r->lat_p50_ns = v[i];
		else if (!strcmp(column, "fork_ns"))
			r->fork_ns = (int64_t)v[i];
	}
}

/* The warnings for column as text (ASCII style). */
static char *warnings(const char *column, const char *what, double timer_ns, size_t n)
{
	static char buf[4096];
	struct cli_noise_input in = { .rows = rows, .n = n, .column = column, .what = what, .time = true,
				      .timer_ns = timer_ns };
	FILE *fp;

	buf[0] = '\0'; /* fmemopen writes no terminator when nothing is written */
	fp = fmemopen(buf, sizeof(buf), "w");

	ck_assert_ptr_nonnull(fp);
	cli_noise_warnings(&in, fp, CB_UNITS_ASCII);
	fclose(fp);
	return buf;
}

START_TEST(test_timer_floor)
{
	const double v[] = { 20, 21, 20, 22, 21 };
	char *out;

	make_rows("lat_p50_ns", v, 5);
	out = warnings("lat_p50_ns", "write p50", 29.9, 5);
	ck_assert_msg(strstr(out, "warning: write p50 21 ns is within 3 reads of the timer's own cost (30 ns a read)"),
		      "%s", out);
	ck_assert_int_eq(tu_count_lines(out), 1);
	ck_assert(cli_at_timer_floor(89, 29.9) && !cli_at_timer_floor(90, 29.9) && !cli_at_timer_floor(20, 0));
	/* The same values with an unknown timer cost: no warning about it. */
	out = warnings("lat_p50_ns", "write p50", 0, 5);
	ck_assert_msg(!strstr(out, "timer"), "%s", out);
}
END_TEST

START_TEST(test_outliers_and_wide_interval)
{
	/* fork() times of a busy machine: one stalled rep among seven. */
	const double v[] = { 2.5e6, 2.4e6, 2.6e6, 2.55e6, 2.45e6, 2.5e6, 25e6 };
	char *out;

	make_rows("fork_ns", v, 7);
	out = warnings("fork_ns", "fork()", 30, 7);
	ck_assert_msg(strstr(out, "warning: 1 of 7 reps of fork() lies outside Tukey's fences (median 2.50 ms)"), "%s",
		      out);
	/* n = 7: the centre's exact interval at 1 - 2 * 3/128 = 95.31 %, its third-lowest to third-highest Walsh average. */
	ck_assert_msg(strstr(out, "warning: the 95.31 % interval of the centre fork() is +-"), "%s", out);
	ck_assert_msg(strstr(out, " would give +-10 %"), "%s", out);
	ck_assert_int_eq(tu_count_lines(out), 2);
}
END_TEST

START_TEST(test_tight_run_is_quiet)
{
	const double v[] = { 20000, 20100, 19900, 20050, 19950 };

	make_rows("lat_p50_ns", v, 5);
	ck_assert_str_eq(warnings("lat_p50_ns", "COW write p50", 30, 5), "");
}
END_TEST

/* What fn(arg) writes to stderr. */
static char *stderr_of(void (*fn)(const void *), const void *arg)
{
	static char buf[1024];
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n;

	ck_assert(tmp && saved >= 0);
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	fn(arg);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(buf, 1, sizeof(buf) - 1, tmp);
	buf[n] = '\0';
	fclose(tmp);
	return buf;
}

struct note_args {
	const char *const *given;
	size_t ngiven;
	long cpus;
};

static void call_thread_note(const void *arg)
{
	const struct note_args *a = arg;

	cli_note_thread_defaults(cb_workload_find("snapshot"), a->given, a->ngiven, a->cpus);
}

/* What cli_note_thread_defaults writes to stderr for snapshot on `cpus` CPUs. */
static char *thread_note(const char *const *given, size_t ngiven, long cpus)
{
	struct note_args a = { given, ngiven, cpus };

	return stderr_of(call_thread_note, &a);
}

static void call_rows_onward(const void *arg)
{
	cli_note_rows_onward(arg, 24);
}

/* A matrix that ends names its file and what reads it; without a file, how to get one. */
START_TEST(test_rows_onward)
{
	char *out = stderr_of(call_rows_onward, "r.csv");

	ck_assert_str_eq(out, "cowbench: note: 24 rows written to r.csv; next: cowbench summarize r.csv, cowbench plot "
			      "r.csv --out DIR\n");
	out = stderr_of(call_rows_onward, NULL);
	ck_assert_msg(strstr(out, "24 rows written; cowbench summarize and cowbench plot read them from a file"), "%s",
		      out);
}
END_TEST

/* snapshot's seed defaults (28 writers, 4 checkpointers) on a small machine are named, once. */
START_TEST(test_thread_defaults_note)
{
	const char *threads[] = { "threads" }, *both[] = { "threads", "checkpointers" };
	char *out = thread_note(NULL, 0, 2);

	ck_assert_msg(strstr(out, "snapshot runs with its defaults --threads=28 and --checkpointers=4 on 2 CPUs"), "%s",
		      out);
	ck_assert_int_eq(tu_count_lines(out), 1);
	/* --threads given: only the default still in force is named (4 checkpointers > 2 CPUs). */
	out = thread_note(threads, 1, 2);
	ck_assert_msg(strstr(out, "its defaults --checkpointers=4 on 2 CPUs") && !strstr(out, "threads="), "%s", out);
	ck_assert_str_eq(thread_note(both, 2, 2), "");
	ck_assert_str_eq(thread_note(NULL, 0, 64), "");
	ck_assert_str_eq(thread_note(threads, 1, 4), "");
}
END_TEST

static Suite *closing_suite(void)
{
	Suite *s = suite_create("closing");
	TCase *tc = tcase_create("warnings");

	tcase_add_test(tc, test_timer_floor);
	tcase_add_test(tc, test_outliers_and_wide_interval);
	tcase_add_test(tc, test_tight_run_is_quiet);
	tcase_add_test(tc, test_thread_defaults_note);
	tcase_add_test(tc, test_rows_onward);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(closing_suite)
