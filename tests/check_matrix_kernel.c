/* cowbench matrix's kernel axis without QEMU: collapse rules, dry-run output, and the guest's --plan runner. */
#include <cowbench/matrix.h>
#include <cowbench/report.h>
#include <cowbench/results.h>

#include "testutil.h"

START_TEST(drop_pair_rebuilds_key_and_dedupe_keeps_first)
{
	struct cb_matrix m;
	struct cb_cells c;
	char why[256];

	cb_matrix_init(&m);
	ck_assert_int_eq(cb_matrix_set_axis(&m, "", "kernel", "stock", why, sizeof(why)), 0);
	ck_assert_int_eq(cb_matrix_set_axis(&m, "", "workload", "seq", why, sizeof(why)), 0);
	ck_assert_int_eq(cb_matrix_set_axis(&m, "", "precopy", "0,1", why, sizeof(why)), 0);
	ck_assert_int_eq(cb_matrix_cells(&m, &c, why, sizeof(why)), 0);
	ck_assert_uint_eq(c.n, 2);
	ck_assert(cb_cell_drop_pair(&c.cell[0], "precopy"));
	ck_assert(cb_cell_drop_pair(&c.cell[1], "precopy"));
	ck_assert(!cb_cell_drop_pair(&c.cell[1], "precopy"));
	ck_assert_str_eq(c.cell[0].key, "kernel=stock workload=seq");
	ck_assert_ptr_null(cb_cell_value(&c.cell[0], "precopy"));
	cb_cells_dedupe(&c);
	ck_assert_uint_eq(c.n, 1);
	ck_assert_uint_eq(c.cell[0].index, 0);
	cb_cells_free(&c);
	cb_matrix_free(&m);
}
END_TEST

/* The cell lines of a dry run (number TAB key), in order, joined by '\n'. */
static void cell_keys(const char *out, char *keys, size_t len)
{
	size_t off = 0;

	keys[0] = '\0';
	for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *tab = strchr(l, '\t'), *nl = strchr(l, '\n');

		if (*l == '#' || !tab || (nl && tab > nl))
			continue;
		off += (size_t)snprintf(keys + off, len - off, "%.*s\n", (int)((nl ? nl : tab + strlen(tab)) - tab - 1),
					tab + 1);
	}
}

START_TEST(precopy_applies_only_on_patched)
{
	const char *argv[] = { "cowbench", "matrix", "--kernel=stock,patched", "--precopy=0,1", "--workloads=seq",
			       "--sizes=4M", "--reps=2", "--dry-run", NULL };
	struct cli_result r = tu_run_cli(argv);
	char keys[4096];

	ck_assert_msg(r.status == 0, "%s", r.err);
	cell_keys(r.out, keys, sizeof(keys));
	ck_assert_str_eq(keys, "kernel=stock workload=seq size=4M\n"
			       "kernel=patched workload=seq size=4M precopy=0\n"
			       "kernel=patched workload=seq size=4M precopy=1\n");
	ck_assert_ptr_nonnull(strstr(r.out, "# 3 cells x 2 reps"));
	ck_assert_ptr_nonnull(strstr(r.out, "# collapsed: precopy, precopy-depth (no pre-copy patch) collapse on kernel=stock\n"));
	ck_assert_ptr_nonnull(strstr(r.out, "# kernel=stock: one QEMU boot, 1 cells, 2 reps to run"));
	ck_assert_ptr_nonnull(strstr(r.out, "# kernel=patched: one QEMU boot, 2 cells, 4 reps to run"));
	ck_assert_ptr_nonnull(strstr(r.out, "interleaved rep by rep (2 cells, rotating order): kernel=patched workload=seq size=4M\n"));
	tu_free(&r);
}
END_TEST

START_TEST(depth_only_with_mode_1_and_host_collapses_here)
{
	const char *argv[] = { "cowbench", "matrix", "--kernel=host,patched", "--precopy=0,1,2", "--precopy-depth=1,16",
			       "--workloads=single", "--sizes=1M", "--dry-run", NULL };
	struct cli_result r = tu_run_cli(argv);
	bool host_patch = access("/proc/sys/vm/cow_precopy", F_OK) == 0;
	char keys[4096];

	ck_assert_msg(r.status == 0, "%s", r.err);
	cell_keys(r.out, keys, sizeof(keys));
	/* Mode 1 keeps its depths, modes 0 and 2 have none: 4 cells per kernel with the patch. */
	ck_assert_ptr_nonnull(strstr(keys, "kernel=patched workload=single size=1M precopy=0\n"
					   "kernel=patched workload=single size=1M precopy=1 precopy-depth=1\n"
					   "kernel=patched workload=single size=1M precopy=1 precopy-depth=16\n"
					   "kernel=patched workload=single size=1M precopy=2\n"));
	ck_assert_ptr_null(strstr(keys, "precopy=0 precopy-depth"));
	if (!host_patch) {
		ck_assert_ptr_nonnull(strstr(keys, "kernel=host workload=single size=1M\nkernel=patched"));
		ck_assert_ptr_nonnull(strstr(r.out, "collapse on kernel=host\n"));
	}
	ck_assert_ptr_nonnull(strstr(r.out, "# collapsed: precopy-depth (only pre-copy mode 1 has a depth) collapses on kernel=patched\n"));
	ck_assert_ptr_nonnull(strstr(r.out, "interleaved rep by rep (4 cells, rotating order)"));
	ck_assert_ptr_null(strstr(r.out, "# kernel=host:")); /* host cells are no boot */
	tu_free(&r);
}
END_TEST

START_TEST(bad_kernel_values_measure_nothing)
{
	const char *bad[] = { "cowbench", "matrix", "--kernel=/nonexistent/bzImage", "--workloads=seq", "--dry-run", NULL };
	const char *chars[] = { "cowbench", "matrix", "--kernel=a b", "--workloads=seq", NULL };

	tu_assert_usage_error(bad, "is not host, stock, patched or a kernel image file");
	tu_assert_usage_error(chars, "bad value");
}
END_TEST

/* A host matrix's dry run reads as before: no boot lines. */
START_TEST(no_kernel_axis_no_boot_lines)
{
	const char *argv[] = { "cowbench", "matrix", "--workloads=seq", "--precopy=0,1", "--dry-run", NULL };
	struct cli_result r = tu_run_cli(argv);

	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_ptr_null(strstr(r.out, "# kernel="));
	ck_assert_ptr_null(strstr(r.out, "kernel="));
	tu_free(&r);
}
END_TEST

/* The guest's runner, here on the host: the plan's order, each cell's rows named by its key. */
START_TEST(plan_runs_in_order)
{
	char plan[] = "/tmp/cbtest-planXXXXXX", out[] = "/tmp/cbtest-rowsXXXXXX";
	const char *argv[] = { "cowbench", "matrix", "--plan", plan, "--warmup=0", "--output", out, NULL };
	int pfd = mkstemp(plan), ofd = mkstemp(out);
	const char *text = "1 kernel=patched workload=seq size=64K fork=0\n"
			   "1 kernel=patched workload=seq size=64K fork=1\n"
			   "2 kernel=patched workload=seq size=64K fork=1\n"
			   "2 kernel=patched workload=seq size=64K fork=0\n";
	struct cli_result r;
	struct cb_results res;
	char why[256];

	ck_assert_int_ge(pfd, 0);
	ck_assert_int_ge(ofd, 0);
	ck_assert_int_eq(write(pfd, text, strlen(text)), (ssize_t)strlen(text));
	close(pfd);
	close(ofd);
	r = tu_run_cli(argv);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_int_eq(cb_results_read(out, &res, why, sizeof(why)), 0);
	ck_assert_uint_eq(res.n, 4);
	ck_assert_str_eq(res.rows[0].cell, "kernel=patched workload=seq size=64K fork=0");
	ck_assert_int_eq(res.rows[0].fork, 0);
	ck_assert_str_eq(res.rows[1].cell, "kernel=patched workload=seq size=64K fork=1");
	ck_assert_int_eq(res.rows[1].fork, 1);
	ck_assert_int_eq(res.rows[2].rep, 2);
	ck_assert_int_eq(res.rows[3].fork, 0);
	for (size_t i = 0; i < res.n; i++) {
		ck_assert_str_eq(res.rows[i].status, "ok");
		ck_assert_str_ne(res.rows[i].boot, ""); /* this kernel's boot_id */
		ck_assert_str_eq(res.rows[i].boot, res.rows[0].boot);
	}
	cb_results_free(&res);
	tu_free(&r);
	unlink(plan);
	unlink(out);
}
END_TEST

START_TEST(plan_is_the_whole_matrix)
{
	char plan[] = "/tmp/cbtest-planXXXXXX", opt[64];
	const char *argv[] = { "cowbench", "matrix", "--plan=/dev/null", "--workloads=seq", NULL };
	const char *device[] = { "cowbench", "matrix", "--plan=/dev/null", NULL };
	const char *empty[] = { "cowbench", "matrix", opt, NULL };
	int fd = mkstemp(plan);

	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(opt, sizeof(opt), "--plan=%s", plan);
	tu_assert_usage_error(argv, "--plan is the whole matrix");
	tu_assert_usage_error(device, "not a regular file"); /* a plan is a file, never a device or FIFO */
	tu_assert_usage_error(empty, "is empty");
	unlink(plan);
}
END_TEST

/* Guest runs through tests/fixtures/fake-kernel: vm-run.sh runs the plan here (no QEMU). */
static struct cli_result fake_guest_run(const char *mode, const char *out)
{
	const char *argv[] = { "cowbench", "matrix", "--kernel=stock", "--workloads=seq", "--sizes=64K",
			       "--fork=1,0", "--reps=2", "--warmup=0", "--output", out, NULL };

	setenv("COWBENCH_KERNEL_DIR", CB_FIXTURE_DIR "/fake-kernel", 1);
	setenv("CB_FAKE_COWBENCH", CB_CLI_PATH, 1);
	setenv("CB_FAKE_GUEST", mode, 1);
	unlink(out);
	return tu_run_cli(argv);
}

/*
 * Nothing heavy without asking: a guest kernel not yet built is built only
 * with --build (or a yes on a terminal; ctest has none). Without it: exit 2,
 * one line naming --build, the command and its cost, and no results file.
 */
START_TEST(unbuilt_kernel_needs_build)
{
	const char *out = "/tmp/cbtest-guest-unbuilt.csv";
	struct cli_result r;

	setenv("CB_FAKE_NOT_BUILT", "1", 1);
	r = fake_guest_run("ok", out);
	ck_assert_msg(r.status == 2, "exit %d: %s", r.status, r.err);
	ck_assert_msg(tu_count_lines(r.err) == 1, "want one line: %s", r.err);
	ck_assert_msg(strstr(r.err, "kernel=stock is not built yet") && strstr(r.err, "--build") &&
		      strstr(r.err, "/fake-kernel/build.sh --stock") && strstr(r.err, "4 min"), "%s", r.err);
	ck_assert_msg(access(out, F_OK) != 0, "a results file was left");
	ck_assert_ptr_null(strstr(r.err, "fake build.sh --stock\n")); /* it was asked, not run to build */
	tu_free(&r);
	{
		const char *argv[] = { "cowbench", "matrix", "--kernel=stock", "--workloads=seq", "--sizes=64K", "--reps=1",
				       "--warmup=0", "--build", "--output", out, NULL };

		r = tu_run_cli(argv);
		ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
		tu_free(&r);
	}
	unsetenv("CB_FAKE_NOT_BUILT");
	unlink(out);
}
END_TEST

static void read_rows(const char *path, struct cb_results *res)
{
	char why[256];

	ck_assert_msg(cb_results_read(path, res, why, sizeof(why)) == 0, "%s", why);
}

START_TEST(guest_rows_reach_the_one_file)
{
	const char *out = "/tmp/cbtest-guest-ok.csv";
	struct cli_result r = fake_guest_run("ok", out);
	struct cb_results res;

	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_ptr_null(strstr(r.out, "console line")); /* the guest console is not in the rows */
	read_rows(out, &res);
	ck_assert_uint_eq(res.n, 4);
	/* fork=1 and fork=0 are one comparison set: rep by rep in rotating order, rounds numbered in the boot. */
	ck_assert_str_eq(res.rows[0].cell, "kernel=stock workload=seq size=64K fork=1");
	ck_assert_str_eq(res.rows[1].cell, "kernel=stock workload=seq size=64K fork=0");
	ck_assert_str_eq(res.rows[2].cell, "kernel=stock workload=seq size=64K fork=0");
	ck_assert_str_eq(res.rows[3].cell, "kernel=stock workload=seq size=64K fork=1");
	for (size_t i = 0; i < res.n; i++) {
		ck_assert_int_eq(res.rows[i].rep, (int64_t)(i / 2 + 1));
		ck_assert_int_eq(res.rows[i].round, (int64_t)(i / 2 + 1));
	}
	for (size_t i = 0; i < res.n; i++)
		ck_assert_str_eq(res.rows[i].status, "ok");
	cb_results_free(&res);
	tu_free(&r);
	unlink(out);
}
END_TEST

/* A trace of 20 child writes to one 32-page mapping (pages in a scrambled order, 1 ms apart). */
static void write_trace(const char *path, int n)
{
	FILE *fp = fopen(path, "w");

	ck_assert_ptr_nonnull(fp);
	fprintf(fp, "# cowbench-trace 1\n# source: test\n# kernel: test\n# command: test\n"
		    "t_ns,fork,side,pid,map,kind,map_pages,page,class\n");
	for (int i = 0; i < n; i++)
		fprintf(fp, "%d,1,child,7,0,heap,32,%d,copy\n", (i + 1) * 1000000, (i * 7) % 32);
	fprintf(fp, "# end records=%d lost=0 complete\n", n);
	ck_assert_int_eq(fclose(fp), 0);
}

/* --trace=FILE reaches the guest as /data/f1 (vm-run.sh --data) and its rows name the host's file again. */
START_TEST(trace_file_travels_into_the_guest)
{
	char dir[] = "/tmp/cbtest-carry.XXXXXX", trace[128], opt[160], at[160], *names;
	const char *out = "/tmp/cbtest-guest-carry.csv";
	struct cb_results res;
	size_t len;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(trace, sizeof(trace), "%s/my.trace", dir);
	snprintf(opt, sizeof(opt), "--trace=%s", trace);
	snprintf(at, sizeof(at), "%s/names", dir);
	write_trace(trace, 20);
	const char *argv[] = { "cowbench", "matrix", "--kernel=stock", "--workload=replay", opt, "--writer=child",
			       "--size=128K", "--reps=2", "--warmup=0", "--output", out, NULL };

	setenv("COWBENCH_KERNEL_DIR", CB_FIXTURE_DIR "/fake-kernel", 1);
	setenv("CB_FAKE_COWBENCH", CB_CLI_PATH, 1);
	setenv("CB_FAKE_GUEST", "ok", 1);
	setenv("CB_FAKE_DATA_AT", at, 1);
	unlink(out);
	struct cli_result r = tu_run_cli(argv);

	unsetenv("CB_FAKE_DATA_AT");
	ck_assert_msg(r.status == 0, "%s", r.err);
	names = tu_slurp(at, &len);
	ck_assert_ptr_nonnull(names);
	ck_assert_str_eq(names, "f1\n"); /* one file, under the guest's own name */
	free(names);
	read_rows(out, &res);
	ck_assert_uint_eq(res.n, 2);
	for (size_t i = 0; i < res.n; i++) {
		ck_assert_str_eq(res.rows[i].status, "ok");
		ck_assert_ptr_nonnull(strstr(res.rows[i].cell, opt + 2));
		ck_assert_ptr_nonnull(strstr(res.rows[i].options, opt + 2));
		ck_assert_int_eq(res.rows[i].touched, 20);
	}
	cb_results_free(&res);
	tu_free(&r);
	unlink(out);
	unlink(trace);
	unlink(at);
	rmdir(dir);
}
END_TEST

START_TEST(dead_guest_leaves_error_rows)
{
	const char *out = "/tmp/cbtest-guest-died.csv";
	struct cli_result r = fake_guest_run("die-after-1", out);
	struct cb_results res;

	ck_assert_int_eq(r.status, 1);
	ck_assert_ptr_nonnull(strstr(r.err, "3 of 4 reps did not come back (error:guest:died)"));
	read_rows(out, &res);
	ck_assert_uint_eq(res.n, 4);
	ck_assert_str_eq(res.rows[0].status, "ok");
	for (size_t i = 1; i < res.n; i++) {
		ck_assert_str_eq(res.rows[i].status, "error:guest:died");
		ck_assert_str_eq(res.rows[i].kernel, ""); /* not the host's release */
	}
	cb_results_free(&res);
	tu_free(&r);
	unlink(out);
}
END_TEST

START_TEST(timed_out_guest_is_never_silent)
{
	const char *out = "/tmp/cbtest-guest-timeout.csv";
	struct cli_result r = fake_guest_run("timeout", out);
	struct cb_results res;

	ck_assert_int_eq(r.status, 1);
	read_rows(out, &res);
	ck_assert_uint_eq(res.n, 4);
	for (size_t i = 0; i < res.n; i++)
		ck_assert_str_eq(res.rows[i].status, "error:guest:timeout");
	cb_results_free(&res);
	tu_free(&r);
	unlink(out);
}
END_TEST

/* A guest that timed out (or died) ran nothing: --resume runs those reps, its rows stay as the record. */
START_TEST(resume_reruns_reps_a_guest_never_ran)
{
	const char *out = "/tmp/cbtest-guest-rerun.csv";
	const char *again[] = { "cowbench", "matrix", "--kernel=stock", "--workloads=seq", "--sizes=64K",
				"--fork=1,0", "--reps=2", "--warmup=0", "--resume", out, NULL };
	const char *modes[] = { "timeout", "die-after-1" };
	struct cli_result r = fake_guest_run(modes[_i], out);
	struct cb_results res;
	size_t failed = 0, ok = 0;

	ck_assert_int_eq(r.status, 1);
	tu_free(&r);
	setenv("CB_FAKE_GUEST", "ok", 1);
	r = tu_run_cli(again);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.err, _i == 0 ? "4 rows record reps a guest never ran" :
					       "3 rows record reps a guest never ran"), "%s", r.err);
	read_rows(out, &res);
	for (size_t i = 0; i < res.n; i++) {
		failed += cb_row_guest_failed(&res.rows[i]);
		ok += strcmp(res.rows[i].status, "ok") == 0;
	}
	ck_assert_uint_eq(failed, _i == 0 ? 4 : 3); /* the record of the failure is kept */
	ck_assert_uint_eq(ok, 4);                   /* and every rep has run */
	ck_assert_uint_eq(res.n, failed + ok);
	cb_results_free(&res);
	tu_free(&r);
	/* A failed rep's row beside its rerun is no duplicate: merge and summarize take the file. */
	r = tu_run_cli((const char *[]){ "cowbench", "merge", out, NULL });
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_free(&r);
	r = tu_run_cli((const char *[]){ "cowbench", "summarize", "--quiet", out, NULL });
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_free(&r);
	/*
	 * A second resume finds every rep done: nothing boots, nothing is added, and the notes say so (they
	 * counted evidence reps a guest never runs as still to run, and the failed rows as reps to run again).
	 */
	r = tu_run_cli(again);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_ptr_null(strstr(r.err, "fake vm-run"));
	ck_assert_msg(strstr(r.err, "4 of 4 reps already there, skipped; 0 to run"), "%s", r.err);
	ck_assert_msg(!strstr(r.err, "run again"), "%s", r.err);
	read_rows(out, &res);
	ck_assert_uint_eq(res.n, failed + ok);
	cb_results_free(&res);
	tu_free(&r);
	unlink(out);
}
END_TEST

START_TEST(foreign_records_are_ignored)
{
	const char *out = "/tmp/cbtest-guest-garbage.csv";
	struct cli_result r = fake_guest_run("garbage", out);
	struct cb_results res;

	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_ptr_nonnull(strstr(r.err, "skipped 1 bad lines in the guest's row stream"));
	read_rows(out, &res);
	ck_assert_uint_eq(res.n, 4);
	cb_results_free(&res);
	tu_free(&r);
	unlink(out);
}
END_TEST

/* Lines a serial port can carry besides rows (printf %b text), each put at every place in the stream. */
static const char *const bad_lines[] = {
	"[   12.345678] audit: type=1400 audit(1732.1:3): apparmor=\"DENIED\" operation=\"open\" name=\"/x\"",
	"\\0",                          /* a NUL byte alone */
	"1,abc\\0def,2",                /* a NUL inside a row-shaped line */
	"ab\"c,1",                      /* a stray quote */
	"\"unterminated,1,2",           /* an unterminated quote: must not swallow the lines after it */
	"\"a\"b,2",                     /* text after a closing quote */
	"1,2,3",                        /* a record of the wrong width */
};
static const int bad_places[] = { 0, 1, 2, 5 }; /* lines of the real stream before it: 0 = before the header */

START_TEST(one_bad_line_loses_no_row)
{
	const char *line = bad_lines[_i / 4];
	int after = bad_places[_i % 4];
	char out[64], place[16];
	struct cli_result r;
	struct cb_results res;

	snprintf(out, sizeof(out), "/tmp/cbtest-guest-bad%d.csv", _i);
	snprintf(place, sizeof(place), "%d", after);
	setenv("CB_FAKE_LINE", line, 1);
	setenv("CB_FAKE_AFTER", place, 1);
	r = fake_guest_run("bad-line", out);
	ck_assert_msg(r.status == 0, "line %d after %d: %s", _i / 4, after, r.err);
	ck_assert_msg(strstr(r.err, "skipped 1 bad lines in the guest's row stream"), "%s", r.err);
	read_rows(out, &res);
	ck_assert_uint_eq(res.n, 4);
	for (size_t i = 0; i < res.n; i++) {
		bool later = (int)i >= (after > 0 ? after - 1 : 0); /* came after the bad line */

		ck_assert_str_eq(res.rows[i].status, "ok");
		ck_assert_msg((strstr(res.rows[i].evidence_notes, "guest-stream:skipped-1") != NULL) == later,
			      "row %zu notes '%s'", i, res.rows[i].evidence_notes);
	}
	cb_results_free(&res);
	tu_free(&r);
	unlink(out);
}
END_TEST

/* summarize --baseline divides rows of one boot only: boots drift apart (emulated time). */
START_TEST(baseline_ratio_stays_in_one_boot)
{
	char plan[] = "/tmp/cbtest-bplanXXXXXX", rows[] = "/tmp/cbtest-browsXXXXXX", fixed[] = "/tmp/cbtest-bfixXXXXXX";
	const char *run[] = { "cowbench", "matrix", "--plan", plan, "--warmup=0", "--output", rows, NULL };
	const char *sum[] = { "cowbench", "summarize", "--quiet", "--format=csv", "--metric=elapsed_ns",
			      "--baseline=fork=0", fixed, NULL };
	const char *text = "1 workload=seq size=64K fork=1\n1 workload=seq size=64K fork=0\n"
			   "2 workload=seq size=64K fork=1\n2 workload=seq size=64K fork=0\n";
	int pfd = mkstemp(plan), rfd = mkstemp(rows), ffd = mkstemp(fixed);
	struct cb_results res;
	struct cb_report rep;
	struct cli_result r;
	char why[256];
	FILE *fp;

	ck_assert_int_eq(write(pfd, text, strlen(text)), (ssize_t)strlen(text));
	close(pfd);
	close(rfd);
	r = tu_run_cli(run);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_free(&r);
	ck_assert_int_eq(cb_results_read(rows, &res, why, sizeof(why)), 0);
	ck_assert_uint_eq(res.n, 4);
	/* Boot A: 200 vs 100 (ratio 2); boot B: 900 vs 300 (ratio 3); pooled it would be 2.75. */
	for (size_t i = 0; i < res.n; i++) {
		snprintf(res.rows[i].boot, sizeof(res.rows[i].boot), "%s", res.rows[i].rep == 1 ? "A" : "B");
		res.rows[i].elapsed_ns = res.rows[i].rep == 1 ? (res.rows[i].fork ? 200 : 100) : (res.rows[i].fork ? 900 : 300);
	}
	fp = fdopen(ffd, "w");
	cb_report_init(&rep, fp, CB_FORMAT_CSV, false);
	for (size_t i = 0; i < res.n; i++)
		ck_assert_int_eq(cb_report_row(&rep, &res.rows[i]), 0);
	cb_report_finish(&rep);
	fclose(fp);
	cb_results_free(&res);
	r = tu_run_cli(sum);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, ",fork=0,2.0000,"), "%s", r.out); /* boot A's ratio alone */
	tu_free(&r);
	unlink(plan);
	unlink(rows);
	unlink(fixed);
}
END_TEST

/*
 * SIGTERM while a guest boots (issue 29.9): the guest's work directory
 * (cowbench-guest.*) goes with the run, and the note counts the rows the
 * guest had already sent.
 */
START_TEST(sigterm_mid_boot_cleans_up_and_counts)
{
	char dir[] = "/tmp/cbtest-termXXXXXX", out[600], errp[600], at[600], env_at[700], rows[4096] = "";
	const char *argv[] = { "cowbench", "matrix", "--kernel=stock", "--workloads=seq", "--sizes=64K", "--fork=1,0",
			       "--reps=2", "--warmup=0", "--output", out, NULL };
	posix_spawn_file_actions_t fa;
	size_t len = 0;
	char *err, *slash, *text;
	int efd;
	pid_t pid;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/r.csv", dir);
	snprintf(errp, sizeof(errp), "%s/err", dir);
	snprintf(at, sizeof(at), "%s/rows-at", dir);
	snprintf(env_at, sizeof(env_at), "%s", at);
	setenv("COWBENCH_KERNEL_DIR", CB_FIXTURE_DIR "/fake-kernel", 1);
	setenv("CB_FAKE_COWBENCH", CB_CLI_PATH, 1);
	setenv("CB_FAKE_GUEST", "hang-after-2", 1);
	setenv("CB_FAKE_ROWS_AT", env_at, 1);
	efd = open(errp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ck_assert_int_ge(efd, 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, efd, 2);
	ck_assert_int_eq(posix_spawn(&pid, CB_CLI_PATH, &fa, NULL, (char *const *)argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	close(efd);
	for (int i = 0; i < 1500; i++) { /* until the two rows are in the results file */
		text = tu_slurp(out, &len);
		int lines = 0;

		for (size_t k = 0; text && k < len; k++)
			lines += text[k] == '\n';
		free(text);
		if (lines >= 3)
			break;
		usleep(20000);
	}
	usleep(300000); /* the count follows each row's write by microseconds; the guest then sends nothing */
	kill(pid, SIGTERM);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	text = tu_slurp(at, &len);
	ck_assert_ptr_nonnull(text);
	snprintf(rows, sizeof(rows), "%s", text);
	free(text);
	slash = strrchr(rows, '/');
	ck_assert_ptr_nonnull(slash);
	*slash = '\0';
	ck_assert_msg(access(rows, F_OK) != 0, "%s left behind", rows);
	err = tu_slurp(errp, &len);
	ck_assert_msg(strstr(err, "interrupted: 2 of "), "%s", err); /* the two rows the guest sent */
	free(err);
	unsetenv("CB_FAKE_ROWS_AT");
	unlink(out);
	unlink(errp);
	unlink(at);
	rmdir(dir);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("matrix_kernel");
	TCase *t = tcase_create("axis");

	tcase_set_timeout(t, 120);
	tcase_add_test(t, drop_pair_rebuilds_key_and_dedupe_keeps_first);
	tcase_add_test(t, precopy_applies_only_on_patched);
	tcase_add_test(t, depth_only_with_mode_1_and_host_collapses_here);
	tcase_add_test(t, bad_kernel_values_measure_nothing);
	tcase_add_test(t, no_kernel_axis_no_boot_lines);
	tcase_add_test(t, plan_runs_in_order);
	tcase_add_test(t, plan_is_the_whole_matrix);
	tcase_add_test(t, guest_rows_reach_the_one_file);
	tcase_add_test(t, trace_file_travels_into_the_guest);
	tcase_add_test(t, dead_guest_leaves_error_rows);
	tcase_add_test(t, timed_out_guest_is_never_silent);
	tcase_add_test(t, foreign_records_are_ignored);
	tcase_add_loop_test(t, resume_reruns_reps_a_guest_never_ran, 0, 2);
	tcase_add_loop_test(t, one_bad_line_loses_no_row, 0,
			    (int)(sizeof(bad_lines) / sizeof(bad_lines[0]) * sizeof(bad_places) / sizeof(bad_places[0])));
	tcase_add_test(t, baseline_ratio_stays_in_one_boot);
	tcase_add_test(t, unbuilt_kernel_needs_build);
	tcase_add_test(t, sigterm_mid_boot_cleans_up_and_counts);
	suite_add_tcase(s, t);
	return s;
}

TU_MAIN(suite)
