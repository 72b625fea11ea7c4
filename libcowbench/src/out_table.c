/*
 * The table writer (cowbench/output.h): aligned columns for people, in
 * units (cowbench/units.h). A block of records shares one header; columns
 * that no record of the block has are left out. On a terminal the table
 * fits its width: the columns of highest priority number go first, and one
 * line under the table names them. A streamed table (run, matrix, stat)
 * prints each record as it comes, with the layout of its block's first;
 * the others print a block at its end, each column as wide as its widest
 * cell.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/array.h>
#include <cowbench/output.h>

#include "out_cell.h"

#define CELL 512
#define SEP 2 /* spaces between columns */
#define STACK_INDENT 2
#define WRAP_ROOM 24 /* a long text last wraps in a column this wide at least */

struct cb_out_block {
	char **cells; /* nrows x nf, NULL where the row has no value */
	size_t nrows, cap;
	bool laid;    /* stream: the layout is made and the header printed */
	size_t ncol;
	unsigned char col[CB_OUT_MAX_FIELDS];
	int w[CB_OUT_MAX_FIELDS];
	bool stack;   /* too wide still: the first column on a line of its own, the others indented below */
};

static enum cb_kind kind_of(const struct cb_field *f, const struct cb_val *v)
{
	return v->kind != CB_KIND_AUTO ? v->kind : f->kind;
}

static bool left(const struct cb_out *o, size_t pos, size_t i)
{
	return pos == 0 || (o->f[i].flags & CB_FIELD_LEFT);
}

/* The least width: the label, and room for a scaled unit ("999.9 ms") where the cells have one. */
static int min_width(const struct cb_field *f)
{
	int w = cb_text_width(f->label), min = f->width;

	if (!min)
		min = f->kind == CB_KIND_TIME_NS || f->kind == CB_KIND_BYTES || f->kind == CB_KIND_KIB ? 9 : 4;
	return w > min ? w : min;
}

static struct cb_out_block *block(struct cb_out *o)
{
	if (!o->state)
		o->state = calloc(1, sizeof(struct cb_out_block));
	return o->state;
}

static void free_rows(struct cb_out_block *b, size_t nf)
{
	for (size_t r = 0; r < b->nrows; r++) {
		for (size_t i = 0; i < nf; i++)
			free(b->cells[r * nf + i]);
	}
	free(b->cells);
	b->cells = NULL;
	b->nrows = b->cap = 0;
}

static void note_dropped(struct cb_out *o, const struct cb_field *f)
{
	size_t n = strlen(o->dropped);
	char needle[80];

	snprintf(needle, sizeof(needle), ", %s,", f->name);
	/* The list is ", a, b," inside: a name dropped in two blocks is named once. */
	if (n && strstr(o->dropped, needle))
		return;
	snprintf(o->dropped + n, sizeof(o->dropped) - n, "%s %s,", n ? "" : ",", f->name);
}

/* What a column needs of the line: a long text last wraps, so a short part of it will do. */
static int col_room(const struct cb_out *o, const struct cb_out_block *b, size_t k)
{
	if (k + 1 == b->ncol && k > 0 && (o->f[b->col[k]].flags & CB_FIELD_LEFT) && b->w[k] > WRAP_ROOM)
		return WRAP_ROOM;
	return b->w[k];
}

/*
 * Leave out columns by priority until the line fits o->width; where it still
 * does not, stack: the first column (the cell's name) on a line of its own.
 * --columns: the user's choice stands, stacked where it is too wide.
 */
static void fit(struct cb_out *o, struct cb_out_block *b)
{
	int all = 0;

	for (size_t k = 0; k < b->ncol; k++)
		all += col_room(o, b, k) + (k ? SEP : 0);
	/* A first column that takes 40 % of the line (long cell names) goes on its own line first. */
	b->stack = o->width > 0 && all > o->width && b->ncol > 1 && b->w[0] * 5 > o->width * 2;
	for (;;) {
		int total = b->stack ? STACK_INDENT : 0, worst = -1;

		for (size_t k = b->stack ? 1 : 0; k < b->ncol; k++)
			total += col_room(o, b, k) + (k > (b->stack ? 1u : 0u) ? SEP : 0);
		if (o->width <= 0 || total <= o->width)
			return;
		for (size_t k = 0; k < b->ncol && !o->nchosen; k++) {
			int p = o->f[b->col[k]].priority;

			if (p > 0 && (worst < 0 || p >= o->f[b->col[worst]].priority))
				worst = (int)k;
		}
		if (worst < 0) {
			if (b->stack || b->ncol < 2)
				return;
			b->stack = true;
			continue;
		}
		note_dropped(o, &o->f[b->col[worst]]);
		memmove(&b->col[worst], &b->col[worst + 1], b->ncol - (size_t)worst - 1);
		memmove(&b->w[worst], &b->w[worst + 1], (b->ncol - (size_t)worst - 1) * sizeof(b->w[0]));
		b->ncol--;
	}
}

/* A cell's text: "-" for a number not measured, nothing for an empty text at the left. */
static const char *shown(const struct cb_out *o, size_t i, const char *const *cells, bool header)
{
	if (header)
		return o->f[i].label;
	if (cells[i])
		return cells[i];
	return (o->f[i].flags & CB_FIELD_LEFT) && o->f[i].kind == CB_KIND_TEXT ? "" : "-";
}

/*
 * One line: cells padded to the widths, no spaces at its end; a long text
 * last wraps where the terminal ends.
 */
static void print_line(struct cb_out *o, struct cb_out_block *b, const char *const *cells, bool header)
{
	int col = 0, pad = 0; /* pad: spaces owed before the next text */
	size_t k0 = 0;

	if (b->stack) {
		cb_print_wrapped(o->fp, o->width, 2 * STACK_INDENT, shown(o, b->col[0], cells, header));
		pad = col = STACK_INDENT;
		k0 = 1;
	}
	for (size_t k = k0; k < b->ncol; k++) {
		size_t i = b->col[k];
		const char *s = shown(o, i, cells, header);
		bool last = k + 1 == b->ncol, l = left(o, k - k0, i);
		int w = b->w[k], tw = cb_text_width(s);

		if (k > k0) {
			pad += SEP;
			col += SEP;
		}
		if (!l && tw < w) {
			pad += w - tw;
			col += w - tw;
		}
		if (*s) {
			fprintf(o->fp, "%*s", pad, "");
			pad = 0;
		}
		if (last && l && o->width > 0 && col + tw > o->width) {
			/* A long text last (a matrix cell, a verdict's note) wraps under itself, or under the row. */
			cb_print_wrapped_at(o->fp, o->width, col, o->width - col >= WRAP_ROOM ? col : 2 * STACK_INDENT, s);
			return;
		}
		fputs(s, o->fp);
		col += tw;
		if (l && tw < w) {
			pad += w - tw;
			col += w - tw;
		}
	}
	fputc('\n', o->fp);
}

static char *cell_text(struct cb_out *o, size_t i, const struct cb_val *v)
{
	char buf[CELL];

	if (v->type == CB_VAL_NONE)
		return NULL;
	cb_fmt_value(buf, sizeof(buf), v, kind_of(&o->f[i], v), o->units);
	if ((v->type == CB_VAL_TEXT || v->type == CB_VAL_RAW) && !v->text[0])
		return NULL;
	return strdup(buf);
}

/* The block's columns: those a record has (the first, streamed; any, buffered), and ALWAYS ones. */
static void layout(struct cb_out *o, struct cb_out_block *b)
{
	unsigned char cand[CB_OUT_MAX_FIELDS];
	size_t n = cb_out_view_fields(o, cand);

	b->ncol = 0;
	for (size_t k = 0; k < n; k++) {
		size_t i = cand[k];
		bool has = (o->f[i].flags & CB_FIELD_ALWAYS) || o->nchosen;
		int w = min_width(&o->f[i]);

		for (size_t r = 0; r < b->nrows; r++) {
			char *c = b->cells[r * o->nf + i];

			if (c) {
				int cw = cb_text_width(c);

				has = true;
				w = cw > w ? cw : w;
			}
		}
		if (!has)
			continue;
		b->col[b->ncol] = (unsigned char)i;
		b->w[b->ncol++] = w;
	}
	fit(o, b);
}

static void print_header(struct cb_out *o, struct cb_out_block *b)
{
	if (o->printed)
		fputc('\n', o->fp);
	o->printed = true;
	print_line(o, b, NULL, true);
}

static int add_row(struct cb_out *o, struct cb_out_block *b, const struct cb_val *v);

static int table_header(struct cb_out *o, const struct cb_val *v)
{
	struct cb_out_block *b = block(o);
	int err;

	if (!b)
		return -ENOMEM;
	if (!o->stream || b->laid)
		return 0;
	if ((err = add_row(o, b, v)) < 0)
		return err;
	layout(o, b);
	print_header(o, b);
	b->laid = true;
	free_rows(b, o->nf);
	return ferror(o->fp) ? -EIO : 0;
}

static int add_row(struct cb_out *o, struct cb_out_block *b, const struct cb_val *v)
{
	char **row = cb_array_room(b->cells, &b->cap, b->nrows, o->nf * sizeof(*row), 16); /* a row: nf cells */

	if (!row)
		return -ENOMEM;
	b->cells = row;
	row = &b->cells[b->nrows * o->nf];
	for (size_t i = 0; i < o->nf; i++)
		row[i] = (o->f[i].flags & CB_FIELD_VIEW) ? cell_text(o, i, &v[i]) : NULL;
	b->nrows++;
	return 0;
}

static int table_record(struct cb_out *o, const struct cb_val *v)
{
	struct cb_out_block *b = block(o);
	char **row;

	int err;

	if (!b)
		return -ENOMEM;
	if ((err = add_row(o, b, v)) < 0)
		return err;
	row = &b->cells[(b->nrows - 1) * o->nf];
	if (!o->stream)
		return 0;
	if (!b->laid) {
		layout(o, b);
		print_header(o, b);
		b->laid = true;
	}
	print_line(o, b, (const char *const *)row, false);
	free_rows(b, o->nf);
	return ferror(o->fp) ? -EIO : 0;
}

static int table_block_end(struct cb_out *o)
{
	struct cb_out_block *b = o->state;

	if (!b)
		return 0;
	if (!o->stream && b->nrows) {
		layout(o, b);
		print_header(o, b);
		for (size_t r = 0; r < b->nrows; r++)
			print_line(o, b, (const char *const *)&b->cells[r * o->nf], false);
	}
	free_rows(b, o->nf);
	b->laid = false;
	return ferror(o->fp) ? -EIO : 0;
}

static int table_finish(struct cb_out *o)
{
	int err = table_block_end(o);

	if (o->dropped[0]) {
		char line[700];
		size_t n = strlen(o->dropped);

		o->dropped[n - 1] = '\0'; /* the list's closing comma */
		snprintf(line, sizeof(line), "(left out to fit %d columns:%s; --columns=NAME,... chooses)", o->width,
			 o->dropped + 1);
		cb_print_wrapped(o->fp, o->width, 1, line);
		o->dropped[0] = '\0';
	}
	if (o->state)
		free(((struct cb_out_block *)o->state)->cells);
	free(o->state);
	o->state = NULL;
	return err ? err : ferror(o->fp) ? -EIO : 0;
}

const struct cb_out_writer cb_writer_table = {
	.name = "table",
	.header = table_header,
	.record = table_record,
	.block_end = table_block_end,
	.finish = table_finish,
};
