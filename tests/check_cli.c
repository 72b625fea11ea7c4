/* Integration: the cowbench program end to end, asserting what always holds. */
#include <cowbench/report.h>
#include <cowbench/stats.h>
#include <cowbench/sysctl.h>
#include <cowbench/taskstats.h>
#include <cowbench/workload.h>

#include "testutil.h"

struct table {
	struct cb_csv_record header;
	struct cb_csv_record row[64];
	int nrows;
};

/* Parse CSV text strictly: a header equal to the column table, then rows of the same width. */
static void parse_csv(const char *text, struct table *t)
{
	size_t ncol;
	const struct cb_column *cols = cb_columns(&ncol);
	FILE *fp = fmemopen((void *)text, strlen(text), "r");

	memset(t, 0, sizeof(*t));
	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(cb_csv_read_record(fp, &t->header), 1);
	ck_assert_uint_eq(t->header.nfields, ncol);
	for (size_t i = 0; i < ncol; i++)
		ck_assert_str_eq(t->header.field[i], cols[i].name);
	for (;;) {
		int rc;

		ck_assert_int_lt(t->nrows, 64);
		rc = cb_csv_read_record(fp, &t->row[t->nrows]);
		ck_assert_int_ge(rc, 0);
		if (rc == 0)
			break;
		ck_assert(t->row[t->nrows].terminated);
		ck_assert_uint_eq(t->row[t->nrows].nfields, ncol);
		t->nrows++;
	}
	fclose(fp);
}

static void free_table(struct table *t)
{
	cb_csv_record_free(&t->header);
	for (int i = 0; i <= t->nrows && i < 64; i++)
		cb_csv_record_free(&t->row[i]);
}

static const char *cell(const struct table *t, int row, const char *col)
{
	for (size_t i = 0; i < t->header.nfields; i++)
		if (strcmp(t->header.field[i], col) == 0)
			return t->row[row].field[i];
	ck_abort_msg("no column %s", col);
	return NULL;
}

static double num(const struct table *t, int row, const char *col)
{
	const char *c = cell(t, row, col);

	ck_assert_msg(*c, "column %s is empty", col);
	return strtod(c, NULL);
}

static bool is_evidence(const struct table *t, int row)
{
	return strcmp(cell(t, row, "rep_kind"), "evidence") == 0;
}

/* Rows of each kind; timed reps are numbered 1..N in order, evidence reps 1..M after them. */
static int count_kind(const struct table *t, bool evidence)
{
	int n = 0;

	for (int i = 0; i < t->nrows; i++) {
		if (is_evidence(t, i) != evidence)
			continue;
		ck_assert_str_eq(cell(t, i, "rep_kind"), evidence ? "evidence" : "timed");
		ck_assert_int_eq((int)num(t, i, "rep"), ++n);
		ck_assert_msg(evidence || i + 1 == n, "timed rep %d after an evidence rep", n);
	}
	return n;
}

/* The median over timed reps: an evidence rep's times are of an instrumented machine. */
static double median_of(const struct table *t, const char *col)
{
	double v[64];
	int n = 0;

	for (int i = 0; i < t->nrows; i++)
		if (!is_evidence(t, i))
			v[n++] = num(t, i, col);
	qsort(v, (size_t)n, sizeof(v[0]), cb_cmp_double);
	return v[n / 2];
}

/* Loop test over the table: every workload, small size, one valid row per repetition. */
START_TEST(test_every_workload_one_row_per_rep)
{
	const struct cb_workload *w = cb_workload_at((size_t)_i);
	char wl[64];
	const char *argv[] = { "cowbench", "run", wl, "--size=2M", "--reps=3", "--warmup=0", NULL };
	struct cli_result r;
	struct table t;

	if (w->flags & CB_WL_NEEDS_INPUT) { /* replay: its own test gives it a trace */
		tu_skip("%s needs an input file", w->name);
		return;
	}
	snprintf(wl, sizeof(wl), "--workload=%s", w->name);
	r = tu_run_cli(argv);
	ck_assert_msg(r.status == 0, "%s: exit %d: %s", w->name, r.status, r.err);
	parse_csv(r.out, &t);
	ck_assert_int_eq(count_kind(&t, false), 3);
	/* Default probes (taskstats): one evidence rep for a fork-and-touch workload, none for the others. */
	ck_assert_int_eq(count_kind(&t, true), w->page_order ? 1 : 0);
	for (int i = 0; i < t.nrows; i++) {
		ck_assert_str_eq(cell(&t, i, "workload"), w->name);
		ck_assert_str_eq(cell(&t, i, "status"), "ok");
		ck_assert_int_eq((int)num(&t, i, "schema"), CB_SCHEMA_VERSION);
		ck_assert_str_eq(cell(&t, i, "size_bytes"), "2097152");
	}
	free_table(&t);
	tu_free(&r);
}
END_TEST

START_TEST(test_child_faults_cover_every_page)
{
	const char *wl = _i ? "--workload=random" : "--workload=seq";
	const char *argv[] = { "cowbench", "run", wl, "--size=4M", "--reps=2", "--warmup=0", NULL };
	struct cli_result r = tu_run_cli(argv);
	struct table t;

	ck_assert_msg(r.status == 0, "%s", r.err);
	parse_csv(r.out, &t);
	for (int i = 0; i < t.nrows; i++) {
		ck_assert_int_eq((int)num(&t, i, "pages"), 1024);
		ck_assert_int_eq((int)num(&t, i, "touched"), 1024);
		ck_assert_double_ge(num(&t, i, "faults"), 1024);
		ck_assert_double_le(num(&t, i, "lat_min_ns"), num(&t, i, "lat_p50_ns"));
		ck_assert_double_le(num(&t, i, "lat_p50_ns"), num(&t, i, "lat_p90_ns"));
		ck_assert_double_le(num(&t, i, "lat_p90_ns"), num(&t, i, "lat_p99_ns"));
		ck_assert_double_le(num(&t, i, "lat_p99_ns"), num(&t, i, "lat_p999_ns"));
		ck_assert_double_le(num(&t, i, "lat_p999_ns"), num(&t, i, "lat_max_ns"));
		ck_assert_str_eq(cell(&t, i, "fork"), "1");
		ck_assert_str_eq(cell(&t, i, "writer"), "child");
	}
	free_table(&t);
	tu_free(&r);
}
END_TEST

/* A COW fault is a trap plus a copy; a write to a private page is neither. */
START_TEST(test_fork_slower_than_no_fork)
{
	const char *fork_argv[] = { "cowbench", "run", "--size=4M", "--reps=3", NULL };
	const char *nofork_argv[] = { "cowbench", "run", "--size=4M", "--reps=3", "--no-fork", NULL };
	struct cli_result a = tu_run_cli(fork_argv), b = tu_run_cli(nofork_argv);
	struct table ta, tb;

	ck_assert_int_eq(a.status, 0);
	ck_assert_int_eq(b.status, 0);
	parse_csv(a.out, &ta);
	parse_csv(b.out, &tb);
	ck_assert_double_gt(median_of(&ta, "lat_p50_ns"), median_of(&tb, "lat_p50_ns"));
	ck_assert_str_eq(cell(&tb, 0, "fork"), "0");
	free_table(&ta);
	free_table(&tb);
	tu_free(&a);
	tu_free(&b);
}
END_TEST

START_TEST(test_failed_child_is_recorded)
{
	const char *argv[] = { "cowbench", "run", "--size=1M", "--reps=3", "--warmup=1", NULL };
	struct cli_result r = tu_run_cli_env(argv, "COWBENCH_INJECT=child-kill@2");
	struct table t;

	ck_assert_int_eq(r.status, 1);
	parse_csv(r.out, &t);
	ck_assert_int_eq(count_kind(&t, false), 3);
	ck_assert_str_eq(cell(&t, 0, "status"), "ok");
	ck_assert_str_eq(cell(&t, 1, "status"), "child-killed:SIGKILL");
	ck_assert_str_eq(cell(&t, 1, "elapsed_ns"), ""); /* not measured: empty, not zero */
	ck_assert_str_eq(cell(&t, 2, "status"), "ok");
	free_table(&t);
	tu_free(&r);
}
END_TEST

static const char *const bad_inputs[][6] = {
	{ "cowbench", "run", "--workload=nope", NULL },
	{ "cowbench", "run", "--size=0", NULL },
	{ "cowbench", "run", "--size=-1M", NULL },
	{ "cowbench", "run", "--size=12Q", NULL },
	{ "cowbench", "run", "--size=99999999999999999999", NULL },
	{ "cowbench", "run", "--size=16777216T", NULL },
	{ "cowbench", "run", "--size=", NULL },
	{ "cowbench", "run", "--reps=0", NULL },
	{ "cowbench", "run", "--reps=abc", NULL },
	{ "cowbench", "run", "--warmup=-1", NULL },
	{ "cowbench", "run", "--writer=both", NULL },
	{ "cowbench", "run", "--clock=sundial", NULL },
	{ "cowbench", "run", "--format=xml", NULL },
	{ "cowbench", "run", "--cpu=99999", NULL },
	{ "cowbench", "run", "--seed=-4", NULL },
	{ "cowbench", "run", "--bogus", NULL },
	{ "cowbench", "run", "--size", NULL },
	{ "cowbench", "run", "extra", NULL },
	{ "cowbench", "run", "--precopy=7", NULL },
	{ "cowbench", "frobnicate", NULL },
	{ "cowbench", NULL },
};

START_TEST(test_bad_input)
{
	tu_assert_usage_error((const char *const *)bad_inputs[_i], NULL);
}
END_TEST

START_TEST(test_unknown_workload_lists_names)
{
	const char *argv[] = { "cowbench", "run", "--workload=nope", NULL };

	tu_assert_usage_error(argv, "seq, random, single");
}
END_TEST

START_TEST(test_size_over_memavailable)
{
	const char *argv[] = { "cowbench", "run", "--size=1M", NULL };
	struct cli_result r = tu_run_cli_env(argv, "COWBENCH_MEMINFO=" CB_FIXTURE_DIR "/meminfo_small.txt");

	ck_assert_int_eq(r.status, 2);
	ck_assert_int_eq(tu_count_lines(r.err), 1);
	ck_assert_ptr_nonnull(strstr(r.err, "MemAvailable"));
	ck_assert_uint_eq(r.out_len, 0);
	tu_free(&r);
}
END_TEST

START_TEST(test_output_file)
{
	char dir[] = "/tmp/cbtest-outdirXXXXXX", path[128], bad[160];
	const char *argv[] = { "cowbench", "run", "--size=1M", "--reps=2", path, NULL };
	const char *bad_argv[] = { "cowbench", "run", "--size=1M", bad, NULL };
	const char *bad_size[] = { "cowbench", "run", "--size=zero", path, NULL };
	struct cli_result r;
	struct table t;
	char *text;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "--output=%s/r.csv", dir);
	r = tu_run_cli(argv);
	ck_assert_int_eq(r.status, 0);
	ck_assert_uint_eq(r.out_len, 0);
	text = tu_slurp(path + 9, NULL);
	ck_assert_ptr_nonnull(text);
	parse_csv(text, &t);
	ck_assert_int_eq(count_kind(&t, false), 2);
	free_table(&t);
	free(text);
	tu_free(&r);
	unlink(path + 9);

	/* Bad input leaves no file behind. */
	r = tu_run_cli(bad_size);
	ck_assert_int_eq(r.status, 2);
	ck_assert_int_ne(access(path + 9, F_OK), 0);
	tu_free(&r);

	snprintf(bad, sizeof(bad), "--output=%s/missing-dir/r.csv", dir);
	tu_assert_usage_error(bad_argv, "cannot write");
	rmdir(dir);
}
END_TEST

START_TEST(test_size_rounding_is_announced)
{
	const char *argv[] = { "cowbench", "run", "--size=1000", "--reps=1", "--warmup=0", NULL };
	struct cli_result r = tu_run_cli(argv);
	struct table t;

	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.err, "rounded up to 4096 bytes"));
	parse_csv(r.out, &t);
	ck_assert_str_eq(cell(&t, 0, "size_bytes"), "4096");
	ck_assert_str_eq(cell(&t, 0, "pages"), "1");
	free_table(&t);
	tu_free(&r);
}
END_TEST

START_TEST(test_formats)
{
	/* Probes that read only around the loop: no evidence rep, so two rows. */
	const char *json[] = { "cowbench", "run", "--size=1M", "--reps=2", "--format=json", "--probes=pagemap,smaps",
			       NULL };
	const char *table[] = { "cowbench", "run", "--size=1M", "--reps=2", "--format=table", "--probes=pagemap,smaps",
				NULL };
	struct cli_result r = tu_run_cli(json);
	int lines = 0;

	ck_assert_int_eq(r.status, 0);
	for (char *l = strtok(r.out, "\n"); l; l = strtok(NULL, "\n"), lines++) {
		ck_assert_int_eq(l[0], '{');
		ck_assert_int_eq(l[strlen(l) - 1], '}');
		ck_assert_ptr_nonnull(strstr(l, "\"workload\":\"seq\""));
	}
	ck_assert_int_eq(lines, 2);
	tu_free(&r);
	r = tu_run_cli(table);
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(tu_count_lines(r.out), 3);
	ck_assert_ptr_nonnull(strstr(r.out, "write p50"));
	tu_free(&r);
}
END_TEST

START_TEST(test_info_list_version_help)
{
	const char *info[] = { "cowbench", "info", NULL };
	const char *list[] = { "cowbench", "list", NULL };
	const char *version[] = { "cowbench", "--version", NULL };
	const char *help[] = { "cowbench", "run", "--help", NULL };
	struct cli_result r = tu_run_cli(info);

	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "kernel:"));
	ck_assert_ptr_nonnull(strstr(r.out, "page size:"));
	ck_assert_ptr_nonnull(strstr(r.out, "/proc/cow_stats:"));
	ck_assert_ptr_nonnull(strstr(r.out, "numa:"));
	tu_free(&r);
	r = tu_run_cli(list);
	ck_assert_int_eq(r.status, 0);
	for (size_t i = 0; i < cb_workload_count(); i++)
		ck_assert_ptr_nonnull(strstr(r.out, cb_workload_at(i)->name));
	tu_free(&r);
	r = tu_run_cli(version);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "cowbench "));
	tu_free(&r);
	r = tu_run_cli(help);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "--workload"));
	tu_free(&r);
}
END_TEST

/* The stride example: every K-th page, its option in the row's options column. */
START_TEST(test_stride_writes_every_kth_page)
{
	const char *argv[] = { "cowbench", "run", "--workload=stride", "--stride=4", "--size=64K", "--reps=2",
			       "--warmup=0", NULL };
	struct cli_result r = tu_run_cli(argv);
	struct table t;

	ck_assert_msg(r.status == 0, "%s", r.err);
	parse_csv(r.out, &t);
	ck_assert_int_eq(count_kind(&t, false), 2);
	for (int i = 0; i < t.nrows; i++) {
		ck_assert_int_eq((int)num(&t, i, "pages"), 16);
		ck_assert_int_eq((int)num(&t, i, "touched"), 4);
		ck_assert_str_eq(cell(&t, i, "options"), "stride=4");
		ck_assert_str_eq(cell(&t, i, "seed"), ""); /* stride does not randomise: empty, no sentinel */
	}
	free_table(&t);
	tu_free(&r);
}
END_TEST

/* --help with --workload lists that workload's own options, from its table. */
START_TEST(test_workload_help_lists_its_options)
{
	const char *snap[] = { "cowbench", "run", "--workload=snapshot", "--help", NULL };
	const char *seq[] = { "cowbench", "run", "--workload=seq", "--help", NULL };
	struct cli_result r = tu_run_cli(snap);

	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "Options of workload snapshot:"));
	ck_assert_ptr_nonnull(strstr(r.out, "--checkpointers=N"));
	ck_assert_ptr_nonnull(strstr(r.out, "default 28"));
	ck_assert_ptr_nonnull(strstr(r.out, "--snapshot=fork|uffd-wp|memcpy|none|fork-wait"));
	ck_assert_ptr_null(strstr(r.out, "--stride"));
	ck_assert_ptr_null(strstr(r.out, "--children"));
	tu_free(&r);
	r = tu_run_cli(seq);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "Workload seq has no options of its own."));
	tu_free(&r);
}
END_TEST

/* An option the workload does not have or cannot honour: one line, exit 2, nothing measured. */
static const char *const refused[][6] = {
	{ "cowbench", "run", "--workload=seq", "--threads=2", NULL },
	{ "cowbench", "run", "--workload=fork", "--stride=3", NULL },
	{ "cowbench", "run", "--workload=fork", "--writer=parent", NULL },
	{ "cowbench", "run", "--workload=snapshot", "--no-fork", NULL },
	{ "cowbench", "run", "--workload=seq", "--seed=3", NULL },
	{ "cowbench", "run", "--workload=seq", "--cpunodebind=0", NULL },
	{ "cowbench", "run", "--workload=stride", "--stride=0", NULL },
	{ "cowbench", "run", "--workload=multi", "--share=some", NULL },
	{ "cowbench", "run", "--workload=seq", "--hugetlb", "--size=3M", NULL },
};

START_TEST(test_unhonoured_option_refused)
{
	tu_assert_usage_error(refused[_i], NULL);
}
END_TEST

/* snapshot's rule (checkpointers within the pages) is snapshot's alone. */
START_TEST(test_small_sizes_for_fork_and_multi)
{
	const char *fork8k[] = { "cowbench", "run", "--workload=fork", "--size=8K", "--reps=1", "--warmup=0", NULL };
	const char *multi4k[] = { "cowbench", "run", "--workload=multi", "--size=4K", "--share=all", "--reps=1",
				  "--warmup=0", NULL };
	const char *snap[] = { "cowbench", "run", "--workload=snapshot", "--size=8K", "--checkpointers=4", NULL };
	struct cli_result r = tu_run_cli(fork8k);

	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_free(&r);
	r = tu_run_cli(multi4k);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_free(&r);
	tu_assert_usage_error(snap, "--checkpointers=4 is more than the 2 pages");
}
END_TEST

static void run_into(const char *path, const char *const *args)
{
	const char *argv[16] = { "cowbench", "run", "--size=64K", "--reps=2", "--warmup=0" };
	char out[600];
	int n = 5;
	struct cli_result r;

	for (; *args; args++)
		argv[n++] = *args;
	snprintf(out, sizeof(out), "--output=%s", path);
	argv[n++] = out;
	argv[n] = NULL;
	r = tu_run_cli(argv);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_free(&r);
}

/* How many cells summarize finds in the files (its CSV: one line per cell and metric). */
static int summarize_cells(const char *a, const char *b)
{
	const char *argv[] = { "cowbench", "summarize", "--format=csv", "--metric=elapsed_ns", a, b, NULL };
	struct cli_result r = tu_run_cli(argv);
	int lines;

	ck_assert_msg(r.status == 0, "%s", r.err);
	lines = tu_count_lines(r.out) - 1; /* the header */
	tu_free(&r);
	return lines;
}

static int merge_status(const char *a, const char *b)
{
	const char *argv[] = { "cowbench", "merge", a, b, NULL };
	struct cli_result r = tu_run_cli(argv);
	int status = r.status;

	tu_free(&r);
	return status;
}

/* Rows differing only in a workload option or the seed are different cells; identical ones pool. */
START_TEST(test_identity_from_columns)
{
	char dir[] = "/tmp/cbtest-identXXXXXX", s2[512], s4[512], s2b[512], r1[512], r2[512];
	const char *stride2[] = { "--workload=stride", "--stride=2", NULL };
	const char *stride4[] = { "--workload=stride", "--stride=4", NULL };
	const char *seed1[] = { "--workload=random", "--seed=1", NULL };
	const char *seed2[] = { "--workload=random", "--seed=2", NULL };

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(s2, sizeof(s2), "%s/s2.csv", dir);
	snprintf(s2b, sizeof(s2b), "%s/s2b.csv", dir);
	snprintf(s4, sizeof(s4), "%s/s4.csv", dir);
	snprintf(r1, sizeof(r1), "%s/r1.csv", dir);
	snprintf(r2, sizeof(r2), "%s/r2.csv", dir);
	run_into(s2, stride2);
	run_into(s2b, stride2);
	run_into(s4, stride4);
	run_into(r1, seed1);
	run_into(r2, seed2);
	ck_assert_int_eq(summarize_cells(s2, s4), 2);
	ck_assert_int_eq(summarize_cells(s2, s2b), 1); /* the same configuration pools */
	ck_assert_int_eq(summarize_cells(r1, r2), 2);
	ck_assert_int_eq(merge_status(r1, r2), 0);   /* different seeds: not duplicates */
	ck_assert_int_eq(merge_status(s2, s4), 0);
	ck_assert_int_eq(merge_status(s2, s2b), 2);  /* same cell, same reps: duplicates */
	unlink(s2);
	unlink(s2b);
	unlink(s4);
	unlink(r1);
	unlink(r2);
	rmdir(dir);
}
END_TEST

/* Completion offers a workload's options from its table: after --workload=stride, --stride=. */
START_TEST(test_completion_follows_workload)
{
	static const char script[] =
		"source " CB_SOURCE_DIR "/docs/cowbench.bash-completion; "
		"c() { COMP_WORDS=(\"" CB_CLI_PATH "\" run \"$1\" \"$2\"); COMP_CWORD=3; "
		"COMP_LINE=\"${COMP_WORDS[*]}\"; COMP_POINT=${#COMP_LINE}; COMPREPLY=(); _cowbench; "
		"echo \"${COMPREPLY[*]}\"; }; "
		"c --workload=stride --str; c --workload=seq --str; c --workload=snapshot --snapshot=u";
	const char *argv[] = { "/bin/bash", "-c", script, NULL };
	char *out = NULL;
	size_t len = 0;
	FILE *fp;
	pid_t pid;
	int fd[2], ws;

	ck_assert_int_eq(pipe(fd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		execv(argv[0], (char **)argv);
		_exit(127);
	}
	close(fd[1]);
	fp = fdopen(fd[0], "r");
	ck_assert_int_gt(getdelim(&out, &len, '\0', fp), 0);
	fclose(fp);
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	ck_assert_str_eq(out, "--stride=\n\nuffd-wp\n");
	free(out);
}
END_TEST

/* perf adds work to every fault: timed reps go without it, one evidence rep after them carries it. */
START_TEST(test_perf_runs_in_an_evidence_rep)
{
	const char *argv[] = { "cowbench", "run", "--size=1M", "--reps=2", "--warmup=0", "--probes=perf", NULL };
	const char *quiet[] = { "cowbench", "run", "--size=1M", "--reps=2", "--warmup=0", "--probes=pagemap,smaps", NULL };
	struct cli_result r = tu_run_cli(argv), q = tu_run_cli(quiet);
	struct table t, tq;

	ck_assert_msg(r.status == 0, "%s", r.err);
	parse_csv(r.out, &t);
	ck_assert_int_eq(t.nrows, 3);
	ck_assert_int_eq(count_kind(&t, false), 2);
	ck_assert_int_eq(count_kind(&t, true), 1);
	for (int i = 0; i < 2; i++) {
		ck_assert_str_eq(cell(&t, i, "perf_minflt"), "");
		ck_assert_str_eq(cell(&t, i, "evidence_notes"), "");
	}
	ck_assert_msg(num(&t, 2, "perf_minflt") >= 256 || strstr(cell(&t, 2, "evidence_notes"), "perf:not-permitted"),
		      "%s", cell(&t, 2, "evidence_notes"));
	/* Probes that only read around the loop need no evidence rep. */
	ck_assert_msg(q.status == 0, "%s", q.err);
	parse_csv(q.out, &tq);
	ck_assert_int_eq(tq.nrows, 2);
	ck_assert_int_eq(count_kind(&tq, false), 2);
	free_table(&t);
	free_table(&tq);
	tu_free(&r);
	tu_free(&q);
}
END_TEST

/* --probes=inline: today's behaviour, every probe in the timed reps, and a note that says what it costs. */
START_TEST(test_probes_inline_keeps_one_kind)
{
	const char *argv[] = { "cowbench", "run", "--size=1M", "--reps=2", "--warmup=0", "--probes=perf,inline", NULL };
	const char *bad[] = { "cowbench", "run", "--probes=none,inline", NULL };
	struct cli_result r = tu_run_cli(argv);
	struct table t;

	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_ptr_nonnull(strstr(r.err, "--probes=inline"));
	parse_csv(r.out, &t);
	ck_assert_int_eq(t.nrows, 2);
	ck_assert_int_eq(count_kind(&t, false), 2);
	for (int i = 0; i < 2; i++)
		ck_assert(num(&t, i, "perf_minflt") >= 256 || strstr(cell(&t, i, "evidence_notes"), "perf:not-permitted"));
	free_table(&t);
	tu_free(&r);
	tu_assert_usage_error(bad, "--probes");
}
END_TEST

/*
 * As root with delay accounting off (the default): the timed reps run with
 * it off and read no taskstats; the evidence rep switches it on, counts the
 * writer's copies (a parent writer too: this cowbench was born before it
 * went on) and puts it back off.
 */
START_TEST(test_timed_reps_leave_delayacct_off)
{
	const char *writer = _i ? "--writer=parent" : "--writer=child";
	const char *argv[] = { "cowbench", "run", "--size=1M", "--reps=2", "--warmup=0", writer, NULL };
	struct tu_owner_watch w;
	struct cli_result r;
	struct table t;
	long after = -1;
	bool other;

	if (tu_skip_unless_root("switching kernel.task_delayacct") || tu_skip_if_delayacct_held("switching kernel.task_delayacct"))
		return;
	ck_assert_int_eq(cb_sysctl_write_long(CB_DELAYACCT_SYSCTL, 0), 0);
	tu_owner_watch_begin(&w);
	r = tu_run_cli(argv);
	other = tu_owner_watch_end(&w, r.pid);
	ck_assert_msg(r.status == 0, "%s", r.err);
	/* What holds with or without another cowbench: this run is no owner once it ended ... */
	ck_assert_msg(!tu_delayacct_owned_by(r.pid), "PID %d still owns kernel.task_delayacct", (int)r.pid);
	parse_csv(r.out, &t);
	ck_assert_int_eq(count_kind(&t, false), 2);
	ck_assert_int_eq(count_kind(&t, true), 1);
	for (int i = 0; i < 2; i++) /* pagemap stays: it reads only around the loop */
		ck_assert_str_ne(cell(&t, i, "cow_copies"), "");
	/* ... and the last owner put the setting back as it was (0) */
	ck_assert_int_eq(cb_sysctl_read_long(CB_DELAYACCT_SYSCTL, &after), 0);
	if (!tu_delayacct_holder())
		ck_assert_int_eq(after, 0);
	if (other) {
		/*
		 * Another cowbench (another copy of this suite, another session) held delay accounting during
		 * the run: on, the timed reps are counted; off, the evidence rep cannot switch it on. Both right.
		 */
		printf("NOTE: %s: another cowbench owned kernel.task_delayacct meanwhile: timed reps not checked\n",
		       writer);
	} else {
		for (int i = 0; i < 2; i++) {
			ck_assert_str_eq(cell(&t, i, "wpcopy_count"), "");
			ck_assert_ptr_null(strstr(cell(&t, i, "evidence_notes"), "taskstats"));
		}
		ck_assert_msg(num(&t, 2, "wpcopy_count") >= 256, "%s", cell(&t, 2, "evidence_notes"));
		ck_assert_str_eq(cell(&t, 2, "kernel_copy_source"), "taskstats");
		ck_assert_int_eq(after, 0);
	}
	free_table(&t);
	tu_free(&r);
}
END_TEST

/*
 * The command table is the one list: every command --help lists is named by
 * the unknown-command message, and --help lists exit statuses 0 to 4.
 */
START_TEST(test_commands_from_the_table)
{
	const char *help[] = { "cowbench", "--help", NULL }, *bad[] = { "cowbench", "frobnicate", NULL };
	struct cli_result h = tu_run_cli(help), r = tu_run_cli(bad);
	const char *p = strstr(h.out, "commands:\n");
	int n = 0;

	ck_assert_int_eq(h.status, 0);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(r.status, 2);
	for (p = strchr(p, '\n') + 1; p[0] == ' ' && p[1] == ' '; p = strchr(p, '\n') + 1) {
		char name[32];

		ck_assert_int_eq(sscanf(p, "%31s", name), 1);
		ck_assert_msg(strstr(r.err, name), "'%s' missing from: %s", name, r.err);
		n++;
	}
	ck_assert_int_ge(n, 11);
	ck_assert_ptr_nonnull(strstr(r.err, "record"));
	ck_assert_ptr_nonnull(strstr(r.err, "project"));
	for (int code = 0; code <= 4; code++) {
		char want[8];

		snprintf(want, sizeof(want), "%d ", code);
		ck_assert_msg(strstr(strstr(h.out, "Exit status:"), want), "exit status %d not in: %s", code, h.out);
	}
	tu_free(&h);
	tu_free(&r);
}
END_TEST

static Suite *cli_suite(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("cli");

	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, test_every_workload_one_row_per_rep, 0, (int)cb_workload_count());
	tcase_add_loop_test(tc, test_child_faults_cover_every_page, 0, 2);
	tcase_add_test(tc, test_fork_slower_than_no_fork);
	tcase_add_test(tc, test_failed_child_is_recorded);
	tcase_add_loop_test(tc, test_bad_input, 0, sizeof(bad_inputs) / sizeof(bad_inputs[0]));
	tcase_add_test(tc, test_unknown_workload_lists_names);
	tcase_add_test(tc, test_size_over_memavailable);
	tcase_add_test(tc, test_output_file);
	tcase_add_test(tc, test_size_rounding_is_announced);
	tcase_add_test(tc, test_formats);
	tcase_add_test(tc, test_info_list_version_help);
	tcase_add_test(tc, test_stride_writes_every_kth_page);
	tcase_add_test(tc, test_workload_help_lists_its_options);
	tcase_add_loop_test(tc, test_unhonoured_option_refused, 0, sizeof(refused) / sizeof(refused[0]));
	tcase_add_test(tc, test_small_sizes_for_fork_and_multi);
	tcase_add_test(tc, test_identity_from_columns);
	tcase_add_test(tc, test_completion_follows_workload);
	tcase_add_test(tc, test_commands_from_the_table);
	tcase_add_test(tc, test_perf_runs_in_an_evidence_rep);
	tcase_add_test(tc, test_probes_inline_keeps_one_kind);
	tcase_add_loop_test(tc, test_timed_reps_leave_delayacct_off, 0, 2);
	/* Runs switch delay accounting for their evidence reps: not while another test relies on it. */
	tcase_add_unchecked_fixture(tc, tu_save_delayacct, tu_restore_delayacct);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(cli_suite)
