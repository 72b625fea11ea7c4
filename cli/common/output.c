#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cli.h"

/*
 * Output files, one rule for run, matrix, merge and summarize: an
 * existing non-empty --output is replaced only with --force; a file
 * another cowbench is writing (an exclusive flock) is never touched; a
 * whole-file output (merge, summarize) goes to a temporary file renamed
 * into place, so a full disk leaves the old file or none, never half.
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

int cli_output_open_locked(const char *path, bool resume, bool force, const char *hint, bool *created)
{
	struct stat st;
	int fd;

	*created = false;
	if (cli_output_path_check("--output", path) < 0)
		return -1;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	*created = fd >= 0;
	if (fd < 0 && errno == EEXIST)
		fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
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
		cli_output_discard(path, fd, *created);
		return -1;
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

void cli_output_drop_if_empty(const char *path, bool created)
{
	struct stat st;

	if (created && path && stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
		unlink(path);
}

void cli_output_discard(const char *path, int fd, bool created)
{
	if (created)
		unlink(path);
	if (fd >= 0)
		close(fd);
}

int cli_output_begin(struct cli_output *out, const char *path, bool force)
{
	struct stat st;
	const char *slash;
	int fd;

	memset(out, 0, sizeof(*out));
	out->lockfd = -1;
	out->fp = stdout;
	if (!path)
		return 0;
	out->path = path;
	if (cli_output_path_check("--output", path) < 0)
		return -1;
	if (stat(path, &st) == 0) {
		if (!S_ISREG(st.st_mode)) {
			cli_error("%s: not a regular file", path);
			return -1;
		}
		if (st.st_size > 0 && !force) {
			cli_error("%s exists and is not empty: give --force to replace it", path);
			return -1;
		}
		out->lockfd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (out->lockfd >= 0 && lock_or_explain(out->lockfd, path) < 0) {
			close(out->lockfd);
			return -1;
		}
	}
	slash = strrchr(path, '/');
	if (slash)
		snprintf(out->tmp, sizeof(out->tmp), "%.*s/.%s.XXXXXX", (int)(slash - path), path, slash + 1);
	else
		snprintf(out->tmp, sizeof(out->tmp), ".%s.XXXXXX", path);
	fd = mkostemp(out->tmp, O_CLOEXEC);

	if (fd < 0 || !(out->fp = fdopen(fd, "w"))) {
		cli_error("cannot write %s: %s", path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(out->tmp);
		}
		cli_output_abort(out);
		return -1;
	}
	fchmod(fd, 0644);
	setvbuf(out->fp, NULL, _IOFBF, 1 << 16); /* a record up to 64 KiB stays buffered: a failed write keeps its errno */
	return 0;
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
		if (!err && rename(out->tmp, out->path) != 0)
			err = errno;
		if (err)
			unlink(out->tmp);
	}
	if (out->lockfd >= 0)
		close(out->lockfd);
	out->lockfd = -1;
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
