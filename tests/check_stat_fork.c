/*
 * cowbench stat's fork attribution (root, the write-fault tracepoint):
 * fork_copies counts the copies a fork caused, apart from zero-page copies
 * and reuses, whether taskstats counts (delay accounting on) or not (the
 * tracepoint fallback, as while another cowbench holds delay accounting);
 * and a run that cannot switch delay accounting on names the holder.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/mman.h>

#include <cowbench/forkcow.h>

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

/* The recorder's perf samples (call chains need them; so do kernels that refuse its BPF program): the same counts. */
START_TEST(test_fork_copies_perf_samples)
{
	check_fork_copies("COWBENCH_WPFAULT_NO_BPF=1");
}
END_TEST

/* Forks stat could not read (both sides gone before stat ran after the fork, on a loaded machine): its note. */
static long unread_forks(const char *err)
{
	long unread, seen;

	for (const char *p = strstr(err, "note: "); p; p = strstr(p + 1, "note: "))
		if (sscanf(p, "note: %ld of %ld forks could not be read", &unread, &seen) == 2)
			return unread;
	return 0;
}

/*
 * A forking shell: its children's copies before exec count, and only the
 * watched processes are counted. Each writer lives less than one of stat's
 * intervals and ends before stat's next sample of it: its copies must
 * still be in the total, whatever the load (they once were not: fork_copies
 * 1006 or 2007 of 3000, when stat met a writer only after its exit and
 * counted a fresh, empty record of it). What the load may change: a fork
 * whose two sides are both gone before stat runs after it cannot be read,
 * and stat says so; its copies are then other_wp_faults.
 */
START_TEST(test_fork_copies_children_only)
{
	char script[512];
	const char *cur = NULL;
	char line[4096];
	long unread, fork_copies, other, copies;

	snprintf(script, sizeof(script), "%s 2000; %s 1000", CB_COW_WRITER, CB_COW_WRITER);
	const char *argv[] = { CB_CLI_PATH, "stat", "--interval=0.05", "--format=json", "--", "sh", "-c", script, NULL };
	struct cli_result r = tu_run_cli_env(argv, "COWBENCH_STAT_NO_TASKSTATS=1");

	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_ptr_nonnull(wu_next(r.out, &cur, "{\"line\":\"total\"", line, sizeof(line)));
	unread = unread_forks(r.err);
	fork_copies = (long)wu_num(line, "fork_copies");
	other = (long)wu_num(line, "other_wp_faults");
	copies = (long)wu_num(line, "wp_faults");
	ck_assert_int_eq(wu_num(line, "cow_copies"), -1); /* never write faults under a copies name */
	/* every write fault on a present page is counted, whatever happened to the forks */
	ck_assert_msg(copies >= 3000 && copies <= 3000 + 4 * SLACK, "%s", line);
	ck_assert_msg(fork_copies + other >= 3000, "%s", line);
	if (unread == 0)
		ck_assert_msg(fork_copies >= 3000 && fork_copies <= 3000 + 3 * SLACK, "%s\n%s", line, r.err);
	else /* the 2000-page writer's fork or the 1000-page one's, or both, unread */
		ck_assert_msg(fork_copies >= (unread == 1 ? 1000 : 0) && fork_copies <= 3000 + 3 * SLACK, "%s\n%s", line,
			      r.err);
	ck_assert_msg(wu_num(line, "procs") >= 3 && wu_num(line, "procs") <= 6, "%s", line);
	tu_free(&r);
}
END_TEST

/*
 * A process's counts stay its own when stat starts watching it only after
 * its fork, writes and exit were processed (forkcow.h): stat learns of a
 * short-lived child from the same records. Synthetic records, pids no
 * process has (the fork cannot be read: its faults are other).
 */
START_TEST(test_watch_after_exit_keeps_counts)
{
	const pid_t parent = 0x3ffffff0, child = 0x3ffffff1;
	struct cb_forkcow *f;
	struct cb_fc_counts c;

	ck_assert_int_eq(cb_forkcow_new(true, &f), 0);
	cb_forkcow_watch(f, parent);
	cb_forkcow_task(f, &(struct cb_wpfault_task){ CB_WPFAULT_FORK, child, parent, child, 1000 });
	for (int i = 0; i < 5; i++)
		cb_forkcow_fault(f, &(struct cb_wpfault_sample){ .pid = child, .tid = child, .time_ns = 2000 + (uint64_t)i,
								 .addr = 0x10000 + 4096 * (uint64_t)i });
	cb_forkcow_task(f, &(struct cb_wpfault_task){ CB_WPFAULT_EXIT, child, parent, child, 3000 });
	cb_forkcow_flush(f, UINT64_MAX, NULL, NULL);
	cb_forkcow_watch(f, child); /* as stat does when it meets the child now */
	ck_assert(cb_forkcow_counts(f, child, &c));
	ck_assert_int_eq(c.n[CB_FC_OTHER], 5);
	cb_forkcow_free(f);
}
END_TEST

/*
 * A watched parent and its unwatched child (follow_children off, as stat
 * --no-children): the child's write to a page makes the parent's later
 * write there a reuse (the kernel reuses the page: the child took its own
 * copy); a page only the parent writes stays a fork copy. The fork is
 * this process's own (its pages present), the child a pid no process has.
 */
START_TEST(test_unwatched_child_makes_reuse)
{
	const pid_t child = 0x3ffffff1;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *m = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t a, b, t0 = cb_monotonic_ns();
	struct cb_forkcow *f;
	struct cb_fc_counts c;

	ck_assert_ptr_ne(m, MAP_FAILED);
	memset(m, 1, 2 * page); /* present: shared by the fork as the snapshot sees it */
	a = (uint64_t)(uintptr_t)m;
	b = a + page;
	ck_assert_int_eq(cb_forkcow_new(false, &f), 0);
	cb_forkcow_watch(f, getpid());
	cb_forkcow_task(f, &(struct cb_wpfault_task){ CB_WPFAULT_FORK, child, getpid(), child, t0 + 1 });
	cb_forkcow_fault(f, &(struct cb_wpfault_sample){ .pid = child, .tid = child, .time_ns = t0 + 2, .addr = a });
	cb_forkcow_fault(f, &(struct cb_wpfault_sample){ .pid = getpid(), .tid = getpid(), .time_ns = t0 + 3, .addr = a });
	cb_forkcow_fault(f, &(struct cb_wpfault_sample){ .pid = getpid(), .tid = getpid(), .time_ns = t0 + 4, .addr = b });
	cb_forkcow_flush(f, UINT64_MAX, NULL, NULL);
	ck_assert(cb_forkcow_counts(f, getpid(), &c));
	ck_assert_int_eq(c.n[CB_FC_FORK_REUSE], 1);
	ck_assert_int_eq(c.n[CB_FC_FORK_COPY], 1);
	ck_assert(!cb_forkcow_counts(f, child, &c)); /* the child's write counts for nobody */
	cb_forkcow_free(f);
	munmap(m, 2 * page);
}
END_TEST

/* Start hold-delayacct (holding it off, or on): its pid, or 0 after a skip when it cannot hold. */
static pid_t start_holder(bool on)
{
	const char *hold[] = { CB_HOLD_DELAYACCT, "60", on ? "on" : "off", NULL };
	char buf[8];
	int out[2];
	pid_t holder;

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
		close(out[0]);
		kill(holder, SIGTERM);
		waitpid(holder, NULL, 0);
		tu_skip("could not hold kernel.task_delayacct (another run changed it)");
		return 0;
	}
	close(out[0]);
	return holder;
}

#define PYTHON "/usr/bin/python3"
#define PY_OBJECTS "200000" /* about 7,800 pages of objects: each read of one writes its refcount */

/*
 * A one-fork CPython program (tests/programs/cow-refcount-dirty.py): the
 * copies stat calls fork_copies are the pages the child dirtied (the
 * growth of its own Private_Dirty) within 20 %, whichever source counts:
 * delay accounting free (stat switches it on), held off by another
 * cowbench (the tracepoint counts) or held on by one (stat joins). The
 * parent's few copies after the fork and the child's before its first
 * look make the difference; the column means the same in each state.
 */
START_TEST(test_python_fork_copies)
{
	static const char *const states[] = { "free", "held off", "held on" };
	const char *source = _i == 1 ? "tracepoint" : "taskstats";
	char dir[] = "/tmp/cbtest-pyfork.XXXXXX", file[64], line[4096], want[64];
	const char *cur = NULL;
	pid_t holder = 0;
	long dirtied = -1, fork_copies;
	struct cli_result r;
	FILE *fp;

	if (access(PYTHON, X_OK) != 0) {
		tu_skip("%s is not installed", PYTHON);
		return;
	}
	if (tu_delayacct_holder()) { /* another run's state, not the one this case sets up */
		tu_skip("%s: kernel.task_delayacct is held by another running cowbench (PID %ld)", states[_i],
			tu_delayacct_holder());
		return;
	}
	if (_i == 0 && cb_delayacct_enabled() == 1) {
		tu_skip("free: kernel.task_delayacct is on outside cowbench");
		return;
	}
	if (_i > 0 && !(holder = start_holder(_i == 2)))
		return;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/dirtied", dir);
	{
		const char *argv[] = { CB_CLI_PATH, "stat", "--children", "--interval=0.05", "--format=json", "--", PYTHON,
				       CB_SOURCE_DIR "/tests/programs/cow-refcount-dirty.py", PY_OBJECTS, file, NULL };

		r = tu_run_cli(argv);
	}
	if (holder > 0) {
		kill(holder, SIGTERM);
		waitpid(holder, NULL, 0);
	}
	if ((fp = fopen(file, "re"))) {
		if (fscanf(fp, "%ld", &dirtied) != 1)
			dirtied = -1;
		fclose(fp);
	}
	unlink(file);
	rmdir(dir);
	ck_assert_msg(r.status == 0, "%s: exit %d: %s", states[_i], r.status, r.err);
	ck_assert_msg(dirtied >= 5000, "%s: the child dirtied %ld pages", states[_i], dirtied);
	ck_assert_ptr_nonnull(wu_next(r.out, &cur, "{\"line\":\"total\"", line, sizeof(line)));
	snprintf(want, sizeof(want), "\"copies_source\":\"%s\"", source);
	if (!strstr(line, want) && tu_delayacct_holder()) { /* a run outside the test took the setting meanwhile */
		tu_skip("%s: kernel.task_delayacct was taken by another running cowbench (PID %ld) during the run",
			states[_i], tu_delayacct_holder());
		tu_free(&r);
		return;
	}
	ck_assert_msg(strstr(line, want), "%s: %s", states[_i], line);
	fork_copies = (long)wu_num(line, "fork_copies");
	ck_assert_msg(fork_copies >= dirtied * 8 / 10 && fork_copies <= dirtied * 12 / 10,
		      "%s: fork_copies %ld, the child dirtied %ld pages: %s", states[_i], fork_copies, dirtied, line);
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
			tu_skip("could not hold kernel.task_delayacct (another run changed it)");
			return;
		}
		snprintf(want, sizeof(want), "(PID %d)", (int)holder);
	}
	if (cb_delayacct_enabled() == 1) { /* held on (a run in its evidence reps): stat joins, nothing to say */
		tu_skip("kernel.task_delayacct is held on, not off");
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
	tcase_add_test(tc, test_fork_copies_perf_samples);
	tcase_add_test(tc, test_fork_copies_children_only);
	tcase_add_test(tc, test_watch_after_exit_keeps_counts);
	tcase_add_test(tc, test_unwatched_child_makes_reuse);
	tcase_add_test(tc, test_held_names_holder);
	tcase_add_loop_test(tc, test_python_fork_copies, 0, 3);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return wu_main_needing_tracepoint(stat_fork_suite);
}
