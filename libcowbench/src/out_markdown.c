/*
 * The Markdown writer (cowbench/output.h): a GitHub table per block for
 * report.md and pull requests, in the table's units and labels. No width to
 * fit: every column a record of the block's first has (or --columns names).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/output.h>

struct md_state {
	bool laid;
	size_t ncol;
	unsigned char col[CB_OUT_MAX_FIELDS];
};

/* A cell's text with | escaped, so a value never splits the row. */
static void md_cell(FILE *fp, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputc('\\', fp);
		fputc(*s == '\n' ? ' ' : *s, fp);
	}
}

static int md_record(struct cb_out *o, const struct cb_val *v)
{
	struct md_state *m = o->state;
	char buf[512];

	if (!m && !(m = o->state = calloc(1, sizeof(*m))))
		return -ENOMEM;
	if (!m->laid) {
		unsigned char cand[CB_OUT_MAX_FIELDS];
		size_t n = cb_out_view_fields(o, cand);

		m->ncol = 0;
		for (size_t k = 0; k < n; k++) {
			size_t f = cand[k];

			if (o->nchosen || (o->f[f].flags & CB_FIELD_ALWAYS) ||
			    (v[f].type != CB_VAL_NONE && !((v[f].type == CB_VAL_TEXT || v[f].type == CB_VAL_RAW) && !v[f].text[0])))
				m->col[m->ncol++] = (unsigned char)f;
		}
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
		m->laid = true;
	}
	for (size_t k = 0; k < m->ncol; k++) {
		size_t f = m->col[k];
		enum cb_kind kind = v[f].kind != CB_KIND_AUTO ? v[f].kind : o->f[f].kind;

		fputs("| ", o->fp);
		md_cell(o->fp, cb_fmt_value(buf, sizeof(buf), &v[f], kind, o->units));
		fputc(' ', o->fp);
	}
	fputs("|\n", o->fp);
	return ferror(o->fp) ? -EIO : 0;
}

static int md_block_end(struct cb_out *o)
{
	if (o->state)
		((struct md_state *)o->state)->laid = false;
	return 0;
}

static int md_finish(struct cb_out *o)
{
	free(o->state);
	o->state = NULL;
	return ferror(o->fp) ? -EIO : 0;
}

const struct cb_out_writer cb_writer_markdown = {
	.name = "markdown",
	.record = md_record,
	.block_end = md_block_end,
	.finish = md_finish,
};
