#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/diag.h"
#include "common/args.h"
#include "common/outfile.h"

/*
 * Output files, one rule for run, matrix, merge and summarize: an
 * existing non-empty --output is replaced only with --force; a file
 * another cowbench is writing (an exclusive flock) is never touched; a
 * whole-file output (merge, summarize) goes to a temporary file renamed
 * into place, so a full disk leaves the old file or none, never half.
 * Every check on an output's name is cli_output_check's; record, stat
 * --folded and plot's folder use it too.
 */

/* The process holding a flock on fd's file, from /proc/locks (0 when unknown). */
static long lock_holder(int fd)
{
	struct stat st;
	char line[256], want[64];
	FILE *fp;
	long pid = 0;

	if (fstat(fd, &st) < 0 || !(fp = fopen("/proc/locks", "re")))
		return 0;
	snprintf(want, sizeof(want), "%02x:%02x:%" PRIuMAX " ", major(st.st_dev), minor(st.st_dev),
		 (uintmax_t)st.st_ino);
	while (fgets(line, sizeof(line), fp)) {
		char *p = strstr(line, want);
		long v;

		if (!p || !strstr(line, "FLOCK") || strstr(line, "->"))
			continue;
		/* "N: FLOCK  ADVISORY  WRITE PID MAJ:MIN:INO 0 EOF": the number before the device. */
		while (p > line && p[-1] == ' ')
			p--;
		while (p > line && p[-1] >= '0' && p[-1] <= '9')
			p--;
		if (sscanf(p, "%ld", &v) == 1 && v > 0 && v != (long)getpid()) {
			pid = v;
			break;
		}
	}
	fclose(fp);
	return pid;
}

/* Whether PID has exited (no such process, or a zombie): its lock outlives it only in its children. */
static bool process_gone(long pid)
{
	char path[64], buf[512], *rp;
	FILE *fp;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if (!(fp = fopen(path, "re")))
		return errno == ENOENT;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	rp = strrchr(buf, ')'); /* "PID (COMM) STATE ...": COMM may hold anything */
	return rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X');
}

#define ORPHAN_WAIT_MS 60000

/*
 * The writer that took the lock is gone, but a flock belongs to the open
 * file, which the processes it forked (a rep's child, its writers) share
 * until they see their parent gone and exit: wait for them, so a --resume
 * right after a kill goes on instead of being refused. 0 once locked.
 */
static int wait_for_orphans(int fd, const char *path, long pid)
{
	cli_note("%s: the run that wrote it (PID %ld) is gone; waiting for its children to let go", path, pid);
	for (int ms = 0; ms < ORPHAN_WAIT_MS; ms += 10) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK)
			break;
		usleep(10000);
	}
	return -1;
}

/* Take the writer's lock on fd; -1 after printing who holds it. */
static int lock_or_explain(int fd, const char *path)
{
	long pid;

	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	if (errno != EWOULDBLOCK) {
		cli_error("cannot lock %s: %s", path, strerror(errno));
		return -1;
	}
	pid = lock_holder(fd);
	if (pid > 0 && process_gone(pid) && wait_for_orphans(fd, path, pid) == 0)
		return 0;
	if (pid > 0)
		cli_error("%s is being written by PID %ld (another cowbench): wait for it, or use another file", path,
			  pid);
	else
		cli_error("%s is being written by another process: wait for it, or use another file", path);
	return -1;
}

/*
 * Everything about an output FILE that can be known before a command runs,
 * one rule for every command: a name (not a directory's), not too long, not
 * under /dev or /proc, not a device, FIFO, socket or directory, not an
 * existing non-empty file without --force, in a directory that takes files.
 * A symbolic link is followed: its target is the file written (created when
 * its folder exists). TARGET (when not NULL) gets the file to write.
 */
int cli_output_check(const char *option, const char *path, bool force, char *target, size_t tlen)
{
	char real[PATH_MAX], dir[PATH_MAX];
	const char *use = path, *slash, *base;
	size_t len = strlen(path);
	struct stat st;

	slash = strrchr(path, '/');
	base = slash ? slash + 1 : path;
	if (!len || !base[0] || !strcmp(base, ".") || !strcmp(base, "..")) {
		cli_error("%s needs a file name, not '%.200s'", option, path);
		return -1;
	}
	if (len >= PATH_MAX - 32 || strlen(base) > NAME_MAX) {
		cli_error("%s %.60s...: name too long", option, path);
		return -1;
	}
	if (cli_output_path_check(option, path) < 0)
		return -1;
	/* a symbolic link (a chain of them) is followed to the file it names, which need not exist yet */
	snprintf(real, sizeof(real), "%s", path);
	for (int hops = 0; lstat(real, &st) == 0 && S_ISLNK(st.st_mode); hops++) {
		char link[PATH_MAX];
		ssize_t n = readlink(real, link, sizeof(link) - 1);
		const char *ls = strrchr(real, '/');

		if (n < 0 || hops >= 40) {
			cli_error("%s %s: %s", option, path, strerror(n < 0 ? errno : ELOOP));
			return -1;
		}
		link[n] = '\0';
		if (link[0] == '/' || !ls)
			snprintf(dir, sizeof(dir), "%s", link);
		else if ((size_t)snprintf(dir, sizeof(dir), "%.*s/%s", (int)(ls - real), real, link) >= sizeof(dir)) {
			cli_error("%s %.60s...: name too long", option, path);
			return -1;
		}
		snprintf(real, sizeof(real), "%s", dir);
		if (cli_output_path_check(option, real) < 0)
			return -1;
		use = real;
	}
	if (stat(use, &st) == 0) {
		if (!S_ISREG(st.st_mode)) {
			cli_error("%s %s: not a regular file%s", option, path, S_ISDIR(st.st_mode) ? " (Is a directory)" : "");
			return -1;
		}
		if (st.st_size > 0 && !force) {
			cli_error("%s %s exists and is not empty: give --force to replace it", option, path);
			return -1;
		}
	} else if (errno != ENOENT) {
		cli_error("%s %s: %s", option, path, strerror(errno));
		return -1;
	}
	slash = strrchr(use, '/');
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - use) + 1 : 1, slash ? use : ".");
	if (access(dir, W_OK) != 0) {
		cli_error("%s %s: cannot write in %s: %s", option, path, dir, strerror(errno));
		return -1;
	}
	if (target && (size_t)snprintf(target, tlen, "%s", use) >= tlen) {
		cli_error("%s %.60s...: name too long", option, path);
		return -1;
	}
	return 0;
}

/*
 * Two cowbenches may start on the same new FILE at once. Race-free order:
 * open (creating if absent), lock, then check that PATH still names the
 * locked file (a loser that had created it may have removed it, or a
 * finished writer's file replaced it): if not, start over. Whether FILE is
 * new or holds rows is read only while the lock is held, and a file is
 * only ever removed by the process holding its lock.
 */
int cli_output_open_locked(const char *path, bool resume, bool force, const char *hint, bool *created)
{
	struct stat st, now;
	int fd = -1;

	*created = false;
	if (cli_output_check("--output", path, true, NULL, 0) < 0)
		return -1;
	for (int tries = 0;; tries++) {
		bool made;

		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0644);
		made = fd >= 0;
		if (fd < 0 && errno == EEXIST)
			fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (fd < 0 && errno == ENOENT && tries < 100)
			continue; /* removed between the two opens: create it again */
		if (fd < 0) {
			cli_error("cannot write %s: %s", path, strerror(errno));
			return -1;
		}
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			cli_error("%s: not a regular file", path);
			close(fd);
			return -1;
		}
		if (lock_or_explain(fd, path) < 0) {
			close(fd); /* never removed: the file is the lock holder's now */
			return -1;
		}
		if (fstat(fd, &st) == 0 && stat(path, &now) == 0 && now.st_dev == st.st_dev && now.st_ino == st.st_ino) {
			*created = made;
			break;
		}
		close(fd);
		if (tries >= 100) {
			cli_error("cannot write %s: it keeps being replaced", path);
			return -1;
		}
	}
	if (!resume && st.st_size > 0 && !force) {
		cli_error("%s exists and is not empty: give --force to replace it%s", path, hint ? hint : "");
		close(fd);
		return -1;
	}
	if (!resume && st.st_size > 0 && ftruncate(fd, 0) < 0) {
		cli_error("cannot write %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

/* Whether PATH still names the file open (and locked) as FD. */
static bool names_fd(const char *path, int fd)
{
	struct stat a, b;

	return fd >= 0 && fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

void cli_output_drop_if_empty(const char *path, int fd, bool created)
{
	struct stat st;

	if (created && path && names_fd(path, fd) && fstat(fd, &st) == 0 && st.st_size == 0)
		unlink(path);
}

void cli_output_discard(const char *path, int fd, bool created)
{
	if (created && names_fd(path, fd))
		unlink(path);
	if (fd >= 0)
		close(fd);
}

int cli_output_begin_as(struct cli_output *out, const char *option, const char *path, bool force)
{
	struct stat st;
	const char *slash, *base;
	int fd;

	memset(out, 0, sizeof(*out));
	out->lockfd = -1;
	out->fp = stdout;
	if (!path)
		return 0;
	out->path = path;
	out->force = force;
	if (cli_output_check(option, path, force, out->target, sizeof(out->target)) < 0)
		return -1;
	out->existed = stat(out->target, &st) == 0;
	if (out->existed) {
		out->lockfd = open(out->target, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (out->lockfd >= 0 && lock_or_explain(out->lockfd, path) < 0) {
			close(out->lockfd);
			out->lockfd = -1;
			return -1;
		}
	}
	/* the temporary file beside the target (a rename never crosses file systems); its name kept short */
	slash = strrchr(out->target, '/');
	base = slash ? slash + 1 : out->target;
	snprintf(out->tmp, sizeof(out->tmp), "%.*s.%.200s.XXXXXX", slash ? (int)(slash - out->target) + 1 : 0,
		 out->target, base);
	fd = mkostemp(out->tmp, O_CLOEXEC);

	if (fd < 0 || !(out->fp = fdopen(fd, "w"))) {
		cli_error("cannot write %s: %s", path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(out->tmp);
		}
		out->fp = NULL;
		cli_output_abort(out);
		return -1;
	}
	fchmod(fd, 0644);
	setvbuf(out->fp, NULL, _IOFBF, 1 << 16); /* a record up to 64 KiB stays buffered: a failed write keeps its errno */
	return 0;
}

int cli_output_begin(struct cli_output *out, const char *path, bool force)
{
	return cli_output_begin_as(out, "--output", path, force);
}

/* Into place: over the file checked at begin, or (none there then) only where none appeared since. */
static int place(const struct cli_output *out)
{
	if (out->existed || out->force)
		return rename(out->tmp, out->target);
	if (renameat2(AT_FDCWD, out->tmp, AT_FDCWD, out->target, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno == EINVAL || errno == ENOSYS) /* a file system without RENAME_NOREPLACE */
		return rename(out->tmp, out->target);
	return -1;
}

void cli_output_abort(struct cli_output *out)
{
	if (out->path && out->fp && out->fp != stdout) {
		fclose(out->fp);
		unlink(out->tmp);
	}
	if (out->lockfd >= 0)
		close(out->lockfd);
	out->fp = NULL;
	out->lockfd = -1;
}

int cli_output_commit(struct cli_output *out)
{
	int err = 0, earlier = errno; /* a write that failed before (its stream error is set) left its cause here */

	if (!out->path) {
		if (fflush(stdout) != 0)
			err = errno;
	} else {
		/*
		 * A record longer than the stream's buffer goes to write() directly: when that fails the
		 * buffer is empty, so fflush and fclose succeed and only the stream's error says the file
		 * is short (stat --folded's deep stacks on a full disk: a 0-byte file, exit 0).
		 */
		if (ferror(out->fp))
			err = earlier ? earlier : EIO;
		else if (fflush(out->fp) != 0 || fsync(fileno(out->fp)) != 0)
			err = errno;
		if (fclose(out->fp) != 0 && !err)
			err = errno;
		out->fp = NULL;
		if (!err && place(out) != 0)
			err = errno;
		if (err)
			unlink(out->tmp);
	}
	if (out->lockfd >= 0)
		close(out->lockfd);
	out->lockfd = -1;
	if (err == EEXIST && out->path) {
		cli_error("%s appeared while this ran: give --force to replace it (nothing written)", out->path);
		return -1;
	}
	if (err) {
		cli_error("cannot write %s: %s (nothing written)", out->path ? out->path : "standard output",
			  strerror(err));
		return -1;
	}
	return 0;
}

enum cb_format cli_format_resolve(enum cb_format f, const char *output)
{
	if (f != CLI_FORMAT_AUTO)
		return f;
	return !output && isatty(STDOUT_FILENO) == 1 ? CB_FORMAT_TABLE : CB_FORMAT_CSV;
}

/* Text from data (a CSV cell, a host name) as Markdown text (cb_md_escape): one of 8 rotating buffers. */
const char *cli_md(const char *s)
{
	static char ring[8][4096];
	static unsigned next;

	return cb_md_escape(ring[next++ % 8], sizeof(ring[0]), s);
}
