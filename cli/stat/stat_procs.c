/*
 * cowbench stat --where: the watched processes as every part of it reads
 * them (the fault log, the code view, the table and the advice): a process
 * by PID, the mappings its faults fall in, and the pages a row copied.
 */
#include <stdint.h>
#include <stdlib.h>

#include "stat_where_int.h"

static size_t slot_of(pid_t pid, size_t mask)
{
	return ((uint32_t)pid * 2654435761u) & mask;
}

struct wproc *where_proc(const struct stat_where *w, pid_t pid)
{
	if (!w->index) {
		for (size_t i = 0; i < w->nprocs; i++)
			if (w->procs[i].pid == pid)
				return &w->procs[i];
		return NULL;
	}
	for (size_t i = slot_of(pid, w->index_mask);; i = (i + 1) & w->index_mask) {
		uint32_t v = w->index[i];

		if (!v)
			return NULL;
		if (w->procs[v - 1].pid == pid)
			return &w->procs[v - 1];
	}
}

static void index_put(uint32_t *index, size_t mask, pid_t pid, size_t at)
{
	size_t i = slot_of(pid, mask);

	while (index[i])
		i = (i + 1) & mask;
	index[i] = (uint32_t)(at + 1);
}

/* procs never leave the table (nor repeat a pid): an index at most half full, rebuilt when it would not be. */
void where_index_add(struct stat_where *w, size_t at)
{
	size_t cap = w->index ? w->index_mask + 1 : 0;

	if (w->nprocs * 2 > cap || !w->index) {
		size_t ncap = cap ? cap * 2 : 256;
		uint32_t *n;

		while (w->nprocs * 2 > ncap)
			ncap *= 2;
		n = calloc(ncap, sizeof(*n));
		free(w->index);
		w->index = n; /* NULL (no memory): where_proc searches linearly */
		if (!n)
			return;
		w->index_mask = ncap - 1;
		for (size_t i = 0; i < w->nprocs; i++)
			index_put(w->index, w->index_mask, w->procs[i].pid, i);
		return;
	}
	index_put(w->index, w->index_mask, w->procs[at].pid, at);
}

/* p's mappings; for a child not (yet) looked at, its parent's (fork copied them). */
const struct cb_vmas *where_layout(const struct stat_where *w, const struct wproc *p)
{
	const struct wproc *parent = p->ppid ? where_proc(w, p->ppid) : NULL;

	return p->vmas.n || !parent ? &p->vmas : &parent->vmas;
}

int64_t where_row_copies(const struct stat_where *w, const struct vrow *r, const char **source)
{
	if (w->pagemap) {
		*source = "pagemap";
		return r->copied + r->zero;
	}
	if (w->wp) {
		*source = "tracepoint";
		return r->faults;
	}
	*source = "smaps";
	return r->unshared_kb * 1024 / (int64_t)w->page;
}
