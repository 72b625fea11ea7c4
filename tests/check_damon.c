/* cowbench info's DAMON lines (cli/info/info_damon.c) on fake /sys and /proc trees. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "info_damon.h"
#include "testutil.h"

#define KD0 "sys/kernel/mm/damon/admin/kdamonds/0/"
#define CTX0 KD0 "contexts/0/"

static char root[64];

/* root/rel with text in it, parent directories made as needed. */
static void put(const char *rel, const char *text)
{
	char path[512];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *s = strchr(path + strlen(root) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		ck_assert(mkdir(path, 0755) == 0 || errno == EEXIST);
		*s = '/';
	}
	fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	fputs(text, fp);
	fclose(fp);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static void setup(void)
{
	snprintf(root, sizeof(root), "/tmp/cbdamon-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(root));
}

static void teardown(void)
{
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* One kdamond in the given state: paddr, one pageout scheme, 500 ms sampling, 5 s aggregation. */
/* Context 0 of kdamond 0: what its files say. */
static void context0(const char *ops, const char *sample_us, const char *aggr_us, const char *nr_schemes,
		     const char *action0)
{
	put(KD0 "contexts/nr_contexts", "1\n");
	put(CTX0 "operations", ops);
	put(CTX0 "monitoring_attrs/intervals/sample_us", sample_us);
	put(CTX0 "monitoring_attrs/intervals/aggr_us", aggr_us);
	put(CTX0 "schemes/nr_schemes", nr_schemes);
	put(CTX0 "schemes/0/action", action0);
}

static void kdamond0(const char *state, const char *pid)
{
	put("sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", "1\n");
	put(KD0 "state", state);
	put(KD0 "pid", pid);
	context0("paddr\n", "500000\n", "5000000\n", "1\n", "pageout\n");
}

/* damon_read, then `between` (may be NULL), damon_sample_end, a fixed window, damon_print: what it printed. */
static char *report(void (*between)(void), double window_ns)
{
	struct damon_info *d = malloc(sizeof(*d));
	char *out = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&out, &len);

	ck_assert_ptr_nonnull(d);
	damon_read(root, d);
	if (between)
		between();
	damon_sample_end(root, d);
	ck_assert(d->window_ns > 0);
	d->window_ns = window_ns;
	damon_print(fp, d);
	fclose(fp);
	free(d);
	return out;
}

static void assert_has(const char *out, const char *needle)
{
	ck_assert_msg(strstr(out, needle) != NULL, "missing: %s\nin:\n%s", needle, out);
}

static void assert_lacks(const char *out, const char *needle)
{
	ck_assert_msg(strstr(out, needle) == NULL, "unexpected: %s\nin:\n%s", needle, out);
}

START_TEST(absent_says_nothing_to_stop)
{
	char *out = report(NULL, 200e6);

	ck_assert_str_eq(out, "  damon:               absent (no /sys/kernel/mm/damon/admin, no damon_* module): "
			      "nothing to stop\n");
	free(out);
}
END_TEST

START_TEST(off_kdamond_is_listed_and_not_stopped)
{
	char *out;

	kdamond0("off\n", "-1\n");
	out = report(NULL, 200e6);
	ck_assert_str_eq(out, "  damon:               no kdamond running (1 configured, none on): nothing to stop\n"
			      "  damon kdamond 0:     off, no pid; paddr, sampling 500 ms, aggregation 5.00 s, "
			      "schemes: pageout\n");
	free(out);
}
END_TEST

static void schedstat_plus_2ms(void)
{
	put("proc/77/schedstat", "3000000 500 9\n");
}

START_TEST(on_paddr_pageout_with_its_cpu_use)
{
	char *out;

	kdamond0("on\n", "77\n");
	put("proc/77/comm", "kdamond.0\n");
	put("proc/77/schedstat", "1000000 500 7\n");
	put("proc/1/comm", "init\n");
	put("proc/self/comm", "kdamond.9\n"); /* not a pid: skipped */
	out = report(schedstat_plus_2ms, 200e6);
	ck_assert_str_eq(out,
			 "  damon:               1 kdamond running: its access sampling takes CPU time and its schemes "
			 "act on pages (pageout reclaims them), the measured ones too\n"
			 "  damon kdamond 0:     on, pid 77; paddr, sampling 500 ms, aggregation 5.00 s, schemes: pageout\n"
			 "  damon cpu:           kdamond.0 (pid 77) used 1.0 % of a CPU over 200 ms (schedstat)\n"
			 "  damon stop:          as root: echo off > /sys/kernel/mm/damon/admin/kdamonds/0/state for the "
			 "measurement, echo on after it (cowbench leaves it running)\n");
	free(out);
}
END_TEST

static void stat_plus_3_ticks(void)
{
	put("proc/78/stat", "78 (kdamond.0) I 2 0 0 0 -1 2129984 0 0 0 0 4 12 0 0 20 0 1 0 302 0\n");
}

START_TEST(without_schedstat_utime_and_stime_count)
{
	char *out, want[160];
	long hz = sysconf(_SC_CLK_TCK);

	kdamond0("on\n", "78\n");
	put("proc/78/comm", "kdamond.0\n");
	put("proc/78/stat", "78 (kdamond.0) I 2 0 0 0 -1 2129984 0 0 0 0 3 10 0 0 20 0 1 0 302 0\n");
	out = report(stat_plus_3_ticks, 1e9);
	snprintf(want, sizeof(want), "kdamond.0 (pid 78) used %.1f %% of a CPU over 1.00 s (utime+stime, 1/HZ "
		 "resolution)\n", 300.0 / (double)hz);
	assert_has(out, want);
	free(out);
}
END_TEST

static void kdamond_exits(void)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/proc/77/schedstat", root);
	ck_assert_int_eq(unlink(path), 0);
}

static void counter_goes_back(void)
{
	put("proc/77/schedstat", "10 0 1\n");
}

static void counter_jumps(void)
{
	put("proc/77/schedstat", "901000000 0 9\n");
}

START_TEST(exited_backwards_or_impossible_cpu_time_is_said_not_shown)
{
	char *out;

	kdamond0("on\n", "77\n");
	put("proc/77/comm", "kdamond.0\n");
	put("proc/77/schedstat", "1000000 0 1\n");
	out = report(kdamond_exits, 200e6);
	assert_has(out, "  damon cpu:           kdamond.0 (pid 77) exited during the 200 ms window\n");
	free(out);
	put("proc/77/schedstat", "1000000 0 1\n");
	out = report(counter_goes_back, 200e6);
	assert_has(out, "kdamond.0 (pid 77): its CPU time went backwards over 200 ms (pid reused?), not measured\n");
	free(out);
	put("proc/77/schedstat", "1000000 0 1\n");
	out = report(counter_jumps, 200e6);
	assert_has(out, "kdamond.0 (pid 77): 900 ms of CPU time in a 200 ms window: the counters disagree, not shown\n");
	assert_lacks(out, "% of a CPU");
	free(out);
}
END_TEST

START_TEST(modules_show_their_parameters_and_how_to_stop)
{
	char *out;

	put("sys/module/damon_reclaim/parameters/enabled", "Y\n");
	put("sys/module/damon_reclaim/parameters/kdamond_pid", "80\n");
	put("sys/module/damon_reclaim/parameters/sample_interval", "5000\n");
	put("sys/module/damon_reclaim/parameters/aggr_interval", "100000\n");
	put("sys/module/damon_lru_sort/parameters/enabled", "N\n");
	put("sys/module/damon_lru_sort/parameters/kdamond_pid", "-1\n");
	put("proc/80/comm", "kdamond.0\n");
	put("proc/80/schedstat", "5 0 1\n");
	out = report(NULL, 200e6);
	ck_assert_str_eq(out,
			 "  damon:               1 kdamond running: its access sampling takes CPU time and its schemes "
			 "act on pages (pageout reclaims them), the measured ones too\n"
			 "  damon_reclaim:       enabled Y, kdamond pid 80, sampling 5.00 ms, aggregation 100 ms\n"
			 "  damon_lru_sort:      enabled N, no kdamond, sampling ?, aggregation ?\n"
			 "  damon cpu:           kdamond.0 (pid 80) used 0.0 % of a CPU over 200 ms (schedstat)\n"
			 "  damon stop:          as root: echo N > /sys/module/damon_reclaim/parameters/enabled for the "
			 "measurement, echo Y after it (cowbench leaves it running)\n");
	free(out);
}
END_TEST

START_TEST(garbage_is_bounded_and_never_echoed)
{
	char big[20000], *out;

	memset(big, 'A', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	put("sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", "1\n");
	put(KD0 "state", "\x1b[31mon%n%s\n");
	put(KD0 "pid", "77abc\n");
	put(KD0 "contexts/nr_contexts", "99999999999999999999999\n");
	out = report(NULL, 200e6);
	assert_has(out, "  damon kdamond 0:     ?, no pid; contexts unreadable\n");
	free(out);

	context0(big, "-\n", "", "12\n", "%s%s%s%n\n");
	put(CTX0 "schemes/1/action", "lru_prio\n");
	put("proc/77/comm", "kdamond.%n\n");
	put("proc/77/stat", "77 (kdamond.0) I 2 0 0 0 -1 2129984 0 0 0 0 1 2 0\n");
	put("proc/79/comm", "kdamond.1\n");
	put("proc/79/stat", "79 (kdamond.1) I 2 0 0 0 -1 2129984 0 0 0 0 -3\n");
	put("proc/81/comm", "kdamond.2\n");
	put("proc/81/schedstat", "x12 0 0\n");
	put("proc/81/stat", "81 (kdamond.2)) I 2 0 0 0 -1 2129984 0 0 0 0 1\n");
	out = report(NULL, 200e6);
	assert_has(out, "  damon kdamond 0:     ?, no pid; ?, sampling ?, aggregation ?, schemes: ? lru_prio ? ? ? ? ? ? "
			"and 4 more\n");
	assert_lacks(out, "%");
	assert_lacks(out, "\x1b");
	assert_lacks(out, "AAAA");
	assert_lacks(out, "damon cpu:");
	free(out);

	put("sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", "one\n");
	out = report(NULL, 200e6);
	ck_assert_str_eq(out, "  damon:               no kdamond thread running; /sys/kernel/mm/damon/admin/kdamonds is "
			      "unreadable (nr_kdamonds is not a count)\n");
	free(out);

	put("sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", "20\n");
	out = report(NULL, 200e6);
	assert_has(out, "  damon kdamond 7:     ?, no pid; contexts unreadable\n");
	assert_has(out, "  damon kdamonds:      and 12 more kdamonds not shown\n");
	free(out);
}
END_TEST

START_TEST(window_is_measured)
{
	struct damon_info *d = malloc(sizeof(*d));
	struct timespec ts = { 0, 50 * 1000000L };

	ck_assert_ptr_nonnull(d);
	damon_read(root, d);
	nanosleep(&ts, NULL);
	damon_sample_end(root, d);
	ck_assert(d->window_ns >= 50e6 && d->window_ns < 50e9);
	free(d);
}
END_TEST

/* The CLI reads COWBENCH_DAMON_ROOT and prints the lines inside the tune block. */
START_TEST(cli_info_prints_damon_in_the_tune_block)
{
	const char *argv[] = { "cowbench", "info", NULL };
	char env[128];
	struct cli_result r;
	const char *tune;

	kdamond0("on\n", "77\n");
	put("proc/77/comm", "kdamond.0\n");
	put("proc/77/schedstat", "1000000 500 7\n");
	snprintf(env, sizeof(env), "COWBENCH_DAMON_ROOT=%s", root);
	r = tu_run_cli_env(argv, env);
	ck_assert_int_eq(r.status, 0);
	tune = strstr(r.out, "what could be tuned");
	ck_assert_ptr_nonnull(tune);
	assert_has(tune, "\n  damon kdamond 0:     on, pid 77; paddr, sampling 500 ms, aggregation 5.00 s, schemes: "
			 "pageout\n");
	assert_has(tune, "\n  damon cpu:           kdamond.0 (pid 77) used 0.0 % of a CPU over ");
	assert_has(tune, "\n  damon stop:          as root: echo off > /sys/kernel/mm/damon/admin/kdamonds/0/state");
	tu_free(&r);
}
END_TEST

static Suite *damon_suite(void)
{
	Suite *s = suite_create("damon");
	TCase *tc = tcase_create("info");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, absent_says_nothing_to_stop);
	tcase_add_test(tc, off_kdamond_is_listed_and_not_stopped);
	tcase_add_test(tc, on_paddr_pageout_with_its_cpu_use);
	tcase_add_test(tc, without_schedstat_utime_and_stime_count);
	tcase_add_test(tc, exited_backwards_or_impossible_cpu_time_is_said_not_shown);
	tcase_add_test(tc, modules_show_their_parameters_and_how_to_stop);
	tcase_add_test(tc, garbage_is_bounded_and_never_echoed);
	tcase_add_test(tc, window_is_measured);
	tcase_add_test(tc, cli_info_prints_damon_in_the_tune_block);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(damon_suite)
