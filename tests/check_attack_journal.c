/*
 * The settings journal under attack (issue 29): root restores what the
 * journal says, so a journal line must never name a file that is not one of
 * the sysctls cowbench changes, and a journal directory someone else could
 * have written must not be used at all.
 */
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>

#include <cowbench/hugepage.h>
#include <cowbench/sysctl.h>

#include "sysctl_test_hook.h"
#include "testutil.h"

#define DEAD_OWNER "2147483000:1" /* no such process: its lines are "stale", restored by anyone */

static char dir[] = "/tmp/cbtest-jattackXXXXXX";

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "wb");

	ck_assert_ptr_nonnull(fp);
	ck_assert_uint_eq(fwrite(text, 1, strlen(text), fp), strlen(text));
	ck_assert_int_eq(fclose(fp), 0);
}

/* A journal as a live cowbench leaves it: the overrides and the lock beside them. */
static void write_journal(const char *jdir, const char *line)
{
	char path[800];

	snprintf(path, sizeof(path), "%s/overrides", jdir);
	write_file(path, line);
	snprintf(path, sizeof(path), "%s/lock", jdir);
	write_file(path, "");
}

static void assert_file(const char *path, const char *want)
{
	size_t len;
	char *got = tu_slurp(path, &len);

	ck_assert_ptr_nonnull(got);
	ck_assert_msg(strcmp(got, want) == 0, "%s now holds '%s', not '%s'", path, got, want);
	free(got);
}

static void rm_tree(const char *path)
{
	const char *argv[] = { "rm", "-rf", "--", path, NULL };
	pid_t pid;

	ck_assert_int_eq(posix_spawnp(&pid, "rm", NULL, NULL, (char *const *)argv, environ), 0);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
}

/* Journal lines that name a victim file: PREFIX, the journal's directory, SUFFIX; each with a dead owner. */
static const struct {
	const char *prefix, *suffix;
} victim_lines[] = {
	{ "", "/victim.txt" },                                   /* the file itself */
	{ "/proc/sys/../..", "/victim.txt" },                    /* under /proc/sys by name only */
	{ "/proc/sys/vm/nr_hugepages/../../../..", "/victim.txt" }, /* a known key's prefix */
	{ "", "/link" },                                         /* a symlink to the victim */
	{ "/proc/sys/kernel/task_delayacct/", "/victim.txt" },   /* a known key as a prefix */
};

START_TEST(victim_line_is_refused)
{
	char victim[600], link[600], line[800];
	struct cb_sysctl_stale st[4];
	struct cb_sysctl_held h[4];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	setenv("COWBENCH_RUN_DIR", dir, 1);
	snprintf(victim, sizeof(victim), "%s/victim.txt", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	snprintf(line, sizeof(line), "%s%s%s 31337 " DEAD_OWNER "\n", victim_lines[_i].prefix, dir,
		 victim_lines[_i].suffix);
	write_file(victim, "precious\n");
	ck_assert_int_eq(symlink(victim, link), 0);
	write_journal(dir, line);
	ck_assert_int_eq(cb_sysctl_overrides(h, 4), 0); /* not a setting: not listed */
	ck_assert_int_eq(cb_sysctl_recover(st, 4), 0);   /* nor restored */
	assert_file(victim, "precious\n");
	rm_tree(dir);
}
END_TEST

/* As the report found it: the next `cowbench run` with COWBENCH_RUN_DIR at that journal. */
START_TEST(victim_line_survives_a_run)
{
	const char *argv[] = { "cowbench", "run", "--size=256K", "--reps=1", "--probes=none", "--quiet", NULL };
	char victim[600], line[800], env[700];
	struct cli_result r;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(victim, sizeof(victim), "%s/victim.txt", dir);
	snprintf(line, sizeof(line), "%s 31337 " DEAD_OWNER "\n", victim);
	snprintf(env, sizeof(env), "COWBENCH_RUN_DIR=%s", dir);
	write_file(victim, "precious\n");
	write_journal(dir, line);
	r = tu_run_cli_env(argv, env);
	ck_assert_msg(r.status == 0, "%s", r.err);
	assert_file(victim, "precious\n");
	tu_free(&r);
	rm_tree(dir);
}
END_TEST

/* Journal directories another user could have written: ways to make DIR/run one. */
enum unsafe { VIA_SYMLINK, WORLD_WRITABLE, GROUP_WRITABLE, OTHER_OWNER, OPEN_PARENT, DOTDOT, N_UNSAFE };

static const char *const unsafe_names[] = { "a symlink", "world-writable", "group-writable", "another owner",
					    "under a world-writable parent without the sticky bit", "with '..'" };

/* Makes the journal directory of case u under dir; returns its path (what COWBENCH_RUN_DIR says). */
static void make_unsafe(int u, char *run, size_t len, char *real, size_t rlen)
{
	char sub[600];

	snprintf(real, rlen, "%s/run", dir);
	snprintf(run, len, "%s", real);
	ck_assert_int_eq(mkdir(real, 0755), 0);
	switch (u) {
	case VIA_SYMLINK:
		snprintf(run, len, "%s/link", dir);
		ck_assert_int_eq(symlink(real, run), 0);
		break;
	case WORLD_WRITABLE:
		ck_assert_int_eq(chmod(real, 0777), 0);
		break;
	case GROUP_WRITABLE:
		ck_assert_int_eq(chmod(real, 0775), 0);
		break;
	case OTHER_OWNER:
		ck_assert_int_eq(chown(real, 65534, 65534), 0);
		break;
	case OPEN_PARENT:
		ck_assert_int_eq(chmod(dir, 0777), 0);
		break;
	case DOTDOT:
		snprintf(sub, sizeof(sub), "%s/sub", dir);
		ck_assert_int_eq(mkdir(sub, 0755), 0);
		snprintf(run, len, "%s/sub/../run", dir);
		break;
	}
}

START_TEST(unsafe_run_dir_is_no_journal)
{
	char run[700], real[700], knob[600], journal[800], line[800], safe[] = "/tmp/cbtest-jknobXXXXXX";
	struct cb_sysctl_stale st[4];

	if (_i == OTHER_OWNER && tu_skip_unless_root("giving a directory to nobody"))
		return;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_ptr_nonnull(mkdtemp(safe));
	snprintf(knob, sizeof(knob), "%s/knob", safe);
	write_file(knob, "0\n");
	cb_sysctl_test_key(knob); /* a setting cowbench may change: only the directory is wrong */
	make_unsafe(_i, run, sizeof(run), real, sizeof(real));
	setenv("COWBENCH_RUN_DIR", run, 1);
	snprintf(journal, sizeof(journal), "%s/overrides", real);
	snprintf(line, sizeof(line), "%s 7 " DEAD_OWNER "\n", knob);
	write_journal(real, line);
	ck_assert_msg(cb_sysctl_recover(st, 4) == 0, "journal %s (%s) was used", run, unsafe_names[_i]);
	assert_file(knob, "0\n");
	/* The run still changes and restores its own settings, without that journal. */
	ck_assert_int_eq(cb_sysctl_override(knob, 1), 0);
	assert_file(knob, "1\n");
	assert_file(journal, line);
	cb_sysctl_restore_all();
	assert_file(knob, "0\n");
	cb_sysctl_test_key(NULL);
	rm_tree(dir);
	rm_tree(safe);
}
END_TEST

/* Only the known keys are ever changed, journal or not. */
START_TEST(unknown_key_is_never_changed)
{
	char victim[600];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	setenv("COWBENCH_RUN_DIR", dir, 1);
	snprintf(victim, sizeof(victim), "%s/victim.txt", dir);
	write_file(victim, "5\n");
	ck_assert_int_eq(cb_sysctl_override(victim, 1), -EINVAL);
	ck_assert_int_eq(cb_sysctl_raise(victim, 9), -EINVAL);
	assert_file(victim, "5\n");
	rm_tree(dir);
}
END_TEST

/*
 * Concurrent owners (issue 29, item 10): an 8-shard Slurm job plus one more
 * run on a node all reserve huge pages (cb_sysctl_raise, each its own
 * floor) or switch delay accounting on (cb_sysctl_override, one value).
 * Every one of them must hold the setting, and the last to end puts the
 * original back; past the journal's limit a run is refused with -EUSERS
 * (its message names the limit), and the others are not disturbed.
 */
#ifndef CB_SYSCTL_MAX_OWNERS
#define CB_SYSCTL_MAX_OWNERS 8 /* what the journal held before: the test builds against it */
#endif

static const struct {
	int n;
	bool raise; /* a floor each (huge pages) or one value (delay accounting) */
} crowds[] = {
	{ 9, true }, { 9, false }, { 64, true }, { CB_SYSCTL_MAX_OWNERS, true }, { CB_SYSCTL_MAX_OWNERS + 1, true },
	{ CB_SYSCTL_MAX_OWNERS + 1, false },
};

START_TEST(many_concurrent_owners)
{
	int n = crowds[_i].n, go[2], ready[2], ok = 0, refused = 0, other = 0, live;
	char knob[600];
	long v = -1;
	pid_t *pids = calloc((size_t)n, sizeof(*pids));
	struct cb_sysctl_held h[4];

	ck_assert_ptr_nonnull(pids);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	setenv("COWBENCH_RUN_DIR", dir, 1);
	snprintf(knob, sizeof(knob), "%s/knob", dir);
	write_file(knob, "0\n");
	cb_sysctl_test_key(knob);
	ck_assert_int_eq(pipe(go), 0);
	ck_assert_int_eq(pipe(ready), 0);
	for (int i = 0; i < n; i++) {
		pids[i] = fork();
		ck_assert_int_ge(pids[i], 0);
		if (pids[i] == 0) {
			int rc = crowds[_i].raise ? cb_sysctl_raise(knob, i + 1) : cb_sysctl_override(knob, 1);
			char c = rc == 0 ? 'y' : rc == -EUSERS ? 'u' : 'n';

			close(go[1]);
			(void)!write(ready[1], &c, 1);
			(void)!read(go[0], &c, 1); /* until the test closes go */
			cb_sysctl_restore_all();
			_exit(0);
		}
	}
	close(go[0]);
	close(ready[1]);
	for (int i = 0; i < n; i++) {
		char c;

		ck_assert_int_eq(read(ready[0], &c, 1), 1);
		ok += c == 'y';
		refused += c == 'u';
		other += c == 'n';
	}
	close(ready[0]);
	ck_assert_int_eq(cb_sysctl_read_long(knob, &v), 0);
	ck_assert_int_eq(cb_sysctl_overrides(h, 4), 1);
	live = h[0].live;
	close(go[1]); /* every holder ends */
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(waitpid(pids[i], NULL, 0), pids[i]);
	ck_assert_msg(other == 0, "%d of %d runs failed otherwise", other, n);
	if (n <= CB_SYSCTL_MAX_OWNERS) {
		ck_assert_msg(ok == n, "%d of %d concurrent runs hold it", ok, n);
	} else {
		ck_assert_msg(ok == CB_SYSCTL_MAX_OWNERS && refused == n - ok, "%d held, %d refused of %d", ok, refused, n);
	}
	ck_assert_int_eq(live, ok);
	if (crowds[_i].raise)
		ck_assert_int_ge(v, ok); /* the highest floor of those that hold it */
	else
		ck_assert_int_eq(v, 1);
	assert_file(knob, "0\n"); /* the last one out put it back */
	ck_assert_int_eq(cb_sysctl_overrides(h, 4), 0);
	cb_sysctl_test_key(NULL);
	free(pids);
	rm_tree(dir);
}
END_TEST

/*
 * Hostile journal lines for the knob (KNOB stands for its path), each with dead owners only: recover
 * puts the original back exactly when the line names it whole, and nothing crashes or overflows.
 */
static const struct {
	const char *line; /* KNOB is replaced by the knob's path; N by 300 dead owners */
	const char *knob_after;
} hostile_lines[] = {
	{ "KNOB 0 N\n", "0\n" },                                         /* more owners than the journal holds */
	{ "KNOB 0 2147483000:1:2:3 x:y ::\n", "0\n" },                   /* garbage after an owner */
	{ "KNOB -9223372036854775808 2147483000:1\n", "7\n" },           /* LLONG_MIN: no long, not restored */
	{ "KNOB 0 -9223372036854775808:-9223372036854775808\n", "0\n" }, /* no owner parses: none alive */
	{ "KNOB 99999999999999999999999 2147483000:1\n", "7\n" },        /* wraps: not restored as a number */
	{ "KNOB 0 2147483000:1", "7\n" },                                 /* no newline: a cut line */
	{ "KNOB\n", "7\n" },                                             /* no value */
	{ "KNOB 0 2147483000:1\nKNOB 0 2147483000:1\n", "0\n" },          /* the same key twice */
};

START_TEST(hostile_journal_line)
{
	char knob[600], *text = malloc(1 << 20), *o = text;
	const char *in = hostile_lines[_i].line;
	struct cb_sysctl_stale st[4];
	struct cb_sysctl_held h[4];

	ck_assert_ptr_nonnull(text);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	setenv("COWBENCH_RUN_DIR", dir, 1);
	snprintf(knob, sizeof(knob), "%s/knob", dir);
	write_file(knob, "7\n");
	cb_sysctl_test_key(knob);
	for (; *in; in++) {
		if (*in == 'K' && strncmp(in, "KNOB", 4) == 0) {
			o += sprintf(o, "%s", knob);
			in += 3;
		} else if (*in == 'N') {
			for (int k = 0; k < 300; k++)
				o += sprintf(o, "%s%d:1", k ? " " : "", 2147483000 + k);
		} else {
			*o++ = *in;
		}
	}
	*o = '\0';
	write_journal(dir, text);
	(void)cb_sysctl_overrides(h, 4);
	(void)cb_sysctl_recover(st, 4);
	assert_file(knob, hostile_lines[_i].knob_after);
	ck_assert_int_ge(cb_sysctl_overrides(h, 4), 0);
	cb_sysctl_test_key(NULL);
	free(text);
	rm_tree(dir);
}
END_TEST

/* The refusal past the limit, as a --hugetlb row says it: the limit named. */
START_TEST(owner_limit_is_named)
{
	char status[256], limit[16];

	snprintf(limit, sizeof(limit), "%d", CB_SYSCTL_MAX_OWNERS);
	cb_region_status(-EUSERS, true, status, sizeof(status));
	ck_assert_msg(strncmp(status, "no-resource:hugetlb:", 20) == 0 && strstr(status, limit), "%s", status);
}
END_TEST

/*
 * The journal's own files planted as hard links to a victim (by whoever could write the directory):
 * writing the journal must never write through one of them.
 */
static const char *const planted[] = { "overrides.new", "overrides", "lock" };

START_TEST(planted_link_is_never_written_through)
{
	char knob[600], victim[600], link_[600];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	setenv("COWBENCH_RUN_DIR", dir, 1);
	snprintf(knob, sizeof(knob), "%s/knob", dir);
	snprintf(victim, sizeof(victim), "%s/victim.txt", dir);
	snprintf(link_, sizeof(link_), "%s/%s", dir, planted[_i]);
	write_file(knob, "0\n");
	write_file(victim, "precious\n");
	ck_assert_int_eq(link(victim, link_), 0);
	cb_sysctl_test_key(knob);
	ck_assert_int_eq(cb_sysctl_override(knob, 1), 0);
	assert_file(knob, "1\n");
	cb_sysctl_restore_all();
	assert_file(knob, "0\n");
	assert_file(victim, "precious\n");
	cb_sysctl_test_key(NULL);
	rm_tree(dir);
}
END_TEST

/*
 * A line for a key this build does not know (a newer cowbench's, live beside it) is carried through
 * as it is: never written or restored here, never dropped (issue 39: an older build erased
 * vm.overcommit_memory's entry, and the setting was left changed with nothing recording it).
 */
START_TEST(newer_key_line_is_kept)
{
	char knob[600], other[600], line[800], path[700];
	char *journal;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	setenv("COWBENCH_RUN_DIR", dir, 1);
	snprintf(knob, sizeof(knob), "%s/knob", dir);
	snprintf(other, sizeof(other), "%s/newer_key", dir);
	write_file(knob, "0\n");
	write_file(other, "1\n");
	/* owned by this process, which is alive: a build that knew the key would keep it too */
	snprintf(line, sizeof(line), "%s 0 %d:1\n", other, (int)getpid());
	write_journal(dir, line);
	cb_sysctl_test_key(knob);
	ck_assert_int_eq(cb_sysctl_override(knob, 1), 0);
	cb_sysctl_restore_all();
	assert_file(knob, "0\n");
	assert_file(other, "1\n"); /* not this build's to restore */
	snprintf(path, sizeof(path), "%s/overrides", dir);
	journal = tu_slurp(path, NULL);
	ck_assert_ptr_nonnull(journal);
	ck_assert_msg(strstr(journal, line), "the newer key's line was dropped: '%s'", journal);
	free(journal);
	cb_sysctl_test_key(NULL);
	rm_tree(dir);
}
END_TEST

/*
 * And the other way: an older build erased this process's line while it held the setting. Its
 * owner puts back the original it saw at exit, unless the setting no longer has its value.
 */
START_TEST(erased_line_is_put_back_by_its_owner)
{
	char knob[600];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	setenv("COWBENCH_RUN_DIR", dir, 1);
	snprintf(knob, sizeof(knob), "%s/knob", dir);
	cb_sysctl_test_key(knob);
	for (int changed = 0; changed < 2; changed++) {
		write_file(knob, "0\n");
		ck_assert_int_eq(cb_sysctl_override(knob, 1), 0);
		write_journal(dir, ""); /* what a build without the key stores back */
		if (changed)
			write_file(knob, "7\n"); /* someone else's value since: not ours to touch */
		cb_sysctl_restore_all();
		assert_file(knob, changed ? "7\n" : "0\n");
	}
	cb_sysctl_test_key(NULL);
	rm_tree(dir);
}
END_TEST

static Suite *journal_suite(void)
{
	Suite *s = suite_create("attack_journal");
	TCase *t = tcase_create("journal");

	tcase_set_timeout(t, 120);
	tcase_add_loop_test(t, victim_line_is_refused, 0, (int)(sizeof(victim_lines) / sizeof(victim_lines[0])));
	tcase_add_test(t, victim_line_survives_a_run);
	tcase_add_loop_test(t, unsafe_run_dir_is_no_journal, 0, N_UNSAFE);
	tcase_add_test(t, unknown_key_is_never_changed);
	tcase_add_test(t, newer_key_line_is_kept);
	tcase_add_test(t, erased_line_is_put_back_by_its_owner);
	tcase_add_loop_test(t, many_concurrent_owners, 0, (int)(sizeof(crowds) / sizeof(crowds[0])));
	tcase_add_test(t, owner_limit_is_named);
	tcase_add_loop_test(t, hostile_journal_line, 0, (int)(sizeof(hostile_lines) / sizeof(hostile_lines[0])));
	tcase_add_loop_test(t, planted_link_is_never_written_through, 0, (int)(sizeof(planted) / sizeof(planted[0])));
	suite_add_tcase(s, t);
	return s;
}

TU_MAIN(journal_suite)
