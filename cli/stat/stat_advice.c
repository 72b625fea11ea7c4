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
	enum cb_format fmt;
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
	if (c->lines++ == 0 && c->fmt == CB_FORMAT_TABLE)
		fprintf(c->out, "\nadvice (from the numbers above; copies counted by %s):\n", c->source);
	if (c->fmt == CB_FORMAT_TABLE) {
		fprintf(c->out, "  - %s\n", text);
	} else if (c->fmt == CB_FORMAT_JSON) {
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
	    "of 4 KiB: a write to a shared huge page after fork splits its mapping and copies 4 KiB at a time, and "
	    "the writer keeps 4 KiB mappings (less TLB reach) until khugepaged or MADV_COLLAPSE rebuilds them; "
	    "MADV_COLLAPSE on it once the child is gone restores the huge pages now, MADV_NOHUGEPAGE avoids the "
	    "split where the huge pages are not worth it",
	    (int)p->pid, r->path[0] ? r->path : "anon", r->start, (double)r->anon_huge_kb_max / 1024.0, copies);
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

/* The forked CPython children's copies: in the heap and arenas, and in all. */
static int python_children(const struct stat_where *w, int64_t *heap, int64_t *all)
{
	int64_t h, a;
	int kids = 0;

	*heap = *all = 0;
	for (size_t i = 0; i < w->nprocs; i++) {
		if (!where_is_python_child(w, &w->procs[i]))
			continue;
		heap_copies(w, &w->procs[i], &h, &a);
		*heap += h;
		*all += a;
		kids++;
	}
	return kids;
}

/* The children's top faulting functions, "a, b, c" (the code view's). */
static void top_python_functions(const struct stat_where *w, char *buf, size_t len)
{
	size_t n, at = 0;
	struct cb_strmap_entry *e = cb_strmap_sorted(&w->py_funcs, &n);

	buf[0] = '\0';
	for (size_t i = 0; e && i < n && i < 3; i++) {
		int k = snprintf(buf + at, len - at, "%s%.*s", i ? ", " : "", (int)strcspn(e[i].key, " ."), e[i].key);

		if (k < 0 || (size_t)k >= len - at)
			break;
		at += (size_t)k;
	}
	free(e);
}

/*
 * CPython children copying their parent's objects: reading an object
 * writes its reference count; a collection writes every tracked object's
 * header. gc.freeze() before fork only avoids the second, so the code view
 * decides which advice holds; without it the line says how to find out.
 */
static void advise_python(struct advice_ctx *c)
{
	const struct stat_where *w = c->w;
	int64_t heap, all;
	int kids = python_children(w, &heap, &all);
	double gc_share;
	char top[256];

	if (kids == 0 || heap < MIN_PAGES || heap * 10 < all * 8)
		return;
	if (w->py_named * 2 < w->py_samples || w->py_samples == 0) {
		say(c, "cpython",
		    "%d forked CPython child%s copied %" PRId64 " pages (%.1f MiB), %.0f %% of them in the heap and "
		    "anonymous arenas where objects live: a read writes the object's reference count, a collection "
		    "writes every tracked object's header; `cowbench stat --where=code` shows which (gc.freeze() "
		    "before fork avoids the collector's share only)",
		    kids, kids > 1 ? "ren" : "", heap, mib(heap, w->page), 100.0 * (double)heap / (double)all);
		return;
	}
	gc_share = 100.0 * (double)w->py_gc / (double)w->py_named;
	top_python_functions(w, top, sizeof(top));
	if (gc_share >= 25.0)
		say(c, "gc-freeze",
		    "%d forked CPython child%s copied %" PRId64 " pages (%.1f MiB) in the object arenas, %.0f %% of "
		    "the write faults in the cyclic collector (top: %s): gc.disable() early and gc.freeze() just "
		    "before fork move the parent's objects out of the collector's reach, so the child stops "
		    "writing their headers",
		    kids, kids > 1 ? "ren" : "", heap, mib(heap, w->page), gc_share, top);
	else
		say(c, "cpython-refcount",
		    "%d forked CPython child%s copied %" PRId64 " pages (%.1f MiB) in the object arenas, only %.0f %% "
		    "of the write faults in the collector (top: %s): reference-count writes, which gc.freeze() "
		    "does not avoid; the child copies every page holding an object it reads, so read fewer of "
		    "the parent's objects in it, or start workers with 'forkserver'/'spawn' instead of fork",
		    kids, kids > 1 ? "ren" : "", heap, mib(heap, w->page), gc_share, top);
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

void where_advice_print(struct stat_where *w, enum cb_format fmt, FILE *out)
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
	advise_python(&c);
	advise_snapshot(&c);
}
