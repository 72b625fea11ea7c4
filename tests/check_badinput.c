/*
 * Bad input, as a table: every case must exit 2 with exactly one line on
 * stderr, nothing on stdout, and leave no file behind (the case's own
 * directory holds only what the case put there). @ in an argument is the
 * case's directory; files[] are written there first (\0 allowed: length
 * given by the literal).
 */
#include <dirent.h>

#include "testutil.h"

#define FX(name) CB_FIXTURE_DIR "/" name
#define HDR      "schema,workload,size_bytes,fork,rep,status\n"
#define FILE_(name, text) { name, text, sizeof(text) - 1 }

struct infile {
	const char *name, *text;
	size_t len;
};

static const struct bad_case {
	const char *argv[14];
	struct infile files[2];
	const char *needle;
} cases[] = {
	/* cowbench itself */
	{ { "cowbench", NULL }, { { 0 } }, "no command" },
	{ { "cowbench", "frobnicate", NULL }, { { 0 } }, "unknown command" },
	/* run */
	{ { "cowbench", "run", "--size=0", "--output", "@/o.csv", NULL }, { { 0 } }, "--size" },
	{ { "cowbench", "run", "--size=-1", "--output", "@/o.csv", NULL }, { { 0 } }, "--size" },
	{ { "cowbench", "run", "--size=1E", "--output", "@/o.csv", NULL }, { { 0 } }, "--size" },
	{ { "cowbench", "run", "--size=99999999T", "--output", "@/o.csv", NULL }, { { 0 } }, "--size" },
	{ { "cowbench", "run", "--size=1000T", "--output", "@/o.csv", NULL }, { { 0 } }, "MiB" },
	{ { "cowbench", "run", "--reps=0", "--output", "@/o.csv", NULL }, { { 0 } }, "--reps" },
	{ { "cowbench", "run", "--reps=abc", "--output", "@/o.csv", NULL }, { { 0 } }, "--reps" },
	{ { "cowbench", "run", "--workload=nope", "--output", "@/o.csv", NULL }, { { 0 } }, "workload" },
	{ { "cowbench", "run", "--writer=both", "--output", "@/o.csv", NULL }, { { 0 } }, "--writer" },
	{ { "cowbench", "run", "--break=trap", "--output", "@/o.csv", NULL }, { { 0 } }, "--break must be" },
	{ { "cowbench", "run", "--workload=fork", "--break=populate", "--output", "@/o.csv", NULL }, { { 0 } },
	  "--break are for page-order" },
	{ { "cowbench", "matrix", "--break=fault,bogus", "--output", "@/o.csv", NULL }, { { 0 } }, "--break" },
	{ { "cowbench", "run", "--format=xml", "--output", "@/o.csv", NULL }, { { 0 } }, "--format" },
	{ { "cowbench", "run", "--clock=sundial", "--output", "@/o.csv", NULL }, { { 0 } }, "--clock" },
	{ { "cowbench", "run", "--output=", NULL }, { { 0 } }, "--output" },
	{ { "cowbench", "run", "--size=256K", "--output", "@/o.csv", "extra", NULL }, { { 0 } }, "unexpected" },
	{ { "cowbench", "run", "--bogus", NULL }, { { 0 } }, "bogus" },
	{ { "cowbench", "run", "--size=256K", "--output", "@/old.csv", NULL }, { FILE_("old.csv", "keep\n") }, "--force" },
	{ { "cowbench", "run", "--size=256K", "--output", "@", NULL }, { { 0 } }, "Is a directory" },
	{ { "cowbench", "run", "--size=256K", "--output", "@/no/such/dir/o.csv", NULL }, { { 0 } }, "cannot write" },
	/* list, info */
	{ { "cowbench", "list", "extra", NULL }, { { 0 } }, "list" },
	{ { "cowbench", "info", "extra", NULL }, { { 0 } }, "info" },
	/* stat */
	{ { "cowbench", "stat", NULL }, { { 0 } }, "nothing to watch" },
	{ { "cowbench", "stat", "--pid=abc", NULL }, { { 0 } }, "--pid" },
	{ { "cowbench", "stat", "--pid=999999999", NULL }, { { 0 } }, "--pid" },
	{ { "cowbench", "stat", "--", "@/missing-program", NULL }, { { 0 } }, "cannot run" },
	/* matrix */
	{ { "cowbench", "matrix", "--dry-run", "@/m.ini", NULL }, { FILE_("m.ini", "[g]\nworkload = nope\n") }, "nope" },
	{ { "cowbench", "matrix", "--dry-run", "@/m.ini", NULL }, { FILE_("m.ini", "[g]\nworkload = s\0q\n") }, "NUL" },
	{ { "cowbench", "matrix", "--dry-run", "@/m.ini", NULL }, { FILE_("m.ini", "[g\nsize = 1M\n") }, "m.ini:1" },
	{ { "cowbench", "matrix", "--dry-run", "@/m.ini", NULL }, { FILE_("m.ini", "; nothing\n") }, "no axes" },
	{ { "cowbench", "matrix", "--dry-run", "@/m.ini", NULL }, { FILE_("m.ini", "[matrix]\nreps = 0\n") }, "reps" },
	{ { "cowbench", "matrix", "--dry-run", "@/m.ini", NULL },
	  { FILE_("m.ini", "[a]\nseed = 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,84,85,86,87,88,89,90,91,92,93,94,95,96,97,98,99,100\nthreads = 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,84,85,86,87,88,89,90,91,92,93,94,95,96,97,98,99,100\ncheckpointers = 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,84,85,86,87,88,89,90,91,92,93,94,95,96,97,98,99,100\nchildren = 1,2\n") },
	  "cells" },
	{ { "cowbench", "matrix", "--dry-run", "/dev/zero", NULL }, { { 0 } }, "not a regular file" },
	{ { "cowbench", "matrix", "--dry-run", "@", NULL }, { { 0 } }, "not a regular file" },
	{ { "cowbench", "matrix", "--dry-run", "@/none.ini", NULL }, { { 0 } }, "none.ini" },
	{ { "cowbench", "matrix", "--workload=seq", "--size=1E", "--output", "@/o.csv", NULL }, { { 0 } }, "--size" },
	{ { "cowbench", "matrix", "--shard=3/2", "--output", "@/o.csv", NULL }, { { 0 } }, "--shard" },
	{ { "cowbench", "matrix", "--reps=-1", "--output", "@/o.csv", NULL }, { { 0 } }, "--reps" },
	{ { "cowbench", "matrix", "--frobs=1", "--output", "@/o.csv", NULL }, { { 0 } }, "frobs" },
	{ { "cowbench", "matrix", "--workload=seq", "--size=256K", "--output", "@/old.csv", NULL },
	  { FILE_("old.csv", "keep\n") }, "--force" },
	{ { "cowbench", "matrix", "--workload=seq", "--size=256K", "--resume", "@/r.csv", NULL },
	  { FILE_("r.csv", HDR "1,seq,4096,1,1,ok\n1,seq,4096,1,\"2,ok\n1,seq,4096,1,3,ok\n") }, "record 3" },
	{ { "cowbench", "matrix", "--workload=seq", "--size=256K", "--resume", "@/r.csv", "--format=json", NULL },
	  { { 0 } }, "--resume" },
	/* merge */
	{ { "cowbench", "merge", NULL }, { { 0 } }, "merge" },
	{ { "cowbench", "merge", "/tmp", NULL }, { { 0 } }, "not a regular file" },
	{ { "cowbench", "merge", "/proc/self/mem", NULL }, { { 0 } }, "read error" },
	{ { "cowbench", "merge", "/dev/zero", NULL }, { { 0 } }, "not a regular file" },
	{ { "cowbench", "merge", "@/missing.csv", NULL }, { { 0 } }, "missing.csv" },
	{ { "cowbench", "merge", FX("results_shard1.csv"), FX("results_shard1.csv"), NULL }, { { 0 } }, "duplicate" },
	{ { "cowbench", "merge", FX("results_schema2.csv"), NULL }, { { 0 } }, "schema version" },
	{ { "cowbench", "merge", "@/a.csv", NULL }, { FILE_("a.csv", HDR "1,seq,4096,1,1,\"ok\n1,seq,4096,1,2,ok\n") },
	  "record 2" },
	{ { "cowbench", "merge", "@/a.csv", NULL }, { FILE_("a.csv", "schema,schema,workload\n") }, "twice" },
	{ { "cowbench", "merge", FX("results_shard1.csv"), "--output", "@/old.csv", NULL },
	  { FILE_("old.csv", "keep\n") }, "--force" },
	/* summarize */
	{ { "cowbench", "summarize", NULL }, { { 0 } }, "summarize" },
	{ { "cowbench", "summarize", "@/e.csv", NULL }, { FILE_("e.csv", "") }, "no result rows" },
	{ { "cowbench", "summarize", "@/a.csv", NULL }, { FILE_("a.csv", HDR "1,seq,-4096,1,1,ok\n") }, "size_bytes" },
	{ { "cowbench", "summarize", "@/a.csv", NULL }, { FILE_("a.csv", HDR "1,seq,4096,1,0,ok\n") }, "rep 0" },
	{ { "cowbench", "summarize", "@/a.csv", NULL }, { FILE_("a.csv", HDR "1,s\0q,4096,1,1,ok\n") }, "NUL" },
	{ { "cowbench", "summarize", "@/a.csv", NULL }, { FILE_("a.csv", HDR "1,seq,4096,1,1,ok,extra\n") }, "fields" },
	{ { "cowbench", "summarize", "@/a.csv", NULL }, { FILE_("a.csv", HDR "1,seq,4096,1,x,ok\n") }, "rep" },
	{ { "cowbench", "summarize", "/dev/zero", NULL }, { { 0 } }, "not a regular file" },
	{ { "cowbench", "summarize", "--metric=workload", FX("results_known.csv"), NULL }, { { 0 } }, "--metric" },
	{ { "cowbench", "summarize", "--baseline", "precopy", FX("results_known.csv"), NULL }, { { 0 } }, "--baseline" },
	{ { "cowbench", "summarize", "--format=yaml", FX("results_known.csv"), NULL }, { { 0 } }, "--format" },
	{ { "cowbench", "summarize", FX("results_known.csv"), "--output", "@/old.txt", NULL },
	  { FILE_("old.txt", "keep\n") }, "--force" },
	/* plot */
	{ { "cowbench", "plot", FX("results_known.csv"), NULL }, { { 0 } }, "--out" },
	{ { "cowbench", "plot", "@/e.csv", "--out", "@/p", NULL }, { FILE_("e.csv", "") }, "no result rows" },
	{ { "cowbench", "plot", "@/a.csv", "--out", "@/p", NULL },
	  { FILE_("a.csv", HDR "1,seq,4096,1,1,ok\n1,seq,4096,\"1,2,ok\n") }, "record 3" },
	{ { "cowbench", "plot", "/dev/zero", "--out", "@/p", NULL }, { { 0 } }, "not a regular file" },
	{ { "cowbench", "plot", FX("results_garbage.csv"), "--out", "@/p", NULL }, { { 0 } }, "not a cowbench" },
};

#define NCASES (sizeof(cases) / sizeof(cases[0]))

static size_t dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.' || (e->d_name[1] && (e->d_name[1] != '.' || e->d_name[2]));
	closedir(d);
	return n;
}

START_TEST(bad_input_table)
{
	const struct bad_case *c = &cases[_i];
	char dir[] = "/tmp/cbtest-badXXXXXX", args[14][512], line[2048] = "";
	const char *argv[14] = { 0 };
	size_t nfiles = 0;
	struct cli_result r;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (size_t f = 0; f < 2 && c->files[f].name; f++, nfiles++) {
		char path[600];
		FILE *fp;

		snprintf(path, sizeof(path), "%s/%s", dir, c->files[f].name);
		fp = fopen(path, "wb");
		ck_assert_ptr_nonnull(fp);
		ck_assert_uint_eq(fwrite(c->files[f].text, 1, c->files[f].len, fp), c->files[f].len);
		fclose(fp);
	}
	for (size_t i = 0; c->argv[i]; i++) {
		const char *at = strchr(c->argv[i], '@');

		if (at)
			snprintf(args[i], sizeof(args[i]), "%.*s%s%s", (int)(at - c->argv[i]), c->argv[i], dir, at + 1);
		else
			snprintf(args[i], sizeof(args[i]), "%s", c->argv[i]);
		argv[i] = args[i];
		snprintf(line + strlen(line), sizeof(line) - strlen(line), " %s", args[i]);
	}
	r = tu_run_cli(argv);
	ck_assert_msg(r.status == 2, "case %d (%s): exit %d, stderr: %s", _i, line, r.status, r.err);
	ck_assert_msg(tu_count_lines(r.err) == 1, "case %d (%s): want one stderr line, got: %s", _i, line, r.err);
	ck_assert_msg(r.out_len == 0, "case %d (%s): stdout: %s", _i, line, r.out);
	ck_assert_msg(strstr(r.err, c->needle), "case %d (%s): '%s' not in: %s", _i, line, c->needle, r.err);
	ck_assert_msg(dir_entries(dir) == nfiles, "case %d (%s): a file was left behind", _i, line);
	tu_free(&r);
	{
		const char *rm[] = { "rm", "-rf", "--", dir, NULL };
		pid_t pid;

		ck_assert_int_eq(posix_spawnp(&pid, "rm", NULL, NULL, (char *const *)rm, environ), 0);
		waitpid(pid, NULL, 0);
	}
}
END_TEST

static Suite *badinput_suite(void)
{
	Suite *s = suite_create("badinput");
	TCase *tc = tcase_create("table");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, bad_input_table, 0, (int)NCASES);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(badinput_suite)
