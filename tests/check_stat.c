/* cowbench stat and cowbench run --explain, end to end through the program. */
#include "testutil.h"
#include "where_util.h"

#include <poll.h>
#include <sys/inotify.h>
#include <errno.h>
#include <sys/file.h>
#include <pwd.h>
#include <sys/prctl.h>

#include <cowbench/cowbench.h>

#define WRITES 2048
#define SLACK 64 /* pages libc and the loader copy around exec and exit */

/* The CSV line starting with prefix, split into fields (static storage). */
static int csv_line(const char *out, const char *prefix, char fields[][32], int max)
{
	const char *p = out;
	int n = 0;

	while (p && *p && strncmp(p, prefix, strlen(prefix)) != 0)
		p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL;
	if (!p || !*p)
		return -1;
	while (n < max) {
		size_t len = strcspn(p, ",\r\n");

		snprintf(fields[n++], 32, "%.*s", (int)len, p);
		if (p[len] != ',')
			break;
		p += len + 1;
	}
	return n;
}

/*
 * stat CSV: time_s,procs,cow_copies,copy_ns,copy_ns_mean,minflt,majflt,private_dirty_kb,sys_cow_faults,copies_source,
 * fork_copies,fork_reuses,zero_copies,other_wp_faults,wp_faults
 */
enum { F_TIME, F_PROCS, F_COPIES, F_COPY_NS, F_MEAN, F_MINFLT, F_MAJFLT, F_PD, F_SYS, F_SOURCE,
       F_FORK, F_FREUSE, F_ZERO, F_OTHER, F_WP, F_N };

START_TEST(test_stat_usage_errors)
{
	const char *none[] = { CB_CLI_PATH, "stat", NULL };
	const char *both[] = { CB_CLI_PATH, "stat", "-p", "1", "--", "true", NULL };
	const char *interval[] = { CB_CLI_PATH, "stat", "--interval=0", "--", "true", NULL };
	const char *interval2[] = { CB_CLI_PATH, "stat", "--interval=abc", "--", "true", NULL };
	const char *count[] = { CB_CLI_PATH, "stat", "--count=-1", "--", "true", NULL };
	const char *nopid[] = { CB_CLI_PATH, "stat", "-p", "1073741823", NULL };
	const char *badpid[] = { CB_CLI_PATH, "stat", "--pid=12x", NULL };
	const char *format[] = { CB_CLI_PATH, "stat", "--format=xml", "--", "true", NULL };
	const char *nocmd[] = { CB_CLI_PATH, "stat", "--", "/nonexistent/cow-command", NULL };
	const char *nodash[] = { CB_CLI_PATH, "stat", "true", NULL };

	tu_assert_usage_error(none, "nothing to watch");
	tu_assert_usage_error(both, "not both");
	tu_assert_usage_error(interval, "--interval");
	tu_assert_usage_error(interval2, "--interval");
	tu_assert_usage_error(count, "--count");
	tu_assert_usage_error(nopid, "not a running process");
	tu_assert_usage_error(badpid, "not a running process");
	tu_assert_usage_error(format, "--format");
	tu_assert_usage_error(nocmd, "cannot run");
	tu_assert_usage_error(nodash, "--");
}
END_TEST

static void check_writer_total(const char *threads)
{
	char n[16];
	snprintf(n, sizeof(n), "%d", WRITES);
	const char *argv[] = { CB_CLI_PATH, "stat", "--interval=0.05", "--format=csv", "--", CB_COW_WRITER, n,
			       threads, NULL };
	struct cli_result r = tu_run_cli(argv);
	char f[F_N][32];

	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_msg(r.err_len == 0, "stderr: %s", r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "time_s,procs,cow_copies,"));
	ck_assert_int_eq(csv_line(r.out, "total,", f, F_N), F_N);
	/* the program's WRITES copies, and a few of the loader's and libc's */
	ck_assert_msg(atol(f[F_COPIES]) >= WRITES && atol(f[F_COPIES]) <= WRITES + SLACK, "copies %s", f[F_COPIES]);
	ck_assert_int_gt(atol(f[F_COPY_NS]), 0);
	ck_assert_int_ge(atol(f[F_MINFLT]), WRITES);
	tu_free(&r);
}

/* A program that makes a known number of COW copies: stat reports that number. */
START_TEST(test_stat_command_counts_copies)
{
	if (tu_skip_unless_root("taskstats") || tu_skip_if_delayacct_held("taskstats"))
		return;
	check_writer_total("1");
}
END_TEST

/* Threads that exited still count: the thread group's record keeps them. */
START_TEST(test_stat_command_threads)
{
	if (tu_skip_unless_root("taskstats") || tu_skip_if_delayacct_held("taskstats"))
		return;
	check_writer_total("4");
}
END_TEST

/* The command's exit status is stat's. */
START_TEST(test_stat_exit_status)
{
	const char *argv[] = { CB_CLI_PATH, "stat", "--interval=0.05", "--", "sh", "-c", "exit 7", NULL };
	struct cli_result r = tu_run_cli(argv);

	ck_assert_int_eq(r.status, 7);
	ck_assert_ptr_nonnull(strstr(r.out, "total"));
	tu_free(&r);
}
END_TEST

/* --children follows forks: descendants that come and go between two lines still count (exit records). */
START_TEST(test_stat_children)
{
	char script[512];
	char f[F_N][32];

	if (tu_skip_unless_root("taskstats") || tu_skip_if_delayacct_held("taskstats"))
		return;
	snprintf(script, sizeof(script), "%s 3000; %s 2000 2; true", CB_COW_WRITER, CB_COW_WRITER);
	const char *argv[] = { CB_CLI_PATH, "stat", "--children", "--interval=5", "--format=csv", "--", "sh", "-c",
			       script, NULL };
	struct cli_result r = tu_run_cli(argv);

	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_int_eq(csv_line(r.out, "total,", f, F_N), F_N);
	ck_assert_msg(atol(f[F_COPIES]) >= 5000 && atol(f[F_COPIES]) <= 5000 + 2 * SLACK, "copies %s", f[F_COPIES]);
	ck_assert_int_ge(atol(f[F_PROCS]), 3); /* sh and both writers (and their snapshot children) */
	tu_free(&r);
	/*
	 * Between the writers, 600 children that live a millisecond: every exit on the machine queues a
	 * record for stat, and a busy machine's exits once filled the kernel's buffer before stat read it
	 * at its next line, so the writers' final counts were dropped (copies 2825 of 5000).
	 */
	snprintf(script, sizeof(script), "%s 3000; i=0; while [ $i -lt 600 ]; do /bin/true; i=$((i+1)); done; %s 2000 2",
		 CB_COW_WRITER, CB_COW_WRITER);
	r = tu_run_cli(argv);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_int_eq(csv_line(r.out, "total,", f, F_N), F_N);
	ck_assert_msg(atol(f[F_PROCS]) >= 603, "procs %s: short-lived children lost", f[F_PROCS]);
	ck_assert_msg(atol(f[F_COPIES]) >= 5000, "copies %s", f[F_COPIES]);
	tu_free(&r);
	/* with --no-children only sh itself, which copies next to nothing */
	const char *alone[] = { CB_CLI_PATH, "stat", "--no-children", "--interval=5", "--format=csv", "--", "sh", "-c",
				script, NULL };
	r = tu_run_cli(alone);
	ck_assert_int_eq(csv_line(r.out, "total,", f, F_N), F_N);
	ck_assert_int_le(atol(f[F_COPIES]), SLACK);
	tu_free(&r);
}
END_TEST

/*
 * Run the CLI while this process reaps child (so the watched process is not
 * the CLI's); once the CLI has printed its header (its baseline is taken),
 * release the child through go (a pipe's write end).
 */
static struct cli_result tu_run_cli_bg_reap(const char *const *argv, pid_t child, int go)
{
	char outp[] = "/tmp/cbtest-outXXXXXX", errp[] = "/tmp/cbtest-errXXXXXX";
	int ofd = mkstemp(outp), efd = mkstemp(errp), ws;
	struct cli_result r = { 0 };
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(ofd, 1);
		dup2(efd, 2);
		execv(argv[0], (char *const *)argv);
		_exit(98);
	}
	for (int i = 0; i < 600; i++) { /* up to 60 s on a loaded machine */
		char *text = tu_slurp(outp, NULL);
		bool ready = text && strstr(text, "time_s");

		free(text);
		if (ready)
			break;
		usleep(100000);
	}
	ck_assert_int_eq(write(go, "g", 1), 1);
	close(go);
	ck_assert_int_eq(waitpid(child, NULL, 0), child);
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	r.out = tu_slurp(outp, &r.out_len);
	r.err = tu_slurp(errp, &r.err_len);
	close(ofd);
	close(efd);
	unlink(outp);
	unlink(errp);
	return r;
}

/* -p on a process someone else reaps: its final copies come from its exit record. */
START_TEST(test_stat_pid_final_counts)
{
	char n[16], pidtext[16];
	char f[F_N][32];
	int go[2];
	pid_t pid;

	if (tu_skip_unless_root("taskstats") || tu_skip_if_delayacct_held("taskstats"))
		return;
	if (!tu_delayacct_hold_on("taskstats")) /* before the process is born; through the journal */
		return;
	snprintf(n, sizeof(n), "%d", WRITES);
	ck_assert_int_eq(pipe(go), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1) /* stat attaches first */
			_exit(126);
		execl(CB_COW_WRITER, CB_COW_WRITER, n, (char *)NULL);
		_exit(127);
	}
	snprintf(pidtext, sizeof(pidtext), "%d", (int)pid);
	const char *argv[] = { CB_CLI_PATH, "stat", "-p", pidtext, "--interval=10", "--format=csv", NULL };
	close(go[0]);
	struct cli_result r = tu_run_cli_bg_reap(argv, pid, go[1]);

	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_int_eq(csv_line(r.out, "total,", f, F_N), F_N);
	ck_assert_msg(atol(f[F_COPIES]) >= WRITES && atol(f[F_COPIES]) <= WRITES + SLACK, "copies %s", f[F_COPIES]);
	tu_free(&r);
	tu_delayacct_release();
}
END_TEST

/*
 * -p on a process started before cowbench switched accounting on: taskstats
 * can never count its copies. The tracepoint's write faults stand in where
 * the machine allows (labelled), else the cells are empty; one note says why.
 */
START_TEST(test_stat_pid_lines)
{
	pid_t pid;
	char pidtext[16];

	if (tu_skip_unless_root("switching kernel.task_delayacct") || tu_skip_if_delayacct_held("switching kernel.task_delayacct"))
		return;
	ck_assert_int_eq(cb_sysctl_write_long(CB_DELAYACCT_SYSCTL, 0), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		sleep(600); /* killed below: alive however long a loaded machine takes to start stat */
		_exit(0);
	}
	snprintf(pidtext, sizeof(pidtext), "%d", (int)pid);
	const char *argv[] = { CB_CLI_PATH, "stat", "-p", pidtext, "--interval=0.05", "--count=3", "--format=csv",
			       NULL };
	struct cli_result r = tu_run_cli(argv);
	char f[F_N][32];

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_int_eq(tu_count_lines(r.out), 1 + 3 + 1); /* header, 3 lines, total */
	ck_assert_int_eq(tu_count_lines(r.err), 1);
	ck_assert_ptr_nonnull(strstr(r.err, "predates"));
	ck_assert_int_eq(csv_line(r.out, "total,", f, F_N), F_N);
	if (wu_have_tracepoint()) {
		ck_assert_str_eq(f[F_WP], "0"); /* a sleeping process writes nothing */
		ck_assert_str_eq(f[F_COPIES], "");  /* write faults never stand under a copies name */
		ck_assert_str_eq(f[F_SOURCE], "tracepoint");
	} else {
		ck_assert_str_eq(f[F_COPIES], "");
		ck_assert_str_eq(f[F_SOURCE], "");
	}
	ck_assert_str_eq(f[F_PROCS], "1");
	ck_assert_str_ne(f[F_MINFLT], "");
	ck_assert_str_ne(f[F_PD], "");
	tu_free(&r);
	ck_assert_int_eq(cb_delayacct_enabled(), 0); /* put back */
}
END_TEST

/* --system: the machine's COW faults from /proc/cow_stats (a stand-in file here, which grows by 100). */
START_TEST(test_stat_system)
{
	const char *argv[] = { CB_CLI_PATH, "stat", "--system", "--interval=0.05", "--count=6", "--format=csv", NULL };
	char path[] = "/tmp/cbtest-cowstatsXXXXXX", tmp[64], f[F_N][32];
	char *text = tu_slurp(CB_FIXTURE_DIR "/cowstats_patch.txt", NULL);
	int fd = mkstemp(path);
	struct cli_result r;
	char env[96];
	pid_t pid;
	FILE *fp;
	int ino;

	ck_assert_ptr_nonnull(text);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	snprintf(env, sizeof(env), "COWBENCH_COWSTATS=%s", path);
	/* The swap waits for stat's first read (its baseline), not for a time a loaded machine may miss. */
	ino = inotify_init1(IN_CLOEXEC);
	ck_assert_int_ge(ino, 0);
	ck_assert_int_ge(inotify_add_watch(ino, path, IN_CLOSE_NOWRITE), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) { /* 100 more faults and 10 us more copy time, swapped in whole */
		struct pollfd pf = { .fd = ino, .events = POLLIN };

		if (poll(&pf, 1, 20000) != 1)
			_exit(1);
		snprintf(tmp, sizeof(tmp), "%s.new", path);
		fp = fopen(tmp, "w");
		fputs("faults: 16484\ncopy_ns_total: 5908240\n", fp);
		fclose(fp);
		_exit(rename(tmp, path) == 0 ? 0 : 1);
	}
	r = tu_run_cli_env(argv, env);
	waitpid(pid, NULL, 0);
	close(ino);
	unlink(path);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_int_eq(tu_count_lines(r.out), 1 + 6 + 1);
	ck_assert_int_eq(csv_line(r.out, "total,", f, F_N), F_N);
	ck_assert_str_eq(f[F_COPIES], "100");
	ck_assert_str_eq(f[F_COPY_NS], "10000");
	ck_assert_str_eq(f[F_SYS], "100");
	ck_assert_str_eq(f[F_PROCS], "");
	ck_assert_str_eq(f[F_MINFLT], "");
	tu_free(&r);
	free(text);
	/* without the cowbench kernel's file: bad input, one line, nothing measured */
	const char *absent[] = { CB_CLI_PATH, "stat", "--system", NULL };
	r = tu_run_cli_env(absent, "COWBENCH_COWSTATS=/nonexistent/cow_stats");
	ck_assert_int_eq(r.status, 2);
	ck_assert_int_eq(tu_count_lines(r.err), 1);
	ck_assert_int_eq(r.out_len, 0);
	tu_free(&r);
}
END_TEST

/* Unprivileged: no copy counts (empty cells), one note line, the rest measured; never a crash. */
START_TEST(test_stat_unprivileged)
{
	char n[16];
	char f[F_N][32];

	if (tu_skip_unless_root("dropping to nobody"))
		return;
	snprintf(n, sizeof(n), "%d", WRITES);
	const char *argv[] = { CB_CLI_PATH, "stat", "--interval=0.05", "--format=csv", "--", CB_COW_WRITER, n,
			       NULL };
	struct cli_result r = wu_run_unprivileged(argv);

	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_int_eq(tu_count_lines(r.err), 1);
	ck_assert_ptr_nonnull(strstr(r.err, "COW copies not measured"));
	ck_assert_int_eq(csv_line(r.out, "total,", f, F_N), F_N);
	ck_assert_str_eq(f[F_COPIES], "");
	ck_assert_str_eq(f[F_COPY_NS], "");
	ck_assert_int_ge(atol(f[F_MINFLT]), WRITES);
	tu_free(&r);
}
END_TEST

START_TEST(test_run_explain_root)
{
	const char *argv[] = { CB_CLI_PATH, "run", "--size=4M", "--reps=1", "--warmup=0", "--explain",
			       "--format=csv", NULL };
	struct cli_result r;

	if (tu_skip_unless_root("taskstats and pagemap") || tu_skip_if_delayacct_held("taskstats and pagemap"))
		return;
	r = tu_run_cli(argv);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_ptr_nonnull(strstr(r.err, "explain: seq 4 MiB (1024 pages)"));
	ck_assert_ptr_nonnull(strstr(r.err, "1024 copied (new page frame), 0 reused in place"));
	ck_assert_ptr_nonnull(strstr(r.err, "kernel copy path"));
	ck_assert_msg(strstr(r.err, "where: 1024 of the writer's") && strstr(r.err, "in the region mapping"), "%s", r.err);
	ck_assert_ptr_null(strstr(r.err, "not measured"));
	ck_assert_ptr_nonnull(strstr(r.out, "cow_shared,wpcopy_count"));
	tu_free(&r);
}
END_TEST

START_TEST(test_run_explain_unprivileged)
{
	const char *argv[] = { CB_CLI_PATH, "run", "--size=4M", "--reps=2", "--warmup=0", "--explain",
			       "--format=csv", NULL };
	struct cli_result r;

	if (tu_skip_unless_root("dropping to nobody"))
		return;
	r = wu_run_unprivileged(argv);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_ptr_nonnull(strstr(r.err, "explain: seq"));
	ck_assert_ptr_nonnull(strstr(r.err, "copy count was not measured here"));
	ck_assert_ptr_nonnull(strstr(r.err, "where: not measured"));
	/* one note line, whatever the number of rows */
	ck_assert_ptr_nonnull(strstr(r.err, "note: not measured:"));
	ck_assert_ptr_null(strstr(strstr(r.err, "note: not measured:") + 1, "note: not measured:"));
	ck_assert_ptr_nonnull(strstr(r.err, "pagemap:needs-root"));
	tu_free(&r);
}
END_TEST

static Suite *stat_suite(void)
{
	Suite *s = suite_create("stat");
	TCase *tc = tcase_create("stat");

	tcase_set_timeout(tc, 120);
	tcase_add_unchecked_fixture(tc, tu_save_delayacct, tu_restore_delayacct);
	tcase_add_test(tc, test_stat_usage_errors);
	tcase_add_test(tc, test_stat_command_counts_copies);
	tcase_add_test(tc, test_stat_command_threads);
	tcase_add_test(tc, test_stat_exit_status);
	tcase_add_test(tc, test_stat_pid_lines);
	tcase_add_test(tc, test_stat_children);
	tcase_add_test(tc, test_stat_system);
	tcase_add_test(tc, test_stat_pid_final_counts);
	tcase_add_test(tc, test_stat_unprivileged);
	tcase_add_test(tc, test_run_explain_root);
	tcase_add_test(tc, test_run_explain_unprivileged);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(stat_suite)
