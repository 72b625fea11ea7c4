/*
 * Equal values, spelled differently (issue 29): a matrix makes one cell of
 * them, --resume finds its rows whichever spelling wrote them, and the
 * readers of result files take them as one configuration.
 */
#include <cowbench/results.h>

#include "testutil.h"

static const struct {
	const char *axes[4];
	const char *cell; /* the one cell they make */
} spellings[] = {
	{ { "--workloads=seq", "--sizes=4M,4096K,4194304", NULL }, "workload=seq size=4M" },
	{ { "--workloads=seq", "--sizes=64K,65536,0064K", NULL }, "workload=seq size=64K" },
	{ { "--workloads=burst", "--sizes=64K", "--burst=8,0008,08", NULL }, "workload=burst size=64K burst=8" },
	{ { "--workloads=seq", "--sizes=64K", "--fork=1,on,yes", NULL }, "workload=seq size=64K fork=1" },
	/* Numbers whose option's metavar is not N: seed (S), touch (PCT), pin (auto|none|N), nodes (NODES). */
	{ { "--workloads=random", "--sizes=64K", "--seed=1,01,001", NULL }, "workload=random size=64K seed=1" },
	{ { "--workloads=hotset", "--sizes=64K", "--touch=10,010", NULL }, "workload=hotset size=64K touch=10" },
	{ { "--workloads=seq", "--sizes=64K", "--pin=0,00", NULL }, "workload=seq size=64K pin=0" },
	{ { "--workloads=seq", "--sizes=64K", "--membind=0,00", NULL }, "workload=seq size=64K membind=0" },
};

START_TEST(equal_values_make_one_cell)
{
	const char *argv[8] = { "cowbench", "matrix", "--dry-run" };
	char want[256];
	struct cli_result r;
	int n = 3;

	for (int i = 0; spellings[_i].axes[i]; i++)
		argv[n++] = spellings[_i].axes[i];
	r = tu_run_cli(argv);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "# 1 cells x"), "%s", r.out);
	snprintf(want, sizeof(want), "1\t%s\n", spellings[_i].cell);
	ck_assert_msg(strstr(r.out, want), "'%s' not in: %s", spellings[_i].cell, r.out);
	tu_free(&r);
}
END_TEST

static size_t rows_in(const char *path)
{
	struct cb_results res;
	char why[256];
	size_t n;

	ck_assert_msg(cb_results_read(path, &res, why, sizeof(why)) == 0, "%s", why);
	n = res.n;
	cb_results_free(&res);
	return n;
}

/* A file that -s 4096K (--seed=1, --touch=10) began is resumed by -s 4M (--seed=01, --touch=010): nothing runs twice. */
START_TEST(resume_finds_rows_of_another_spelling)
{
	char path[] = "/tmp/cbtest-equivXXXXXX";
	/* the first run's spelling, the resumed run's, the workload, and its size where the spelling is not one */
	const char *sizes[][4] = { { "--sizes=4096K", "--sizes=4M", "--workloads=seq", NULL },
				   { "--sizes=4M", "--sizes=4194304", "--workloads=seq", NULL },
				   { "--seed=1", "--seed=01", "--workloads=random", "--sizes=64K" },
				   { "--touch=10", "--touch=010", "--workloads=hotset", "--sizes=64K" } };
	const char *first[] = { "cowbench", "matrix", sizes[_i][2], sizes[_i][0], "--reps=2", "--warmup=0",
				"--probes=none", "--output", path, "--force", sizes[_i][3], NULL };
	const char *again[] = { "cowbench", "matrix", sizes[_i][2], sizes[_i][1], "--reps=2", "--warmup=0",
				"--probes=none", "--resume", path, sizes[_i][3], NULL };
	struct cli_result r;
	size_t before;

	close(mkstemp(path));
	r = tu_run_cli(first);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_free(&r);
	before = rows_in(path);
	ck_assert_uint_eq(before, 2);
	r = tu_run_cli(again);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.err, "2 of 2 reps already there, skipped; 0 to run"), "%s", r.err);
	ck_assert_ptr_null(strstr(r.err, "belong to no cell"));
	tu_free(&r);
	ck_assert_uint_eq(rows_in(path), before);
	unlink(path);
}
END_TEST

static Suite *equivalent_suite(void)
{
	Suite *s = suite_create("equivalent");
	TCase *t = tcase_create("spellings");

	tcase_set_timeout(t, 120);
	tcase_add_loop_test(t, equal_values_make_one_cell, 0, (int)(sizeof(spellings) / sizeof(spellings[0])));
	tcase_add_loop_test(t, resume_finds_rows_of_another_spelling, 0, 4);
	suite_add_tcase(s, t);
	return s;
}

TU_MAIN(equivalent_suite)
