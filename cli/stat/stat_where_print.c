/* cowbench stat --where: the per-mapping table, its totals and where they come from. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stat_where_int.h"

struct prow {
	const struct wproc *p;
	const struct vrow *r;
	int64_t key;
};

static bool row_moved(const struct vrow *r)
{
	return r->faults || r->unshared_kb || r->pd_last != r->pd_first || r->sd_last != r->sd_first;
}

static int by_key(const void *a, const void *b)
{
	const struct prow *x = a, *y = b;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return x->p->pid != y->p->pid ? (x->p->pid < y->p->pid ? -1 : 1) : (x->r->start < y->r->start ? -1 : 1);
}

static void row_label(const struct vrow *r, char *buf, size_t len)
{
	double mib = (double)(r->end - r->start) / 1048576.0;

	if (r->path[0])
		snprintf(buf, len, "%s", r->path);
	else
		snprintf(buf, len, "anon %" PRIx64 " (%.*f MiB)", r->start, mib < 10 ? 1 : 0, mib);
}

static const char *thp_word(const struct vrow *r)
{
	if (r->anon_huge_kb_max > 0)
		return "huge";
	return r->thp > 0 ? "yes" : r->thp == 0 ? "no" : "-";
}

/* A number, or the format's empty cell when not measured. */
static void cell(enum cb_format fmt, int width, bool have, int64_t v, FILE *out)
{
	if (fmt == CB_FORMAT_TABLE)
		have ? fprintf(out, " %*" PRId64, width, v) : fprintf(out, " %*s", width, "-");
	else if (fmt == CB_FORMAT_CSV)
		have ? fprintf(out, ",%" PRId64, v) : fprintf(out, ",");
	else
		have ? fprintf(out, "%" PRId64, v) : fprintf(out, "null");
}

static void print_row(const struct stat_where *w, const struct prow *pr, enum cb_format fmt, FILE *out)
{
	const struct vrow *r = pr->r;
	bool wp = w->wp != NULL, pm = w->pagemap;
	char label[160];
	const int64_t vals[] = { r->faults, r->copied, r->zero, r->reused, r->shared_now, r->pd_last - r->pd_first,
				 r->sd_last - r->sd_first, r->unshared_kb };
	const bool have[] = { wp, pm, pm, pm, pm, true, true, true };
	static const char *const names[] = { "faults", "copied", "zero_fill", "reused", "shared_now",
					     "d_private_dirty_kb", "d_shared_dirty_kb", "smaps_unshared_kb" };
	static const int widths[] = { 8, 8, 9, 7, 10, 12, 11, 11 };

	row_label(r, label, sizeof(label));
	if (fmt == CB_FORMAT_JSON) {
		fprintf(out, "{\"where\":\"maps\",\"pid\":%d,\"comm\":\"%s\",\"start\":\"%" PRIx64 "\",\"end\":\"%" PRIx64
			"\",\"perms\":\"%s\",\"path\":", (int)pr->p->pid, pr->p->comm, r->start, r->end, r->perms);
		fputc('"', out);
		for (const char *c = r->path; *c; c++)
			fprintf(out, *c == '"' || *c == '\\' ? "\\%c" : "%c", *c);
		fprintf(out, "\",\"thp\":\"%s\"", thp_word(r));
		for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
			fprintf(out, ",\"%s\":", names[i]);
			cell(fmt, 0, have[i], vals[i], out);
		}
		fprintf(out, "}\n");
		return;
	}
	if (fmt == CB_FORMAT_CSV)
		fprintf(out, "where_maps,%d,%" PRIx64 ",%" PRIx64 ",%s,%s", (int)pr->p->pid, r->start, r->end, r->perms,
			thp_word(r));
	else
		fprintf(out, "%7d %-15.15s %-34.34s %4s", (int)pr->p->pid, pr->p->comm, label, thp_word(r));
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		cell(fmt, widths[i], have[i], vals[i], out);
	if (fmt == CB_FORMAT_CSV) /* the path last: it may hold anything */
		fprintf(out, ",\"%s\"", r->path);
	fputc('\n', out);
}

static struct prow *collect(const struct stat_where *w, size_t *n)
{
	size_t cap = 0;
	struct prow *rows;
	const char *src;

	for (size_t i = 0; i < w->nprocs; i++)
		cap += w->procs[i].nrows;
	rows = malloc((cap ? cap : 1) * sizeof(*rows));
	*n = 0;
	for (size_t i = 0; rows && i < w->nprocs; i++)
		for (size_t k = 0; k < w->procs[i].nrows; k++)
			if (row_moved(&w->procs[i].rows[k])) {
				const struct vrow *r = &w->procs[i].rows[k];

				rows[(*n)++] = (struct prow){ &w->procs[i], r,
							      where_row_copies(w, r, &src) * 1000000 + r->faults };
			}
	if (rows)
		qsort(rows, *n, sizeof(*rows), by_key);
	return rows;
}

struct sums {
	int64_t faults, copied, zero, reused, unclassified, unmapped, unshared_kb, dpd, dsd;
};

static struct sums sum_rows(const struct stat_where *w)
{
	struct sums s = { 0 };

	for (size_t i = 0; i < w->nprocs; i++) {
		s.unmapped += w->procs[i].unmapped_faults;
		for (size_t k = 0; k < w->procs[i].nrows; k++) {
			const struct vrow *r = &w->procs[i].rows[k];

			s.faults += r->faults;
			s.copied += r->copied;
			s.zero += r->zero;
			s.reused += r->reused;
			s.unclassified += r->unclassified;
			s.unshared_kb += r->unshared_kb;
			s.dpd += r->pd_last - r->pd_first;
			s.dsd += r->sd_last - r->sd_first;
		}
	}
	return s;
}

/* Totals and how they square with stat's own count. */
static void print_totals(const struct stat_where *w, const struct sums *s, size_t shown, size_t nrows,
			 const struct stat_where_totals *t, FILE *out)
{
	fprintf(out, "  total over %zu processes, %zu mappings that moved (%zu shown):", w->nprocs, nrows, shown);
	if (w->wp)
		fprintf(out, " %" PRId64 " write faults on present pages", s->faults + s->unmapped);
	if (w->pagemap)
		fprintf(out, "; pages: %" PRId64 " copied, %" PRId64 " zero-page copies, %" PRId64 " reused, %" PRId64
			" unclassified", s->copied, s->zero, s->reused, s->unclassified);
	fprintf(out, "; smaps: Private_Dirty %+" PRId64 " kB, Shared_Dirty %+" PRId64 " kB, unshared %" PRId64
		" kB (a copy unshares the page in both processes of a pair)\n", s->dpd, s->dsd, s->unshared_kb);
	if (s->unmapped)
		fprintf(out, "  %" PRId64 " faults were in mappings gone before the next look (not in the table)\n",
			s->unmapped);
	if (t->copies >= 0 && w->pagemap) {
		int64_t mine = s->copied + s->zero;

		fprintf(out, "  agreement: %" PRId64 " copies here [pagemap] vs %" PRId64 " COW copies [%s] (%+.1f %%)",
			mine, t->copies, t->copies_source, t->copies ? 100.0 * (double)(mine - t->copies) / (double)t->copies : 0.0);
		fprintf(out, "%s\n", s->unclassified ? "; unclassified pages (faulted again before a look, or in a "
						       "process already gone) make up part of any gap" : "");
	} else if (t->copies >= 0 && w->wp) {
		fprintf(out, "  agreement: %" PRId64 " write faults here vs %" PRId64 " COW copies [%s] (faults also "
			"count reuses)\n", s->faults + s->unmapped, t->copies, t->copies_source);
	}
	if (w->skipped_ticks)
		fprintf(out, "  the smaps unshared count skips %ld intervals in which a watched process exited (its "
			"sharer's pages turn private without a copy)\n", w->skipped_ticks);
}

static void print_maps(struct stat_where *w, const struct stat_where_totals *t, enum cb_format fmt, FILE *out)
{
	size_t n, shown;
	struct prow *rows = collect(w, &n);
	struct sums s = sum_rows(w);

	if (!rows)
		return;
	shown = n < (size_t)w->o.top ? n : (size_t)w->o.top;
	if (fmt == CB_FORMAT_TABLE) {
		fprintf(out, "\nwhere (maps): by mapping, most copies first [faults: exceptions:page_fault_user; "
			     "copied/zero_fill/reused/shared_now: pagemap;\n  d_*: smaps first to last look; unshared_kb: "
			     "smaps Shared_Dirty turned Private_Dirty, per interval]\n");
		fprintf(out, "%7s %-15s %-34s %4s %8s %8s %9s %7s %10s %12s %11s %11s\n", "pid", "comm", "mapping",
			"thp", "faults", "copied", "zero_fill", "reused", "shared_now", "d_priv_dirty", "d_shr_dirty",
			"unshared_kb");
	} else if (fmt == CB_FORMAT_CSV) {
		fprintf(out, "where_maps,pid,start,end,perms,thp,faults,copied,zero_fill,reused,shared_now,"
			     "d_private_dirty_kb,d_shared_dirty_kb,smaps_unshared_kb,path\n");
	}
	for (size_t i = 0; i < shown; i++)
		print_row(w, &rows[i], fmt, out);
	if (fmt == CB_FORMAT_TABLE)
		print_totals(w, &s, shown, n, t, out);
	else if (fmt == CB_FORMAT_JSON)
		fprintf(out, "{\"where\":\"maps-total\",\"processes\":%zu,\"mappings\":%zu,\"faults\":%" PRId64
			",\"copied\":%" PRId64 ",\"zero_fill\":%" PRId64 ",\"reused\":%" PRId64 ",\"unclassified\":%" PRId64
			",\"smaps_unshared_kb\":%" PRId64 "}\n", w->nprocs, n, s.faults + s.unmapped, s.copied, s.zero,
			s.reused, s.unclassified, s.unshared_kb);
	free(rows);
}

static void where_print(struct stat_where *w, const struct stat_where_totals *t, enum cb_format fmt, FILE *out);

/*
 * On a terminal the table's text fits its width: each line written whole,
 * then wrapped, its continuation indented under its start (a long total,
 * a mapping's row, a call path).
 */
void stat_where_print(struct stat_where *w, const struct stat_where_totals *t, enum cb_format fmt, FILE *out)
{
	int width = fmt == CB_FORMAT_TABLE ? cb_terminal_width(out) : 0;
	char *text = NULL, *line;
	size_t len = 0;
	FILE *mem;

	if (!width || !(mem = open_memstream(&text, &len))) {
		where_print(w, t, fmt, out);
		return;
	}
	where_print(w, t, fmt, mem);
	if (fclose(mem) == 0 && text) {
		/* line by line, the empty ones between sections kept */
				for (line = text; *line;) {
			char *nl = strchr(line, '\n');
			size_t lead = strspn(line, " ");

			if (nl)
				*nl = '\0';
			cb_print_wrapped(out, width, (int)lead + 4, line);
			if (!nl)
				break;
			line = nl + 1;
		}
	}
	free(text);
	fflush(out);
}

static void where_print(struct stat_where *w, const struct stat_where_totals *t, enum cb_format fmt, FILE *out)
{
	if (w->o.mode == WHERE_NONE)
		return;
	if (w->wp)
		stat_where_poll(w);
	where_settle_rest(w);
	if (w->wp && cb_wpfault_lost(w->wp))
		fprintf(stderr, "cowbench: note: the kernel dropped %" PRIu64 " fault records (buffers full): "
				"counts below are short by that many; --sample=N lightens the load\n",
			cb_wpfault_lost(w->wp));
	if (w->o.mode == WHERE_MAPS)
		print_maps(w, t, fmt, out);
	else if (w->wp)
		where_code_print(w, fmt, out);
	else
		return; /* nothing recorded: the note at the start said why */
	where_advice_print(w, fmt, out);
	fflush(out);
}
