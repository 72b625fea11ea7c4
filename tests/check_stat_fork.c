/*
 * cowbench stat's fork attribution (root, the write-fault tracepoint):
 * fork_copies counts the copies a fork caused, apart from zero-page copies
 * and reuses, whether taskstats counts (delay accounting on) or not (the
 * tracepoint fallback, as while another cowbench holds delay accounting);
 * and a run that cannot switch delay accounting on names the holder.
 */
#define _GNU_SOURCE
#include <signal.h>

#include "where_util.h"

#define PAGES 3000
#define SLACK 64 /* pages libc and the loader copy around fork, exec and exit */

/* cow-writer: PAGES copies in the parent, its child holding the pages; then both exit (no more copies). */
static void check_fork_copies(const char *env)
{
	const char *argv[] = { CB_CLI_PATH, "stat", "--interval=0.05", "--format=json", "--", CB_COW_WRITER, "3000",
			       NULL };
	struct cli_result r = tu_run_cli_env(argv, env);
	const char *cur = NULL;
	char line[4096];

	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_ptr_nonnull(wu_next(r.out, &cur, "{\"line\":\"total\"", line, sizeof(line)));
	ck_assert_msg(wu_num(line, "fork_copies") >= PAGES && wu_num(line, "fork_copies") <= PAGES + SLACK, "%s", line);
	ck_assert_msg(wu_num(line, "zero_copies") >= 0 && wu_num(line, "zero_copies") <= SLACK, "%s", line);
	ck_assert_msg(wu_num(line, "fork_reuses") >= 0 && wu_num(line, "fork_reuses") <= SLACK, "%s", line);
	ck_assert_msg(wu_num(line, "other_wp_faults") >= 0, "%s", line);
	tu_free(&r);
}

/* Delay accounting as it comes (on, or switched on by stat, or held off by another run). */
START_TEST(test_fork_copies_as_it_comes)
{
	check_fork_copies(NULL);
}
END_TEST

/* The tracepoint fallback: write faults on present pages, of which the fork copies are told apart. */
START_TEST(test_fork_copies_fallback)
{
	check_fork_copies("COWBENCH_STAT_NO_TASKSTATS=1");
}
END_TEST

/* A forking shell: its children's copies before exec count, and only the watched processes are counted. */
START_TEST(test_fork_copies_children_only)
{
	char script[512];
	const char *cur = NULL;
	char line[4096];

	/*
	 * Each writer pauses 200 ms after its fork: the tracepoint fallback classifies a copy by the
	 * pagemap stat reads when it sees the fork, at its next read (--interval 0.05), so copies made
	 * before that read are counted (cow_copies) but not told apart as fork copies. On a quiet
	 * machine a writer without the pause finishes first (fork_copies 1006 of 3000).
	 */
	snprintf(script, sizeof(script), "%s 2000 1 0 200; %s 1000 1 0 200", CB_COW_WRITER, CB_COW_WRITER);
	const char *argv[] = { CB_CLI_PATH, "stat", "--interval=0.05", "--format=json", "--", "sh", "-c", script, NULL };
	struct cli_result r = tu_run_cli_env(argv, "COWBENCH_STAT_NO_TASKSTATS=1");

	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_ptr_nonnull(wu_next(r.out, &cur, "{\"line\":\"total\"", line, sizeof(line)));
	ck_assert_msg(wu_num(line, "fork_copies") >= 3000 && wu_num(line, "fork_copies") <= 3000 + 3 * SLACK, "%s", line);
	ck_assert_msg(wu_num(line, "procs") >= 3 && wu_num(line, "procs") <= 6, "%s", line);
	tu_free(&r);
}
END_TEST

/* Delay accounting held off by another cowbench: stat says by whom, not "run as root". */
START_TEST(test_held_names_holder)
{
	const char *hold[] = { CB_HOLD_DELAYACCT, "20", NULL };
	const char *argv[] = { CB_CLI_PATH, "stat", "--interval=0.05", "--count=1000", "--", "sleep", "0.2", NULL };
	char want[96], buf[8];
	int out[2];
	pid_t holder;
	struct cli_result r;

	if (tu_delayacct_holder()) { /* someone holds it already: the message names them */
		snprintf(want, sizeof(want), "(PID %ld)", tu_delayacct_holder());
		holder = 0;
	} else {
		ck_assert_int_eq(pipe(out), 0);
		holder = fork();
		ck_assert_int_ge(holder, 0);
		if (holder == 0) {
			dup2(out[1], 1);
			execv(hold[0], (char *const *)hold);
			_exit(127);
		}
		close(out[1]);
		if (read(out[0], buf, 5) != 5 || tu_delayacct_holder() != holder) {
			kill(holder, SIGTERM);
			waitpid(holder, NULL, 0);
			printf("SKIP: could not hold kernel.task_delayacct (another run changed it)\n");
			return;
		}
		snprintf(want, sizeof(want), "(PID %d)", (int)holder);
	}
	if (cb_delayacct_enabled() == 1) { /* held on (a run in its evidence reps): stat joins, nothing to say */
		printf("SKIP: kernel.task_delayacct is held on, not off\n");
	} else {
		r = tu_run_cli(argv);
		ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
		ck_assert_msg(strstr(r.err, "held off by another cowbench") && strstr(r.err, want), "%s", r.err);
		ck_assert_msg(!strstr(r.err, "run as root"), "%s", r.err);
		tu_free(&r);
	}
	if (holder > 0) {
		kill(holder, SIGTERM);
		waitpid(holder, NULL, 0);
	}
}
END_TEST

static Suite *stat_fork_suite(void)
{
	Suite *s = suite_create("stat_fork");
	TCase *tc = tcase_create("fork");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_fork_copies_as_it_comes);
	tcase_add_test(tc, test_fork_copies_fallback);
	tcase_add_test(tc, test_fork_copies_children_only);
	tcase_add_test(tc, test_held_names_holder);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return wu_main_needing_tracepoint(stat_fork_suite);
}
