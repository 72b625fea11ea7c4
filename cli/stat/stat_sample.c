/*
 * cowbench stat's sampling: the watched processes (the root, its children
 * as they are born, the final records of those that exit) and their
 * counters each interval (taskstats, /proc/PID/stat, smaps_rollup, and the
 * write-fault causes of the tracepoint).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stat_state.h"

/* minflt and majflt of a whole thread group: fields 10 and 12 of /proc/PID/stat. */
static int read_faults(pid_t pid, int64_t *minflt, int64_t *majflt)
{
	char path[64], buf[1024];
	unsigned long long v[10];
	FILE *fp;
	char *p;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fp = fopen(path, "re");
	if (!fp)
		return -errno;
	p = fgets(buf, sizeof(buf), fp);
	fclose(fp);
	if (!p || !(p = strrchr(buf, ')')))
		return -EIO;
	/* after "comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt */
	n = sscanf(p + 1, " %*c %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7], &v[8]);
	if (n != 9)
		return -EIO;
	*minflt = (int64_t)v[6];
	*majflt = (int64_t)v[8];
	return 0;
}

/*
 * COW copies of a process. The thread-group query covers live threads and,
 * for multi-threaded processes, those that exited; the leader's own query
 * is what remains of a single-threaded process once it is a zombie. The
 * larger of the two is the process's count either way.
 */
static int read_copies(struct stat_state *st, pid_t pid, int64_t *copies, int64_t *ns)
{
	struct cb_taskstats g, l;
	int eg = cb_taskstats_query(st->ts, pid, true, &g), el = cb_taskstats_query(st->ts, pid, false, &l);

	if (eg < 0 && el < 0)
		return eg;
	if (eg < 0 || (el == 0 && l.wpcopy_count > g.wpcopy_count))
		g = l;
	*copies = (int64_t)g.wpcopy_count;
	*ns = (int64_t)g.wpcopy_delay_ns;
	return 0;
}

/* The tracepoint's write faults of pid by cause (root), kept past its end: buffered ones arrive late. */
static void read_causes(const struct stat_state *st, pid_t pid, struct sample *s)
{
	struct cb_fc_counts c;

	if (!st->where || !stat_where_fork_counts(st->where, pid, &c))
		return;
	for (int k = 0; k < CB_FC_NCLASS; k++)
		s->cause[k] = c.n[k];
}

static void raise_to(int64_t *v, int64_t to)
{
	if (to > *v)
		*v = to;
}

/*
 * The last write faults, held back at the last tick (stat_where_finish),
 * into the total: their causes, and in the fallback the count itself (a
 * process that ended within the last interval had only the faults of the
 * drains before its last sample).
 */
void stat_finish_causes(struct stat_state *st)
{
	if (!st->where)
		return;
	stat_where_finish(st->where);
	for (size_t i = 0; i < st->nprocs; i++) {
		struct proc *p = &st->procs[i];
		struct sample c = p->cur;

		read_causes(st, p->pid, &c);
		for (int k = 0; k < CB_FC_NCLASS; k++)
			raise_to(&p->cur.cause[k], c.cause[k]);
		if (st->copies_from_faults && p->cur.copies >= 0)
			raise_to(&p->cur.copies, stat_where_faults_of(st->where, p->pid));
	}
}

static int sample_proc(struct stat_state *st, pid_t pid, struct sample *s)
{
	struct cb_smaps sm;
	int err;

	*s = (struct sample)UNMEASURED;
	read_causes(st, pid, s);
	err = read_faults(pid, &s->minflt, &s->majflt);
	if (err < 0)
		return err; /* gone (or never ours to see) */
	if (st->ts && !st->ts_err) {
		err = read_copies(st, pid, &s->copies, &s->copy_ns);
		/*
		 * Exiting: /proc still answers, taskstats no longer does. A sample
		 * without copies would replace the last good one, and its exit
		 * record only raises known counts: call it gone now.
		 */
		if (err == -ESRCH)
			return err;
		if (err < 0)
			st->ts_err = err;
	} else if (st->copies_from_faults) {
		s->copies = stat_where_faults_of(st->where, pid);
	}
	if (cb_smaps_read(pid, &sm) == 0)
		s->private_dirty_kb = sm.private_dirty_kb;
	return 0;
}

struct proc *stat_find_proc(struct stat_state *st, pid_t pid)
{
	for (size_t i = 0; i < st->nprocs; i++)
		if (st->procs[i].pid == pid)
			return &st->procs[i];
	return NULL;
}

/* A process first seen now: born after we started (base 0), except those there at the start. */
void stat_add_proc(struct stat_state *st, pid_t pid, pid_t ppid, bool at_start)
{
	struct proc *p;

	if (st->nprocs == MAX_PROCS || stat_find_proc(st, pid))
		return;
	if (st->where)
		stat_where_watch(st->where, pid, ppid, at_start);
	p = &st->procs[st->nprocs];
	if (sample_proc(st, pid, &p->cur) < 0)
		return;
	st->nprocs++;
	p->pid = pid;
	p->gone = false;
	p->base = at_start ? p->cur : (struct sample)ZERO_SAMPLE;
	if (!at_start && p->cur.copies < 0)
		p->base.copies = p->base.copy_ns = -1;
	for (int k = 0; k < CB_FC_NCLASS && !at_start; k++)
		p->base.cause[k] = p->cur.cause[k] < 0 ? -1 : 0;
	p->prev = p->base;
}

static int read_small_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

/* Descendants through /proc/PID/task/TID/children, breadth first over the table itself. */
void stat_discover_children(struct stat_state *st, bool at_start)
{
	for (size_t i = 0; i < st->nprocs; i++) {
		char path[96], buf[4096];
		char *save, *tok;
		int n;

		if (st->procs[i].gone)
			continue;
		/* Threads fork too: every task's list, through the thread group's task directory. */
		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)st->procs[i].pid, (int)st->procs[i].pid);
		n = read_small_file(path, buf, sizeof(buf));
		if (n <= 0)
			continue;
		for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
			stat_add_proc(st, (pid_t)atoi(tok), st->procs[i].pid, at_start);
	}
}

/*
 * A process's final counts from its exit record; an unseen descendant's too
 * (born and gone within one interval). false when the record is not (yet)
 * known to be ours: its parent may only show up in a later record.
 */
static bool apply_exit(struct stat_state *st, const struct cb_taskstats_exit *x)
{
	struct proc *p = stat_find_proc(st, x->group ? x->pid : x->tgid);

	if (!x->group && x->pid != x->tgid)
		return true; /* a thread: its group's record and queries carry it */
	if (!p && !x->group && st->o.children && stat_find_proc(st, x->ppid) && st->nprocs < MAX_PROCS) {
		p = &st->procs[st->nprocs++];
		*p = (struct proc){ .pid = x->pid, .gone = true };
		p->base = p->prev = p->cur = (struct sample)ZERO_SAMPLE;
		p->cur.private_dirty_kb = -1;
		read_causes(st, x->pid, &p->cur);
	}
	if (!p)
		return false;
	if (p->cur.copies >= 0) {
		raise_to(&p->cur.copies, (int64_t)x->ts.wpcopy_count);
		raise_to(&p->cur.copy_ns, (int64_t)x->ts.wpcopy_delay_ns);
	}
	if (!x->group && p->cur.minflt >= 0) {
		raise_to(&p->cur.minflt, (int64_t)x->ts.minflt);
		raise_to(&p->cur.majflt, (int64_t)x->ts.majflt);
	}
	return true;
}

#define EXIT_BATCH 1024

/* Apply pending records until none finds its process or parent any more (children exit first). */
static void apply_pending(struct stat_state *st)
{
	bool progress;

	do {
		progress = false;
		for (size_t i = st->npend; i-- > 0;)
			if (apply_exit(st, &st->pend[i].x)) {
				st->pend[i] = st->pend[--st->npend];
				progress = true;
			}
	} while (progress);
}

/* The parent process of pid from /proc/PID/stat; 0 when it is gone. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	int ppid;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_small_file(path, buf, sizeof(buf)) <= 0 || !(p = strrchr(buf, ')')) ||
	    sscanf(p + 1, " %*c %d", &ppid) != 1)
		return 0;
	return (pid_t)ppid;
}

/*
 * A record whose parent is not watched: a parent that still runs is looked
 * up the tree at once (a descendant born since the last line is watched
 * now, then the record applies; anyone else's is dropped); one whose parent
 * is gone waits for that parent's own record.
 */
static void keep_pending(struct stat_state *st, const struct cb_taskstats_exit *x)
{
	pid_t up = x->group ? 0 : x->ppid;

	if (!st->pend)
		return;
	if (up > 0 && parent_of(up) > 0) {
		pid_t chain[64];
		int n = 0;

		for (pid_t cur = up;; cur = parent_of(cur)) {
			struct proc *p = cur > 1 ? stat_find_proc(st, cur) : NULL;

			if (cur == 0)
				break; /* an ancestor went meanwhile: wait for its record */

			if (p) {
				if (!st->o.children || p->gone)
					return;
				for (int k = n - 1; k >= 0; k--) /* the oldest first: each one's parent is watched */
					stat_add_proc(st, chain[k], k == n - 1 ? cur : chain[k + 1], false);
				if (apply_exit(st, x))
					return;
				break; /* its parent went meanwhile: wait for that parent's record */
			}
			if (cur == 1 || n == 64)
				return; /* not a descendant of a watched process */
			chain[n++] = cur;
		}
	}
	if (st->npend == MAX_PENDING_EXITS) { /* full: the oldest goes, it found no parent of ours for longest */
		size_t oldest = 0;

		for (size_t i = 1; i < st->npend; i++)
			if (st->pend[i].tick < st->pend[oldest].tick)
				oldest = i;
		st->pend[oldest] = st->pend[--st->npend];
	}
	st->pend[st->npend++] = (struct pending_exit){ *x, st->tick };
}

void stat_drain_exits(struct stat_state *st)
{
	static struct cb_taskstats_exit x[EXIT_BATCH];
	int n;

	while (st->exits && (n = cb_taskstats_exits(st->exits, x, EXIT_BATCH)) > 0) {
		size_t known = st->nprocs;

		/* The batch's last first: a parent's record makes its children's apply (the loop below). */
		for (int i = n - 1; i >= 0; i--)
			if (!apply_exit(st, &x[i]))
				keep_pending(st, &x[i]);
		if (st->nprocs != known)
			apply_pending(st);
	}
}

/* At a line: what waits for a parent gets another try; what waited since the line before is dropped. */
static void drain_exits(struct stat_state *st)
{
	stat_drain_exits(st);
	apply_pending(st);
	for (size_t i = st->npend; i-- > 0;)
		if (st->pend[i].tick < st->tick - 1)
			st->pend[i] = st->pend[--st->npend];
}

/* Descendants the tracepoint saw forked (also those already gone again). */
static void add_born(struct stat_state *st)
{
	pid_t born[256];
	size_t n = st->where ? stat_where_new_children(st->where, born, 256) : 0;

	for (size_t i = 0; i < n; i++) {
		stat_add_proc(st, born[i], 0, false);
		if (!stat_find_proc(st, born[i]) && st->copies_from_faults && st->nprocs < MAX_PROCS) {
			struct proc *p = &st->procs[st->nprocs++]; /* born and gone between two looks */

			*p = (struct proc){ .pid = born[i], .gone = true };
			p->base = p->prev = (struct sample)ZERO_SAMPLE;
			p->base.copy_ns = p->base.private_dirty_kb = -1;
			p->prev = p->base;
			p->cur = p->base;
			read_causes(st, born[i], &p->cur);
			p->cur.copies = stat_where_faults_of(st->where, born[i]);
		}
	}
}

void stat_mark_line(struct stat_state *st)
{
	for (size_t i = 0; i < st->nprocs; i++)
		st->procs[i].prev = st->procs[i].cur;
}

void stat_sample_all(struct stat_state *st)
{
	st->tick++;
	if (st->where)
		stat_where_tick(st->where);
	for (size_t i = 0; i < st->nprocs; i++) {
		struct proc *p = &st->procs[i];

		struct sample now;

		if (p->gone && st->copies_from_faults) /* faults recorded before it went */
			raise_to(&p->cur.copies, stat_where_faults_of(st->where, p->pid));
		if (p->gone) {
			struct sample c = p->cur;

			read_causes(st, p->pid, &c);
			for (int k = 0; k < CB_FC_NCLASS; k++)
				raise_to(&p->cur.cause[k], c.cause[k]);
			continue;
		}
		if (sample_proc(st, p->pid, &now) < 0)
			p->gone = true; /* keeps its last sample; its exit record may still raise it */
		else
			p->cur = now;
	}
	if (st->o.children)
		stat_discover_children(st, false);
	add_born(st); /* after the loop: a newcomer's copies so far belong to this line */
	drain_exits(st);
	if (st->have_cowstats) {
		st->cs_prev = st->cs_cur;
		if (cb_cowstats_read(stat_cowstats_path(), &st->cs_cur) < 0)
			st->have_cowstats = false;
	}
}
