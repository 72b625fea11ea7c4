/*
 * cowbench stat --where: advice, only where the numbers are clear, each
 * line carrying the numbers it rests on. Thresholds are deliberately high:
 * a line that is wrong costs more than a line that is missing.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stat_where_int.h"

#define MIN_PAGES 256 /* 1 MiB of 4 KiB copies: below that no advice is worth its words */

struct advice_ctx {
	const struct stat_where *w;
	enum stat_format fmt;
	FILE *out;
	int64_t all_copies;
	const char *source;
	int lines;
};

static void say(struct advice_ctx *c, const char *kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void say(struct advice_ctx *c, const char *kind, const char *fmt, ...)
{
	char text[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (c->lines++ == 0 && c->fmt == STAT_TEXT)
		fprintf(c->out, "\nadvice (from the numbers above; copies counted by %s):\n", c->source);
	if (c->fmt == STAT_TEXT) {
		fprintf(c->out, "  - %s\n", text);
	} else if (c->fmt == STAT_JSON) {
		fprintf(c->out, "{\"advice\":\"%s\",\"text\":\"", kind);
		for (const char *p = text; *p; p++)
			fprintf(c->out, *p == '"' || *p == '\\' ? "\\%c" : "%c", *p);
		fprintf(c->out, "\"}\n");
	} else {
		fprintf(c->out, "advice,%s,\"%s\"\n", kind, text);
	}
}

static double mib(int64_t pages, size_t page)
{
	return (double)pages * (double)page / 1048576.0;
}

/* The most a forked child of p accessed of the mapping starting at start (kB), or -1 when no child was seen. */
static int64_t child_referenced_kb(const struct stat_where *w, const struct wproc *p, uint64_t start)
{
	int64_t most = -1;

	for (size_t i = 0; i < w->nprocs; i++) {
		const struct wproc *k = &w->procs[i];

		if (k->ppid != p->pid || k->at_start || !k->vmas.n)
			continue; /* not a child forked while watched, or never looked at */
		for (size_t j = 0; j < k->nrows; j++)
			if (k->rows[j].start == start && k->rows[j].referenced_kb > most)
				most = k->rows[j].referenced_kb;
	}
	return most;
}

/*
 * An anonymous buffer the parent copied (nearly) wholesale while its forked
 * child never touched it (smaps Referenced: a child's page-table entries
 * start unreferenced): the child did not need it at all.
 */
static void advise_dontfork(struct advice_ctx *c, const struct wproc *p, const struct vrow *r, int64_t copies)
{
	int64_t pages = (int64_t)((r->end - r->start) / c->w->page), ref;

	if (r->path[0] || copies < MIN_PAGES || copies * 10 < pages * 9)
		return;
	ref = child_referenced_kb(c->w, p, r->start);
	if (ref < 0 || ref * 1024 > (int64_t)c->w->page * pages / 20)
		return; /* the child read it (or we never saw the child): it needs its copy */
	say(c, "dontfork",
	    "pid %d's anonymous mapping at %" PRIx64 " (%.1f MiB) took %" PRId64 " copies (%.1f MiB, %.0f %% of its "
	    "pages, %.0f %% of all copies) while its forked child accessed %" PRId64 " kB of it: MADV_DONTFORK (not "
	    "in the child) or MADV_WIPEONFORK (zero-filled in the child) on it before fork avoids these copies",
	    (int)p->pid, r->start, mib(pages, c->w->page), copies, mib(copies, c->w->page),
	    100.0 * (double)copies / (double)pages, 100.0 * (double)copies / (double)c->all_copies, ref);
}

/* Huge pages that were copied 4 KiB at a time after fork. */
static void advise_thp(struct advice_ctx *c, const struct wproc *p, const struct vrow *r, int64_t copies)
{
	if (r->anon_huge_kb_max <= 0 || copies < 512)
		return;
	say(c, "thp",
	    "pid %d's mapping %s at %" PRIx64 " held %.1f MiB of transparent huge pages and took %" PRId64 " COW copies "
	    "of 4 KiB: a write to a shared huge page after fork splits its mapping and copies 4 KiB at a time, so the "
	    "writer loses the huge page; MADV_NOHUGEPAGE on it (or THP 'never' for this workload) trades TLB reach for "
	    "smaller, cheaper copies, MADV_COLLAPSE after the child is gone recovers them",
	    (int)p->pid, r->path[0] ? r->path : "anon", r->start, (double)r->anon_huge_kb_max / 1024.0, copies);
}

static bool is_python(const struct wproc *p)
{
	return strncmp(p->comm, "python", 6) == 0;
}

/* Copies a process made in its heap and anonymous arenas, and in all. */
static void heap_copies(const struct stat_where *w, const struct wproc *p, int64_t *heap, int64_t *all)
{
	const char *src;

	*heap = *all = 0;
	for (size_t k = 0; k < p->nrows; k++) {
		int64_t n = where_row_copies(w, &p->rows[k], &src);

		*all += n;
		if (!p->rows[k].path[0] || strcmp(p->rows[k].path, "[heap]") == 0)
			*heap += n;
	}
}

/* CPython children copying their parent's objects: reference counts written on every touch. */
static void advise_gc_freeze(struct advice_ctx *c)
{
	int64_t heap = 0, all = 0, h, a;
	int kids = 0;

	for (size_t i = 0; i < c->w->nprocs; i++) {
		const struct wproc *p = &c->w->procs[i], *parent = where_proc(c->w, p->ppid);

		if (p->at_start || !parent || !is_python(parent) || !is_python(p))
			continue;
		heap_copies(c->w, p, &h, &a);
		heap += h;
		all += a;
		kids++;
	}
	if (kids == 0 || heap < MIN_PAGES || heap * 10 < all * 8)
		return;
	say(c, "gc-freeze",
	    "%d forked CPython child%s copied %" PRId64 " pages (%.1f MiB) of which %.0f %% in the heap and anonymous "
	    "arenas, where objects live: reading an object writes its reference count (and the collector writes "
	    "its header), so the child copies what it only reads; gc.disable() early and gc.freeze() just before "
	    "fork keep the collector off those pages (reference counts still copy: Python >= 3.12 makes "
	    "immortal objects for the rest)",
	    kids, kids > 1 ? "ren" : "", heap, mib(heap, c->w->page), 100.0 * (double)heap / (double)all);
}

/* A parent copying while a child holds a snapshot (BGSAVE-like): the child only reads. */
static void advise_snapshot(struct advice_ctx *c)
{
	for (size_t i = 0; i < c->w->nprocs; i++) {
		const struct wproc *p = &c->w->procs[i];
		int64_t mine = 0, kids = 0, h, a;
		int nkids = 0;

		for (size_t k = 0; k < c->w->nprocs; k++)
			if (c->w->procs[k].ppid == p->pid && !c->w->procs[k].at_start) {
				heap_copies(c->w, &c->w->procs[k], &h, &a);
				kids += a;
				nkids++;
			}
		heap_copies(c->w, p, &h, &mine);
		if (nkids == 0 || mine < MIN_PAGES || kids * 10 > mine)
			continue;
		say(c, "snapshot",
		    "pid %d copied %" PRId64 " pages (%.1f MiB) while its %d forked child%s copied %" PRId64 ": the "
		    "child is a read-only snapshot and the parent pays for it; a snapshot without fork "
		    "(userfaultfd write-protect: copy a page only when the parent writes it, no page-table copy or "
		    "child) does the same work under the program's control; `cowbench run --workload=snapshot` "
		    "measures its cost against fork here",
		    (int)p->pid, mine, mib(mine, c->w->page), nkids, nkids > 1 ? "ren" : "", kids);
	}
}

void where_advice_print(struct stat_where *w, enum stat_format fmt, FILE *out)
{
	struct advice_ctx c = { .w = w, .fmt = fmt, .out = out };

	for (size_t i = 0; i < w->nprocs; i++)
		for (size_t k = 0; k < w->procs[i].nrows; k++)
			c.all_copies += where_row_copies(w, &w->procs[i].rows[k], &c.source);
	if (c.all_copies < MIN_PAGES)
		return; /* too little to say anything */
	for (size_t i = 0; i < w->nprocs; i++)
		for (size_t k = 0; k < w->procs[i].nrows; k++) {
			const struct vrow *r = &w->procs[i].rows[k];
			int64_t n = where_row_copies(w, r, &c.source);

			advise_dontfork(&c, &w->procs[i], r, n);
			advise_thp(&c, &w->procs[i], r, n);
		}
	advise_gc_freeze(&c);
	advise_snapshot(&c);
}
