/*
 * cowbench stat --where: the watched processes as every part of it reads
 * them (the fault log, the code view, the table and the advice): a process
 * by PID, the mappings its faults fall in, and the pages a row copied.
 */
#include <stdint.h>

#include "stat_where_int.h"

struct wproc *where_proc(const struct stat_where *w, pid_t pid)
{
	for (size_t i = 0; i < w->nprocs; i++)
		if (w->procs[i].pid == pid)
			return &w->procs[i];
	return NULL;
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
