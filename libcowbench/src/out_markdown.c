/*
 * The Markdown writer (cowbench/output.h): a GitHub table per block for
 * report.md and pull requests, in the table's units and labels. No width to
 * fit: every column a record of the block has (a streamed block: its first
 * record), or --columns' choice.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/array.h>
#include <cowbench/output.h>

#include "out_cell.h"

struct md_state {
	bool laid;
	size_t ncol;
	unsigned char col[CB_OUT_MAX_FIELDS];
	/* Buffered (not streamed): the block's cells, its columns those any record has. */
	size_t ncand;
	unsigned char cand[CB_OUT_MAX_FIELDS];
	bool has[CB_OUT_MAX_FIELDS];
	char **cells; /* nrows * ncand texts */
	size_t nrows, cap;
};

/* A cell's text as text (cb_md_escape): a value never splits the row nor becomes a tag or a link. */
static void md_cell(FILE *fp, const char *s)
{
	cb_md_fputs(fp, s);
}

static bool has_value(const struct cb_val *v)
{
	return v->type != CB_VAL_NONE && !((v->type == CB_VAL_TEXT || v->type == CB_VAL_RAW) && !v->text[0]);
}

static void md_header(struct cb_out *o, const struct md_state *m)
{
	if (o->printed)
		fputc('\n', o->fp);
	o->printed = true;
	for (size_t k = 0; k < m->ncol; k++) {
		fputs("| ", o->fp);
		md_cell(o->fp, o->f[m->col[k]].label);
		fputc(' ', o->fp);
	}
	fputs("|\n", o->fp);
	for (size_t k = 0; k < m->ncol; k++)
		fputs(o->f[m->col[k]].kind == CB_KIND_TEXT || k == 0 ? "|---" : "|--:", o->fp);
	fputs("|\n", o->fp);
}

static const char *md_text(char *buf, size_t len, const struct cb_out *o, const struct cb_val *v, size_t f)
{
	enum cb_kind kind = v[f].kind != CB_KIND_AUTO ? v[f].kind : o->f[f].kind;

	return cb_fmt_value(buf, len, &v[f], kind, o->units);
}

/* A streamed block: its columns those its first record has, each row printed as it comes. */
static int md_stream(struct cb_out *o, struct md_state *m, const struct cb_val *v)
{
	char buf[512];

	if (!m->laid) {
		unsigned char cand[CB_OUT_MAX_FIELDS];
		size_t n = cb_out_view_fields(o, cand);

		m->ncol = 0;
		for (size_t k = 0; k < n; k++) {
			size_t f = cand[k];

			if (o->nchosen || (o->f[f].flags & CB_FIELD_ALWAYS) || has_value(&v[f]))
				m->col[m->ncol++] = (unsigned char)f;
		}
		md_header(o, m);
		m->laid = true;
	}
	for (size_t k = 0; k < m->ncol; k++) {
		fputs("| ", o->fp);
		md_cell(o->fp, md_text(buf, sizeof(buf), o, v, m->col[k]));
		fputc(' ', o->fp);
	}
	fputs("|\n", o->fp);
	return ferror(o->fp) ? -EIO : 0;
}

static int md_record(struct cb_out *o, const struct cb_val *v)
{
	struct md_state *m = o->state;
	char buf[512], **cells;

	if (!m && !(m = o->state = calloc(1, sizeof(*m))))
		return -ENOMEM;
	if (o->stream)
		return md_stream(o, m, v);
	/* Buffered: a column is in the table when any record of the block has it (summarize's ratios). */
	if (m->nrows == 0)
		m->ncand = cb_out_view_fields(o, m->cand);
	/* A row of the block: ncand cells. */
	if (!(cells = cb_array_room(m->cells, &m->cap, m->nrows, (m->ncand ? m->ncand : 1) * sizeof(*cells), 16)))
		return -ENOMEM;
	m->cells = cells;
	for (size_t k = 0; k < m->ncand; k++) {
		size_t f = m->cand[k];
		char *t = strdup(md_text(buf, sizeof(buf), o, v, f));

		if (!t) {
			for (size_t j = 0; j < k; j++)
				free(m->cells[m->nrows * m->ncand + j]);
			return -ENOMEM;
		}
		m->cells[m->nrows * m->ncand + k] = t;
		m->has[f] |= has_value(&v[f]);
	}
	m->nrows++;
	return 0;
}

/* A buffered block: its columns, then its rows; the block is emptied. */
static int md_flush(struct cb_out *o)
{
	struct md_state *m = o->state;

	if (!m || m->nrows == 0)
		return 0;
	m->ncol = 0;
	for (size_t k = 0; k < m->ncand; k++) {
		size_t f = m->cand[k];

		if (o->nchosen || (o->f[f].flags & CB_FIELD_ALWAYS) || m->has[f])
			m->col[m->ncol++] = (unsigned char)k; /* the candidate's index: its cell in a row */
	}
	for (size_t k = 0; k < m->ncol; k++)
		m->col[k] = m->cand[m->col[k]];
	md_header(o, m);
	for (size_t r = 0; r < m->nrows; r++) {
		for (size_t k = 0, c = 0; k < m->ncand; k++) {
			char *t = m->cells[r * m->ncand + k];

			if (c < m->ncol && m->col[c] == m->cand[k]) {
				fputs("| ", o->fp);
				md_cell(o->fp, t);
				fputc(' ', o->fp);
				c++;
			}
			free(t);
		}
		fputs("|\n", o->fp);
	}
	m->nrows = 0;
	memset(m->has, 0, sizeof(m->has));
	return ferror(o->fp) ? -EIO : 0;
}

static int md_block_end(struct cb_out *o)
{
	int err = md_flush(o);

	if (o->state)
		((struct md_state *)o->state)->laid = false;
	return err;
}

static int md_finish(struct cb_out *o)
{
	int err = md_flush(o);
	struct md_state *m = o->state;

	if (m)
		free(m->cells);
	free(m);
	o->state = NULL;
	return err ? err : ferror(o->fp) ? -EIO : 0;
}

const struct cb_out_writer cb_writer_markdown = {
	.name = "markdown",
	.record = md_record,
	.block_end = md_block_end,
	.finish = md_finish,
};
