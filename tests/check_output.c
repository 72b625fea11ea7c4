/*
 * Integration: output people can read and trust (issue 13), table-driven:
 * the table's columns per workload and its units, JSON null, LF line ends,
 * the conventions of the options, matrix argument order, Ctrl-C and
 * --resume notes, and the closing summary's absence off a terminal.
 */
#include <signal.h>

#include "testutil.h"

/* Output that must (or must not) contain a text, for one command line. */
struct expect {
	const char *argv[16];
	int status;
	const char *out_has, *out_lacks, *err_has;
};

static const struct expect cases[] = {
	/* 2. the table shows each workload's own results, in units */
	{ { "run", "--workload=fork", "--size=4M", "--reps=2", "--warmup=0", "--format=table" }, 0,
	  "fork()", "write p50", NULL },
	{ { "run", "--workload=fork", "--size=4M", "--reps=1", "--warmup=0", "--format=table" }, 0, "ms/GiB", NULL,
	  NULL },
	/* the header names the quantity, not the CSV's unit: "elapsed" over "72.3 ms", never "elapsed_ns" */
	{ { "run", "--size=2M", "--reps=1", "--warmup=0", "--format=table" }, 0, "   elapsed  ", "elapsed_ns", NULL },
	/* the evidence rep is no "rep 1" again: its rep cell is "-" */
	{ { "run", "--size=2M", "--reps=1", "--warmup=0", "--format=table" }, 0, "     -  evidence", "1  evidence",
	  NULL },
	/* off a terminal (these tests read a pipe) the default is CSV, as with --output */
	{ { "run", "--size=2M", "--reps=1", "--warmup=0" }, 0, "schema,workload,size_bytes,", "   elapsed  ", NULL },
	{ { "matrix", "-w", "seq", "-s", "1M", "--fork=0", "-r", "1", "--warmup=0" }, 0, "schema,workload,size_bytes,",
	  "   elapsed  ", NULL },
	{ { "run", "--workload=snapshot", "--size=2M", "--threads=2", "--checkpointers=1", "--reps=1", "--warmup=0",
	    "--format=table" }, 0, "slowdown", "fork_ns", NULL },
	{ { "run", "--size=2M", "--reps=1", "--warmup=0", "--format=table" }, 0, "  2 MiB", "2097152", NULL },
	{ { "run", "--size=2M", "--reps=1", "--warmup=0", "--probes=none", "--format=table" }, 0, "write p50", " - ",
	  NULL },
	/* 3. CSV and JSON stay raw numbers; JSON null for an empty cell (text ones too) */
	{ { "run", "--workload=fork", "--size=2M", "--reps=1", "--warmup=0", "--format=json" }, 0,
	  "\"writer\":null", "\"writer\":\"\"", NULL },
	{ { "run", "--size=2M", "--reps=1", "--warmup=0", "--format=json" }, 0, "\"cell\":null", " MiB", NULL },
	{ { "run", "--size=2M", "--reps=1", "--warmup=0" }, 0, "\n", "\r", NULL },
	/* 4. no closing summary off a terminal */
	{ { "run", "--size=2M", "--reps=2", "--warmup=0", "--format=table" }, 0, NULL, "COW write p50", NULL },
	/* 6. short options, -V */
	{ { "run", "-w", "single", "-s", "1M", "-r", "2", "-f", "table", "--warmup=0" }, 0, "single", NULL, NULL },
	{ { "-V" }, 0, "cowbench ", NULL, NULL },
	{ { "run", "--help" }, 0, "-w, --workload=NAME", NULL, NULL },
	{ { "info", "--help" }, 0, "usage: cowbench info", NULL, NULL },
	{ { "list", "--help" }, 0, "usage: cowbench list", NULL, NULL },
	{ { "list", "--columns" }, 0, "fork_ns ", NULL, NULL },
	/* 6. matrix: options after the file; --shuffle N takes N as the seed */
	{ { "matrix", CB_FIXTURE_DIR "/matrix_good.ini", "--shard=1/2", "--dry-run" }, 0, "shard 1/2", NULL, NULL },
	{ { "matrix", CB_FIXTURE_DIR "/matrix_good.ini", "--shard", "2/2", "--reps", "1", "--dry-run" }, 0,
	  "x 1 reps", NULL, NULL },
	{ { "matrix", "--shuffle", "5", "--sizes=1M,2M", "--dry-run" }, 0, "shuffled (seed 5)", NULL, NULL },
	{ { "matrix", "-w", "seq", "-s", "1M,2M", "-r", "2", "--dry-run" }, 0, "2 cells x 2 reps", NULL, NULL },
	/* 7. one parser (getopt_long): short values attached or separate, options after operands, --, -q */
	{ { "summarize", CB_FIXTURE_DIR "/results_known.csv", "-f", "json" }, 0, "{\"cell\":", NULL, NULL },
	{ { "summarize", CB_FIXTURE_DIR "/results_known.csv", "-fcsv", "-q" }, 0, "cell,metric,", NULL, NULL },
	{ { "summarize", "--format", "csv", "--", CB_FIXTURE_DIR "/results_known.csv" }, 0, "cell,metric,", NULL, NULL },
	{ { "compare", "-q", "-f", "csv", CB_FIXTURE_DIR "/compare_old.csv", CB_FIXTURE_DIR "/compare_new.csv" }, 0,
	  "by,old,new,", NULL, NULL },
	{ { "compare", CB_FIXTURE_DIR "/compare_old.csv", CB_FIXTURE_DIR "/compare_new.csv", "-f", "json", "-q" }, 0,
	  "{\"by\":", NULL, NULL },
	{ { "merge", CB_FIXTURE_DIR "/results_shard1.csv", CB_FIXTURE_DIR "/results_shard2.csv", "-f", "x" }, 2, NULL,
	  NULL, "unknown option -f" },
	{ { "matrix", "--dry-run", "-qr3", "-w", "seq", "-s1M" }, 0, "1 cells x 3 reps", NULL, NULL },
	{ { "matrix", "--sizes", "1M,2M", "--dry-run", "--workload", "seq" }, 0, "2 cells x 5 reps", NULL, NULL },
	/* 8. messages (issue 29.10): a UTF-8 BOM is not part of "schema"; a CSV's control bytes never reach a
	 * terminal raw; a change from 0 has no percentage */
	{ { "summarize", CB_FIXTURE_DIR "/results_bom.csv" }, 0, "workload=seq", NULL, NULL },
	{ { "summarize", "-q", CB_FIXTURE_DIR "/results_ansi.csv" }, 0, "x=\\x1b[31mred\\x07 y=\\x9b2J", "\x1b", NULL },
	{ { "summarize", "-q", CB_FIXTURE_DIR "/results_ansi.csv" }, 0, NULL, "\x07", NULL },
	{ { "compare", "-q", CB_FIXTURE_DIR "/results_ansi.csv", CB_FIXTURE_DIR "/results_ansi.csv" }, 0,
	  "x=\\x1b[31mred", "\x1b", NULL },
	{ { "compare", "-q", CB_FIXTURE_DIR "/results_ansi.csv", CB_FIXTURE_DIR "/results_ansi.csv" }, 0, NULL,
	  "\xc2\x9b", NULL },
	{ { "compare", "--metric=faults", "--fail-above=5", CB_FIXTURE_DIR "/compare_zero_old.csv",
	    CB_FIXTURE_DIR "/compare_zero_new.csv" }, 1, "worse", "nan", "from 0 to 100 (no percentage of 0)" },
};

static void check_case(const struct expect *e)
{
	const char *argv[18] = { CB_CLI_PATH };
	struct cli_result r;

	for (int i = 0; e->argv[i]; i++)
		argv[i + 1] = e->argv[i];
	r = tu_run_cli(argv);
	ck_assert_msg(r.status == e->status, "%s %s: exit %d: %s", argv[1], argv[2] ? argv[2] : "", r.status, r.err);
	if (e->out_has)
		ck_assert_msg(strstr(r.out, e->out_has), "%s %s: no '%s' in:\n%s", argv[1], argv[2] ? argv[2] : "",
			      e->out_has, r.out);
	if (e->out_lacks)
		ck_assert_msg(!strstr(r.out, e->out_lacks), "%s %s: '%s' in:\n%s", argv[1], argv[2] ? argv[2] : "",
			      e->out_lacks, r.out);
	if (e->err_has)
		ck_assert_msg(strstr(r.err, e->err_has), "no '%s' in: %s", e->err_has, r.err);
	tu_free(&r);
}

START_TEST(test_output_case)
{
	check_case(&cases[_i]);
}
END_TEST

/* 6. one line on stderr, exit 2, nothing on stdout: near-misses and flags given values */
static const struct {
	const char *argv[8];
	const char *needle;
} usage_errors[] = {
	{ { "run", "--workoad=seq" }, "did you mean --workload?" },
	{ { "run", "--szie=1M" }, "did you mean --size?" },
	{ { "summarize", "--metrc=faults", "x.csv" }, "did you mean --metric?" },
	{ { "matrix", "--sizs=1M" }, "did you mean --size?" },
	{ { "matrix", "--shrad=1/2" }, "did you mean --shard?" },
	{ { "run", "--no-fork=1" }, "option --no-fork takes no value" },
	{ { "run", "--explain=yes" }, "option --explain takes no value" },
	{ { "matrix", "--dry-run=1" }, "option --dry-run takes no value" },
	{ { "run", "-s" }, "option -s (--size) needs a value" },
	{ { "info", "extra" }, "info takes no arguments" },
	{ { "list", "--bogus" }, "unknown option --bogus" },
	{ { "matrix", "a.ini", "b.ini" }, "one matrix file at most" },
	/* a hint only when it differs from what was typed; run's own options are named as such */
	{ { "matrix", "--samples=x" }, "--samples is an option of cowbench run, not a matrix axis" },
	{ { "matrix", "--explain" }, "--explain is an option of cowbench run, not a matrix axis" },
	{ { "run", "--s=1M" }, "option --s is ambiguous (--size, " },
	{ { "summarize", "x.csv", "-f" }, "option -f (--format) needs a value" },
	{ { "compare", "-o" }, "option -o (--output) needs a value" },
	{ { "stat", "-p" }, "option -p (--pid) needs a value" },
	{ { "stat", "--pid" }, "option --pid needs a value" },
	{ { "record", "-Z", "1" }, "unknown option -Z" },
	/* "did you mean" for commands, metric names and enumerated values */
	{ { "runn" }, "unknown command 'runn' (did you mean run?)" },
	{ { "sumarize", "x.csv" }, "(did you mean summarize?)" },
	{ { "summarize", "--metric=lat_p50", "x.csv" }, "'lat_p50' is not a numeric column (did you mean lat_p50_ns?)" },
	{ { "compare", "--metric=elapsed", "a.csv", "b.csv" }, "(did you mean elapsed_ns?)" },
	{ { "matrix", "--baseline-metric=elapsed_n" }, "(did you mean elapsed_ns?)" },
	{ { "summarize", "-f", "jsn", "x.csv" }, "not 'jsn' (did you mean json?)" },
	{ { "run", "--writer=chlid" }, "not 'chlid' (did you mean child?)" },
	{ { "run", "--clock=monotnic" }, "(did you mean monotonic?)" },
	{ { "run", "--thp=madvice" }, "(did you mean madvise?)" },
	{ { "run", "--workload=randm" }, "unknown workload 'randm' (did you mean random?)" },
};

START_TEST(test_usage_error)
{
	const char *argv[10] = { CB_CLI_PATH };

	for (int i = 0; usage_errors[_i].argv[i]; i++)
		argv[i + 1] = usage_errors[_i].argv[i];
	tu_assert_usage_error(argv, usage_errors[_i].needle);
}
END_TEST

static size_t file_lines(const char *path)
{
	size_t len = 0, n = 0;
	char *s = tu_slurp(path, &len);

	for (size_t i = 0; s && i < len; i++)
		n += s[i] == '\n';
	free(s);
	return n;
}

/* 6. Ctrl-C: "N of M reps done; continue with: ... --resume FILE"; --resume says what it skipped. */
START_TEST(test_matrix_interrupt_and_resume)
{
	char dir[] = "/tmp/cbtest-intXXXXXX", path[256], errp[300];
	const char *argv[] = { CB_CLI_PATH, "matrix", "--workloads=seq", "--sizes=4M,8M", "--reps=4", "--warmup=0",
			       "--output", path, NULL };
	posix_spawn_file_actions_t fa;
	int efd, ws;
	pid_t pid;
	char *err;
	size_t len;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/r.csv", dir);
	snprintf(errp, sizeof(errp), "%s/err", dir);
	efd = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(efd, 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, efd, 2);
	ck_assert_int_eq(posix_spawn(&pid, CB_CLI_PATH, &fa, NULL, (char *const *)argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	close(efd);
	/* Interrupt once two rows (header + 2) are in the file. */
	for (int i = 0; i < 600 && file_lines(path) < 3; i++)
		usleep(20000);
	kill(pid, SIGINT);
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	ck_assert(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGINT);
	err = tu_slurp(errp, &len);
	ck_assert_ptr_nonnull(err);
	/* 2 cells x 4 timed reps, and one evidence rep per cell (default probes) */
	ck_assert_msg(strstr(err, " of 10 reps done; continue with:"), "%s", err);
	ck_assert_msg(strstr(err, "cowbench matrix --workloads=seq --sizes=4M,8M --reps=4 --warmup=0 --resume "), "%s",
		      err);
	ck_assert_msg(strstr(err, path), "%s", err);
	free(err);
	/* no wait: --resume waits for the interrupted run's children to let go of the file */
	{
		const char *again[] = { CB_CLI_PATH, "matrix", "--workloads=seq", "--sizes=4M,8M", "--reps=4",
					"--warmup=0", "--resume", path, NULL };
		struct cli_result r = tu_run_cli(again);
		char want[64];

		ck_assert_msg(r.status == 0, "%s", r.err);
		snprintf(want, sizeof(want), "of 10 reps already there, skipped");
		ck_assert_msg(strstr(r.err, want), "%s", r.err);
		ck_assert_int_eq((int)file_lines(path), 11);
		tu_free(&r);
	}
	unlink(path);
	unlink(errp);
	rmdir(dir);
}
END_TEST

/*
 * 1. The breakdown plot: rep means, the kernel's own copy time where it has one, a cell whose
 * copy path exceeds its write marked and drawn whole (never clamped), pre-copy cells left out.
 */
START_TEST(test_breakdown_never_clamps)
{
	char dir[] = "/tmp/cbtest-bdXXXXXX", path[512];
	const char *argv[] = { CB_CLI_PATH, "plot", CB_FIXTURE_DIR "/results_breakdown.csv", "--out", dir, NULL };
	struct cli_result r;
	char *dat, *meta;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	r = tu_run_cli(argv);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_free(&r);
	snprintf(path, sizeof(path), "%s/data/breakdown.dat", dir);
	dat = tu_slurp(path, NULL);
	snprintf(path, sizeof(path), "%s/data/breakdown.gp", dir);
	meta = tu_slurp(path, NULL);
	ck_assert_ptr_nonnull(dat);
	ck_assert_ptr_nonnull(meta);
	/* copy 600 (cow_stats), rest of the path 2000 - 600, rest of the write 3000 - 2000 */
	ck_assert_msg(strstr(dat, "\"16M\"\t600.0\t1400.0\t1000.0\n"), "%s", dat);
	/* path 3000 > write 1000: marked, the whole write drawn, no negative part */
	ck_assert_msg(strstr(dat, " !\"\t0\t0\t1000.0\n"), "%s", dat);
	ck_assert_msg(!strstr(dat, "\t-"), "a negative part: %s", dat);
	ck_assert_msg(strstr(meta, "skipped = 1\n") && strstr(meta, "inconsistent = 1\n") && strstr(meta, "own_copy = 1\n"),
		      "%s", meta);
	free(dat);
	free(meta);
	snprintf(path, sizeof(path), "%s/breakdown.png", dir);
	ck_assert_int_eq(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(path), 0);
}
END_TEST

static Suite *output_suite(void)
{
	Suite *s = suite_create("output");
	TCase *tc = tcase_create("output");

	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, test_output_case, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_loop_test(tc, test_usage_error, 0, (int)(sizeof(usage_errors) / sizeof(usage_errors[0])));
	tcase_add_test(tc, test_matrix_interrupt_and_resume);
	tcase_add_test(tc, test_breakdown_never_clamps);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(output_suite)
