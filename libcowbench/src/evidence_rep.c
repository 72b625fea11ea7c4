/* Evidence reps: a cell's rep with the probes that add work inside the fault path. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cowbench/error.h>
#include <cowbench/evidence.h>
#include <cowbench/run.h>

bool cb_run_wants_evidence(const struct cb_run_spec *spec)
{
	unsigned p = spec->probes ? spec->probes : CB_PROBES_DEFAULT;

	return spec->workload->page_order && !(p & (CB_PROBES_INLINE | CB_PROBES_NONE)) && (p & CB_PROBES_FAULT_PATH);
}

/*
 * The writer is this process, taskstats is to count its copies in this
 * rep, and the kernel gave this process no record (born before delay
 * accounting went on).
 */
static bool writer_uncounted(const struct cb_run_spec *spec)
{
	struct cb_taskstats_sock *s;
	int counted = -1;

	if (!spec->workload->page_order || spec->writer != CB_WRITER_PARENT ||
	    !(cb_probes_for_rep(spec->probes, spec->rep_kind) & (1u << CB_PROBE_TASKSTATS)) ||
	    cb_delayacct_enabled() != 1)
		return false;
	if (cb_taskstats_open(&s) == 0) {
		counted = cb_taskstats_self_accounted(s);
		cb_taskstats_close(s);
	}
	return counted == 0;
}

static bool read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len > 0) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* The rep in a child born now: the kernel gave it a delay-accounting record at fork. */
static int run_in_fresh_child(const struct cb_run_spec *spec, int rep, struct cb_row *row)
{
	pid_t parent = getpid(), pid;
	int fds[2], err = 0, ws = 0;
	/* The row and the texts it refers to (the child's own buffers: copied over here). */
	struct { int err; struct cb_row row; char refs[CB_ROW_REFS_MAX]; } buf;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return cb_run_rep(spec, rep, row); /* uncounted: the row's notes say so */
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		/* Never outlive the process the user started: a run that is gone writes no row. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(128 + SIGKILL);
		buf.err = cb_run_rep(spec, rep, &buf.row);
		if (cb_row_pack_refs(&buf.row, buf.refs, sizeof(buf.refs)) < 0)
			_exit(1); /* cannot be: CB_ROW_REFS_MAX holds every width */
		fflush(NULL); /* what it wrote itself (per-write samples): the buffers were empty at the fork */
		_exit(write(fds[1], &buf, sizeof(buf)) == (ssize_t)sizeof(buf) ? 0 : 1);
	}
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		return cb_run_rep(spec, rep, row);
	}
	if (!read_all(fds[0], &buf, sizeof(buf)))
		err = -EPIPE;
	close(fds[0]);
	if (cb_wait_status(pid, &ws) < 0 && err == 0)
		err = -ECHILD;
	if (err == 0) {
		*row = buf.row;
		if (cb_row_unpack_refs(row, buf.refs, sizeof(buf.refs)) < 0)
			cb_row_drop_refs(row); /* out of memory: the texts' cells empty, the rep kept */
		return buf.err;
	}
	/* The child died before it could say anything: the rep is recorded as failed, never dropped. */
	cb_row_init(row, spec, rep);
	if (cb_status_from_wait(ws, row->status, sizeof(row->status)) == 0)
		snprintf(row->status, sizeof(row->status), "error:evidence-child");
	return CB_ECHILD;
}

int cb_run_rep_accounted(const struct cb_run_spec *spec, int rep, struct cb_row *row)
{
	return writer_uncounted(spec) ? run_in_fresh_child(spec, rep, row) : cb_run_rep(spec, rep, row);
}

int cb_run_evidence_rep(const struct cb_run_spec *spec, int rep, struct cb_row *row)
{
	struct cb_run_spec ev = *spec;

	ev.rep_kind = CB_REP_EVIDENCE;
	ev.samples = NULL; /* per-write samples are the timed reps' */
	return cb_run_rep_accounted(&ev, rep, row);
}
