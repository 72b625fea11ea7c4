/*
 * stat --where=code's names across exec (issue 29, item 8), at the level of
 * cli/stat_symbols.c: modules read before a process's exec keep naming the
 * code it ran before it; modules read after it never name that code (the
 * caller counts such samples apart); an address past every module is an
 * address, never "module+0xHUGE".
 */
#define _GNU_SOURCE
#include <signal.h>
#include <time.h>

#include "stat_symbols.h"
#include "testutil.h"

int cb_symbols_marker(int x);
__attribute__((noinline)) int cb_symbols_marker(int x)
{
	return x * 3 + 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A fork child that waits: its code is this program's. */
static pid_t idle_child(void)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

static void end_child(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

START_TEST(read_before_exec_names_old_code)
{
	struct cli_symbols *s = cli_symbols_new();
	uint64_t ip = (uint64_t)(uintptr_t)cb_symbols_marker, t_exec;
	pid_t pid = idle_child();
	const char *name;

	cli_symbols_read(s, pid);
	ck_assert(cli_symbols_have(s, pid));
	t_exec = now_ns() + 1000; /* an exec after the read */
	cli_symbols_exec(s, pid, t_exec);
	ck_assert(!cli_symbols_have(s, pid)); /* the current program is not read yet */
	ck_assert(cli_symbols_when(s, pid, t_exec - 1, true));
	name = cli_symbols_name(s, pid, 0, ip, true);
	ck_assert_str_eq(name ? name : "(null)", "cb_symbols_marker");
	/* code that ran after the exec: not the kept modules' */
	ck_assert(!cli_symbols_when(s, pid, t_exec + 1, true));
	end_child(pid);
	cli_symbols_free(s);
}
END_TEST

START_TEST(read_after_exec_names_nothing_before_it)
{
	struct cli_symbols *s = cli_symbols_new();
	uint64_t ip = (uint64_t)(uintptr_t)cb_symbols_marker, t_exec = now_ns();
	pid_t pid = idle_child();
	const char *name;

	cli_symbols_read(s, pid); /* read after the exec at t_exec: the new program's maps */
	cli_symbols_exec(s, pid, t_exec);
	ck_assert(!cli_symbols_have(s, pid));
	ck_assert(!cli_symbols_when(s, pid, t_exec - 1, true)); /* the caller counts the sample apart */
	name = cli_symbols_name(s, pid, 0, ip, true);
	ck_assert_msg(name == NULL, "named %s from modules read after the exec", name);
	/* after it: read afresh */
	ck_assert(cli_symbols_when(s, pid, t_exec + 1, false));
	name = cli_symbols_name(s, pid, 0, ip, true);
	ck_assert_str_eq(name ? name : "(null)", "cb_symbols_marker");
	end_child(pid);
	cli_symbols_free(s);
}
END_TEST

/* Words a CFI walk reads past the real frames: above every module, an address, no module offset. */
static const uint64_t stray[] = { 0x3fb919c238b9a999ull, 0x7ffffffff000ull - 8, 0xffffffffffff0000ull, 0x10ull };

START_TEST(stray_address_is_no_module_offset)
{
	struct cli_symbols *s = cli_symbols_new();
	const char *name;

	cli_symbols_when(s, getpid(), 0, false);
	name = cli_symbols_name(s, getpid(), 0, stray[_i], false);
	ck_assert_msg(!name || !strstr(name, "+0x"), "0x%llx named %s", (unsigned long long)stray[_i], name);
	cli_symbols_free(s);
}
END_TEST

static Suite *symbols_suite(void)
{
	Suite *s = suite_create("symbols");
	TCase *tc = tcase_create("exec");

	tcase_add_test(tc, read_before_exec_names_old_code);
	tcase_add_test(tc, read_after_exec_names_nothing_before_it);
	tcase_add_loop_test(tc, stray_address_is_no_module_offset, 0, (int)(sizeof(stray) / sizeof(stray[0])));
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(symbols_suite)
