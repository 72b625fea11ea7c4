/*
 * cowbench stat: --where without privileges, the conventions of perf stat
 * and time (descendants by default, JSON, signals, the command never left
 * running), and the tracepoint fallback when taskstats cannot count.
 */
#include "where_util.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#define HEAP 300
#define ANON 2000
#define STACK 100
#define SLACK 64 /* pages the loader, libc and the program's own stack copy */

START_TEST(test_where_usage_errors)
{
	const char *badmode[] = { CB_CLI_PATH, "stat", "--where=files", "--", "true", NULL };
	const char *top[] = { CB_CLI_PATH, "stat", "--where", "--top=0", "--", "true", NULL };
	const char *topalone[] = { CB_CLI_PATH, "stat", "--top=5", "--", "true", NULL };
	const char *sample[] = { CB_CLI_PATH, "stat", "--where=maps", "--sample=10", "--", "true", NULL };
	const char *sample0[] = { CB_CLI_PATH, "stat", "--where=code", "--sample=0", "--", "true", NULL };
	const char *folded[] = { CB_CLI_PATH, "stat", "--where", "--folded=x", "--", "true", NULL };
	const char *system[] = { CB_CLI_PATH, "stat", "--where", "--system", NULL };
	const char *nodir[] = { CB_CLI_PATH, "stat", "--where=code", "--folded=/nonexistent/dir/f", "--", "true", NULL };
	const char *format[] = { CB_CLI_PATH, "stat", "--format=yaml", "--", "true", NULL };

	tu_assert_usage_error(badmode, "--where must be maps or code");
	tu_assert_usage_error(top, "--top");
	tu_assert_usage_error(topalone, "go with --where");
	tu_assert_usage_error(sample, "--where=code");
	tu_assert_usage_error(sample0, "--sample");
	tu_assert_usage_error(folded, "--where=code");
	tu_assert_usage_error(system, "needs a process");
	tu_assert_usage_error(nodir, "cannot write in /nonexistent/dir/");
	tu_assert_usage_error(format, "table, csv or json");
}
END_TEST

/* The program's address of name ("anon=0x...") from its stderr line. */
static unsigned long long addr_of(const char *err, const char *name)
{
	char pat[32];
	const char *p;

	snprintf(pat, sizeof(pat), "%s=0x", name);
	p = strstr(err, pat);
	ck_assert_msg(p != NULL, "no %s address in: %s", name, err);
	return strtoull(p + strlen(pat), NULL, 16);
}

/* Whether the file at path holds text. */
static bool file_says(const char *path, const char *text)
{
	char *t = tu_slurp(path, NULL);
	bool yes = t && strstr(t, text);

	free(t);
	return yes;
}

static void open_gate(const char *gate)
{
	int fd = open(gate, O_WRONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "g", 1), 1);
	close(fd);
}

/*
 * argv (stat with JSON lines) as nobody, cow-where paced through the FIFO
 * gate: each of its phases (forked, written) lasts until stat has printed
 * two interval lines since the program said it reached the phase, so every
 * phase has a look of its own however loaded the machine is.
 */
static struct cli_result run_paced_unprivileged(const char *const *argv, const char *gate)
{
	static const char *const phases[] = { "cow-where: forked", "cow-where: written" };
	struct passwd *nobody = getpwnam("nobody");
	char errp[] = "/tmp/cbtest-errXXXXXX", *line = NULL, envgate[700];
	int efd = mkstemp(errp), out[2], ws, phase = 0, seen = 0;
	struct cli_result r = { 0 };
	size_t cap = 0, len = 0;
	ssize_t n;
	FILE *fp;
	pid_t pid;

	ck_assert_int_ge(efd, 0);
	ck_assert_int_eq(pipe(out), 0);
	snprintf(envgate, sizeof(envgate), "COW_WHERE_GATE=%s", gate);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(out[1], 1);
		dup2(efd, 2);
		close(out[0]);
		if (geteuid() == 0 && (!nobody || setgid(nobody->pw_gid) < 0 || setuid(nobody->pw_uid) < 0))
			_exit(99);
		putenv(envgate);
		execv(argv[0], (char *const *)argv);
		_exit(98);
	}
	close(out[1]);
	fp = fdopen(out[0], "r");
	ck_assert_ptr_nonnull(fp);
	r.out = calloc(1, 1);
	while ((n = getline(&line, &cap, fp)) > 0) {
		r.out = realloc(r.out, len + (size_t)n + 1);
		memcpy(r.out + len, line, (size_t)n + 1);
		len += (size_t)n;
		if (phase >= 2 || strncmp(line, "{\"line\":\"interval\",", strlen("{\"line\":\"interval\",")) != 0)
			continue;
		if (seen || file_says(errp, phases[phase]))
			seen++; /* a line printed after the program said it: the look after it is wholly in the phase */
		if (seen > 2) {
			open_gate(gate);
			phase++;
			seen = 0;
		}
	}
	free(line);
	fclose(fp);
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	r.out_len = len;
	r.err = tu_slurp(errp, &r.err_len);
	close(efd);
	unlink(errp);
	ck_assert_msg(phase == 2, "stat ended in phase %d: %s", phase, r.err);
	return r;
}

/*
 * Without privileges: smaps still shows, per mapping, the pages that moved
 * from Shared_Dirty to Private_Dirty (the COW copies), one note says why
 * the fault columns are empty and what to set. The program's phases are
 * paced by stat's own lines (issue 29, item 11: fixed pauses merged under
 * load 15-20, and a look while the program filled its buffer moved the
 * Private_Dirty baseline).
 */
START_TEST(test_where_maps_unprivileged)
{
	char n1[16], n2[16], n3[16], line[2048], dir[] = "/tmp/cbtest-gateXXXXXX", gate[64];
	const char *argv[] = { CB_CLI_PATH, "stat", "--where", "--interval=0.1", "--format=json", "--top=50", "--",
			       CB_COW_WHERE, n1, n2, n3, NULL };
	struct cli_result r;
	long long dpd, dsd;

	snprintf(n1, sizeof(n1), "%d", HEAP);
	snprintf(n2, sizeof(n2), "%d", ANON);
	snprintf(n3, sizeof(n3), "%d", STACK);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chmod(dir, 0755), 0);
	snprintf(gate, sizeof(gate), "%s/gate", dir);
	ck_assert_int_eq(mkfifo(gate, 0600), 0);
	ck_assert_int_eq(chmod(gate, 0666), 0); /* nobody's program reads it */
	r = run_paced_unprivileged(argv, gate);
	unlink(gate);
	rmdir(dir);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_msg(strstr(r.err, "write faults not recorded: needs root") != NULL, "%s", r.err);
	ck_assert_msg(strstr(r.err, "kernel.perf_event_paranoid=-1, now ") != NULL, "%s", r.err); /* what to set */
	ck_assert_msg(wu_row_at(r.out, addr_of(r.err, "anon"), line, sizeof(line)), "%s", r.out);
	ck_assert_int_eq(wu_num(line, "faults"), -1);  /* not measured: null, never 0 */
	ck_assert_int_eq(wu_num(line, "copied"), -1);
	ck_assert_int_eq(wu_num(line, "smaps_unshared_kb"), ANON * 4);
	/*
	 * Private_Dirty from stat's first look at the mapping: taken after the fork (shared), it gains the
	 * whole buffer; taken while the program filled it or before its fork (not shared yet), less of it
	 * and Shared_Dirty gains nothing over the window.
	 */
	dpd = wu_num(line, "d_private_dirty_kb");
	dsd = wu_num(line, "d_shared_dirty_kb");
	ck_assert_msg((dsd == -ANON * 4 && dpd == ANON * 4) || (dsd == 0 && dpd >= 0 && dpd <= ANON * 4),
		      "Private_Dirty %+lld kB, Shared_Dirty %+lld kB", dpd, dsd);
	ck_assert_msg(wu_row_at(r.out, addr_of(r.err, "heap"), line, sizeof(line)), "%s", r.out);
	ck_assert_int_ge(wu_num(line, "smaps_unshared_kb"), HEAP * 4);
	ck_assert_int_le(wu_num(line, "smaps_unshared_kb"), (HEAP + SLACK) * 4);
	tu_free(&r);
}
END_TEST

/* Descendants count by default (perf stat, time); --no-children narrows to the process itself. */
START_TEST(test_stat_children_default)
{
	char script[512], line[1024];
	const char *cur = NULL;
	struct cli_result r;

	if (tu_skip_unless_root("taskstats") || tu_skip_if_delayacct_held("taskstats"))
		return;
	snprintf(script, sizeof(script), "%s 3000; true", CB_COW_WRITER);
	const char *deflt[] = { CB_CLI_PATH, "stat", "--interval=5", "--format=json", "--", "sh", "-c", script, NULL };
	r = tu_run_cli(deflt);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_ptr_nonnull(wu_next(r.out, &cur, "{\"line\":\"total\"", line, sizeof(line)));
	ck_assert_int_ge(wu_num(line, "cow_copies"), 3000);
	ck_assert_int_le(wu_num(line, "cow_copies"), 3000 + 2 * SLACK);
	tu_free(&r);
	const char *narrow[] = { CB_CLI_PATH, "stat", "--no-children", "--interval=5", "--format=json", "--", "sh",
				 "-c", script, NULL };
	r = tu_run_cli(narrow);
	cur = NULL;
	ck_assert_ptr_nonnull(wu_next(r.out, &cur, "{\"line\":\"total\"", line, sizeof(line)));
	ck_assert_int_le(wu_num(line, "cow_copies"), SLACK);
	ck_assert_int_eq(wu_num(line, "procs"), 1);
	tu_free(&r);
}
END_TEST

/* JSON Lines: an object per interval and the total, null for what is not measured. */
START_TEST(test_stat_json)
{
	const char *argv[] = { CB_CLI_PATH, "stat", "--interval=0.05", "--count=2", "--format=json", "--", "sleep",
			       "600", NULL }; /* stopped by stat's SIGTERM, however slowly a loaded machine starts stat */
	struct cli_result r = tu_run_cli(argv);
	char line[1024];
	const char *cur = NULL;
	int n = 0;

	ck_assert_msg(r.status == 128 + SIGTERM, "exit %d: %s", r.status, r.err);
	while (wu_next(r.out, &cur, "{\"line\":\"interval\"", line, sizeof(line)))
		n++;
	ck_assert_int_eq(n, 2);
	cur = NULL;
	ck_assert_ptr_nonnull(wu_next(r.out, &cur, "{\"line\":\"total\"", line, sizeof(line)));
	ck_assert_ptr_nonnull(strstr(line, "\"sys_cow_faults\":null"));
	ck_assert_ptr_nonnull(strstr(line, "\"copies_source\":"));
	ck_assert_int_eq(tu_count_lines(r.out), 3);
	tu_free(&r);
}
END_TEST

/* stat stopped by --count, SIGTERM or SIGHUP: the total is printed and the command is not left running. */
static void check_stop(int sig)
{
	char outp[] = "/tmp/cbtest-outXXXXXX", pidfile[] = "/tmp/cbtest-pidXXXXXX", script[256];
	int ofd = mkstemp(outp), pfd = mkstemp(pidfile), ws;
	pid_t pid, cmd;
	char *out, *text;

	close(pfd);
	snprintf(script, sizeof(script), "echo $$ > %s; exec sleep 30", pidfile);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(ofd, 1);
		execl(CB_CLI_PATH, CB_CLI_PATH, "stat", "--interval=0.05", "--", "sh", "-c", script, (char *)NULL);
		_exit(98);
	}
	/* Until the command runs (stat is watching then), not a fixed 400 ms: a loaded machine took longer. */
	for (int i = 0; i < 1500 && (text = tu_slurp(pidfile, NULL)) && atoi(text) <= 0; i++) {
		free(text);
		usleep(20000);
	}
	free(text);
	usleep(100000); /* a few intervals */
	ck_assert_int_eq(kill(pid, sig), 0);
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 128 + SIGTERM, "status %d", ws);
	out = tu_slurp(outp, NULL);
	ck_assert_ptr_nonnull(strstr(out, "total"));
	text = tu_slurp(pidfile, NULL);
	cmd = (pid_t)atoi(text);
	ck_assert_int_gt(cmd, 0);
	ck_assert_msg(kill(cmd, 0) < 0 && errno == ESRCH, "the command %d still runs", (int)cmd);
	free(out);
	free(text);
	close(ofd);
	unlink(outp);
	unlink(pidfile);
}

START_TEST(test_stat_sigterm)
{
	check_stop(SIGTERM);
}
END_TEST

START_TEST(test_stat_sighup)
{
	check_stop(SIGHUP);
}
END_TEST

/*
 * One try of the fallback: a writer born with accounting off, watched with
 * -p. false when the premise failed (another test on this machine switched
 * kernel.task_delayacct on before the writer was born): taskstats counted.
 */
static bool fallback_once(void)
{
	char n[16], pidtext[16], line[1024];
	const char *cur = NULL;
	int hold[2];
	pid_t pid;

	ck_assert_int_eq(cb_sysctl_write_long(CB_DELAYACCT_SYSCTL, 0), 0);
	ck_assert_int_eq(pipe(hold), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) { /* born without accounting; starts writing once stat watches */
		char c;

		close(hold[1]);
		if (read(hold[0], &c, 1) < 0)
			_exit(1);
		snprintf(n, sizeof(n), "%d", 3000);
		execl(CB_COW_WRITER, CB_COW_WRITER, n, "1", "600", (char *)NULL);
		_exit(127);
	}
	close(hold[0]);
	snprintf(pidtext, sizeof(pidtext), "%d", (int)pid);
	const char *argv[] = { CB_CLI_PATH, "stat", "-p", pidtext, "--interval=0.1", "--format=json", NULL };
	char outp[] = "/tmp/cbtest-outXXXXXX", errp[] = "/tmp/cbtest-errXXXXXX";
	int ofd = mkstemp(outp), efd = mkstemp(errp), ws;
	pid_t st = fork();

	ck_assert_int_ge(st, 0);
	if (st == 0) {
		dup2(ofd, 1);
		dup2(efd, 2);
		execv(argv[0], (char *const *)argv);
		_exit(98);
	}
	usleep(500000);
	ck_assert_int_eq(write(hold[1], "g", 1), 1);
	close(hold[1]);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	ck_assert_int_eq(waitpid(st, &ws, 0), st);
	char *out = tu_slurp(outp, NULL), *err = tu_slurp(errp, NULL);
	bool premise = strstr(err, "predates") != NULL;

	ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "status %d: %s", ws, err);
	if (premise) {
		ck_assert_msg(strstr(err, "write faults on present pages (COW copies plus reuses)") != NULL, "%s", err);
		ck_assert_ptr_nonnull(wu_next(out, &cur, "{\"line\":\"total\"", line, sizeof(line)));
		ck_assert_ptr_nonnull(strstr(line, "\"copies_source\":\"tracepoint\""));
		/* the writer's 3000 copies and its snapshot child's few, counted across the tree */
		ck_assert_msg(wu_num(line, "wp_faults") >= 3000 && wu_num(line, "wp_faults") <= 3000 + 2 * SLACK,
			      "%s", line);
		ck_assert_int_eq(wu_num(line, "cow_copies"), -1); /* the faults are never under a copies name */
		ck_assert_int_eq(wu_num(line, "copy_ns"), -1);
	}
	free(out);
	free(err);
	close(ofd);
	close(efd);
	unlink(outp);
	unlink(errp);
	return premise;
}

/*
 * A process born before kernel.task_delayacct=1 has no copy count; the
 * write faults on present pages from the tracepoint stand in, labelled.
 */
START_TEST(test_stat_tracepoint_fallback)
{
	int tries = 0;

	if (!wu_have_tracepoint()) {
		tu_skip("the exceptions:page_fault_user tracepoint needs root and perf events");
		return;
	}
	if (tu_skip_if_delayacct_held("a process born with delay accounting off"))
		return;
	while (!fallback_once())
		ck_assert_msg(++tries < 5, "kernel.task_delayacct kept being switched on by someone else");
}
END_TEST

static Suite *where_suite(void)
{
	Suite *s = suite_create("where");
	TCase *tc = tcase_create("where");

	tcase_set_timeout(tc, 60);
	tcase_add_unchecked_fixture(tc, tu_save_delayacct, tu_restore_delayacct);
	tcase_add_test(tc, test_where_usage_errors);
	tcase_add_test(tc, test_where_maps_unprivileged);
	tcase_add_test(tc, test_stat_children_default);
	tcase_add_test(tc, test_stat_json);
	tcase_add_test(tc, test_stat_sigterm);
	tcase_add_test(tc, test_stat_sighup);
	tcase_add_test(tc, test_stat_tracepoint_fallback);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(where_suite)
