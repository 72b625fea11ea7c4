#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cowbench/error.h>
#include <cowbench/sysctl.h>

#include "fileutil.h"
#include "sysctl_test_hook.h"

/*
 * Every override is written to a journal shared by all cowbench processes
 * (CB_SYSCTL_JOURNAL_DIR/overrides, a tmpfs a reboot clears), under an
 * exclusive flock of CB_SYSCTL_JOURNAL_DIR/lock, replaced by rename so a
 * kill mid-write leaves the old journal or the new one: one line per sysctl with its original value and the
 * processes that hold it changed ("PATH ORIGINAL PID:START ..."; START is
 * the process start time, so a reused PID is not mistaken for its owner).
 * The last live owner puts the original back; any cowbench that finds a
 * line whose owners are all dead (SIGKILL, OOM kill) restores it. All of
 * it uses only async-signal-safe calls: signal handlers restore too.
 *
 * Root writes what the journal says, so the journal must not be anyone
 * else's to write: only the known keys below are ever changed or restored,
 * and a journal directory that another user could have written (owned by
 * someone else, group/world-writable, reached through a symlink) is not
 * used at all.
 */

#define MAX_ENTRIES 16
#define MAX_OWNERS  CB_SYSCTL_MAX_OWNERS
/* Every line whole at the limits: path, original, and " PID:START" per owner (at most 1 + 10 + 1 + 20 bytes). */
#define JOURNAL_MAX (MAX_ENTRIES * (128 + 24 + MAX_OWNERS * 32) + 1)

struct owner {
	long pid;
	unsigned long long start;
};

struct entry {
	char path[128];
	long orig;
	int nowners;
	struct owner own[MAX_OWNERS];
};

static struct entry ent[MAX_ENTRIES];
static int nent;
static char jbuf[JOURNAL_MAX];
static char journal_path[256], lock_path[256], tmp_path[256];
static volatile sig_atomic_t touched_journal; /* this process wrote an owner line: release at exit */

/* Saved as text so restoring needs no formatting inside a signal handler (no journal: local only). */
static struct {
	char path[128];
	char old[32];
} saved[MAX_ENTRIES];
static volatile int nsaved;

int cb_sysctl_read_long(const char *path, long *value)
{
	char buf[64], *end;
	long v;
	int err = cb_read_text_file(path, buf, sizeof(buf));

	if (err < 0)
		return err;
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno || end == buf)
		return CB_EFORMAT;
	while (isspace((unsigned char)*end))
		end++;
	if (*end)
		return CB_EFORMAT;
	*value = v;
	return 0;
}

/* The sysctls cowbench changes; nothing else is ever written or restored. */
static const char *const known_keys[] = {
	CB_DELAYACCT_SYSCTL, CB_NR_HUGEPAGES_SYSCTL, CB_PRECOPY_SYSCTL, CB_PRECOPY_DEPTH_SYSCTL,
	CB_PRECOPY_BATCH_SYSCTL, CB_OVERCOMMIT_SYSCTL, CB_REUSE_AROUND_SYSCTL,
};
static char test_key[128]; /* cb_sysctl_test_key: a plain file standing in for a sysctl */

void cb_sysctl_test_key(const char *path)
{
	snprintf(test_key, sizeof(test_key), "%s", path ? path : "");
}

static bool known_key(const char *path)
{
	for (size_t i = 0; i < sizeof(known_keys) / sizeof(known_keys[0]); i++)
		if (strcmp(path, known_keys[i]) == 0)
			return true;
	return test_key[0] && strcmp(path, test_key) == 0;
}

int cb_sysctl_known(const char *path)
{
	return path && known_key(path);
}

static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW); /* as the shell's '>' (a plain file: no tail) */
	ssize_t n;
	size_t len = strlen(text);

	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	return (size_t)n == len ? 0 : -EIO;
}

/* Decimal text of v into buf (async-signal-safe); returns buf. */
static char *fmt_long(char *buf, size_t len, long long v)
{
	char tmp[24];
	size_t n = 0, o = 0;
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;

	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u && n < sizeof(tmp));
	if (v < 0 && o + 1 < len)
		buf[o++] = '-';
	while (n && o + 1 < len)
		buf[o++] = tmp[--n];
	buf[o] = '\0';
	return buf;
}

int cb_sysctl_write_long(const char *path, long value)
{
	char text[32];
	size_t n;

	fmt_long(text, sizeof(text) - 1, value);
	n = strlen(text);
	text[n] = '\n';
	text[n + 1] = '\0';
	return write_text(path, text);
}

/* ---- the journal ---- */

static char run_dir[200];

/* Read once, like the paths in it: what one process checked is what it uses. */
static const char *journal_dir(void)
{
	if (!run_dir[0]) {
		const char *d = getenv("COWBENCH_RUN_DIR"); /* tests: a private journal */

		d = d && *d ? d : CB_SYSCTL_JOURNAL_DIR;
		if (strlen(d) >= sizeof(run_dir))
			d = "-"; /* too long to check whole: never a journal (not absolute) */
		memcpy(run_dir, d, strlen(d) + 1);
	}
	return run_dir;
}

/* Only root or this user may have changed it; others' write bits need the sticky bit (/tmp). */
static bool entry_safe(const struct stat *st, bool last)
{
	if (S_ISLNK(st->st_mode) || !S_ISDIR(st->st_mode))
		return false;
	if (st->st_uid != 0 && st->st_uid != geteuid())
		return false;
	if (last)
		return (st->st_mode & (S_IWGRP | S_IWOTH)) == 0;
	return (st->st_mode & (S_IWGRP | S_IWOTH)) == 0 || (st->st_mode & S_ISVTX);
}

/* Every component of the journal directory, from /, passes entry_safe (no symlinks anywhere). */
static bool journal_dir_safe(void)
{
	const char *dir = journal_dir();
	char path[256];
	size_t len = strlen(dir);
	struct stat st;

	if (dir[0] != '/' || len >= sizeof(path) || strstr(dir, "/../") || strstr(dir, "/./"))
		return false;
	for (size_t i = 1; i <= len; i++) {
		if (i < len && dir[i] != '/')
			continue;
		memcpy(path, dir, i);
		path[i] = '\0';
		if (i > 1 && dir[i - 1] == '/')
			continue; /* "//" or a trailing slash */
		if (lstat(path, &st) < 0 || !entry_safe(&st, i == len))
			return false;
	}
	return lstat("/", &st) == 0 && entry_safe(&st, len == 1);
}

static void set_journal_path(void)
{
	if (!journal_path[0]) {
		snprintf(journal_path, sizeof(journal_path), "%s/overrides", journal_dir());
		snprintf(lock_path, sizeof(lock_path), "%s/lock", journal_dir());
		snprintf(tmp_path, sizeof(tmp_path), "%s/overrides.new", journal_dir());
	}
}

/*
 * Start time of a process (clock ticks after boot, /proc/PID/stat field 22); 0 when gone,
 * also when it is a zombie: a killed run's child waits there until someone reaps it.
 */
static unsigned long long proc_start(long pid)
{
	char path[48] = "/proc/", num[24], buf[1024], *p;
	int fd, field = 2;
	ssize_t n;
	unsigned long long v = 0;

	strcat(path, fmt_long(num, sizeof(num), pid));
	strcat(path, "/stat");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
	if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
		return 0;
	for (p++; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (unsigned long long)(*p++ - '0');
	return v;
}

static bool owner_alive(const struct owner *o)
{
	if (kill((pid_t)o->pid, 0) < 0 && errno == ESRCH)
		return false;
	return proc_start(o->pid) == o->start;
}

static const char *parse_num(const char *p, long long *out)
{
	bool neg = *p == '-';
	unsigned long long v = 0;
	const char *s;

	p += neg;
	s = p;
	while (*p >= '0' && *p <= '9') {
		unsigned d = (unsigned)(*p++ - '0');

		if (v > ((unsigned long long)LLONG_MAX - d) / 10)
			return NULL; /* out of range: never a wrapped value written back as root */
		v = v * 10 + d;
	}
	if (p == s)
		return NULL;
	*out = neg ? -(long long)v : (long long)v;
	return p;
}

/*
 * Lines for a key this build does not know (a newer cowbench's: vm.overcommit_memory was added
 * after vm.cow_precopy_depth) are carried through as they are: never written or restored here,
 * but not dropped either, or an older cowbench running beside a newer one would erase its
 * entries and leave their settings changed with nothing recording them.
 */
static char foreign[2048];
static size_t nforeign;

/* Parse jbuf into ent[]; a line that does not parse is dropped (the journal is cowbench's own). */
static void parse_journal(void)
{
	char *line = jbuf, *nl;

	nent = 0;
	nforeign = 0;
	for (; *line && nent < MAX_ENTRIES; line = nl + 1) {
		struct entry *e = &ent[nent];
		char *sp = strchr(line, ' ');
		const char *p;
		long long v;

		nl = strchr(line, '\n');
		if (!nl)
			break;
		if (!sp || sp > nl || (size_t)(sp - line) >= sizeof(e->path) || line[0] != '/')
			continue;
		memcpy(e->path, line, (size_t)(sp - line));
		e->path[sp - line] = '\0';
		if (!known_key(e->path)) { /* never written or restored by this build: kept as it is */
			if (nforeign + (size_t)(nl + 1 - line) < sizeof(foreign)) {
				memcpy(foreign + nforeign, line, (size_t)(nl + 1 - line));
				nforeign += (size_t)(nl + 1 - line);
			}
			continue;
		}
		p = parse_num(sp + 1, &v);
		if (!p)
			continue;
		e->orig = (long)v;
		e->nowners = 0;
		while (p && *p == ' ' && e->nowners < MAX_OWNERS) {
			long long pid, start;

			p = parse_num(p + 1, &pid);
			if (!p || *p != ':' || !(p = parse_num(p + 1, &start)))
				break;
			e->own[e->nowners].pid = (long)pid;
			e->own[e->nowners++].start = (unsigned long long)start;
		}
		nent++;
	}
}

static void append(char **o, const char *end, const char *s)
{
	while (*s && *o < end)
		*(*o)++ = *s++;
}

/* Whole or not at all: a kill mid-write must not lose the lines that restore settings. */
static int store_journal(int lockfd)
{
	int fd;

	char *o = jbuf, *end = jbuf + sizeof(jbuf) - 1, num[24];
	size_t len;

	for (int i = 0; i < nent; i++) {
		append(&o, end, ent[i].path);
		append(&o, end, " ");
		append(&o, end, fmt_long(num, sizeof(num), ent[i].orig));
		for (int k = 0; k < ent[i].nowners; k++) {
			append(&o, end, " ");
			append(&o, end, fmt_long(num, sizeof(num), ent[i].own[k].pid));
			append(&o, end, ":");
			append(&o, end, fmt_long(num, sizeof(num), (long long)ent[i].own[k].start));
		}
		append(&o, end, "\n");
	}
	for (size_t i = 0; i < nforeign && o < end; i++)
		*o++ = foreign[i];
	if (o == end)
		return -E2BIG; /* cannot happen at the limits above; a cut line would lose owners */
	*o = '\0';
	len = (size_t)(o - jbuf);
	(void)lockfd;
	/*
	 * A new file, never one that is there: a hard link planted as overrides.new would otherwise
	 * have its target truncated and filled by root (O_NOFOLLOW stops symlinks only). Under the lock.
	 */
	unlink(tmp_path);
	fd = open(tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, jbuf, len) != (ssize_t)len) {
		close(fd);
		return -EIO;
	}
	close(fd);
	return rename(tmp_path, journal_path) < 0 ? -errno : 0;
}

/* The journal into jbuf, every byte read() gives up to its size (async-signal-safe). */
static ssize_t read_whole(int fd)
{
	size_t got = 0;

	while (got < sizeof(jbuf) - 1) {
		ssize_t n = read(fd, jbuf + got, sizeof(jbuf) - 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/*
 * Open the journal and take its lock, with SIGINT/SIGTERM/SIGHUP blocked
 * meanwhile (their handler restores through the journal too: it must not
 * wait for a lock this very process holds). -errno when no journal.
 */
static int journal_lock(bool create, sigset_t *old)
{
	sigset_t block;
	int fd, data;
	ssize_t n;

	set_journal_path();
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, old);
	if (create)
		mkdir(journal_dir(), 0755);
	if (!journal_dir_safe()) {
		sigprocmask(SIG_SETMASK, old, NULL);
		return -EPERM; /* someone else's: not a journal root may follow */
	}
	fd = open(lock_path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT : 0), 0644);
	if (fd < 0 || flock(fd, LOCK_EX) < 0) {
		int err = -errno;

		if (fd >= 0)
			close(fd);
		sigprocmask(SIG_SETMASK, old, NULL);
		return err;
	}
	n = 0;
	data = open(journal_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (data >= 0) {
		n = read_whole(data);
		close(data);
	}
	jbuf[n > 0 ? n : 0] = '\0';
	parse_journal();
	return fd;
}

static void journal_unlock(int fd, const sigset_t *old)
{
	close(fd);
	sigprocmask(SIG_SETMASK, old, NULL);
}

static void drop_entry(int i)
{
	ent[i] = ent[--nent];
}

static void put_back(const struct entry *e)
{
	(void)cb_sysctl_write_long(e->path, e->orig);
}

/* Owners that died leave; a sysctl nobody holds any more gets its original value back. */
static int prune(struct cb_sysctl_stale *report, size_t max)
{
	int restored = 0;

	for (int i = nent - 1; i >= 0; i--) {
		struct entry *e = &ent[i];
		int kept = 0;
		long last = 0;

		for (int k = 0; k < e->nowners; k++) {
			if (owner_alive(&e->own[k]))
				e->own[kept++] = e->own[k];
			else
				last = e->own[k].pid;
		}
		e->nowners = kept;
		if (kept)
			continue;
		if (report && (size_t)restored < max) {
			snprintf(report[restored].path, sizeof(report[restored].path), "%s", e->path);
			report[restored].original = e->orig;
			report[restored].pid = last;
			if (cb_sysctl_read_long(e->path, &report[restored].value) < 0)
				report[restored].value = e->orig;
		}
		put_back(e);
		restored++;
		drop_entry(i);
	}
	return restored;
}

static int find_entry(const char *path)
{
	for (int i = 0; i < nent; i++)
		if (strcmp(ent[i].path, path) == 0)
			return i;
	return -1;
}

static bool add_owner(struct entry *e)
{
	long me = (long)getpid();

	for (int k = 0; k < e->nowners; k++)
		if (e->own[k].pid == me)
			return true;
	if (e->nowners == MAX_OWNERS)
		return false;
	e->own[e->nowners].pid = me;
	e->own[e->nowners++].start = proc_start(me);
	touched_journal = 1;
	return true;
}

/* Whether another live process holds this override (this one may change its own at will). */
static bool held_by_others(const struct entry *e)
{
	for (int k = 0; k < e->nowners; k++)
		if (e->own[k].pid != (long)getpid())
			return true; /* dead owners were pruned before */
	return false;
}

/* Without a journal (no /run, not root): this process remembers and restores alone. */
static int override_local(const char *path, long value)
{
	long old;
	int i, err = cb_sysctl_read_long(path, &old);

	if (err < 0)
		return err;
	for (i = 0; i < nsaved; i++)
		if (strcmp(saved[i].path, path) == 0)
			break;
	if (i == nsaved) {
		if (nsaved == MAX_ENTRIES || strlen(path) >= sizeof(saved[0].path))
			return -ENOSPC;
		snprintf(saved[i].path, sizeof(saved[i].path), "%s", path);
		snprintf(saved[i].old, sizeof(saved[i].old), "%ld\n", old);
	}
	err = cb_sysctl_write_long(path, value);
	if (err == 0 && i == nsaved)
		nsaved = i + 1; /* remember only what we really changed */
	return err;
}

/*
 * What this process holds, as it joined it: a cowbench built before a key was known drops that
 * key's journal line (it kept only its own keys), so an entry can vanish while its owner runs;
 * the owner then puts back the original it saw, if the setting still has the value it held.
 */
static struct {
	char path[128];
	long orig, value;
} mine[8];
static int nmine;

static void remember(const char *path, long orig, long value)
{
	for (int k = 0; k < nmine; k++)
		if (strcmp(mine[k].path, path) == 0)
			return;
	if (nmine == (int)(sizeof(mine) / sizeof(mine[0])))
		return;
	snprintf(mine[nmine].path, sizeof(mine[nmine].path), "%s", path);
	mine[nmine].orig = orig;
	mine[nmine++].value = value;
}

static int override(const char *path, long value, bool raise_only)
{
	sigset_t old;
	long now;
	int fd, i, err = access(path, F_OK) < 0 ? -errno : 0; /* its value is read under the lock */

	if (err < 0)
		return err;
	if (strlen(path) >= sizeof(ent[0].path))
		return -ENAMETOOLONG;
	if (!known_key(path))
		return -EINVAL;
	fd = journal_lock(true, &old);
	if (fd < 0)
		return override_local(path, value);
	if ((err = cb_sysctl_read_long(path, &now)) < 0) { /* again, under the lock: another run may have just set it */
		journal_unlock(fd, &old);
		return err;
	}
	prune(NULL, 0);
	i = find_entry(path);
	if (i >= 0 && now != value && !(raise_only && value > now) && held_by_others(&ent[i])) {
		err = raise_only ? 0 : -EBUSY; /* held higher already: enough for us too */
	} else if (i >= 0) {
		err = add_owner(&ent[i]) ? (now != value ? cb_sysctl_write_long(path, value) : 0) : -EUSERS;
	} else if (nent == MAX_ENTRIES) {
		err = -ENOSPC;
	} else {
		i = nent++;
		snprintf(ent[i].path, sizeof(ent[i].path), "%s", path);
		ent[i].orig = now;
		ent[i].nowners = 0;
		add_owner(&ent[i]);
		/* Journal first: a kill between the two leaves a line that restores a value never changed. */
		err = store_journal(fd);
		if (!err)
			err = cb_sysctl_write_long(path, value);
		if (err)
			drop_entry(i);
	}
	if (i >= 0 && raise_only && err == 0 && find_entry(path) >= 0 && !add_owner(&ent[find_entry(path)]))
		err = -EUSERS; /* held, but the last owner out would put it back under this run */
	if (err == 0 && (i = find_entry(path)) >= 0)
		remember(path, ent[i].orig, raise_only && now > value ? now : value);
	store_journal(fd);
	journal_unlock(fd, &old);
	return err;
}

int cb_sysctl_override(const char *path, long value)
{
	return override(path, value, false);
}

int cb_sysctl_raise(const char *path, long value)
{
	return override(path, value, true);
}

static bool may_join;

void cb_sysctl_share(void)
{
	may_join = true;
}

int cb_sysctl_join(const char *path)
{
	sigset_t old;
	int fd, i, joined = 0;

	if (!may_join)
		return 0;
	fd = journal_lock(false, &old);
	if (fd < 0)
		return 0;
	/*
	 * Live owners or not: an owner may still be dying (a killed run's child) when this run
	 * looked for dead runs at start; holding the line makes this run the one that restores.
	 */
	i = find_entry(path);
	if (i >= 0 && add_owner(&ent[i])) {
		joined = 1;
		store_journal(fd);
	}
	journal_unlock(fd, &old);
	return joined;
}

void cb_sysctl_restore_all(void)
{
	while (nsaved > 0) {
		int i = nsaved - 1;

		(void)write_text(saved[i].path, saved[i].old);
		nsaved = i;
	}
	if (touched_journal) {
		sigset_t old;
		int fd = journal_lock(false, &old);
		long me = (long)getpid();

		if (fd < 0)
			return;
		for (int i = nent - 1; i >= 0; i--) {
			struct entry *e = &ent[i];
			int kept = 0;

			for (int k = 0; k < e->nowners; k++)
				if (e->own[k].pid != me)
					e->own[kept++] = e->own[k];
			e->nowners = kept;
		}
		for (int k = 0; k < nmine; k++) { /* our line erased by an older build: ours to put back */
			long now;

			if (find_entry(mine[k].path) < 0 && cb_sysctl_read_long(mine[k].path, &now) == 0 &&
			    now == mine[k].value)
				(void)cb_sysctl_write_long(mine[k].path, mine[k].orig);
		}
		nmine = 0;
		prune(NULL, 0); /* we were the last owner: put back; dead owners go too */
		store_journal(fd);
		journal_unlock(fd, &old);
		touched_journal = 0;
	}
}

int cb_sysctl_recover(struct cb_sysctl_stale *restored, size_t max)
{
	sigset_t old;
	int fd, n;

	set_journal_path();
	if (access(journal_path, W_OK) != 0)
		return 0;
	fd = journal_lock(false, &old);
	if (fd < 0)
		return 0;
	n = prune(restored, max);
	store_journal(fd);
	journal_unlock(fd, &old);
	return n;
}

int cb_sysctl_overrides(struct cb_sysctl_held *out, size_t max)
{
	int fd;
	size_t n = 0;
	ssize_t r;

	set_journal_path();
	if (!journal_dir_safe())
		return 0;
	fd = open(journal_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW); /* replaced by rename: always whole */
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	r = read_whole(fd);
	close(fd);
	jbuf[r > 0 ? r : 0] = '\0';
	parse_journal();
	for (int i = 0; i < nent && n < max; i++, n++) {
		snprintf(out[n].path, sizeof(out[n].path), "%s", ent[i].path);
		out[n].original = ent[i].orig;
		out[n].pid = ent[i].nowners ? ent[i].own[0].pid : 0;
		out[n].live = 0;
		for (int k = 0; k < ent[i].nowners; k++)
			out[n].live += owner_alive(&ent[i].own[k]);
		if (cb_sysctl_read_long(ent[i].path, &out[n].value) < 0)
			out[n].value = ent[i].orig;
	}
	return (int)n;
}
