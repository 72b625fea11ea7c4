/*
 * Fork COW attribution (see forkcow.h): fork snapshots through pagemap,
 * per-side "written since the fork" bitmaps, and a time-ordered replay of
 * the tracepoint's records.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cowbench/array.h>
#include <cowbench/forkcow.h>
#include <cowbench/pagemap.h>

#define MAX_MAP_PAGES (1ull << 20)  /* mappings above 4 GiB are reserved address space: not snapshotted */
#define FORKS_KEPT_PER_PARENT 8      /* older forks of a busy forker drop out (their faults become other) */
#define NEVER UINT64_MAX

enum ev_kind { EV_FAULT, EV_FORK, EV_EXIT, EV_EXEC };

struct event {
	uint64_t t, seq, addr;
	enum ev_kind kind;
	pid_t pid, ppid;
};

/* A snapshotted mapping: per page, zero page / shared by the fork / written by the parent / by the child. */
struct fmap {
	struct cb_fc_map m;
	uint8_t *zero, *shared, *wp, *wc;
};

struct fork_rec {
	pid_t parent, child;
	uint64_t t, id;
	struct fmap *maps;
	size_t nmaps;
};

struct fproc {
	pid_t pid;
	uint64_t born_t; /* fork or exec: forks before it are not its own */
	uint64_t gone_t; /* exit or exec: from then on it shares nothing from before */
	bool watched;
	struct cb_fc_counts c;
};

struct cb_forkcow {
	bool children;
	size_t page;
	uint64_t zero_pfn;
	struct fproc *procs;
	size_t nprocs, capprocs;
	struct fork_rec *forks;
	size_t nforks, capforks;
	struct event *ev;
	size_t nev, capev;
	uint64_t seq, forks_seen, forks_unsnapped;
};

const char *cb_fc_map_kind(const struct cb_fc_map *m)
{
	if (strcmp(m->path, "[heap]") == 0)
		return "heap";
	if (strncmp(m->path, "[stack", 6) == 0)
		return "stack";
	if (!m->path[0])
		return "anon";
	return m->path[0] == '/' ? "file" : "special";
}

static bool bit(const uint8_t *b, uint64_t i)
{
	return (b[i / 8] >> (i % 8)) & 1;
}

static void set_bit(uint8_t *b, uint64_t i)
{
	b[i / 8] |= (uint8_t)(1u << (i % 8));
}

/* The zero page's frame: a read fault on fresh anonymous memory maps it. 0 when pagemap hides frames. */
static uint64_t find_zero_pfn(size_t page)
{
	volatile char *p = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t e = 0;

	if (p == MAP_FAILED)
		return 0;
	(void)p[0];
	if (cb_pagemap_read(0, (const void *)p, 1, page, &e) < 0 || !(e & CB_PM_PRESENT))
		e = 0;
	munmap((void *)p, page);
	return e & CB_PM_PFN_MASK;
}

int cb_forkcow_new(bool follow_children, struct cb_forkcow **out)
{
	struct cb_forkcow *f = calloc(1, sizeof(*f));

	*out = NULL;
	if (!f)
		return -ENOMEM;
	f->children = follow_children;
	f->page = (size_t)sysconf(_SC_PAGESIZE);
	f->zero_pfn = find_zero_pfn(f->page);
	if (!f->zero_pfn) {
		free(f);
		return -EPERM;
	}
	*out = f;
	return 0;
}

static void free_fork(struct fork_rec *r)
{
	for (size_t i = 0; i < r->nmaps; i++) {
		free(r->maps[i].zero);
		free(r->maps[i].shared);
		free(r->maps[i].wp);
		free(r->maps[i].wc);
	}
	free(r->maps);
	r->maps = NULL;
	r->nmaps = 0;
}

void cb_forkcow_free(struct cb_forkcow *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nforks; i++)
		free_fork(&f->forks[i]);
	free(f->forks);
	free(f->procs);
	free(f->ev);
	free(f);
}

static struct fproc *find_proc(const struct cb_forkcow *f, pid_t pid)
{
	for (size_t i = f->nprocs; i-- > 0;) /* newest first: a reused pid is its latest process */
		if (f->procs[i].pid == pid)
			return &f->procs[i];
	return NULL;
}

static struct fproc *add_proc(struct cb_forkcow *f, pid_t pid, bool watched, uint64_t born_t)
{
	struct fproc *p = find_proc(f, pid);

	if (p && p->gone_t == NEVER) {
		p->watched |= watched;
		return p;
	}
	if (!(p = cb_array_room(f->procs, &f->capprocs, f->nprocs, sizeof(*p), 64)))
		return NULL;
	f->procs = p;
	p = &f->procs[f->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->born_t = born_t;
	p->gone_t = NEVER;
	p->watched = watched;
	return p;
}

/*
 * A process stat finds (in /proc, or from the fork records it has just
 * read) may already have forked, written and exited in the records
 * processed so far: its entry is the one watched, ended or not. A fresh
 * one after the end would be the last entry of the pid, with no counts,
 * and cb_forkcow_counts would report that (fork_copies 1006 of 3000 for a
 * writer that lived less than one of stat's drains).
 */
void cb_forkcow_watch(struct cb_forkcow *f, pid_t pid)
{
	struct fproc *p = find_proc(f, pid);

	if (p)
		p->watched = true;
	else
		add_proc(f, pid, true, 0);
}

static void push(struct cb_forkcow *f, struct event e)
{
	struct event *ev = cb_array_room(f->ev, &f->capev, f->nev, sizeof(*ev), 64);

	if (!ev)
		return;
	f->ev = ev;
	e.seq = f->seq++;
	f->ev[f->nev++] = e;
}

void cb_forkcow_fault(struct cb_forkcow *f, const struct cb_wpfault_sample *s)
{
	push(f, (struct event){ .t = s->time_ns, .addr = s->addr & ~(uint64_t)(f->page - 1), .kind = EV_FAULT,
				.pid = s->pid });
}

void cb_forkcow_task(struct cb_forkcow *f, const struct cb_wpfault_task *t)
{
	static const enum ev_kind kinds[] = { [CB_WPFAULT_FORK] = EV_FORK, [CB_WPFAULT_EXIT] = EV_EXIT,
					      [CB_WPFAULT_EXEC] = EV_EXEC };

	if (t->pid != t->tid)
		return; /* a thread: shares its process's memory, forks nothing of its own */
	push(f, (struct event){ .t = t->time_ns, .kind = kinds[t->kind], .pid = t->pid, .ppid = t->ppid });
}

/* One line of /proc/PID/maps into m; false when it is not a private writable mapping. */
static bool parse_maps_line(const char *line, struct cb_fc_map *m)
{
	unsigned long long start, end, off;
	int n = 0;

	memset(m, 0, sizeof(*m));
	if (sscanf(line, "%llx-%llx %4s %llx %*s %*s%n", &start, &end, m->perms, &off, &n) != 4 || end <= start)
		return false;
	line += n;
	line += strspn(line, " ");
	snprintf(m->path, sizeof(m->path), "%.*s", (int)strcspn(line, "\n"), line);
	m->start = start;
	m->end = end;
	m->offset = off;
	return m->perms[1] == 'w' && m->perms[3] == 'p';
}

/* Frames of one mapping into its bitmaps; false when pagemap cannot be read. */
static bool snap_map(struct cb_forkcow *f, int pagemap_fd, struct fmap *fm)
{
	uint64_t pages = (fm->m.end - fm->m.start) / f->page, *e;
	size_t bytes = (size_t)(pages + 7) / 8;

	if (pages > MAX_MAP_PAGES || !(e = malloc(pages * sizeof(*e))))
		return false;
	fm->zero = calloc(bytes, 1);
	fm->shared = calloc(bytes, 1);
	fm->wp = calloc(bytes, 1);
	fm->wc = calloc(bytes, 1);
	if (!fm->zero || !fm->shared || !fm->wp || !fm->wc ||
	    cb_pagemap_read_fd(pagemap_fd, (uintptr_t)fm->m.start, pages, f->page, e) < 0) {
		free(e);
		return false;
	}
	for (uint64_t i = 0; i < pages; i++) {
		if (!(e[i] & CB_PM_PRESENT) || (e[i] & CB_PM_SWAPPED))
			continue;
		if ((e[i] & CB_PM_PFN_MASK) == f->zero_pfn)
			set_bit(fm->zero, i);
		else if (!(e[i] & CB_PM_FILE)) /* anonymous: fork shared it; a file page is copied from the cache */
			set_bit(fm->shared, i);
	}
	free(e);
	return true;
}

static void drop_map(struct fmap *fm)
{
	free(fm->zero);
	free(fm->shared);
	free(fm->wp);
	free(fm->wc);
}

/*
 * PROCMAP_QUERY (Linux 6.11): the mappings one ioctl each, only the writable
 * ones and only their names, where /proc/PID/maps formats every mapping's
 * line and path (a fifth of stat's CPU at a CPython fork). Declared here:
 * older headers lack it.
 */
struct procmap_query {
	uint64_t size, query_flags, query_addr;
	uint64_t vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
	uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
	uint64_t vma_name_addr, build_id_addr;
};
#define PROCMAP_QUERY_IOCTL _IOWR('f', 17, struct procmap_query)
#define PMQ_READABLE 0x01u
#define PMQ_WRITABLE 0x02u
#define PMQ_EXECUTABLE 0x04u
#define PMQ_SHARED 0x08u
#define PMQ_COVERING_OR_NEXT 0x10u

/* The mappings of an open maps file, private writable ones in address order: by ioctl, else by its text. */
struct map_reader {
	int fd;
	FILE *fp;      /* the text, once the ioctl is refused (kernels before 6.11) */
	uint64_t next; /* the ioctl's next address */
	bool done;
};

static bool next_map(struct map_reader *mr, struct cb_fc_map *m)
{
	char line[512], name[4096];

	while (!mr->fp && !mr->done) {
		struct procmap_query q = {
			.size = sizeof(q), .query_flags = PMQ_WRITABLE | PMQ_COVERING_OR_NEXT, .query_addr = mr->next,
			.vma_name_addr = (uint64_t)(uintptr_t)name, .vma_name_size = sizeof(name),
		};

		if (ioctl(mr->fd, PROCMAP_QUERY_IOCTL, &q) < 0) {
			if (errno == ENOTTY || errno == EINVAL) /* no such ioctl here: the text from its start */
				mr->fp = mr->next == 0 ? fdopen(mr->fd, "re") : NULL;
			mr->done = !mr->fp; /* ENOENT: no mapping above; ESRCH: the process is gone */
			break;
		}
		mr->next = q.vma_end;
		if (q.vma_flags & PMQ_SHARED)
			continue;
		memset(m, 0, sizeof(*m));
		m->start = q.vma_start;
		m->end = q.vma_end;
		m->offset = q.vma_offset;
		snprintf(m->perms, sizeof(m->perms), "%c%c%cp", q.vma_flags & PMQ_READABLE ? 'r' : '-',
			 q.vma_flags & PMQ_WRITABLE ? 'w' : '-', q.vma_flags & PMQ_EXECUTABLE ? 'x' : '-');
		snprintf(m->path, sizeof(m->path), "%.*s", q.vma_name_size ? (int)q.vma_name_size - 1 : 0, name);
		return true;
	}
	while (mr->fp && fgets(line, sizeof(line), mr->fp))
		if (parse_maps_line(line, m))
			return true;
	return false;
}

/* The private writable mappings of pid now, with their frames; false when it cannot be read. */
static bool snapshot(struct cb_forkcow *f, pid_t pid, struct fork_rec *r)
{
	char path[64];
	size_t cap = 0;
	struct map_reader mr = { .fd = -1 };
	struct fmap fm;
	int pm;

	/* One open of each file per fork: this runs at every fork of the watched tree, beside it on a CPU. */
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	if ((pm = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if ((mr.fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		close(pm);
		return false;
	}
	memset(&fm, 0, sizeof(fm));
	while (next_map(&mr, &fm.m)) {
		struct fmap *maps = cb_array_room(r->maps, &cap, r->nmaps, sizeof(*maps), 64);

		if (!maps)
			break;
		r->maps = maps;
		if (!snap_map(f, pm, &fm)) {
			drop_map(&fm);
			memset(&fm, 0, sizeof(fm));
			continue;
		}
		fm.m.index = (unsigned)r->nmaps;
		r->maps[r->nmaps++] = fm;
		memset(&fm, 0, sizeof(fm));
	}
	if (mr.fp)
		fclose(mr.fp); /* closes mr.fd */
	else
		close(mr.fd);
	close(pm);
	return r->nmaps > 0;
}

/* A parent's forks beyond the newest few lose their snapshot (memory stays bounded for a forking loop). */
static void retire_old_forks(struct cb_forkcow *f, pid_t parent)
{
	size_t kept = 0;

	for (size_t i = f->nforks; i-- > 0;)
		if (f->forks[i].parent == parent && f->forks[i].maps && ++kept > FORKS_KEPT_PER_PARENT)
			free_fork(&f->forks[i]);
}

/*
 * The fork's pages, read now (a few ms after the fork): from the parent,
 * else from the child while it has not exec'd. Pages either side wrote
 * since are on frames of their own, still counted as shared: correct, as
 * their faults come after the fork in time order.
 */
static void on_fork(struct cb_forkcow *f, const struct event *e)
{
	struct fproc *parent = find_proc(f, e->ppid);
	struct fork_rec r = { .parent = e->ppid, .child = e->pid, .t = e->t }, *forks;

	if (!parent || !parent->watched)
		return;
	add_proc(f, e->pid, f->children, e->t);
	if (!(forks = cb_array_room(f->forks, &f->capforks, f->nforks, sizeof(*forks), 64)))
		return;
	f->forks = forks;
	r.id = ++f->forks_seen;
	if (!snapshot(f, e->ppid, &r) && !snapshot(f, e->pid, &r))
		f->forks_unsnapped++;
	f->forks[f->nforks++] = r;
	retire_old_forks(f, e->ppid);
}

static void on_gone(struct cb_forkcow *f, const struct event *e)
{
	struct fproc *p = find_proc(f, e->pid);

	if (p && p->gone_t == NEVER)
		p->gone_t = e->t;
}

/* The same process with a new memory: a new entry carries its counts on. */
static void on_exec(struct cb_forkcow *f, struct fproc *p, uint64_t t)
{
	struct cb_fc_counts c = p->c;
	pid_t pid = p->pid;

	if ((p = add_proc(f, pid, true, t)))
		p->c = c;
}

static const struct fmap *find_map(const struct fork_rec *r, uint64_t addr)
{
	size_t lo = 0, hi = r->nmaps;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (r->maps[mid].m.end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->nmaps && addr >= r->maps[lo].m.start ? &r->maps[lo] : NULL;
}

static bool gone_before(const struct cb_forkcow *f, pid_t pid, uint64_t t)
{
	const struct fproc *p = find_proc(f, pid);

	return !p || p->gone_t <= t;
}

/* The newest fork of the writer that covers the page decides (forkcow.h). */
static void classify(struct cb_forkcow *f, const struct fproc *p, const struct event *e, struct cb_fc_write *w)
{
	memset(w, 0, sizeof(*w));
	w->pid = e->pid;
	w->time_ns = e->t;
	w->addr = e->addr;
	w->cls = CB_FC_OTHER;
	for (size_t i = f->nforks; i-- > 0;) {
		struct fork_rec *r = &f->forks[i];
		bool child = r->child == e->pid;
		const struct fmap *m;
		uint64_t idx;

		if (r->t > e->t || r->t < p->born_t || (!child && r->parent != e->pid) || !(m = find_map(r, e->addr)))
			continue;
		idx = (e->addr - m->m.start) / f->page;
		w->map = &m->m;
		w->child = child;
		w->parent = r->parent;
		w->fork_child = r->child;
		w->fork_ns = r->t;
		w->fork_id = r->id;
		w->first = !bit(child ? m->wc : m->wp, idx);
		set_bit(child ? m->wc : m->wp, idx);
		if (bit(m->zero, idx))
			w->cls = CB_FC_ZERO_COPY;
		else if (!bit(m->shared, idx) || !w->first)
			w->cls = CB_FC_OTHER;
		else if (gone_before(f, child ? r->parent : r->child, e->t) || bit(child ? m->wp : m->wc, idx))
			w->cls = CB_FC_FORK_REUSE;
		else
			w->cls = CB_FC_FORK_COPY;
		return;
	}
}

static int cmp_event(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void cb_forkcow_flush(struct cb_forkcow *f, uint64_t until_ns, void (*on_write)(void *arg, const struct cb_fc_write *w),
		      void *arg)
{
	size_t i, keep = 0;

	qsort(f->ev, f->nev, sizeof(*f->ev), cmp_event);
	for (i = 0; i < f->nev && f->ev[i].t < until_ns; i++) {
		const struct event *e = &f->ev[i];
		struct fproc *p;
		struct cb_fc_write w;

		if (e->kind == EV_FORK) {
			on_fork(f, e);
		} else if (e->kind == EV_EXIT || e->kind == EV_EXEC) {
			on_gone(f, e);
			if (e->kind == EV_EXEC && (p = find_proc(f, e->pid)) && p->watched)
				on_exec(f, p, e->t);
		} else if ((p = find_proc(f, e->pid)) && p->gone_t > e->t) {
			/*
			 * An unwatched fork child's writes (follow_children off) count for
			 * nobody but still mark its side of the page: the parent's later
			 * write there is a reuse, as the kernel sees it (it was counted a
			 * copy: stat --no-children -p redis-server showed 51 fork copies
			 * more than taskstats' copies, the saving child's own 58).
			 */
			classify(f, p, e, &w);
			if (!p->watched)
				continue;
			p->c.n[w.cls]++;
			if (on_write)
				on_write(arg, &w);
		}
	}
	for (; i < f->nev; i++) /* newer than the mark: another CPU's buffer may still hold older ones */
		f->ev[keep++] = f->ev[i];
	f->nev = keep;
}

bool cb_forkcow_counts(const struct cb_forkcow *f, pid_t pid, struct cb_fc_counts *out)
{
	bool found = false;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < f->nprocs; i++) /* a pid that exec'd has one entry per program: the last carries all */
		if (f->procs[i].pid == pid && f->procs[i].watched) {
			*out = f->procs[i].c;
			found = true;
		}
	return found;
}

void cb_forkcow_forks(const struct cb_forkcow *f, uint64_t *seen, uint64_t *unsnapped)
{
	*seen = f->forks_seen;
	*unsnapped = f->forks_unsnapped;
}
