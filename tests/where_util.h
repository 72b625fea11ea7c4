/* Helpers for the cowbench stat --where tests: JSON Lines fields, prerequisites, skips. */
#ifndef COWBENCH_WHERE_UTIL_H
#define COWBENCH_WHERE_UTIL_H

#include "testutil.h"

#include <pwd.h>

#include <cowbench/cowbench.h>

/*
 * The count a stat line has: the kernel's COW copies (cow_copies), else, in
 * stat's tracepoint fallback (another cowbench holds delay accounting), its
 * write faults on present pages (wp_faults, copies and reuses).
 */
#define wu_copies(line) (wu_num((line), "cow_copies") >= 0 ? wu_num((line), "cow_copies") : wu_num((line), "wp_faults"))

#define CTEST_SKIP 77 /* SKIP_RETURN_CODE of the where suites in tests/CMakeLists.txt */

/* The value of "key": in one JSON line (a number, or -1 for null/absent). */
static inline long long wu_num(const char *line, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(line, pat);
	if (!p || strncmp(p + strlen(pat), "null", 4) == 0)
		return -1;
	return strtoll(p + strlen(pat), NULL, 10);
}

/* The string value of "key": in one JSON line into buf ("" when absent). */
static inline const char *wu_str(const char *line, const char *key, char *buf, size_t len)
{
	char pat[64];
	const char *p, *e;

	snprintf(pat, sizeof(pat), "\"%s\":\"", key);
	buf[0] = '\0';
	p = strstr(line, pat);
	if (!p)
		return buf;
	p += strlen(pat);
	e = strchr(p, '"');
	snprintf(buf, len, "%.*s", (int)(e ? e - p : 0), p);
	return buf;
}

/* The next line of out starting with prefix after *cursor (NUL-terminated copy in buf), or NULL. */
static inline const char *wu_next(const char *out, const char **cursor, const char *prefix, char *buf, size_t len)
{
	const char *p = *cursor ? *cursor : out;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		*cursor = nl ? nl + 1 : p + n;
		if (strncmp(p, prefix, strlen(prefix)) == 0) {
			snprintf(buf, len, "%.*s", (int)n, p);
			return buf;
		}
		p = *cursor;
	}
	return NULL;
}

/* The maps row of process-any whose [start,end) holds addr. */
static inline bool wu_row_at(const char *out, unsigned long long addr, char *buf, size_t len)
{
	const char *cur = NULL;
	char s[32], e[32];

	while (wu_next(out, &cur, "{\"where\":\"maps\"", buf, len)) {
		unsigned long long start = strtoull(wu_str(buf, "start", s, sizeof(s)), NULL, 16);
		unsigned long long end = strtoull(wu_str(buf, "end", e, sizeof(e)), NULL, 16);

		if (addr >= start && addr < end)
			return true;
	}
	return false;
}

/* Can this machine record write faults (root, the tracepoint, perf_event_open)? */
static inline bool wu_have_tracepoint(void)
{
	struct cb_wpfault_opts o = { .period = 1 };
	struct cb_wpfault *w;

	if (geteuid() != 0 || cb_wpfault_open(&o, &w) < 0)
		return false;
	cb_wpfault_close(w);
	return true;
}

/* Run argv as nobody (when root; else as is), capturing output like tu_run_cli. */
static inline struct cli_result wu_run_unprivileged(const char *const *argv)
{
	struct passwd *nobody = getpwnam("nobody");
	char outp[] = "/tmp/cbtest-outXXXXXX", errp[] = "/tmp/cbtest-errXXXXXX";
	int ofd = mkstemp(outp), efd = mkstemp(errp), ws;
	struct cli_result r = { 0 };
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(ofd, 1);
		dup2(efd, 2);
		if (geteuid() == 0 && (!nobody || setgid(nobody->pw_gid) < 0 || setuid(nobody->pw_uid) < 0))
			_exit(99);
		execv(argv[0], (char *const *)argv);
		_exit(98);
	}
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

/* main() of a suite that needs the tracepoint: ctest's skip code without it. */
static inline int wu_main_needing_tracepoint(Suite *(*suite_fn)(void))
{
	int rc;

	if (!wu_have_tracepoint()) {
		printf("SKIP: needs root and the exceptions:page_fault_user tracepoint (perf_event_open)\n");
		return CTEST_SKIP;
	}
	TU_SUITE_BEGIN();
	rc = tu_run_suite(suite_fn());
	TU_SUITE_END();
	return rc;
}

#endif
