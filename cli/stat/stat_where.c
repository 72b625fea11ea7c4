/*
 * cowbench stat --where: the measurement side (see stat_where.h). Per
 * watched process: its mappings (smaps each interval), the write faults the
 * tracepoint recorded for it (pending until the next pagemap look tells a
 * copy from a reuse), and, in the code view, the faults' call chains.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cowbench/forkcow.h>
#include <cowbench/pagemap.h>
#include <cowbench/vmas.h>
#include <cowbench/wpfault.h>

#include "stat_symbols.h"
#include "stat_where_int.h"

#define MAX_SNAP_PAGES (1u << 18) /* mappings above 1 GiB are not snapshotted (reserved address space) */
#define KPF_ZERO_PAGE 24

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Room for one more element in a growing array of n (doubling); false when out of memory. */
static bool room_for_one(void **v, size_t *cap, size_t n, size_t size)
{
	size_t grown = *cap ? *cap * 2 : 64;
	void *p;

	if (n < *cap)
		return true;
	if (!(p = realloc(*v, grown * size)))
		return false;
	*v = p;
	*cap = grown;
	return true;
}

static void read_comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, len - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (!buf[0])
		snprintf(buf, len, "?");
}

static struct wproc *add_proc(struct stat_where *w, pid_t pid, pid_t ppid, bool at_start)
{
	struct wproc *p = where_proc(w, pid);

	if (p)
		return p;
	if (!room_for_one((void **)&w->procs, &w->capprocs, w->nprocs, sizeof(*w->procs)))
		return NULL;
	p = &w->procs[w->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->ppid = ppid;
	p->alive = true;
	p->at_start = at_start;
	where_index_add(w, w->nprocs - 1);
	if (!at_start && ppid && where_proc(w, ppid))
		memcpy(p->comm, where_proc(w, ppid)->comm, sizeof(p->comm)); /* a fork child runs its parent's program */
	else
		read_comm(pid, p->comm, sizeof(p->comm));
	return p;
}

void stat_where_watch(struct stat_where *w, pid_t pid, pid_t ppid, bool at_start)
{
	add_proc(w, pid, ppid, at_start);
	if (w->syms && at_start) /* before an exec can replace what it runs (children: their parent, at the fork) */
		cli_symbols_read(w->syms, pid);
	if (w->fc)
		cb_forkcow_watch(w->fc, pid);
}

/* The accumulator of the mapping starting at start in p, created in address order. */
struct vrow *where_row(struct wproc *p, const struct cb_vma *v)
{
	size_t lo = 0, hi = p->nrows;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (p->rows[mid].start < v->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < p->nrows && p->rows[lo].start == v->start)
		return &p->rows[lo];
	if (!room_for_one((void **)&p->rows, &p->caprows, p->nrows, sizeof(*p->rows)))
		return NULL;
	memmove(&p->rows[lo + 1], &p->rows[lo], (p->nrows - lo) * sizeof(*p->rows));
	p->nrows++;
	memset(&p->rows[lo], 0, sizeof(p->rows[lo]));
	p->rows[lo].start = v->start;
	p->rows[lo].end = v->end;
	memcpy(p->rows[lo].perms, v->perms, sizeof(v->perms));
	snprintf(p->rows[lo].path, sizeof(p->rows[lo].path), "%s", v->path);
	p->rows[lo].thp = v->thp_eligible;
	p->rows[lo].first_look = true;
	return &p->rows[lo];
}

static void push_pending(struct wproc *p, uint64_t addr, uint64_t t)
{
	if (!room_for_one((void **)&p->pending, &p->cappending, p->npending, sizeof(*p->pending)))
		return;
	p->pending[p->npending++] = (struct pending){ addr, t };
}

/* A fault of a watched process: counted, pending its classification, and in the code view queued. */
static void on_sample_watched(struct stat_where *w, const struct cb_wpfault_sample *s)
{
	struct wproc *p = where_proc(w, s->pid);

	p->faults++;
	if (w->o.mode != WHERE_NONE)
		push_pending(p, s->addr & ~(uint64_t)(w->page - 1), s->time_ns);
	if (w->o.mode == WHERE_CODE)
		where_code_queue(w, s);
}

static void on_sample(void *arg, const struct cb_wpfault_sample *s)
{
	struct stat_where *w = arg;
	struct wproc *p = where_proc(w, s->pid);
	struct queued *q;

	if (w->fc)
		cb_forkcow_fault(w->fc, s); /* kept until the flush: its process may be born later in this drain */
	if (!p) {
		/*
		 * A child's first faults can come out of one CPU's buffer before its fork record out of another's.
		 * Most such samples are other processes': kept without the stack copy (the frame-pointer chain only).
		 */
		struct cb_wpfault_sample light = *s;

		light.have_regs = false;
		if (w->o.children && room_for_one((void **)&w->unknown, &w->capunknown, w->nunknown, sizeof(*w->unknown)) &&
		    (q = where_sample_copy(&light)))
			w->unknown[w->nunknown++] = q;
		return;
	}
	on_sample_watched(w, s);
}

static void on_task(void *arg, const struct cb_wpfault_task *t)
{
	struct stat_where *w = arg;
	struct wproc *p;

	if (w->fc)
		cb_forkcow_task(w->fc, t);
	if (t->pid != t->tid)
		return; /* a thread: its process is already watched or not */
	if (t->kind == CB_WPFAULT_FORK && w->o.children && where_proc(w, t->ppid) && !where_proc(w, t->pid)) {
		if ((p = add_proc(w, t->pid, t->ppid, false)))
			p->fork_ns = t->time_ns;
		/* the child runs the parent's code as of the fork: read it before an exec replaces it (not after one) */
		if (w->syms && where_proc(w, t->ppid)->exec_ns <= t->time_ns)
			cli_symbols_read(w->syms, t->ppid);
		if (w->nborn < sizeof(w->born) / sizeof(w->born[0]))
			w->born[w->nborn++] = t->pid;
	} else if (t->kind == CB_WPFAULT_EXIT && (p = where_proc(w, t->pid))) {
		w->exits_pending++;
	} else if (t->kind == CB_WPFAULT_EXEC && (p = where_proc(w, t->pid))) {
		if (w->syms) /* samples still queued from before it keep the modules read before it */
			cli_symbols_exec(w->syms, t->pid, t->time_ns);
		p->exec_ns = t->time_ns;
		if (!p->first_exec_ns)
			p->first_exec_ns = t->time_ns;
		p->execd = true;
		read_comm(t->pid, p->comm, sizeof(p->comm));
	}
}

/* Hand the records the kernel holds now to their handlers (no unwinding): an exec just read comes to light. */
static void take_records(struct stat_where *w)
{
	const struct cb_wpfault_handler h = { on_sample, on_task, w };

	cb_wpfault_drain(w->wp, &h);
}

/*
 * Empty the kernel's buffers; code samples are only copied out there, and
 * unwound a batch at a time between further emptyings, so a burst of
 * faults fills our queue rather than overflowing the kernel's buffers.
 */
static void drain(struct stat_where *w)
{
	const struct cb_wpfault_handler h = { on_sample, on_task, w };

	if (!w->wp)
		return;
	do {
		uint64_t mark = mono_ns();
		size_t n;

		cb_wpfault_drain(w->wp, &h);
		n = w->nunknown;
		w->nunknown = 0;
		/*
		 * Those whose process this drain's fork records made watched. One taken after the drain began
		 * waits for the next: its fork record may be in a CPU's ring this drain had already emptied
		 * (the fork on that CPU, then the child's faults on one drained later), and dropping it lost a
		 * short-lived child's every fault (check_where_root across exec: 0 of 400 under load).
		 */
		for (size_t i = 0; i < n; i++) {
			const struct cb_wpfault_sample *s = where_sample_of(w->unknown[i]);

			if (where_proc(w, s->pid)) {
				on_sample_watched(w, s);
				free(w->unknown[i]);
			} else if (s->time_ns >= mark) {
				w->unknown[w->nunknown++] = w->unknown[i];
			} else {
				free(w->unknown[i]); /* another process's */
			}
		}
		if (w->fc)
			cb_forkcow_flush(w->fc, mark, NULL, NULL);
	} while (where_code_process(w, 64, take_records) > 0);
}

/*
 * Private_Dirty growing at Shared_Dirty's expense in one interval: pages COW
 * copied (smaps estimate), except in an interval where a watched process
 * exited: its sharers' pages turn private then without any copy.
 */
static void update_smaps(struct wproc *p, bool exited)
{
	for (size_t i = 0; i < p->vmas.n; i++) {
		const struct cb_vma *v = &p->vmas.v[i];
		struct vrow *r = where_row(p, v);
		int64_t dpd, dsd;

		if (!r)
			continue;
		r->end = v->end;
		memcpy(r->perms, v->perms, sizeof(r->perms));
		snprintf(r->path, sizeof(r->path), "%s", v->path);
		r->thp = v->thp_eligible;
		if (v->anon_huge_kb > r->anon_huge_kb_max)
			r->anon_huge_kb_max = v->anon_huge_kb;
		if (r->first_look) {
			r->pd_first = v->private_dirty_kb;
			r->sd_first = v->shared_dirty_kb;
			r->first_look = false;
		} else if (!exited) {
			dpd = v->private_dirty_kb - r->pd_last;
			dsd = v->shared_dirty_kb - r->sd_last;
			if (dpd > 0 && dsd < 0)
				r->unshared_kb += dpd < -dsd ? dpd : -dsd;
		}
		r->pd_last = v->private_dirty_kb;
		r->referenced_kb = v->referenced_kb;
		r->sd_last = v->shared_dirty_kb;
	}
}

/* The pagemap entries of p's COW candidates now; false when pagemap gives no frames (not root). */
static bool take_snapshot(struct stat_where *w, struct wproc *p, struct snap **out, size_t *nout)
{
	struct snap *s = calloc(p->vmas.n ? p->vmas.n : 1, sizeof(*s));
	size_t n = 0;
	bool frames = false;

	if (!s)
		return false;
	for (size_t i = 0; i < p->vmas.n; i++) {
		const struct cb_vma *v = &p->vmas.v[i];
		size_t pages = (size_t)((v->end - v->start) / w->page);

		if (!cb_vma_cow_candidate(v) || pages > MAX_SNAP_PAGES || !(s[n].e = malloc(pages * 8)))
			continue;
		if (cb_pagemap_read(p->pid, (void *)(uintptr_t)v->start, pages, w->page, s[n].e) < 0) {
			free(s[n].e);
			continue;
		}
		s[n].start = v->start;
		s[n].pages = pages;
		for (size_t k = 0; k < pages && !frames; k++)
			frames = (s[n].e[k] & CB_PM_PRESENT) && (s[n].e[k] & CB_PM_PFN_MASK);
		n++;
	}
	*out = s;
	*nout = n;
	return frames;
}

static void free_snaps(struct snap *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(s[i].e);
	free(s);
}

static const uint64_t *snap_entry(const struct snap *s, size_t n, uint64_t addr, size_t page)
{
	for (size_t i = 0; i < n; i++)
		if (addr >= s[i].start && addr < s[i].start + s[i].pages * page)
			return &s[i].e[(addr - s[i].start) / page];
	return NULL;
}

static bool is_zero_page(struct stat_where *w, uint64_t pfn)
{
	uint64_t flags;

	if (w->kpageflags_fd < 0)
		return false;
	return pread(w->kpageflags_fd, &flags, 8, (off_t)(pfn * 8)) == 8 && (flags >> KPF_ZERO_PAGE) & 1;
}

static bool present(const uint64_t *e)
{
	return e && (*e & CB_PM_PRESENT) && !(*e & CB_PM_SWAPPED);
}

/*
 * The frame of addr before a fault at time t: from the newest look that
 * was read whole before t (a later one may show the copy already); NULL
 * when both kept looks are too recent.
 */
static const uint64_t *frame_before(const struct stat_where *w, const struct wproc *q, uint64_t addr, uint64_t t)
{
	if (t > q->snap_t1)
		return snap_entry(q->snaps, q->nsnaps, addr, w->page);
	if (q->old && t > q->old_t1)
		return snap_entry(q->old, q->nold, addr, w->page);
	return NULL;
}

/* p's own frames, or for a child born since its parent's last look, the parent's (fork shared them). */
static const uint64_t *before_entry(const struct stat_where *w, const struct wproc *p, uint64_t addr, uint64_t t)
{
	const struct wproc *parent;

	if (p->snaps)
		return frame_before(w, p, addr, t);
	parent = p->ppid ? where_proc(w, p->ppid) : NULL;
	return parent && parent->snaps ? frame_before(w, parent, addr, t) : NULL;
}

static void classify(struct stat_where *w, struct wproc *p, struct vrow *r, const struct pending *f,
		     const struct snap *now, size_t nnow)
{
	uint64_t addr = f->addr;
	const uint64_t *b = before_entry(w, p, addr, f->t), *a = snap_entry(now, nnow, addr, w->page);

	if (!present(b) || !present(a))
		r->unclassified++;
	else if ((*b & CB_PM_PFN_MASK) == (*a & CB_PM_PFN_MASK))
		r->reused++;
	else if (is_zero_page(w, *b & CB_PM_PFN_MASK))
		r->zero++;
	else
		r->copied++;
}

static int cmp_pending(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * Faults recorded before t_look go to their mappings; with snapshots each
 * faulted page is classified once (later faults on it in the same interval
 * only count as faults). Later ones wait for the next look.
 */
static void settle_pending(struct stat_where *w, struct wproc *p, uint64_t t_look, const struct snap *now,
			   size_t nnow)
{
	struct pending *due = malloc((p->npending ? p->npending : 1) * sizeof(*due));
	size_t keep = 0, n = 0;

	if (!due)
		return;
	for (size_t i = 0; i < p->npending; i++) {
		if (p->pending[i].t >= t_look)
			p->pending[keep++] = p->pending[i];
		else
			due[n++] = p->pending[i];
	}
	p->npending = keep;
	qsort(due, n, sizeof(*due), cmp_pending);
	for (size_t i = 0; i < n; i++) {
		const struct cb_vma *v = cb_vmas_find(where_layout(w, p), due[i].addr);
		struct vrow *r = v ? where_row(p, v) : NULL;

		if (!r) {
			p->unmapped_faults++;
			continue;
		}
		r->faults++;
		if (!w->pagemap || (i > 0 && due[i].addr == due[i - 1].addr))
			continue;
		if (now)
			classify(w, p, r, &due[i], now, nnow);
		else
			r->unclassified++;
	}
	free(due);
}

static void count_shared(struct stat_where *w, struct wproc *p, const struct snap *now, size_t nnow)
{
	for (size_t i = 0; i < p->nrows; i++)
		p->rows[i].shared_now = 0;
	for (size_t i = 0; i < nnow; i++) {
		const struct cb_vma *v = cb_vmas_find(&p->vmas, now[i].start);
		struct vrow *r = v ? where_row(p, v) : NULL;

		for (size_t k = 0; r && k < now[i].pages; k++)
			if (present(&now[i].e[k]) && !(now[i].e[k] & CB_PM_EXCLUSIVE))
				r->shared_now++;
	}
	(void)w;
}

/* A process that is gone: its faults go to the mappings it had, unclassified. */
static void look_gone(struct stat_where *w, struct wproc *p)
{
	p->alive = false;
	settle_pending(w, p, UINT64_MAX, NULL, 0);
}

static void look_at(struct stat_where *w, struct wproc *p, struct cb_vmas *fresh, bool exited)
{
	uint64_t t_look;
	struct snap *now = NULL;
	size_t nnow = 0;

	cb_vmas_free(&p->vmas);
	p->vmas = *fresh;
	update_smaps(p, exited);
	t_look = mono_ns(); /* faults recorded after this wait for the next look */
	if (w->pagemap && !take_snapshot(w, p, &now, &nnow) && !p->snaps && w->nlooks == 0)
		w->pagemap = false; /* no frames: not privileged */
	settle_pending(w, p, t_look, w->pagemap ? now : NULL, nnow);
	if (w->pagemap && now) {
		count_shared(w, p, now, nnow);
		free_snaps(p->old, p->nold);
		p->old = p->snaps;
		p->nold = p->nsnaps;
		p->snaps = now;
		p->nsnaps = nnow;
		p->old_t1 = p->snap_t1;
		p->snap_t1 = mono_ns();
	} else if (now) {
		free_snaps(now, nnow);
	}
}

/*
 * Read every live process's mappings first: a process that died since the
 * last look makes this interval's smaps movement unusable for the estimate.
 */
static void look_at_all(struct stat_where *w)
{
	struct cb_vmas *fresh = calloc(w->nprocs ? w->nprocs : 1, sizeof(*fresh));
	bool exited = w->exits_pending > 0;

	w->exits_pending = 0;
	if (!fresh)
		return;
	for (size_t i = 0; i < w->nprocs; i++) {
		if (!w->procs[i].alive)
			continue;
		if (cb_vmas_read(w->procs[i].pid, &fresh[i]) < 0) {
			cb_vmas_free(&fresh[i]);
			look_gone(w, &w->procs[i]);
			exited = true;
		}
	}
	for (size_t i = 0; i < w->nprocs; i++)
		if (w->procs[i].alive)
			look_at(w, &w->procs[i], &fresh[i], exited);
		else if (w->procs[i].npending) /* recorded before it went, read after */
			settle_pending(w, &w->procs[i], UINT64_MAX, NULL, 0);
	if (exited)
		w->skipped_ticks++;
	free(fresh);
}

void stat_where_finish(struct stat_where *w)
{
	drain(w);
	if (w->fc)
		cb_forkcow_flush(w->fc, UINT64_MAX, NULL, NULL);
}

void stat_where_poll(struct stat_where *w)
{
	drain(w);
}

void stat_where_tick(struct stat_where *w)
{
	drain(w);
	if (w->o.mode == WHERE_NONE)
		return;
	look_at_all(w);
	drain(w); /* faults during the look: those before it are settled at the next */
	w->nlooks++;
}

void where_settle_rest(struct stat_where *w)
{
	if (w->fc)
		cb_forkcow_flush(w->fc, UINT64_MAX, NULL, NULL);
	for (size_t i = 0; i < w->nprocs; i++)
		if (w->procs[i].npending)
			settle_pending(w, &w->procs[i], UINT64_MAX, NULL, 0);
}

int64_t stat_where_faults_of(const struct stat_where *w, pid_t pid)
{
	const struct wproc *p = where_proc(w, pid);

	return w->wp && p ? p->faults : -1;
}

bool stat_where_fork_counts(const struct stat_where *w, pid_t pid, struct cb_fc_counts *out)
{
	return w->fc && cb_forkcow_counts(w->fc, pid, out);
}

struct cb_wpfault *stat_where_recorder(const struct stat_where *w)
{
	return w->wp;
}

void stat_where_forks(const struct stat_where *w, uint64_t *seen, uint64_t *unread)
{
	*seen = *unread = 0;
	if (w->fc)
		cb_forkcow_forks(w->fc, seen, unread);
}

bool stat_where_attributes(const struct stat_where *w)
{
	return w->fc != NULL;
}

size_t stat_where_new_children(struct stat_where *w, pid_t *out, size_t max)
{
	size_t n = w->nborn < max ? w->nborn : max;

	memcpy(out, w->born, n * sizeof(*out));
	w->nborn = 0;
	return n;
}

struct stat_where *stat_where_new(const struct stat_where_opts *o, int *fault_err)
{
	struct stat_where *w = calloc(1, sizeof(*w));
	struct cb_wpfault_opts wo = { .period = 1, .callchain = false };

	*fault_err = -ENOMEM;
	if (!w)
		return NULL;
	w->o = *o;
	w->page = (size_t)sysconf(_SC_PAGESIZE);
	w->kpageflags_fd = -1;
	*fault_err = 0;
	if (o->mode != WHERE_NONE || o->want_faults) {
		if (o->mode == WHERE_CODE) {
			wo.callchain = true;
			wo.stack_bytes = CODE_STACK_BYTES; /* DWARF unwinding: callers of code without frame pointers */
			wo.period = (unsigned)o->sample;
			w->syms = cli_symbols_new();
		}
		*fault_err = cb_wpfault_open(&wo, &w->wp);
	}
	/* Fork copies apart from the rest: fork snapshots through pagemap (root) */
	if (w->wp && cb_forkcow_new(o->children, &w->fc) < 0)
		w->fc = NULL;
	/* Copies vs reuses need page frames before and after every fault: every fault, as root. */
	w->pagemap = o->mode == WHERE_MAPS && w->wp && geteuid() == 0;
	if (w->pagemap)
		w->kpageflags_fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	return w;
}

void stat_where_free(struct stat_where *w)
{
	if (!w)
		return;
	cb_wpfault_close(w->wp);
	cb_forkcow_free(w->fc);
	for (size_t i = 0; i < w->nprocs; i++) {
		cb_vmas_free(&w->procs[i].vmas);
		free(w->procs[i].rows);
		free(w->procs[i].pending);
		free_snaps(w->procs[i].snaps, w->procs[i].nsnaps);
		free_snaps(w->procs[i].old, w->procs[i].nold);
	}
	free(w->procs);
	free(w->index);
	for (size_t i = 0; i < w->nunknown; i++)
		free(w->unknown[i]);
	free(w->unknown);
	where_code_free(w);
	cli_symbols_free(w->syms);
	if (w->kpageflags_fd >= 0)
		close(w->kpageflags_fd);
	free(w);
}
