/*
 * The guest's row stream, line by line: one CSV record per line, so a bad
 * line (a kernel message, a NUL byte, a stray or unterminated quote) costs
 * that line only. cowbench never writes a line end inside a field of a row.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "guest_rows.h"

void gr_init(struct gr_stream *s, gr_row_fn on_row, void *ctx)
{
	memset(s, 0, sizeof(*s));
	s->on_row = on_row;
	s->ctx = ctx;
}

/* One line as exactly one CSV record, or -1: bad CSV, or more than the line. */
static int parse_line(char *line, size_t len, struct cb_csv_record *rec)
{
	FILE *fp;
	int got;
	long used;

	if (memchr(line, '\0', len))
		return -1;
	fp = fmemopen(line, len, "r");
	if (!fp)
		return -ENOMEM;
	got = cb_csv_read_record(fp, rec);
	used = ftell(fp);
	fclose(fp);
	if (got == -ENOMEM)
		return -ENOMEM;
	return got > 0 && used == (long)len ? 0 : -1;
}

static void take_header(struct gr_stream *s, const struct cb_csv_record *rec)
{
	if (rec->nfields > sizeof(s->col) / sizeof(s->col[0]) || strcmp(rec->field[0], "schema") != 0) {
		s->bad++; /* not the header: a line before it */
		return;
	}
	for (size_t i = 0; i < rec->nfields; i++) {
		s->col[i] = cb_column_find(rec->field[i]);
		if (!s->col[i]) {
			snprintf(s->unknown, sizeof(s->unknown), "%s", rec->field[i]);
			s->foreign = true; /* another cowbench: nothing it sends can be read */
			return;
		}
	}
	s->ncols = rec->nfields;
	s->header = true;
}

static void take_row(struct gr_stream *s, const struct cb_csv_record *rec)
{
	struct cb_row row;
	int rc;

	memset(&row, 0, sizeof(row));
	if (rec->nfields != s->ncols) {
		s->bad++;
		return;
	}
	for (size_t i = 0; i < rec->nfields; i++)
		if (cb_row_set(&row, s->col[i], rec->field[i]) != 0) {
			s->bad++;
			return;
		}
	rc = s->on_row(s->ctx, &row);
	if (rc < 0)
		s->err = -rc;
	else if (rc > 0)
		s->ignored++;
	else
		s->rows++;
}

static int take_line(struct gr_stream *s, char *line, size_t len, struct cb_csv_record *rec)
{
	int rc;

	if (len > 0 && line[len - 1] == '\r')
		len--;
	if (len == 0)
		return 0; /* an empty line */
	rc = parse_line(line, len, rec);
	if (rc == -ENOMEM)
		return rc;
	if (rc < 0)
		s->bad++;
	else if (!s->header)
		take_header(s, rec);
	else
		take_row(s, rec);
	return 0;
}

size_t gr_take(struct gr_stream *s, char *buf, size_t len, bool final)
{
	struct cb_csv_record rec = { 0 };
	size_t used = 0;

	while (used < len && !s->foreign && !s->err) {
		char *nl = memchr(buf + used, '\n', len - used);
		size_t n = nl ? (size_t)(nl - (buf + used)) : len - used;

		if (!nl && !final && n <= GR_MAX_LINE)
			break; /* a line cut short: wait for the rest */
		if (s->skipping || n > GR_MAX_LINE) {
			s->bad += !s->skipping;
			s->skipping = !nl;
		} else if (take_line(s, buf + used, n, &rec) < 0) {
			s->err = ENOMEM;
		}
		used += n + (nl != NULL);
	}
	cb_csv_record_free(&rec);
	return s->foreign ? len : used;
}
