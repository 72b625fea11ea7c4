/*
 * cowbench record and --workload=replay (root, the write-fault tracepoint):
 * a program making a known number of COW copies is recorded, the trace is
 * whole, and replaying it writes as many pages as were recorded.
 */
#define _GNU_SOURCE
#include <cowbench/trace.h>

#include "where_util.h"

#define PAGES 3000
#define SLACK 64

/*
 * A program that never forks (qsort of no records: UBSan's null argument before), recorded
 * through a symbolic link: the link's target gets the trace, the link stays a link; an existing
 * trace is replaced only with --force.
 */
START_TEST(test_record_no_fork_through_link)
{
	char dir[] = "/tmp/cbtest-rec2XXXXXX", target[128], link[128], opt[160];
	struct cb_trace t;
	char err[256];
	struct stat st;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(target, sizeof(target), "%s/t.trace", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	snprintf(opt, sizeof(opt), "--output=%s", link);
	ck_assert_int_eq(symlink("t.trace", link), 0);
	const char *rec[] = { CB_CLI_PATH, "record", opt, "--", "true", NULL };
	struct cli_result r = tu_run_cli(rec);

	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	tu_free(&r);
	ck_assert(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
	ck_assert_msg(cb_trace_read(target, &t, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(t.n, 0);
	cb_trace_free(&t);
	r = tu_run_cli(rec); /* the trace is there now: not replaced without --force */
	ck_assert_msg(r.status == 2 && strstr(r.err, "--force"), "exit %d: %s", r.status, r.err);
	tu_free(&r);
	unlink(link);
	unlink(target);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(test_record_then_replay)
{
	char dir[] = "/tmp/cbtest-recXXXXXX", path[128], size[32], trace_opt[160];
	struct cb_trace t;
	char err[256];
	size_t parent = 0, copies = 0;
	uint64_t need = 0;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/w.trace", dir);
	char out_opt[160];
	snprintf(out_opt, sizeof(out_opt), "--output=%s", path);
	const char *rec[] = { CB_CLI_PATH, "record", out_opt, "--", CB_COW_WRITER, "3000", NULL };
	struct cli_result r = tu_run_cli(rec);

	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_msg(strstr(r.err, "recorded "), "%s", r.err);
	tu_free(&r);
	ck_assert_msg(cb_trace_read(path, &t, err, sizeof(err)) == 0, "%s", err);
	ck_assert_ptr_nonnull(strstr(t.command, "cow-writer 3000"));
	for (size_t i = 0; i < t.n; i++) {
		if (t.rec[i].fork != 1 || t.rec[i].side != CB_TRACE_PARENT)
			continue;
		parent++;
		copies += t.rec[i].cls == CB_TRACE_COPY;
	}
	ck_assert_msg(copies >= PAGES && copies <= PAGES + SLACK, "%zu copies of the parent", copies);
	/* the region the replay needs: every mapping the parent wrote in fork 1 */
	for (uint32_t m = 0; m < 4096; m++)
		for (size_t i = 0; i < t.n; i++)
			if (t.rec[i].fork == 1 && t.rec[i].side == CB_TRACE_PARENT && t.rec[i].map == m) {
				need += t.rec[i].map_pages;
				break;
			}
	cb_trace_free(&t);
	snprintf(size, sizeof(size), "--size=%lluK", (unsigned long long)need * 4);
	snprintf(trace_opt, sizeof(trace_opt), "--trace=%s", path);
	const char *play[] = { CB_CLI_PATH, "run", "--workload=replay", trace_opt, size, "--writer=parent", "--reps=1",
			       "--format=json", NULL };
	r = tu_run_cli(play);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_msg(strstr(r.out, "\"touched\":"), "%s", r.out);
	ck_assert_int_eq(wu_num(strstr(r.out, "\"touched\":") - 1, "touched"), (long long)parent);
	tu_free(&r);
	unlink(path);
	rmdir(dir);
}
END_TEST

static Suite *record_suite(void)
{
	Suite *s = suite_create("record");
	TCase *tc = tcase_create("record");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_record_then_replay);
	tcase_add_test(tc, test_record_no_fork_through_link);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return wu_main_needing_tracepoint(record_suite);
}
