/*
 * A full disk, as a table: every command whose standard output is
 * /dev/full, and (as root) every command whose output file lies on a tmpfs
 * with no room left, must exit 1 with one line naming ENOSPC as "No space
 * left on device" (never a silent 0, never "Input/output error") and
 * leave no partial, empty or temporary file behind.
 */
#include <dirent.h>
#include <errno.h>
#include <sys/mount.h>

#include "common/outfile.h"
#include "testutil.h"

#define FX(name) CB_FIXTURE_DIR "/" name
#define ENOSPC_TEXT "No space left on device"

/* Run argv with stdout on the given file (a path), stderr captured. */
static struct cli_result run_stdout_to(const char *const *argv, const char *out_path)
{
	char errp[] = "/tmp/cbtest-fullerrXXXXXX";
	int efd = mkstemp(errp), ofd = open(out_path, O_WRONLY | O_CLOEXEC), ws;
	posix_spawn_file_actions_t fa;
	struct cli_result r = { 0 };
	pid_t pid;

	ck_assert_int_ge(efd, 0);
	ck_assert_int_ge(ofd, 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, ofd, 1);
	posix_spawn_file_actions_adddup2(&fa, efd, 2);
	ck_assert_int_eq(posix_spawn(&pid, CB_CLI_PATH, &fa, NULL, (char *const *)argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	close(ofd);
	close(efd);
	r.err = tu_slurp(errp, &r.err_len);
	r.out = strdup("");
	unlink(errp);
	ck_assert_ptr_nonnull(r.err);
	return r;
}

static const struct {
	const char *argv[12];
} to_full_stdout[] = {
	{ { "cowbench", "list", NULL } },
	{ { "cowbench", "list", "--columns", NULL } },
	{ { "cowbench", "info", NULL } },
	{ { "cowbench", "--help", NULL } },
	{ { "cowbench", "-V", NULL } },
	{ { "cowbench", "run", "--help", NULL } },
	{ { "cowbench", "run", "-s", "256K", "-r", "1", "--warmup=0", "-q", NULL } },
	{ { "cowbench", "matrix", "-s", "256K", "-r", "1", "--warmup=0", "--fork=1", "-q", NULL } },
	{ { "cowbench", "matrix", "-s", "256K,512K", "--dry-run", NULL } },
	{ { "cowbench", "summarize", "-q", FX("results_known.csv"), NULL } },
	{ { "cowbench", "compare", "-q", FX("compare_old.csv"), FX("compare_new.csv"), NULL } },
	{ { "cowbench", "merge", FX("results_shard1.csv"), FX("results_shard2.csv"), NULL } },
	{ { "cowbench", "stat", "--interval=0.1", "--", "true", NULL } },
	{ { "cowbench", "project", "--units", FX("results_known.csv"), NULL } },
	{ { "cowbench", "project", FX("results_known.csv"), NULL } },
};

START_TEST(full_stdout)
{
	struct cli_result r = run_stdout_to(to_full_stdout[_i].argv, "/dev/full");

	ck_assert_msg(r.status == 1, "%s %s: exit %d, stderr: %s", to_full_stdout[_i].argv[1],
		      to_full_stdout[_i].argv[2] ? to_full_stdout[_i].argv[2] : "", r.status, r.err);
	ck_assert_msg(strstr(r.err, ENOSPC_TEXT), "%s: no '%s' in: %s", to_full_stdout[_i].argv[1], ENOSPC_TEXT,
		      r.err);
	ck_assert_msg(tu_count_lines(r.err) == 1, "%s: want one stderr line, got: %s", to_full_stdout[_i].argv[1],
		      r.err);
	tu_free(&r);
}
END_TEST

/* ---- files on a full tmpfs (root) ---- */

static const struct {
	const char *argv[14]; /* @: the full directory */
	const char *written;  /* the file the command would write, under @ */
} to_full_dir[] = {
	{ { "cowbench", "run", "-s", "256K", "-r", "2", "--warmup=0", "-q", "-o", "@/r.csv", NULL }, "r.csv" },
	{ { "cowbench", "run", "-s", "256K", "-r", "2", "--warmup=0", "-q", "--samples=@/s.csv", NULL }, "s.csv" },
	{ { "cowbench", "matrix", "-s", "256K", "-r", "1", "--warmup=0", "--fork=1", "-q", "-o", "@/m.csv", NULL },
	  "m.csv" },
	{ { "cowbench", "summarize", "-q", FX("results_known.csv"), "-o", "@/s.txt", NULL }, "s.txt" },
	{ { "cowbench", "compare", "-q", FX("compare_old.csv"), FX("compare_new.csv"), "-o", "@/c.txt", NULL }, "c.txt" },
	{ { "cowbench", "merge", FX("results_shard1.csv"), FX("results_shard2.csv"), "-o", "@/m.csv", NULL }, "m.csv" },
	{ { "cowbench", "stat", "--where=code", "--folded=@/f.txt", "--", "true", NULL }, "f.txt" },
	{ { "cowbench", "project", "--units", FX("results_known.csv"), "-o", "@/p.csv", NULL }, "p.csv" },
	/* plot's folder of files: the folder it made goes again, with every file in it */
	{ { "cowbench", "plot", "-q", FX("results_known.csv"), "--out", "@/plots", NULL }, "plots/" },
};

/* The entries of dir other than "fill" (the file that filled it). */
static int stray_entries(const char *dir, char *first, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "fill") && n++ == 0)
			snprintf(first, len, "%s", e->d_name);
	closedir(d);
	return n;
}

/* A tmpfs of 16 KiB, filled to the last block; false (skip) where it cannot be mounted. */
static bool mount_full(char *dir)
{
	char fill[600], block[4096] = { 0 };
	int fd;

	if (!mkdtemp(dir))
		return false;
	if (mount("tmpfs", dir, "tmpfs", 0, "size=16k") != 0) {
		tu_skip("cannot mount a tmpfs: %s", strerror(errno));
		rmdir(dir);
		return false;
	}
	snprintf(fill, sizeof(fill), "%s/fill", dir);
	fd = open(fill, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	while (write(fd, block, sizeof(block)) > 0)
		;
	close(fd);
	return true;
}

START_TEST(full_disk)
{
	char dir[] = "/tmp/cbtest-fullXXXXXX", args[14][600], stray[256] = "";
	const char *argv[14] = { 0 };
	struct cli_result r;
	int n;

	if (tu_skip_unless_root("mounting a small tmpfs") || !mount_full(dir))
		return;
	for (int i = 0; to_full_dir[_i].argv[i]; i++) {
		const char *at = strchr(to_full_dir[_i].argv[i], '@');

		if (at)
			snprintf(args[i], sizeof(args[i]), "%.*s%s%s", (int)(at - to_full_dir[_i].argv[i]),
				 to_full_dir[_i].argv[i], dir, at + 1);
		else
			snprintf(args[i], sizeof(args[i]), "%s", to_full_dir[_i].argv[i]);
		argv[i] = args[i];
	}
	r = run_stdout_to(argv, "/dev/null");
	n = stray_entries(dir, stray, sizeof(stray));
	umount2(dir, MNT_DETACH);
	rmdir(dir);
	ck_assert_msg(r.status == 1, "%s %s: exit %d, stderr: %s", argv[1], argv[2], r.status, r.err);
	ck_assert_msg(strstr(r.err, ENOSPC_TEXT), "%s: no '%s' in: %s", argv[1], ENOSPC_TEXT, r.err);
	ck_assert_msg(!strstr(r.err, "Input/output error"), "%s: EIO named: %s", argv[1], r.err);
	ck_assert_msg(n == 0, "%s: left %s behind (wanted to write %s)", argv[1], stray, to_full_dir[_i].written);
	tu_free(&r);
}
END_TEST

/*
 * The writer every file output goes through (temporary file, renamed when whole), given records longer
 * than stdio's buffer: each one goes to write() directly, and when that fails on a full disk the buffer
 * is empty, so only the stream's error flag says the file is short. The commit must fail, name ENOSPC
 * and leave nothing.
 */
static const size_t long_records[] = { 3000, 5000, 70000, 200000 };

START_TEST(commit_sees_a_failed_long_record)
{
	char dir[] = "/tmp/cbtest-fullcXXXXXX", path[600], stray[256] = "";
	struct cli_output out;
	char *rec = malloc(long_records[_i] + 1);
	int rc, err_fd, saved;
	size_t len;
	char *msg, errp[] = "/tmp/cbtest-fullcerrXXXXXX";

	ck_assert_ptr_nonnull(rec);
	if (tu_skip_unless_root("mounting a small tmpfs") || !mount_full(dir)) {
		free(rec);
		return;
	}
	memset(rec, 'f', long_records[_i]);
	rec[long_records[_i]] = '\0';
	snprintf(path, sizeof(path), "%s/folded.txt", dir);
	err_fd = mkstemp(errp);
	saved = dup(2);
	dup2(err_fd, 2);
	ck_assert_int_eq(cli_output_begin(&out, path, true), 0);
	fprintf(out.fp, "%s 1\n", rec);
	rc = cli_output_commit(&out);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(err_fd);
	msg = tu_slurp(errp, &len);
	unlink(errp);
	len = (size_t)stray_entries(dir, stray, sizeof(stray));
	umount2(dir, MNT_DETACH);
	rmdir(dir);
	ck_assert_msg(rc < 0, "a %zu-byte record on a full disk: the commit succeeded", long_records[_i]);
	ck_assert_msg(len == 0, "left %s behind", stray);
	ck_assert_msg(msg && strstr(msg, ENOSPC_TEXT), "no '%s' in: %s", ENOSPC_TEXT, msg ? msg : "");
	free(msg);
	free(rec);
}
END_TEST

static Suite *full_suite(void)
{
	Suite *s = suite_create("full");
	TCase *tc = tcase_create("full");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, full_stdout, 0, (int)(sizeof(to_full_stdout) / sizeof(to_full_stdout[0])));
	tcase_add_loop_test(tc, full_disk, 0, (int)(sizeof(to_full_dir) / sizeof(to_full_dir[0])));
	tcase_add_loop_test(tc, commit_sees_a_failed_long_record, 0,
			    (int)(sizeof(long_records) / sizeof(long_records[0])));
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(full_suite)
