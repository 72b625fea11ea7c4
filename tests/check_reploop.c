/*
 * A run is a matrix of one cell (cowbench/reploop.h): `cowbench run` and
 * `cowbench matrix --order=sequential` of the same cell run the same loop,
 * so their rows are identical in everything but what is measured.
 *
 * What "identical" means here: the same columns in the same order; the
 * same rows in the same order (rep, rep_kind, status); every identity
 * column (CB_COL_IDENTITY) equal; every other column filled in one file's
 * row exactly where it is filled in the other's (a probe or a warm-up that
 * ran in one loop only would show there). Measured values themselves
 * (times, dirty kB, histograms) differ between any two runs and are not
 * compared; nor is the free-text evidence_notes. The one column that tells
 * them apart is cell: empty for run, the cell's key for matrix.
 * A guest's replay of its host's plan goes through the same loop too, and
 * run --kernel=K gives the rows matrix --kernel=K gives for the same cell.
 */
#include <cowbench/cowbench.h>
#include <cowbench/results.h>

#include "testutil.h"

struct pair {
	struct cb_results run, matrix;
	char header_run[8192], header_matrix[8192];
};

/* The first line of a CSV file (its columns). */
static void header_of(const char *path, char *buf, size_t len)
{
	FILE *fp = fopen(path, "r");

	ck_assert_ptr_nonnull(fp);
	ck_assert_ptr_nonnull(fgets(buf, (int)len, fp));
	fclose(fp);
}

/* Run `cowbench run ARGS` and `cowbench matrix MATRIX_ARGS` into two files and read both back. */
static void run_pair(const char *const *args, const char *const *matrix_args, struct pair *p)
{
	char run_path[] = "/tmp/cbtest-reploop-runXXXXXX", mx_path[] = "/tmp/cbtest-reploop-mxXXXXXX", why[256];
	const char *argv[32] = { "cowbench", "run" };
	struct cli_result r;
	int n = 2;

	close(mkstemp(run_path));
	close(mkstemp(mx_path));
	for (int i = 0; args[i]; i++)
		argv[n++] = args[i];
	argv[n++] = "--quiet";
	argv[n++] = "--force";
	argv[n++] = "--output";
	argv[n++] = run_path;
	argv[n] = NULL;
	r = tu_run_cli(argv);
	ck_assert_msg(r.status == 0, "run: %s", r.err);
	tu_free(&r);

	n = 2;
	argv[1] = "matrix";
	for (int i = 0; matrix_args[i]; i++)
		argv[n++] = matrix_args[i];
	argv[n++] = "--quiet";
	argv[n++] = "--force";
	argv[n++] = "--output";
	argv[n++] = mx_path;
	argv[n] = NULL;
	r = tu_run_cli(argv);
	ck_assert_msg(r.status == 0, "matrix: %s", r.err);
	tu_free(&r);

	header_of(run_path, p->header_run, sizeof(p->header_run));
	header_of(mx_path, p->header_matrix, sizeof(p->header_matrix));
	ck_assert_msg(cb_results_read(run_path, &p->run, why, sizeof(why)) == 0, "%s", why);
	ck_assert_msg(cb_results_read(mx_path, &p->matrix, why, sizeof(why)) == 0, "%s", why);
	unlink(run_path);
	unlink(mx_path);
}

/* Run `cowbench run ARGS` and `cowbench matrix --order=sequential ARGS`. */
static void run_both(const char *const *args, struct pair *p)
{
	const char *margs[32];
	int n = 0;

	for (; args[n]; n++)
		margs[n] = args[n];
	margs[n++] = "--order=sequential";
	margs[n] = NULL;
	run_pair(args, margs, p);
}

/* The assertions of the header comment; the cell's key is what matrix writes for it (run: run_cell). */
static void assert_identical_cells(struct pair *p, const char *run_cell, const char *cell)
{
	size_t ncols;
	const struct cb_column *cols = cb_columns(&ncols);

	ck_assert_str_eq(p->header_run, p->header_matrix);
	ck_assert_uint_eq(p->run.n, p->matrix.n);
	for (size_t i = 0; i < p->run.n; i++) {
		const struct cb_row *a = &p->run.rows[i], *b = &p->matrix.rows[i];

		ck_assert_int_eq(a->rep, b->rep);
		ck_assert_str_eq(a->rep_kind, b->rep_kind);
		ck_assert_str_eq(a->status, b->status);
		ck_assert_str_eq(a->cell, run_cell);
		ck_assert_str_eq(b->cell, cell);
		for (size_t k = 0; k < ncols; k++) {
			char va[4096], vb[4096];

			if (!strcmp(cols[k].name, "cell") || !strcmp(cols[k].name, "evidence_notes"))
				continue;
			cb_row_format(a, &cols[k], va, sizeof(va));
			cb_row_format(b, &cols[k], vb, sizeof(vb));
			if (cols[k].flags & CB_COL_IDENTITY)
				ck_assert_msg(!strcmp(va, vb), "row %zu: %s is '%s' from run, '%s' from matrix", i,
					      cols[k].name, va, vb);
			else
				ck_assert_msg(!*va == !*vb, "row %zu: %s is '%s' from run, '%s' from matrix", i,
					      cols[k].name, va, vb);
		}
	}
}

static void assert_identical(struct pair *p, const char *cell)
{
	assert_identical_cells(p, "", cell);
}

static size_t count_kind(const struct cb_results *res, bool evidence)
{
	size_t n = 0;

	for (size_t i = 0; i < res->n; i++)
		n += cb_row_is_evidence(&res->rows[i]) == evidence;
	return n;
}

/* Fixed reps with the default probes: 3 timed rows, then the evidence rep. */
START_TEST(fixed_reps_same_rows)
{
	const char *args[] = { "--workload=seq", "--size=256K", "--reps=3", "--warmup=1", "--pin=none", NULL };
	struct pair p;

	run_both(args, &p);
	assert_identical(&p, "workload=seq size=256K pin=none");
	ck_assert_uint_eq(count_kind(&p.run, false), 3);
	ck_assert_uint_eq(count_kind(&p.run, true), CB_EVIDENCE_REPS);
	for (size_t i = 0; i < 3; i++) { /* fixed reps are the plan: no stop reason */
		ck_assert_int_eq(p.run.rows[i].rep, (int)i + 1);
		ck_assert_str_eq(p.run.rows[i].stop, "");
	}
	cb_results_free(&p.run);
	cb_results_free(&p.matrix);
}
END_TEST

/*
 * Adaptive reps: --target-ci with at least and at most 3 reps stops both
 * at rep 3 on whichever comes first, the target (three equal headlines can
 * meet it) or max-reps; the stop column is filled on that row alone. No
 * evidence reps (--probes=none), another shape of the same loop.
 */
START_TEST(adaptive_reps_same_rows)
{
	const char *args[] = { "--workload=random", "--size=256K", "--target-ci=0.001", "--reps=3", "--max-reps=3",
			       "--warmup=0", "--probes=none", "--pin=none", NULL };
	struct pair p;

	run_both(args, &p);
	assert_identical(&p, "workload=random size=256K pin=none probes=none");
	ck_assert_uint_eq(p.run.n, 3);
	ck_assert_uint_eq(count_kind(&p.run, true), 0);
	for (size_t i = 0; i < 3; i++)
		for (int side = 0; side < 2; side++) {
			const char *stop = (side ? &p.matrix : &p.run)->rows[i].stop;

			if (i < 2)
				ck_assert_str_eq(stop, "");
			else
				ck_assert_msg(!strcmp(stop, "target") || !strcmp(stop, "max-reps"), "stop '%s'", stop);
		}
	cb_results_free(&p.run);
	cb_results_free(&p.matrix);
}
END_TEST

/*
 * The guest's side (matrix --plan, here on the host) replays its host's
 * steps through the same loop: each row carries the round id the host gave
 * it (none where the line has none), and no evidence reps follow, though
 * seq's default probes would have them on the host.
 */
START_TEST(plan_keeps_rounds_and_has_no_evidence)
{
	char plan[] = "/tmp/cbtest-reploop-planXXXXXX", out[] = "/tmp/cbtest-reploop-rowsXXXXXX", why[256];
	const char *argv[] = { "cowbench", "matrix", "--plan", plan, "--output", out, "--force", NULL };
	const char *text = "1:7 workload=seq size=64K\n"
			   "1:7 workload=seq size=64K fork=0\n"
			   "2:9 workload=seq size=64K fork=0\n"
			   "2 workload=seq size=64K\n";
	const int64_t rounds[] = { 7, 7, 9, CB_NA };
	int pfd = mkstemp(plan);
	struct cli_result r;
	struct cb_results res;

	ck_assert_int_ge(pfd, 0);
	close(mkstemp(out));
	ck_assert_int_eq(write(pfd, text, strlen(text)), (ssize_t)strlen(text));
	close(pfd);
	r = tu_run_cli(argv);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_free(&r);
	ck_assert_msg(cb_results_read(out, &res, why, sizeof(why)) == 0, "%s", why);
	ck_assert_uint_eq(res.n, 4);
	for (size_t i = 0; i < res.n; i++) {
		ck_assert(!cb_row_is_evidence(&res.rows[i]));
		ck_assert_int_eq(res.rows[i].round, rounds[i]);
		ck_assert_str_eq(res.rows[i].stop, "");
	}
	ck_assert_str_eq(res.rows[1].cell, "workload=seq size=64K fork=0");
	ck_assert_int_eq(res.rows[3].rep, 2);
	cb_results_free(&res);
	unlink(plan);
	unlink(out);
}
END_TEST

/*
 * run --kernel=K is matrix --kernel=K of one cell, in-process: the same
 * cell key (kernel first, values in their canonical spelling), the same
 * rounds and rows. The guest is tests/fixtures/fake-kernel's: vm-run.sh
 * runs the plan here (no QEMU).
 */
START_TEST(run_kernel_same_rows_as_matrix_kernel)
{
	const char *args[] = { "--kernel=stock", "--workload=random", "-s", "64K", "--no-fork", "--seed=01", "--reps=2",
			       "--warmup=0", NULL };
	const char *margs[] = { "--kernel=stock", "--workloads=random", "--sizes=64K", "--fork=0", "--seed=01",
				"--reps=2", "--warmup=0", NULL };
	const char *cell = "kernel=stock workload=random size=64K fork=0 seed=1";
	struct pair p;

	setenv("COWBENCH_KERNEL_DIR", CB_FIXTURE_DIR "/fake-kernel", 1);
	setenv("CB_FAKE_COWBENCH", CB_CLI_PATH, 1);
	setenv("CB_FAKE_GUEST", "ok", 1);
	run_pair(args, margs, &p);
	assert_identical_cells(&p, cell, cell);
	ck_assert_uint_eq(p.run.n, 2);
	for (size_t i = 0; i < 2; i++) {
		ck_assert_int_eq(p.run.rows[i].round, p.matrix.rows[i].round);
		ck_assert_int_eq(p.run.rows[i].round, (int64_t)i + 1);
	}
	cb_results_free(&p.run);
	cb_results_free(&p.matrix);
}
END_TEST

static Suite *reploop_suite(void)
{
	Suite *s = suite_create("reploop");
	TCase *tc = tcase_create("run_is_a_matrix_of_one_cell");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, fixed_reps_same_rows);
	tcase_add_test(tc, adaptive_reps_same_rows);
	tcase_add_test(tc, plan_keeps_rounds_and_has_no_evidence);
	tcase_add_test(tc, run_kernel_same_rows_as_matrix_kernel);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(reploop_suite)
