#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cowbench/error.h>

#include "testutil.h"

static const int codes[] = {
#define CODE(name, off, msg) CB_##name,
	CB_ERRNO_MAP(CODE)
#undef CODE
};

/* Every library code has its own text: none falls through to strerror's "Unknown error N". */
START_TEST(test_every_code_has_text)
{
	const char *text = cb_strerror(codes[_i]);

	ck_assert_ptr_nonnull(text);
	ck_assert_msg(strstr(text, "Unknown error") == NULL, "code %d: %s", codes[_i], text);
	for (size_t j = 0; j < sizeof(codes) / sizeof(codes[0]); j++)
		if (j != (size_t)_i)
			ck_assert_int_ne(codes[j], codes[_i]);
}
END_TEST

static int child_ending(int how)
{
	pid_t pid = fork();
	int ws = -1;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (how < 0) {
			signal(-how, SIG_DFL); /* Check's runner handlers are inherited */
			raise(-how);
		}
		_exit(how);
	}
	ck_assert_int_eq(cb_wait_status(pid, &ws), 0);
	return ws;
}

/* One spelling per ending: SIGKILL (never KILL), child-exit:N, ok. */
START_TEST(test_wait_status_spelling)
{
	char st[48];

	ck_assert_int_eq(cb_status_from_wait(child_ending(0), st, sizeof(st)), 0);
	ck_assert_str_eq(st, "ok");
	ck_assert_int_eq(cb_status_from_wait(child_ending(3), st, sizeof(st)), CB_ECHILD);
	ck_assert_str_eq(st, "child-exit:3");
	ck_assert_int_eq(cb_status_from_wait(child_ending(-SIGKILL), st, sizeof(st)), CB_ECHILD);
	ck_assert_str_eq(st, "child-killed:SIGKILL");
	ck_assert_int_eq(cb_status_from_wait(child_ending(-SIGTERM), st, sizeof(st)), CB_ECHILD);
	ck_assert_str_eq(st, "child-killed:SIGTERM");
	ck_assert_int_lt(cb_wait_status(getpid(), &(int){ 0 }), 0); /* not our child: -ECHILD */
}
END_TEST

START_TEST(test_status_exit_codes)
{
	ck_assert_int_eq(cb_status_exit_code("ok"), 0);
	ck_assert_int_eq(cb_status_exit_code("unsupported:uffd-wp:no write-protect"), 3);
	ck_assert_int_eq(cb_status_exit_code("no-resource:hugetlb:no free 2M pages"), 4);
	ck_assert_int_eq(cb_status_exit_code("child-killed:SIGKILL"), 1);
	ck_assert_int_eq(cb_status_exit_code("child-exit:2"), 1);
	ck_assert_int_eq(cb_status_exit_code("error:mmap"), 1);
	ck_assert_int_eq(cb_status_exit_code("not-run"), 1);
	ck_assert_int_eq(cb_status_exit_code("oke"), 1);
	/* The worst wins: a failure over a missing resource over an unsupported one over ok. */
	ck_assert_int_eq(cb_exit_code_worst(0, 3), 3);
	ck_assert_int_eq(cb_exit_code_worst(4, 3), 4);
	ck_assert_int_eq(cb_exit_code_worst(3, 4), 4);
	ck_assert_int_eq(cb_exit_code_worst(1, 4), 1);
	ck_assert_int_eq(cb_exit_code_worst(4, 1), 1);
	ck_assert_int_eq(cb_exit_code_worst(0, 0), 0);
}
END_TEST

static Suite *error_suite(void)
{
	Suite *s = suite_create("error");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_every_code_has_text, 0, (int)(sizeof(codes) / sizeof(codes[0])));
	tcase_add_test(tc, test_wait_status_spelling);
	tcase_add_test(tc, test_status_exit_codes);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(error_suite)
