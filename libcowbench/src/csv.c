#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/error.h>
#include <cowbench/report.h>

static int grow(struct cb_csv_record *rec, size_t need)
{
	char *nb;

	if (need <= rec->cap)
		return 0;
	size_t cap = rec->cap ? rec->cap : 256;

	while (cap < need)
		cap *= 2;
	nb = realloc(rec->buf, cap);
	if (!nb)
		return -ENOMEM;
	rec->buf = nb;
	rec->cap = cap;
	return 0;
}

/* Split buf (fields separated by NUL, nfields of them) into rec->field[]. */
static int index_fields(struct cb_csv_record *rec, size_t nfields)
{
	char **f = realloc(rec->field, nfields * sizeof(*f));
	char *p = rec->buf;

	if (!f)
		return -ENOMEM;
	rec->field = f;
	for (size_t i = 0; i < nfields; i++) {
		f[i] = p;
		p += strlen(p) + 1;
	}
	rec->nfields = nfields;
	return 0;
}

static int malformed(struct cb_csv_record *rec, const char *why)
{
	rec->error = why;
	return CB_EFORMAT;
}

/* getc that tells a read error (-errno) from end of file (EOF). */
static int next_char(FILE *fp)
{
	int c = getc(fp);

	if (c == EOF && ferror(fp))
		return errno ? -errno : -EIO;
	return c;
}

int cb_csv_read_record(FILE *fp, struct cb_csv_record *rec)
{
	size_t len = 0, nfields = 1;
	bool quoted = false, field_start = true, any = false, after_quote = false, line_end = false;
	int c;

	rec->terminated = false;
	rec->torn = false;
	rec->error = NULL;
	for (;;) {
		c = next_char(fp);
		if (c < 0 && c != EOF)
			return c;
		if (c == EOF) {
			rec->torn = !line_end;
			if (quoted)
				return malformed(rec, "unterminated quote");
			if (!any)
				return 0;
			break;
		}
		any = true;
		if (c == '\0')
			return malformed(rec, "NUL byte");
		if (len + 2 > CB_CSV_MAX_RECORD)
			return malformed(rec, "record longer than 1 MiB");
		if (grow(rec, len + 2) < 0)
			return -ENOMEM;
		if (quoted) {
			if (c == '"') {
				int d = next_char(fp);

				if (d < 0 && d != EOF)
					return d;
				if (d == '"') {
					rec->buf[len++] = '"';
					continue;
				}
				quoted = false;
				after_quote = true;
				if (d != EOF)
					ungetc(d, fp);
				continue;
			}
			line_end = line_end || c == '\n' || c == '\r';
			rec->buf[len++] = (char)c;
			continue;
		}
		if (after_quote && c != ',' && c != '\r' && c != '\n')
			return malformed(rec, "text after a closing quote");
		after_quote = false;
		if (c == '"' && field_start) {
			quoted = true;
			field_start = false;
			continue;
		}
		if (c == '"')
			return malformed(rec, "stray quote inside an unquoted field");
		if (c == ',') {
			rec->buf[len++] = '\0';
			nfields++;
			field_start = true;
			continue;
		}
		if (c == '\r') {
			int d = next_char(fp);

			if (d < 0 && d != EOF)
				return d;
			if (d != '\n' && d != EOF)
				ungetc(d, fp);
			rec->terminated = true;
			break;
		}
		if (c == '\n') {
			rec->terminated = true;
			break;
		}
		rec->buf[len++] = (char)c;
		field_start = false;
	}
	if (grow(rec, len + 1) < 0)
		return -ENOMEM;
	rec->buf[len] = '\0';
	return index_fields(rec, nfields) < 0 ? -ENOMEM : 1;
}

void cb_csv_record_free(struct cb_csv_record *rec)
{
	free(rec->field);
	free(rec->buf);
	memset(rec, 0, sizeof(*rec));
}
