/* Integration: --break=populate rows, and cowbench project on a matrix that measures its own units. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/report.h>

#include "testutil.h"

/* The field COL of data row ROW (0-based) of CSV text, copied into buf; false when absent. */
static bool field(const char *text, int row, const char *col, char *buf, size_t len)
{
	FILE *fp = fmemopen((void *)text, strlen(text), "r");
	struct cb_csv_record h = { 0 }, r = { 0 };
	bool found = false;
	long idx = -1;

	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(cb_csv_read_record(fp, &h), 1);
	for (size_t i = 0; i < h.nfields; i++)
		if (strcmp(h.field[i], col) == 0)
			idx = (long)i;
	for (int i = 0; idx >= 0 && i <= row && cb_csv_read_record(fp, &r) == 1; i++)
		if (i == row && (size_t)idx < r.nfields) {
			snprintf(buf, len, "%s", r.field[idx]);
			found = true;
		}
	cb_csv_record_free(&h);
	cb_csv_record_free(&r);
	fclose(fp);
	return found;
}

static double num(const char *text, int row, const char *col)
{
	char buf[64];

	ck_assert_msg(field(text, row, col, buf, sizeof(buf)), "no row %d column %s", row, col);
	ck_assert_msg(buf[0], "row %d column %s is empty", row, col);
	return strtod(buf, NULL);
}

START_TEST(test_populate_rows)
{
	const char *pop[] = { "cowbench", "run", "--size=1M", "--reps=2", "--warmup=0", "--probes=none",
			      "--break=populate", NULL };
	const char *flt[] = { "cowbench", "run", "--size=1M", "--reps=1", "--warmup=0", "--probes=none", NULL };
	struct cli_result r = tu_run_cli(pop);
	char buf[64];

	ck_assert_msg(r.status == 0, "%s", r.err);
	for (int i = 0; i < 2; i++) {
		ck_assert(field(r.out, i, "break_mode", buf, sizeof(buf)));
		ck_assert_str_eq(buf, "populate");
		ck_assert_double_le(num(r.out, i, "break_ns"), num(r.out, i, "elapsed_ns"));
		ck_assert_double_ge(num(r.out, i, "faults"), 256); /* the populate copied every page */
	}
	tu_free(&r);
	r = tu_run_cli(flt);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert(field(r.out, 0, "break_mode", buf, sizeof(buf)));
	ck_assert_str_eq(buf, ""); /* by fault: the default leaves the key of every row as it was */
	ck_assert(field(r.out, 0, "break_ns", buf, sizeof(buf)));
	ck_assert_str_eq(buf, "");
	tu_free(&r);
}
END_TEST

/* The row of CSV text whose rep_kind is KIND (the timed rep, or the evidence rep after it); -1 if none. */
static int row_of_kind(const char *text, const char *kind)
{
	char buf[16];

	for (int i = 0; field(text, i, "rep_kind", buf, sizeof(buf)); i++)
		if (strcmp(buf, kind) == 0)
			return i;
	return -1;
}

/*
 * replay --break=populate: one MADV_POPULATE_WRITE per contiguous run of each recorded mapping's written
 * pages. The trace's heap (300 pages) is written in three runs, 10-109, 150-249 and its last page 299; the
 * anon mapping after it (200 pages, map 2; map 1 was not written) in two, 0-99 and 120-179. Its page 0 lies
 * right after the heap's 299 in the region, yet is another mapping's: another call. 361 pages, 5 calls,
 * written out of order, one page twice.
 */
START_TEST(test_replay_populate_runs)
{
	char dir[] = "/tmp/cbtest-rpop.XXXXXX", trace[96], opt[128];
	const int touched = 361, calls = 5;
	int traps[2] = { -1, -1 };
	FILE *fp;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(trace, sizeof(trace), "%s/p.trace", dir);
	snprintf(opt, sizeof(opt), "--trace=%s", trace);
	fp = fopen(trace, "w");
	ck_assert_ptr_nonnull(fp);
	fputs("# cowbench-trace 1\n# source: t\n# kernel: k\n# command: c\nt_ns,fork,side,pid,map,kind,map_pages,page,"
	      "class\n", fp);
	long t = 1000, n = 0;
	const struct { int map, first, last; } w[] = { { 2, 120, 179 }, { 0, 150, 249 }, { 0, 299, 299 },
						       { 0, 10, 109 },  { 2, 0, 99 },   { 0, 160, 160 } };
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		for (int pg = w[i].last; pg >= w[i].first; pg--, n++) /* backwards: the order is not the runs' */
			fprintf(fp, "%ld,1,parent,7,%d,%s,%d,%d,copy\n", t += 1000, w[i].map, w[i].map ? "anon" : "heap",
				w[i].map ? 200 : 300, pg);
	fprintf(fp, "# end records=%ld lost=0 complete\n", n);
	ck_assert_int_eq(fclose(fp), 0);
	for (int pop = 0; pop <= 1; pop++) {
		const char *argv[] = { "cowbench", "run", "--workload=replay", opt, "--writer=parent", "--reps=1",
				       "--warmup=0", "--probes=perf,pagemap", pop ? "--break=populate" : "--break=fault", NULL };
		struct cli_result r = tu_run_cli(argv);
		int ev = row_of_kind(r.out, "evidence");
		char buf[64];

		ck_assert_msg(r.status == 0, "%s", r.err);
		for (int i = 0; field(r.out, i, "touched", buf, sizeof(buf)); i++) {
			ck_assert_double_eq(num(r.out, i, "touched"), touched); /* the same writes either way */
			ck_assert(field(r.out, i, "status", buf, sizeof(buf)));
			ck_assert_str_eq(buf, "ok");
			ck_assert(field(r.out, i, "break_mode", buf, sizeof(buf)));
			ck_assert_str_eq(buf, pop ? "populate" : "");
			if (pop) {
				ck_assert_double_gt(num(r.out, i, "break_ns"), 0);
				ck_assert_double_le(num(r.out, i, "break_ns"), num(r.out, i, "elapsed_ns"));
			}
		}
		ck_assert_int_ge(ev, 0);
		/* pagemap (root): the writer owns exactly the written pages; the populate made no page private the
		 * trace does not write (one call over the region would have made all 500 its own). */
		if (field(r.out, ev, "copied_pages", buf, sizeof(buf)) && buf[0])
			ck_assert_double_eq(num(r.out, ev, "copied_pages"), touched);
		else
			tu_skip("replay --break: no pagemap evidence here (copied_pages needs root)");
		/* perf's user-fault counter: the kernel's own faults inside the madvise are not traps (no regs). */
		if (field(r.out, ev, "perf_minflt", buf, sizeof(buf)) && buf[0])
			traps[pop] = (int)num(r.out, ev, "perf_minflt");
		tu_free(&r);
	}
	if (traps[0] >= 0 && traps[1] >= 0) {
		/* By fault every written page traps. After the populate a write traps only where a call could
		 * not make its run private: at most the calls, plus the writer's own faults off the region,
		 * which the fault run counts beside its pages (none for a parent writer here; a margin of
		 * the calls again keeps a stray stack fault from failing it). */
		ck_assert_int_ge(traps[0], touched);
		ck_assert_msg(traps[1] <= 2 * calls + (traps[0] - touched), "populate: %d traps, fault: %d", traps[1],
			      traps[0]);
	} else {
		tu_skip("replay --break: no perf software counter here (perf_event_open refused)");
	}
	unlink(trace);
	rmdir(dir);
}
END_TEST

/* --break is for page-order workloads: one that drives itself is refused, as before. */
START_TEST(test_break_refused_for_self_driven)
{
	const char *argv[] = { "cowbench", "run", "--workload=fork", "--break=populate", NULL };

	tu_assert_usage_error(argv, "--break");
}
END_TEST

/* A study in miniature: the unit cells and one writer in one file, then its projection against itself. */
START_TEST(test_project_end_to_end)
{
	char dir[] = "/tmp/cowbench-project-XXXXXX", ini[256], csv[256];
	FILE *fp;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(ini, sizeof(ini), "%s/m.ini", dir);
	snprintf(csv, sizeof(csv), "%s/m.csv", dir);
	fp = fopen(ini, "w");
	ck_assert_ptr_nonnull(fp);
	fputs("[matrix]\nreps = 2\nwarmup = 0\n[units]\nworkload = seq\nsize = 1M\nfork = 1, 0\n"
	      "break = fault, populate\nprobes = none\n[cells]\nworkload = random\nsize = 1M\nprobes = none\n", fp);
	fclose(fp);
	const char *matrix[] = { "cowbench", "matrix", "--quiet", "--output", csv, ini, NULL };
	const char *units[] = { "cowbench", "project", "--units", csv, NULL };
	const char *cells[] = { "cowbench", "project", "--native", csv, csv, NULL };
	const char *json[] = { "cowbench", "project", "--format=json", csv, NULL };
	const char *none[] = { "cowbench", "project", NULL };
	struct cli_result r = tu_run_cli(matrix);
	char buf[256];
	double populate;

	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_free(&r);
	r = tu_run_cli(units);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_int_eq(tu_count_lines(r.out), 2); /* the header and one boot at one size */
	ck_assert_double_eq(num(r.out, 0, "size_bytes"), 1 << 20);
	ck_assert_double_gt(num(r.out, 0, "fault_ns"), 0);
	ck_assert_double_gt(num(r.out, 0, "write_ns"), 0);
	populate = num(r.out, 0, "populate_ns"); /* a difference of two times: on a noisy machine maybe <= 0 */
	tu_free(&r);
	r = tu_run_cli(cells);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_int_eq(tu_count_lines(r.out), 2); /* the random writer; the unit cells are not projected */
	ck_assert(field(r.out, 0, "workload", buf, sizeof(buf)));
	ck_assert_str_eq(buf, "random");
	ck_assert_double_eq(num(r.out, 0, "writes"), 256);
	ck_assert_double_ge(num(r.out, 0, "faults"), 0);
	ck_assert_double_gt(num(r.out, 0, "predicted_ns"), 0);
	if (populate > 0) /* the populate bound exists: the native runtime has a price */
		ck_assert_double_gt(num(r.out, 0, "native_ns"), 0);
	else
		ck_assert(field(r.out, 0, "native_ns", buf, sizeof(buf)) && !buf[0]);
	ck_assert(field(r.out, 0, "model_error_pct", buf, sizeof(buf)) && buf[0]);
	ck_assert(field(r.out, 0, "native_change_pct", buf, sizeof(buf)) && !buf[0]); /* no pre-copy-off twin */
	ck_assert_double_eq(num(r.out, 0, "fault_pages_max"), 1); /* no pre-copy: a fault copies its own page */
	if (populate > 0)
		ck_assert_double_gt(num(r.out, 0, "native_stall_ns"), 0);
	tu_free(&r);
	tu_assert_usage_error(json, "csv or table");
	tu_assert_usage_error(none, "exactly one study CSV");
	unlink(csv);
	unlink(ini);
	rmdir(dir);
}
END_TEST

/* pagefault: every write of a pass is an order-0 fault, anonymous or from a private file mapping. */
START_TEST(test_pagefault_every_write_faults)
{
	const char *kind = _i ? "--fault=file" : "--fault=anon";
	const char *argv[] = { "cowbench", "run", "--workload=pagefault", kind, "--size=2M", "--reps=2", "--warmup=0", NULL };
	const char *thp[] = { "cowbench", "run", "--workload=pagefault", "--thp", NULL };
	struct cli_result r = tu_run_cli(argv);
	char buf[64];

	ck_assert_msg(r.status == 0, "%s", r.err);
	for (int i = 0; i < 2; i++) {
		ck_assert_double_eq(num(r.out, i, "touched"), 512);
		ck_assert_double_ge(num(r.out, i, "faults"), 512);
		ck_assert_double_gt(num(r.out, i, "elapsed_ns"), 0);
		ck_assert(field(r.out, i, "options", buf, sizeof(buf)));
		ck_assert_str_eq(buf, _i ? "fault=file" : "fault=anon");
	}
	tu_free(&r);
	tu_assert_usage_error(thp, "order-0");
}
END_TEST

static Suite *break_suite(void)
{
	Suite *s = suite_create("break");
	TCase *tc = tcase_create("break");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_populate_rows);
	tcase_add_test(tc, test_replay_populate_runs);
	tcase_add_test(tc, test_break_refused_for_self_driven);
	tcase_add_test(tc, test_project_end_to_end);
	tcase_add_loop_test(tc, test_pagefault_every_write_faults, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(break_suite)
