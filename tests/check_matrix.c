/* cowbench matrix: cell enumeration, shuffle, shard, matrix files, and output that survives a kill. */
#include <errno.h>
#include <signal.h>

#include <cowbench/adaptive.h>
#include <cowbench/error.h>
#include <cowbench/matrix.h>
#include <cowbench/results.h>

#include <cowbench/sysctl.h>

#include "testutil.h"

static void set_axis(struct cb_matrix *m, const char *group, const char *name, const char *values)
{
	char why[256];

	ck_assert_msg(cb_matrix_set_axis(m, group, name, values, why, sizeof(why)) == 0, "%s", why);
}

static void cells_of(const struct cb_matrix *m, struct cb_cells *c)
{
	char why[256];

	ck_assert_msg(cb_matrix_cells(m, c, why, sizeof(why)) == 0, "%s", why);
}

static void three_axes(struct cb_matrix *m)
{
	cb_matrix_init(m);
	set_axis(m, "", "workload", "seq,random");
	set_axis(m, "", "size", "1M, 2M ,4M");
	set_axis(m, "", "fork", "1,0");
}

START_TEST(enumerates_cross_product)
{
	struct cb_matrix m;
	struct cb_cells c;

	three_axes(&m);
	cells_of(&m, &c);
	ck_assert_uint_eq(c.n, 12);
	/* The first axis turns slowest, the last fastest. */
	ck_assert_str_eq(c.cell[0].key, "workload=seq size=1M fork=1");
	ck_assert_str_eq(c.cell[1].key, "workload=seq size=1M fork=0");
	ck_assert_str_eq(c.cell[2].key, "workload=seq size=2M fork=1");
	ck_assert_str_eq(c.cell[11].key, "workload=random size=4M fork=0");
	for (size_t i = 0; i < c.n; i++) {
		ck_assert_uint_eq(c.cell[i].index, i);
		ck_assert_uint_eq(c.cell[i].npairs, 3);
		for (size_t j = 0; j < i; j++)
			ck_assert_str_ne(c.cell[i].key, c.cell[j].key);
	}
	ck_assert_str_eq(cb_cell_value(&c.cell[11], "size"), "4M");
	ck_assert_ptr_null(cb_cell_value(&c.cell[11], "writer"));
	cb_cells_free(&c);
	cb_matrix_free(&m);
}
END_TEST

START_TEST(groups_union_without_duplicates)
{
	struct cb_matrix m;
	struct cb_cells c;

	three_axes(&m);
	set_axis(&m, "extra", "workload", "single,seq");
	set_axis(&m, "extra", "size", "1M");
	set_axis(&m, "extra", "fork", "1");
	cells_of(&m, &c);
	ck_assert_uint_eq(c.n, 13); /* seq/1M/1 is already in the first group */
	ck_assert_str_eq(c.cell[12].key, "workload=single size=1M fork=1");
	cb_cells_free(&c);
	cb_matrix_free(&m);
}
END_TEST

static int rank_reverse(const char *name)
{
	return -(int)strlen(name);
}

START_TEST(axes_sort)
{
	struct cb_matrix m;
	struct cb_cells c;

	cb_matrix_init(&m);
	set_axis(&m, "", "workload", "seq,random");
	set_axis(&m, "", "size", "1M, 2M ,4M");
	cb_matrix_sort_axes(&m, rank_reverse);
	cells_of(&m, &c);
	ck_assert_uint_eq(c.n, 6);
	ck_assert_str_eq(c.cell[0].key, "workload=seq size=1M");
	cb_cells_free(&c);
	cb_matrix_free(&m);
}
END_TEST

static bool same_order(const struct cb_cells *a, const struct cb_cells *b)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->cell[i].index != b->cell[i].index)
			return false;
	return true;
}

START_TEST(shuffle_is_a_seeded_permutation)
{
	struct cb_matrix m;
	struct cb_cells a, b, d;
	unsigned seen[12] = { 0 };

	three_axes(&m);
	cells_of(&m, &a);
	cells_of(&m, &b);
	cells_of(&m, &d);
	cb_cells_shuffle(&a, 42);
	cb_cells_shuffle(&b, 42);
	cb_cells_shuffle(&d, 43);
	ck_assert(same_order(&a, &b));
	ck_assert(!same_order(&a, &d));
	for (size_t i = 0; i < a.n; i++)
		seen[a.cell[i].index]++;
	for (size_t i = 0; i < 12; i++)
		ck_assert_uint_eq(seen[i], 1);
	cb_cells_free(&a);
	cb_cells_free(&b);
	cb_cells_free(&d);
	cb_matrix_free(&m);
}
END_TEST

/* Every cell in exactly one shard, for every shard count (more shards than cells included). */
START_TEST(shards_partition_the_cells)
{
	struct cb_matrix m;

	three_axes(&m);
	for (unsigned n = 1; n <= 14; n++) {
		unsigned seen[12] = { 0 };

		for (unsigned i = 1; i <= n; i++) {
			struct cb_cells c;

			cells_of(&m, &c);
			cb_cells_shuffle(&c, 5); /* shards come from the enumeration, not the run order */
			cb_cells_shard(&c, i, n);
			for (size_t k = 0; k < c.n; k++)
				seen[c.cell[k].index]++;
			cb_cells_free(&c);
		}
		for (size_t k = 0; k < 12; k++)
			ck_assert_msg(seen[k] == 1, "n=%u: cell %zu seen %u times", n, k, seen[k]);
	}
	cb_matrix_free(&m);
}
END_TEST

START_TEST(shard_parse)
{
	unsigned i, n;

	ck_assert_int_eq(cb_shard_parse("2/8", &i, &n), 0);
	ck_assert_uint_eq(i, 2);
	ck_assert_uint_eq(n, 8);
	ck_assert_int_eq(cb_shard_parse("1/1", &i, &n), 0);
	const char *bad[] = { "", "0/2", "3/2", "a/b", "1/", "/2", "1/2x", "-1/2", "1/0", "2" };

	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
		ck_assert_msg(cb_shard_parse(bad[k], &i, &n) == -EINVAL, "accepted '%s'", bad[k]);
}
END_TEST

START_TEST(bad_axes_rejected)
{
	struct cb_matrix m;
	char why[256];

	cb_matrix_init(&m);
	ck_assert_int_eq(cb_matrix_set_axis(&m, "", "Size", "1M", why, sizeof(why)), CB_EFORMAT);
	ck_assert_int_eq(cb_matrix_set_axis(&m, "", "size", "1M,,2M", why, sizeof(why)), CB_EFORMAT);
	ck_assert_int_eq(cb_matrix_set_axis(&m, "", "size", "", why, sizeof(why)), CB_EFORMAT);
	ck_assert_int_eq(cb_matrix_set_axis(&m, "", "size", "1 M", why, sizeof(why)), CB_EFORMAT);
	ck_assert_int_eq(cb_matrix_set_axis(&m, "", "size", "a=b", why, sizeof(why)), CB_EFORMAT);
	ck_assert_ptr_nonnull(strstr(why, "a=b"));
	cb_matrix_free(&m);
}
END_TEST

START_TEST(key_helpers)
{
	char v[32], out[64];

	ck_assert(cb_key_value("workload=seq size=16M precopy=1", "size", v, sizeof(v)));
	ck_assert_str_eq(v, "16M");
	ck_assert(cb_key_value("workload=seq size=16M precopy=1", "precopy", v, sizeof(v)));
	ck_assert_str_eq(v, "1");
	ck_assert(!cb_key_value("workload=seq xsize=16M", "size", v, sizeof(v)));
	ck_assert(cb_key_replace("workload=seq precopy=2 size=1M", "precopy", "0", out, sizeof(out)));
	ck_assert_str_eq(out, "workload=seq precopy=0 size=1M");
	ck_assert(!cb_key_replace("workload=seq", "precopy", "0", out, sizeof(out)));
}
END_TEST

START_TEST(matrix_file_loads)
{
	struct cb_matrix m;
	struct cb_cells c;
	char why[256];

	cb_matrix_init(&m);
	ck_assert_msg(cb_matrix_load(&m, CB_FIXTURE_DIR "/matrix_good.ini", why, sizeof(why)) == 0, "%s", why);
	ck_assert_int_eq(m.reps, 3);
	ck_assert_int_eq(m.warmup, 0);
	ck_assert(m.shuffle);
	ck_assert_uint_eq(m.shuffle_seed, 7);
	ck_assert_uint_eq(m.ngroups, 2);
	cells_of(&m, &c);
	ck_assert_uint_eq(c.n, 9);
	cb_cells_free(&c);
	cb_matrix_free(&m);
}
END_TEST

static const struct {
	const char *file, *needle;
} bad_files[] = {
	{ "matrix_bad_syntax.ini", "matrix_bad_syntax.ini:3:" },
	{ "matrix_bad_value.ini", "matrix_bad_value.ini:3:" },
	{ "matrix_bad_setting.ini", "matrix_bad_setting.ini:2:" },
	{ "matrix_bad_dup.ini", "matrix_bad_dup.ini:3:" },
};

START_TEST(matrix_file_errors_name_the_line)
{
	struct cb_matrix m;
	char why[256], path[512];

	snprintf(path, sizeof(path), "%s/%s", CB_FIXTURE_DIR, bad_files[_i].file);
	cb_matrix_init(&m);
	ck_assert_int_eq(cb_matrix_load(&m, path, why, sizeof(why)), CB_EFORMAT);
	ck_assert_msg(strstr(why, bad_files[_i].needle), "'%s' not in '%s'", bad_files[_i].needle, why);
	cb_matrix_free(&m);
}
END_TEST

/* ---- the cowbench program ---- */

/* Lines of a dry run that name cells (the first line is a comment). */
/* The lines that name a cell: not the '#' lines about the plan (its size, its comparison sets). */
static int cell_lines(const char *out)
{
	int n = 0;

	for (const char *l = out; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
		n += *l != '#' && *l != '\n';
	return n;
}

START_TEST(cli_dry_run_counts)
{
	const char *argv[] = { "cowbench", "matrix", "--workloads=seq,random", "--sizes=1M,2M", "--fork=1,0",
			       "--dry-run", NULL };
	struct cli_result r = tu_run_cli(argv);

	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_int_eq(cell_lines(r.out), 8);
	ck_assert_ptr_nonnull(strstr(r.out, "\tworkload=seq size=1M fork=1\n"));
	ck_assert_ptr_nonnull(strstr(r.out, "# 8 cells x 5 reps"));
	ck_assert_ptr_nonnull(strstr(r.out, "40 reps to run, 8 evidence reps")); /* one per cell: default probes */
	tu_free(&r);
}
END_TEST

START_TEST(cli_default_matrix)
{
	const char *argv[] = { "cowbench", "matrix", "--dry-run", NULL };
	struct cli_result r = tu_run_cli(argv);
	int n = cell_lines(r.out);

	ck_assert_msg(r.status == 0, "%s", r.err);
	/* [cow] 3 workloads x 2 sizes x fork/no-fork (x 3 pre-copy modes where the sysctl exists), [fork] 3 sizes,
	 * [snapshot] 3 methods. */
	ck_assert_msg(n == (access("/proc/sys/vm/cow_precopy", F_OK) == 0 ? 36 : 12) + 3 + 3, "%d cells", n);
	tu_free(&r);
}
END_TEST

START_TEST(cli_matrix_file_and_override)
{
	const char *argv[] = { "cowbench", "matrix", "--sizes=4M", "--dry-run", CB_FIXTURE_DIR "/matrix_good.ini",
			       NULL };
	struct cli_result r = tu_run_cli(argv);

	ck_assert_msg(r.status == 0, "%s", r.err);
	/* Every group now has size=4M: [cow] 2 x 2 cells, [single] 2 cells (one already in [cow]). */
	ck_assert_int_eq(cell_lines(r.out), 5);
	ck_assert_ptr_nonnull(strstr(r.out, "x 3 reps (+0 warm-up each), shuffled (seed 7)"));
	tu_free(&r);
}
END_TEST

START_TEST(cli_shuffle_is_reproducible)
{
	const char *argv[] = { "cowbench", "matrix", "--workloads=seq,random,single", "--sizes=1M,2M,3M",
			       "--shuffle=9", "--dry-run", NULL };
	struct cli_result a = tu_run_cli(argv), b = tu_run_cli(argv);
	const char *plain[] = { "cowbench", "matrix", "--workloads=seq,random,single", "--sizes=1M,2M,3M",
				"--dry-run", NULL };
	struct cli_result c = tu_run_cli(plain);

	ck_assert_int_eq(a.status, 0);
	ck_assert_str_eq(a.out, b.out);
	ck_assert_int_eq(cell_lines(a.out), 9);
	ck_assert_str_ne(strchr(a.out, '\n'), strchr(c.out, '\n'));
	tu_free(&a);
	tu_free(&b);
	tu_free(&c);
}
END_TEST

/* The union of the shards' dry runs is the whole matrix, each cell once. */
START_TEST(cli_shards_cover_every_cell)
{
	const char *all_argv[] = { "cowbench", "matrix", "--workloads=seq,random,single", "--sizes=1M,2M",
				   "--fork=1,0", "--dry-run", NULL };
	struct cli_result all = tu_run_cli(all_argv);
	int total = 0;

	ck_assert_int_eq(all.status, 0);
	for (int i = 1; i <= 5; i++) {
		char shard[16];
		const char *argv[] = { "cowbench", "matrix", "--workloads=seq,random,single", "--sizes=1M,2M",
				       "--fork=1,0", shard, "--shuffle=3", "--dry-run", NULL };
		struct cli_result r;
		char *save = NULL, *line;

		char *whole;

		snprintf(shard, sizeof(shard), "--shard=%d/5", i);
		r = tu_run_cli(argv);
		ck_assert_int_eq(r.status, 0);
		whole = strdup(r.out);
		for (line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char needle[256], twin[256], *fork;
			const char *first, *second;

			if (line[0] == '#')
				continue;
			/* Interleaved (the default): a comparison set stays in one shard, fork=1 with its fork=0. */
			snprintf(twin, sizeof(twin), "%s\n", strchr(line, '\t'));
			fork = strstr(twin, "fork=");
			ck_assert_ptr_nonnull(fork);
			fork[5] = fork[5] == '1' ? '0' : '1';
			ck_assert_msg(strstr(whole, twin), "shard %d has '%s' without its twin", i, line);
			snprintf(needle, sizeof(needle), "%s\n", line);
			first = strstr(all.out, needle);
			ck_assert_msg(first != NULL, "shard cell '%s' not in the matrix", line);
			second = strstr(first + 1, needle);
			ck_assert_ptr_null(second);
			total++;
		}
		free(whole);
		tu_free(&r);
	}
	ck_assert_int_eq(total, 12);
	tu_free(&all);
}
END_TEST

static const struct {
	const char *arg, *needle;
} bad_args[] = {
	{ "--sizes=abc", "--size" },
	{ "--workloads=nope", "nope" },
	{ "--bogus=1", "--bogus" },
	{ "--format=xml", "--format" },
	{ "--shard=3/2", "--shard" },
	{ "--fork=2", "fork" },
	{ "--reps=0", "--reps" },
	{ "--sizes=1M,,2M", "1M,,2M" },
	{ "--target-ci=0", "--target-ci" },
	{ "--target-ci=x", "--target-ci" },
	{ "--max-reps=3", "--target-ci" },    /* a bound without a target */
	{ "--max-time=5s", "--target-ci" },
	{ "--order=random", "--order" },
	{ "--order=shuffle:x", "--order" },
	{ "--max-time=5x", "--max-time" },
	{ "--baseline=fork=0", "--target-ci" }, /* a stopping rule without a target */
	{ "--baseline=fork", "NAME=VALUE" },
	{ "--baseline=size=16M", "compared axis" },
	{ "--baseline-metric=workload", "--baseline-metric" },
	{ "--ratio-center=trimmed", "--ratio-center" }, /* gone: one method for every ratio */
	{ "--baseline-metric=elapsed_ns", "--baseline" }, /* shapes a ratio that is not asked for */
};

START_TEST(cli_bad_flags)
{
	const char *argv[] = { "cowbench", "matrix", bad_args[_i].arg, "--dry-run", NULL };

	tu_assert_usage_error(argv, bad_args[_i].needle);
}
END_TEST

static const char *const bad_matrix_files[] = {
	"matrix_bad_syntax.ini", "matrix_bad_value.ini", "matrix_bad_axis.ini", "matrix_bad_setting.ini",
	"matrix_bad_dup.ini", "matrix_bad_workload.ini", "no_such_matrix.ini",
};

START_TEST(cli_bad_matrix_files)
{
	char path[512];
	const char *argv[] = { "cowbench", "matrix", "--dry-run", path, NULL };

	snprintf(path, sizeof(path), "%s/%s", CB_FIXTURE_DIR, bad_matrix_files[_i]);
	tu_assert_usage_error(argv, NULL);
}
END_TEST

/* ---- output that loses nothing ---- */

#define SMALL_MATRIX "--workloads=seq,random", "--sizes=256K,512K", "--fork=1,0", "--reps=3", "--warmup=0"

/* Read FILE; assert every (cell, rep) of the 8-cell x 3-rep matrix is there exactly once. */
static void assert_complete(const char *path)
{
	struct cb_results res;
	char why[512];
	const char *workloads[] = { "seq", "random" }, *sizes[] = { "256K", "512K" }, *forks[] = { "1", "0" };

	ck_assert_msg(cb_results_read(path, &res, why, sizeof(why)) == 0, "%s", why);
	ck_assert(!res.torn);
	ck_assert(res.same_columns);
	/* 24 timed reps, and one evidence rep per cell (the default probes include taskstats). */
	ck_assert_uint_eq(res.n, 24 + 8);
	for (int w = 0; w < 2; w++)
		for (int s = 0; s < 2; s++)
			for (int f = 0; f < 2; f++)
				for (int rep = 1; rep <= 3; rep++) {
					char key[128];
					int found = 0, evidence = 0;

					snprintf(key, sizeof(key), "workload=%s size=%s fork=%s", workloads[w], sizes[s],
						 forks[f]);
					for (size_t i = 0; i < res.n; i++) {
						bool here = strcmp(res.rows[i].cell, key) == 0 && res.rows[i].rep == rep;

						if (cb_row_is_evidence(&res.rows[i]))
							evidence += here;
						else
							found += here;
					}
					ck_assert_msg(found == 1, "%s rep %d: %d rows", key, rep, found);
					ck_assert_msg(evidence == (rep == 1), "%s evidence rep %d: %d rows", key, rep, evidence);
				}
	for (size_t i = 0; i < res.n; i++) {
		ck_assert_str_eq(res.rows[i].status, "ok");
		ck_assert_str_eq(res.rows[i].fork ? "1" : "0", strstr(res.rows[i].cell, "fork=1") ? "1" : "0");
	}
	cb_results_free(&res);
}

static size_t file_lines(const char *path)
{
	size_t len, n = 0;
	char *s = tu_slurp(path, &len);

	for (size_t i = 0; s && i < len; i++)
		n += s[i] == '\n';
	free(s);
	return n;
}

START_TEST(resume_after_sigkill)
{
	char path[] = "/tmp/cbtest-matrixXXXXXX";
	int fd = mkstemp(path);
	const char *argv[] = { "cowbench", "matrix", SMALL_MATRIX, "--output", path, NULL };
	const char *resume[] = { "cowbench", "matrix", SMALL_MATRIX, "--resume", path, NULL };
	posix_spawn_file_actions_t fa;
	struct cli_result r;
	pid_t pid;
	int ws;

	ck_assert_int_ge(fd, 0);
	close(fd);
	unlink(path);
	/* SIGKILL gives cowbench no chance to restore the sysctls it set: the journal does (below). */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	ck_assert_int_eq(posix_spawn(&pid, CB_CLI_PATH, &fa, NULL, (char *const *)argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	/* Kill it once a few rows are safely in the file: somewhere mid-matrix. */
	for (int i = 0; i < 20000 && file_lines(path) < 4; i++)
		usleep(500);
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	/* what it left changed is put back by --resume first (the journal), never written here */
	/* no wait: its rep child may still hold the file; --resume waits for it */
	r = tu_run_cli(resume);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_free(&r);
	assert_complete(path);
	/* Resuming a complete file runs nothing and changes nothing. */
	size_t before = file_lines(path);

	r = tu_run_cli(resume);
	ck_assert_int_eq(r.status, 0);
	tu_free(&r);
	ck_assert_uint_eq(file_lines(path), before);
	unlink(path);
}
END_TEST

START_TEST(resume_drops_a_torn_row)
{
	char path[] = "/tmp/cbtest-matrixXXXXXX";
	int fd = mkstemp(path);
	const char *argv[] = { "cowbench", "matrix", SMALL_MATRIX, "--resume", path, NULL };
	struct cli_result r;
	struct stat st;

	ck_assert_int_ge(fd, 0);
	close(fd); /* an empty file: --resume starts from scratch */
	r = tu_run_cli(argv);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_free(&r);
	assert_complete(path);
	/* Cut the last row in half, as a power loss mid-write would. */
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(truncate(path, st.st_size - 40), 0);
	r = tu_run_cli(argv);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_ptr_nonnull(strstr(r.err, "half-written"));
	tu_free(&r);
	assert_complete(path);
	unlink(path);
}
END_TEST

/* perf always makes an evidence rep: --resume counts it apart from the timed reps and runs only what is missing. */
/* Run ARGV (a matrix writing PATH), then read PATH's timed rows, in file order. */
static size_t run_timed_rows(const char **argv, const char *path, struct cb_results *res, const struct cb_row **out,
			     size_t max)
{
	struct cli_result r = tu_run_cli(argv);
	char why[512];
	size_t n = 0;

	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_free(&r);
	ck_assert_msg(cb_results_read(path, res, why, sizeof(why)) == 0, "%s", why);
	for (size_t i = 0; i < res->n && n < max; i++)
		if (!cb_row_is_evidence(&res->rows[i]))
			out[n++] = &res->rows[i];
	return n;
}

/* The ratio field of summarize's CSV line for CELL (the field after its baseline, fork=0); "" when empty. */
static void summary_ratio(const char *csv, const char *cell, char *out, size_t len)
{
	const char *l = strstr(csv, cell), *b;

	ck_assert_msg(l != NULL, "no line for %s in %s", cell, csv);
	b = strstr(l, ",fork=0,");
	ck_assert_msg(b != NULL && b < l + strcspn(l, "\n"), "no baseline on the line of %s: %s", cell, csv);
	b += strlen(",fork=0,");
	snprintf(out, len, "%.*s", (int)strcspn(b, ",\n"), b);
}

/*
 * --order=interleaved (the default): fork=1 and fork=0 run rep by rep in rotating order, each round's
 * two rows carry one round id; sequential runs each cell's reps in a row, without rounds. Either way
 * summarize's ratio is the engine's one method over the two cells' reps.
 */
START_TEST(interleaved_rows_pair_by_round)
{
	char path[] = "/tmp/cbtest-orderXXXXXX", pairs[32];
	const char *argv[] = { "cowbench", "matrix", "--workloads=seq", "--sizes=64K", "--fork=1,0", "--reps=3",
			       "--warmup=0", "--order=interleaved", "--output", path, "--force", NULL };
	const char *sum[] = { "cowbench", "summarize", path, "--baseline", "fork=0", "--metric=elapsed_ns",
			      "--format=csv", "--quiet", NULL };
	const char *one = "workload=seq size=64K fork=1", *zero = "workload=seq size=64K fork=0";
	const struct cb_row *t[16];
	struct cb_results res;
	struct cli_result r;
	int fd = mkstemp(path);
	size_t n;

	ck_assert_int_ge(fd, 0);
	close(fd);
	n = run_timed_rows(argv, path, &res, t, 16);
	ck_assert_uint_eq(n, 6);
	for (size_t i = 0; i < n; i++) {
		/* Round k holds rep k of both cells; the first of a round alternates: 1 0, 0 1, 1 0. */
		bool first_is_fork = (i / 2) % 2 == 0;

		ck_assert_int_eq(t[i]->rep, (int64_t)(i / 2 + 1));
		ck_assert_int_eq(t[i]->round, (int64_t)(i / 2 + 1));
		ck_assert_str_eq(t[i]->cell, (i % 2 == 0) == first_is_fork ? one : zero);
	}
	cb_results_free(&res);
	r = tu_run_cli(sum);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, ",baseline,ratio,ratio_ci_lo,"), "%s", r.out);
	summary_ratio(r.out, one, pairs, sizeof(pairs));
	ck_assert_msg(strtod(pairs, NULL) > 1, "fork=1 over fork=0: '%s'", pairs);
	tu_free(&r);

	argv[7] = "--order=sequential";
	n = run_timed_rows(argv, path, &res, t, 16);
	ck_assert_uint_eq(n, 6);
	for (size_t i = 0; i < n; i++) {
		ck_assert_str_eq(t[i]->cell, i < 3 ? one : zero);
		ck_assert_int_eq(t[i]->round, CB_NA);
	}
	cb_results_free(&res);
	r = tu_run_cli(sum);
	ck_assert_msg(r.status == 0, "%s", r.err);
	summary_ratio(r.out, one, pairs, sizeof(pairs));
	ck_assert_msg(strtod(pairs, NULL) > 1, "fork=1 over fork=0, sequential: '%s'", pairs); /* a ratio all the same */
	tu_free(&r);

	/* A bad --order measures nothing and leaves no file. */
	unlink(path);
	argv[7] = "--order=bogus";
	tu_assert_usage_error(argv, "--order");
	ck_assert_int_ne(access(path, F_OK), 0);
}
END_TEST

/* --resume of an interleaved run: the missing reps run in new rounds, numbered on from the file's. */
START_TEST(interleaved_resume_numbers_on)
{
	char path[] = "/tmp/cbtest-orderXXXXXX";
	const char *argv[] = { "cowbench", "matrix", "--workloads=seq", "--sizes=64K", "--fork=1,0", "--reps=2",
			       "--warmup=0", "--probes=none", "--resume", path, NULL };
	const struct cb_row *t[16];
	struct cb_results res;
	struct cli_result r;
	int fd = mkstemp(path);
	char *text;
	size_t len = 0, cut, n;

	ck_assert_int_ge(fd, 0);
	close(fd);
	r = tu_run_cli(argv);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_free(&r);
	/* Drop the last row (round 2's second rep), then resume. */
	text = tu_slurp(path, &len);
	ck_assert_ptr_nonnull(text);
	cut = len - 1;
	while (cut > 0 && text[cut - 1] != '\n')
		cut--;
	free(text);
	ck_assert_int_eq(truncate(path, (off_t)cut), 0);
	n = run_timed_rows(argv, path, &res, t, 16);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(t[2]->round, 2);
	ck_assert_int_eq(t[3]->round, 3); /* ran in another run: not round 2's pair */
	ck_assert_int_eq(t[3]->rep, 2);
	ck_assert_str_ne(t[3]->cell, t[2]->cell);
	cb_results_free(&res);
	unlink(path);
}
END_TEST

START_TEST(resume_counts_evidence_reps)
{
	char path[] = "/tmp/cbtest-matrixXXXXXX";
	int fd = mkstemp(path);
	const char *argv[] = { "cowbench", "matrix", "--workloads=seq", "--sizes=256K", "--reps=2", "--warmup=0",
			       "--probes=perf", "--resume", path, NULL };
	struct cb_results res;
	struct cli_result r;
	struct stat st;
	char why[512];
	size_t len = 0, cut;
	char *text;

	ck_assert_int_ge(fd, 0);
	close(fd);
	r = tu_run_cli(argv);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_free(&r);
	ck_assert_msg(cb_results_read(path, &res, why, sizeof(why)) == 0, "%s", why);
	ck_assert_uint_eq(res.n, 3);
	ck_assert(!cb_row_is_evidence(&res.rows[0]) && res.rows[0].rep == 1);
	ck_assert(!cb_row_is_evidence(&res.rows[1]) && res.rows[1].rep == 2);
	ck_assert(cb_row_is_evidence(&res.rows[2]) && res.rows[2].rep == 1);
	cb_results_free(&res);
	/* Complete: nothing runs. */
	ck_assert_int_eq(stat(path, &st), 0);
	r = tu_run_cli(argv);
	ck_assert_int_eq(r.status, 0);
	tu_free(&r);
	text = tu_slurp(path, &len);
	ck_assert_ptr_nonnull(text);
	ck_assert_uint_eq(len, (size_t)st.st_size);
	/* Without its evidence row, a resume adds that row and no timed rep. */
	cut = len - 1; /* the last line end; cut after the one before it */
	while (cut > 0 && text[cut - 1] != '\n')
		cut--;
	ck_assert_int_eq(truncate(path, (off_t)cut), 0);
	free(text);
	text = tu_slurp(path, &len);
	ck_assert_int_eq(tu_count_lines(text), 3);
	free(text);
	r = tu_run_cli(argv);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_free(&r);
	ck_assert_msg(cb_results_read(path, &res, why, sizeof(why)) == 0, "%s", why);
	ck_assert_uint_eq(res.n, 3);
	ck_assert(cb_row_is_evidence(&res.rows[2]));
	cb_results_free(&res);
	unlink(path);
}
END_TEST

START_TEST(existing_output_is_not_clobbered)
{
	char path[] = "/tmp/cbtest-matrixXXXXXX";
	int fd = mkstemp(path);
	const char *argv[] = { "cowbench", "matrix", SMALL_MATRIX, "--output", path, NULL };

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "schema\r\n", 8), 8);
	close(fd);
	tu_assert_usage_error(argv, "--resume");
	unlink(path);
}
END_TEST

/* Each cell of path: its reps are 1..n exactly once and only the last carries `stop`, which is want. */
/* As assert_stops, with rep `earlier` also holding the row that stopped the cell before a resume raised the bound. */
static void assert_stops_after(const char *path, size_t cells, long n, const char *want, long earlier,
			       const char *earlier_stop)
{
	struct cb_results res;
	char why[512];
	size_t timed = 0;

	ck_assert_msg(cb_results_read(path, &res, why, sizeof(why)) == 0, "%s", why);
	for (size_t i = 0; i < res.n; i++) {
		int same = 0;

		if (cb_row_is_evidence(&res.rows[i]))
			continue;
		timed++;
		for (size_t j = 0; j < res.n; j++)
			same += !cb_row_is_evidence(&res.rows[j]) && strcmp(res.rows[j].cell, res.rows[i].cell) == 0 &&
				res.rows[j].rep == res.rows[i].rep;
		ck_assert_int_eq(same, 1);
		ck_assert_int_le(res.rows[i].rep, n);
		ck_assert_str_eq(res.rows[i].stop, res.rows[i].rep == n ? want :
						   res.rows[i].rep == earlier ? earlier_stop : "");
	}
	ck_assert_uint_eq(timed, cells * (size_t)n);
	cb_results_free(&res);
}

static void assert_stops(const char *path, size_t cells, long n, const char *want)
{
	struct cb_results res;
	char why[512];
	size_t timed = 0;

	ck_assert_msg(cb_results_read(path, &res, why, sizeof(why)) == 0, "%s", why);
	for (size_t i = 0; i < res.n; i++) {
		int same = 0;

		if (cb_row_is_evidence(&res.rows[i])) {
			ck_assert_str_eq(res.rows[i].stop, ""); /* evidence reps are not the cell's reps */
			continue;
		}
		timed++;
		for (size_t j = 0; j < res.n; j++)
			same += !cb_row_is_evidence(&res.rows[j]) && strcmp(res.rows[j].cell, res.rows[i].cell) == 0 &&
				res.rows[j].rep == res.rows[i].rep;
		ck_assert_int_eq(same, 1);
		ck_assert_int_le(res.rows[i].rep, n);
		ck_assert_str_eq(res.rows[i].stop, res.rows[i].rep == n ? want : "");
	}
	ck_assert_uint_eq(timed, cells * (size_t)n);
	cb_results_free(&res);
}

static void run_ok(const char *const *argv)
{
	struct cli_result r = tu_run_cli(argv);

	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_free(&r);
}

START_TEST(adaptive_bounds_and_resume)
{
	char path[] = "/tmp/cbtest-adaptXXXXXX";
	int fd = mkstemp(path);
	/* +-0.001 % is out of reach with a fork (times of COW faults never tie; --no-fork writes can), so the bounds decide. */
	const char *bound[] = { "cowbench", "matrix", "--workload=single", "--size=64K,128K", "--fork=1", "--reps=3",
				"--target-ci=0.001", "--max-reps=4", "--output", path, "--quiet", NULL };
	const char *more[] = { "cowbench", "matrix", "--workload=single", "--size=64K,128K", "--fork=1", "--reps=3",
			       "--target-ci=0.001", "--max-reps=6", "--resume", path, "--quiet", NULL };
	const char *fixed[] = { "cowbench", "matrix", "--workload=single", "--size=64K,128K", "--fork=1", "--reps=3",
				"--output", path, "--quiet", NULL };
	const char *timed[] = { "cowbench", "matrix", "--workload=single", "--size=64K,128K", "--fork=1", "--reps=3",
				"--target-ci=0.001", "--max-time=1ms", "--output", path, "--quiet", NULL };

	ck_assert_int_ge(fd, 0);
	close(fd);
	unlink(path);
	char *before, *after;
	struct cli_result r;

	run_ok(bound);
	assert_stops(path, 2, 4, "max-reps");
	/*
	 * Resumed with a higher bound (issue 29, item 10: it said "22 to run" and ran 0): the cells go on
	 * to it, their old last rows kept as the record of the first bound.
	 */
	r = tu_run_cli(more);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.err, "reps already there, skipped; at most 4 to run") != NULL, "%s", r.err);
	tu_free(&r);
	assert_stops_after(path, 2, 6, "max-reps", 4, "max-reps");
	/* The same again: every cell stopped under this rule, nothing runs and the note says so. */
	before = tu_slurp(path, NULL);
	r = tu_run_cli(more);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.err, "skipped; 0 to run") != NULL, "%s", r.err);
	tu_free(&r);
	after = tu_slurp(path, NULL);
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
	unlink(path);
	/* Fixed reps leave `stop` empty; resumed adaptively, they count and the cells go on to the bound. */
	run_ok(fixed);
	assert_stops(path, 2, 3, "");
	run_ok(more);
	assert_stops(path, 2, 6, "max-reps");
	unlink(path);
	/* The time bound never cuts below --reps. */
	run_ok(timed);
	assert_stops(path, 2, 3, "max-time");
	unlink(path);
}
END_TEST

/* The last timed row of cell (by rep): its rep number, and its stop column into stop[]. */
static long last_rep(const struct cb_results *res, const char *cell, char *stop, size_t len)
{
	long n = 0;

	for (size_t i = 0; i < res->n; i++)
		if (!cb_row_is_evidence(&res->rows[i]) && strcmp(res->rows[i].cell, cell) == 0 && res->rows[i].rep > n) {
			n = res->rows[i].rep;
			snprintf(stop, len, "%s", res->rows[i].stop);
		}
	return n;
}

START_TEST(adaptive_baseline_ratio)
{
	char path[] = "/tmp/cbtest-ratioXXXXXX", why[512], s1[32], s0[32];
	int fd = mkstemp(path);
	/* fork=0 rows have no copied_pages (nothing is copied without a fork): no round pairs, so only the bound stops them. */
	const char *never[] = { "cowbench", "matrix", "--workload=seq", "--size=256K", "--fork=1,0", "--target-ci=50",
				"--baseline=fork=0", "--baseline-metric=copied_pages", "--max-reps=8", "--output", path,
				"--quiet", NULL };
	/* pages is the same on both sides: the ratio is exact, so each cell's own target decides. */
	const char *exact[] = { "cowbench", "matrix", "--workload=seq", "--size=256K", "--fork=1,0", "--target-ci=50",
				"--baseline=fork=0", "--baseline-metric=pages", "--max-reps=30", "--output", path,
				"--quiet", NULL };
	const char *nobase[] = { "cowbench", "matrix", "--workload=seq", "--size=256K", "--fork=1,0", "--target-ci=50",
				 "--baseline=fork=2", "--dry-run", NULL };
	const char *seqorder[] = { "cowbench", "matrix", "--workload=seq", "--size=256K", "--fork=1,0", "--target-ci=50",
				   "--baseline=fork=0", "--order=sequential", "--dry-run", NULL };
	struct cb_results res;
	struct cli_result r;
	long n1, n0;

	ck_assert_int_ge(fd, 0);
	close(fd);
	unlink(path);
	/* With a 50 % target each cell alone would stop at 5 or 6 reps; the pair's ratio holds them to the bound. */
	run_ok(never);
	assert_stops(path, 2, 8, "max-reps");
	unlink(path);
	run_ok(exact);
	ck_assert_msg(cb_results_read(path, &res, why, sizeof(why)) == 0, "%s", why);
	n1 = last_rep(&res, "workload=seq size=256K fork=1", s1, sizeof(s1));
	n0 = last_rep(&res, "workload=seq size=256K fork=0", s0, sizeof(s0));
	ck_assert_str_eq(s1, "target");
	ck_assert_str_eq(s0, "target");
	/* The baseline outlives the cell it pairs with, by the one rep that records its stop. */
	ck_assert_int_ge(n1, CB_ADAPTIVE_MIN_REPS);
	ck_assert_int_ge(n0, n1);
	ck_assert_int_le(n0, n1 + 1);
	cb_results_free(&res);
	unlink(path);
	r = tu_run_cli(nobase);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "no cell of this matrix has fork=2") && !*r.out, "%s", r.err);
	tu_free(&r);
	r = tu_run_cli(seqorder);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "sequential") && !*r.out, "%s", r.err);
	tu_free(&r);
}
END_TEST

static Suite *matrix_suite(void)
{
	Suite *s = suite_create("matrix");
	TCase *lib = tcase_create("library"), *cli = tcase_create("cli"), *out = tcase_create("output");

	tcase_add_test(lib, enumerates_cross_product);
	tcase_add_test(lib, groups_union_without_duplicates);
	tcase_add_test(lib, axes_sort);
	tcase_add_test(lib, shuffle_is_a_seeded_permutation);
	tcase_add_test(lib, shards_partition_the_cells);
	tcase_add_test(lib, shard_parse);
	tcase_add_test(lib, bad_axes_rejected);
	tcase_add_test(lib, key_helpers);
	tcase_add_test(lib, matrix_file_loads);
	tcase_add_loop_test(lib, matrix_file_errors_name_the_line, 0, sizeof(bad_files) / sizeof(bad_files[0]));
	tcase_add_test(cli, cli_dry_run_counts);
	tcase_add_test(cli, cli_default_matrix);
	tcase_add_test(cli, cli_matrix_file_and_override);
	tcase_add_test(cli, cli_shuffle_is_reproducible);
	tcase_add_test(cli, cli_shards_cover_every_cell);
	tcase_add_loop_test(cli, cli_bad_flags, 0, sizeof(bad_args) / sizeof(bad_args[0]));
	tcase_add_loop_test(cli, cli_bad_matrix_files, 0, sizeof(bad_matrix_files) / sizeof(bad_matrix_files[0]));
	tcase_set_timeout(cli, 60);
	tcase_add_test(out, resume_after_sigkill);
	tcase_add_test(out, resume_drops_a_torn_row);
	tcase_add_test(out, existing_output_is_not_clobbered);
	tcase_add_test(out, resume_counts_evidence_reps);
	tcase_add_test(out, interleaved_rows_pair_by_round);
	tcase_add_test(out, interleaved_resume_numbers_on);
	tcase_add_test(out, adaptive_bounds_and_resume);
	tcase_add_test(out, adaptive_baseline_ratio);
	tcase_set_timeout(out, 300);
	/* Real matrices switch delay accounting for their evidence reps: not while another test relies on it. */
	tcase_add_unchecked_fixture(out, tu_save_delayacct, tu_restore_delayacct);
	suite_add_tcase(s, lib);
	suite_add_tcase(s, cli);
	suite_add_tcase(s, out);
	return s;
}

TU_MAIN(matrix_suite)
