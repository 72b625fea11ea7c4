/* Helpers shared by the Check suites: run the cowbench program and capture what it says. */
#ifndef COWBENCH_TESTUTIL_H
#define COWBENCH_TESTUTIL_H

#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cowbench/clock.h>
#include <cowbench/sysctl.h>
#include <cowbench/taskstats.h>

extern char **environ;

struct cli_result {
	int status;     /* exit status, or 128 + signal */
	char *out;      /* standard output, NUL-terminated */
	char *err;      /* standard error */
	size_t out_len, err_len;
	pid_t pid;      /* the process it ran as (a settings-journal owner while it ran) */
};

/* A seeded uniform (0, 1) generator (splitmix64) for the simulations: the same draws on every machine. */
struct tu_rng {
	uint64_t st;
};

static inline double tu_uniform01(struct tu_rng *r)
{
	uint64_t z = (r->st += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

static inline char *tu_slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	char *buf;
	long n;

	if (!fp)
		return NULL;
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, fp) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[n] = '\0';
	if (len)
		*len = buf ? (size_t)n : 0;
	fclose(fp);
	return buf;
}

/* Run PROG (a path, or a name found in PATH) with argv, optional extra env "K=V"; capture what it says. */
static inline struct cli_result tu_run_prog(const char *prog, const char *const *argv, const char *extra_env)
{
	struct cli_result r = { 0 };
	char outp[] = "/tmp/cbtest-outXXXXXX", errp[] = "/tmp/cbtest-errXXXXXX";
	int ofd = mkstemp(outp), efd = mkstemp(errp), ws;
	posix_spawn_file_actions_t fa;
	pid_t pid;
	size_t nenv = 0;
	char **env;

	ck_assert_int_ge(ofd, 0);
	ck_assert_int_ge(efd, 0);
	while (environ[nenv])
		nenv++;
	env = calloc(nenv + 2, sizeof(*env));
	memcpy(env, environ, nenv * sizeof(*env));
	if (extra_env)
		env[nenv++] = (char *)extra_env;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, ofd, 1);
	posix_spawn_file_actions_adddup2(&fa, efd, 2);
	ck_assert_int_eq(posix_spawnp(&pid, prog, &fa, NULL, (char *const *)argv, env), 0);
	posix_spawn_file_actions_destroy(&fa);
	free(env);
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	r.pid = pid;
	r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	close(ofd);
	close(efd);
	r.out = tu_slurp(outp, &r.out_len);
	r.err = tu_slurp(errp, &r.err_len);
	unlink(outp);
	unlink(errp);
	ck_assert_ptr_nonnull(r.out);
	ck_assert_ptr_nonnull(r.err);
	return r;
}

/* Run CB_CLI_PATH with argv (NULL-terminated, argv[0] included), optional extra env "K=V". */
static inline struct cli_result tu_run_cli_env(const char *const *argv, const char *extra_env)
{
	return tu_run_prog(CB_CLI_PATH, argv, extra_env);
}

static inline struct cli_result tu_run_cli(const char *const *argv)
{
	return tu_run_cli_env(argv, NULL);
}

static inline void tu_free(struct cli_result *r)
{
	free(r->out);
	free(r->err);
}

/* Lines in a string (a trailing text without newline counts as one). */
static inline int tu_count_lines(const char *s)
{
	size_t len = strlen(s);
	int n = 0;

	for (size_t i = 0; i < len; i++)
		if (s[i] == '\n')
			n++;
	return n + (len && s[len - 1] != '\n');
}

/* Bad input contract: exit 2, exactly one line on stderr, nothing on stdout. */
static inline void tu_assert_usage_error(const char *const *argv, const char *needle)
{
	struct cli_result r = tu_run_cli(argv);

	ck_assert_msg(r.status == 2, "%s %s: exit %d, stderr: %s", argv[1], argv[2] ? argv[2] : "",
		      r.status, r.err);
	ck_assert_msg(tu_count_lines(r.err) == 1, "want one stderr line, got: %s", r.err);
	ck_assert_msg(r.out_len == 0, "stdout not empty: %s", r.out);
	if (needle)
		ck_assert_msg(strstr(r.err, needle), "'%s' not in: %s", needle, r.err);
	tu_free(&r);
}

/*
 * Skips are counted, not hidden: each test that skips says why on stdout
 * and leaves a byte in a file its runner reads after the suite (Check
 * forks every test, so a counter in memory would stay in the child). A
 * suite whose every test skipped exits 77, ctest's SKIP_RETURN_CODE for
 * every suite (tests/CMakeLists.txt), so ctest lists it as skipped.
 */
#define TU_SKIP_CODE 77
static int tu_skip_fd = -1;

__attribute__((format(printf, 1, 2))) static inline void tu_skip(const char *fmt, ...)
{
	va_list ap;

	fputs("SKIP: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
	if (tu_skip_fd >= 0 && write(tu_skip_fd, "s", 1) != 1)
		perror("skip record");
}

/* Run the suite, then: 1 on a failure, 77 when every test skipped, else 0; the skips counted on stdout. */
static inline int tu_run_suite(Suite *suite)
{
	SRunner *sr = srunner_create(suite);
	int failed, run;
	off_t skipped;

	char skips[] = "/tmp/cbtest-skipsXXXXXX";

	tu_skip_fd = mkstemp(skips);
	if (tu_skip_fd >= 0) {
		unlink(skips);
		fcntl(tu_skip_fd, F_SETFL, O_APPEND);
	}
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	run = srunner_ntests_run(sr);
	srunner_free(sr);
	skipped = tu_skip_fd >= 0 ? lseek(tu_skip_fd, 0, SEEK_END) : 0;
	if (tu_skip_fd >= 0)
		close(tu_skip_fd);
	tu_skip_fd = -1;
	if (skipped > run)
		skipped = run; /* a test that skipped twice is one test */
	if (skipped)
		printf("%lld of %d tests skipped\n", (long long)skipped, run);
	if (failed)
		return EXIT_FAILURE;
	return run > 0 && skipped == run ? TU_SKIP_CODE : EXIT_SUCCESS;
}

/* Does this machine have the TSC with rdtscp that --clock=tsc needs (cowbench decides the same way)? */
static inline bool tu_have_tsc(void)
{
	static int have = -1;
	struct cb_clock c;

	if (have < 0)
		have = cb_clock_init(&c, CB_CLOCK_TSC) == 0;
	return have;
}

/* Root-only tests say why they skip, and the skip is counted (tu_skip). */
static inline bool tu_skip_unless_root(const char *what)
{
	if (geteuid() == 0)
		return false;
	tu_skip("%s needs root", what);
	return true;
}

/*
 * kernel.task_delayacct is one switch for the whole machine. Suites that
 * turn it on save it in an unchecked fixture and put it back however a
 * forked test ended; suites run from several build trees at once take
 * turns on a lock file (the lock goes with the runner process).
 */
static long tu_saved_delayacct = -1;

/*
 * A running cowbench outside the tests that holds kernel.task_delayacct (a
 * matrix between its evidence reps): its PID, else 0. The file lock below
 * only orders the suites among themselves, so tests that switch the setting
 * skip while it is held: changing it would break that run, and it refuses.
 */
static inline long tu_delayacct_holder(void)
{
	struct cb_sysctl_held h[16];
	int n = cb_sysctl_overrides(h, sizeof(h) / sizeof(h[0]));

	for (int i = 0; i < n; i++)
		if (strcmp(h[i].path, CB_DELAYACCT_SYSCTL) == 0 && h[i].live > 0 && h[i].pid != (long)getpid())
			return h[i].pid;
	return 0;
}

static inline bool tu_skip_if_delayacct_held(const char *what)
{
	long pid = tu_delayacct_holder();

	if (!pid)
		return false;
	tu_skip("%s: kernel.task_delayacct is held by another running cowbench (PID %ld)", what, pid);
	return true;
}

/*
 * The owners of kernel.task_delayacct in the settings journal
 * (CB_SYSCTL_JOURNAL_DIR/overrides: "PATH ORIGINAL PID:START ..."), live or
 * not; at most max PIDs, their count.
 */
static inline int tu_delayacct_owners_original(long *pids, int max, long *original)
{
	char path[512], line[8192];
	const char *dir = getenv("COWBENCH_RUN_DIR");
	FILE *fp;
	int n = 0;

	snprintf(path, sizeof(path), "%s/overrides", dir && *dir ? dir : CB_SYSCTL_JOURNAL_DIR);
	if (!(fp = fopen(path, "re")))
		return 0;
	while (fgets(line, sizeof(line), fp)) {
		char *p = strchr(line, ' '), *end;

		if (!p || (size_t)(p - line) != strlen(CB_DELAYACCT_SYSCTL) ||
		    strncmp(line, CB_DELAYACCT_SYSCTL, strlen(CB_DELAYACCT_SYSCTL)) != 0)
			continue;
		*original = strtol(p + 1, &p, 10); /* the value its last owner puts back */
		while (*p == ' ' && n < max) {
			long pid = strtol(p + 1, &end, 10);

			if (end == p + 1 || *end != ':')
				break;
			pids[n++] = pid;
			strtol(end + 1, &p, 10);
		}
	}
	fclose(fp);
	return n;
}

static inline int tu_delayacct_owners(long *pids, int max)
{
	long original;

	return tu_delayacct_owners_original(pids, max, &original);
}

static inline bool tu_delayacct_owned_by(long pid)
{
	long pids[256];
	int n = tu_delayacct_owners(pids, 256);

	for (int i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

/*
 * Who else owned kernel.task_delayacct while a command ran: a watcher
 * process reads the journal every millisecond and reports every owner it
 * sees; tu_owner_watch_end says whether any was not the command (a
 * concurrent cowbench: another session's, or another copy of this suite).
 */
struct tu_owner_watch {
	pid_t pid;
	int stop, seen; /* our ends of the two pipes */
};

static inline void tu_owner_watch_begin(struct tu_owner_watch *w)
{
	int stop[2], seen[2];

	ck_assert_int_eq(pipe(stop), 0);
	ck_assert_int_eq(pipe(seen), 0);
	w->pid = fork();
	ck_assert_int_ge(w->pid, 0);
	if (w->pid == 0) {
		char c;

		close(stop[1]);
		close(seen[0]);
		fcntl(stop[0], F_SETFL, O_NONBLOCK);
		long told[1024];
		int ntold = 0;

		for (;;) {
			long pids[256];
			int n = tu_delayacct_owners(pids, 256);
			ssize_t k = read(stop[0], &c, 1);

			for (int i = 0; i < n; i++) {
				bool known = false;

				for (int j = 0; j < ntold && !known; j++)
					known = told[j] == pids[i];
				if (known)
					continue;
				if (ntold < 1024)
					told[ntold++] = pids[i];
				if (write(seen[1], &pids[i], sizeof(pids[i])) != (ssize_t)sizeof(pids[i]))
					_exit(1);
			}
			if (k == 0)
				_exit(0); /* the last look was after the command ended */
			usleep(1000);
		}
	}
	close(stop[0]);
	close(seen[1]);
	fcntl(seen[0], F_SETFL, O_NONBLOCK);
	w->stop = stop[1];
	w->seen = seen[0];
}

/* Whether an owner other than pid was seen; reads as it goes (the pipe holds 64 KiB). */
static inline bool tu_owner_watch_end(struct tu_owner_watch *w, pid_t pid)
{
	bool other = false;
	long v;

	close(w->stop);
	fcntl(w->seen, F_SETFL, 0);
	while (read(w->seen, &v, sizeof(v)) == (ssize_t)sizeof(v))
		other = other || v != (long)pid;
	close(w->seen);
	waitpid(w->pid, NULL, 0);
	return other;
}

static inline void tu_save_delayacct(void)
{
	static int fd = -1; /* taken once per process: a second open file would wait on the first */

	if (fd < 0 && (fd = open("/tmp/cowbench-delayacct-tests.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0666)) >= 0)
		flock(fd, LOCK_EX);
	if (cb_sysctl_read_long(CB_DELAYACCT_SYSCTL, &tu_saved_delayacct) < 0)
		tu_saved_delayacct = -1;
	/*
	 * A cowbench running beside (its journal entry) holds it now: the value to keep is the one
	 * it puts back, not its own (saved and restored after it ended, that would be left on).
	 */
	{
		long pids[256], original = -1;

		if (tu_delayacct_owners_original(pids, 256, &original) > 0 && original >= 0)
			tu_saved_delayacct = original;
	}
}

/*
 * Put back the value saved, unless a running cowbench (another session's)
 * owns the setting now. The journal is read here, not through the library,
 * which keeps its directory once looked up (a later test sets its own).
 */
static inline void tu_restore_delayacct(void)
{
	long pids[256];
	int n = tu_delayacct_owners(pids, 256);

	for (int i = 0; i < n; i++)
		if (pids[i] > 0 && (kill((pid_t)pids[i], 0) == 0 || errno == EPERM))
			return;
	if (tu_saved_delayacct >= 0 && geteuid() == 0)
		cb_sysctl_write_long(CB_DELAYACCT_SYSCTL, tu_saved_delayacct);
}

/*
 * Delay accounting on for a test, as cowbench turns it on: through the settings journal, so that a
 * cowbench running beside sees an owner (and co-owns it rather than recording 1 as the value to put
 * back), and a test that dies is put back by the next cowbench. Release with tu_delayacct_release()
 * at the end of the test. false (a SKIP printed) when another live cowbench holds it off.
 */
static inline bool tu_delayacct_hold_on(const char *what)
{
	int err = cb_sysctl_override(CB_DELAYACCT_SYSCTL, 1);

	if (err == -EBUSY) {
		printf("SKIP: %s: another running cowbench holds kernel.task_delayacct off\n", what);
		return false;
	}
	ck_assert_msg(err == 0, "kernel.task_delayacct through the journal: %s", strerror(-err));
	return true;
}

static inline void tu_delayacct_release(void)
{
	cb_sysctl_restore_all();
}

/*
 * What runs killed on purpose (SIGKILL mid-matrix, check_attack) left in
 * the settings journal is put back quietly, as root: otherwise the next
 * measuring cowbench, maybe another suite's bad-input case that wants one
 * stderr line, would print "restored kernel.task_delayacct ..." first.
 */
static inline void tu_recover_journal(void)
{
	struct cb_sysctl_stale st[16];
	pid_t pid;

	if (geteuid() != 0)
		return;
	/* In a child: the library keeps the journal's directory once looked up, and tests set their own. */
	if ((pid = fork()) == 0)
		_exit(cb_sysctl_recover(st, sizeof(st) / sizeof(st[0])) < 0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

/* A suite of the lock list (TU_DELAYACCT_LOCK): the lock, a clean journal, the value to put back. */
static inline void tu_suite_begin(void)
{
	tu_save_delayacct(); /* the lock first */
	tu_recover_journal();
	tu_save_delayacct(); /* the value as recovered */
}

static inline void tu_suite_end(void)
{
	tu_recover_journal();
	tu_restore_delayacct();
}

/*
 * The suites that flip kernel.task_delayacct or count on it (ctest's
 * RESOURCE_LOCK task_delayacct, tests/CMakeLists.txt) are built with
 * TU_DELAYACCT_LOCK: the whole suite takes the lock file, so two copies
 * of the test suite (two build trees, two sessions) take turns on it
 * as ctest -j does within one (check_where_redis's count once failed
 * while the other copy's check_stat_fork held delay accounting off).
 */
#ifdef TU_DELAYACCT_LOCK
#define TU_SUITE_BEGIN() tu_suite_begin()
#define TU_SUITE_END()   tu_suite_end()
#else
#define TU_SUITE_BEGIN() ((void)0)
#define TU_SUITE_END()   ((void)0)
#endif

#define TU_MAIN(suite_fn)                                                   \
	int main(void)                                                      \
	{                                                                   \
		int rc;                                                     \
		TU_SUITE_BEGIN();                                           \
		rc = tu_run_suite(suite_fn());                              \
		TU_SUITE_END();                                             \
		return rc;                                                  \
	}

#endif
