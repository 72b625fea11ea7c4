/*
 * The output layer's front (cowbench/output.h): picks the writer of a
 * format, checks and applies --columns, and drives the records through the
 * writer's hooks. The writers are one file each, out_*.c; what they share
 * is out_cell.c, below them: the calls run front -> writer -> cell only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cowbench/output.h>

enum cb_kind cb_kind_of_metric(const char *metric)
{
	size_t n = strlen(metric);

	if (n > 3 && strcmp(metric + n - 3, "_ns") == 0)
		return CB_KIND_TIME_NS;
	if (n > 6 && strcmp(metric + n - 6, "_bytes") == 0)
		return CB_KIND_BYTES;
	if (n > 3 && strcmp(metric + n - 3, "_kb") == 0)
		return CB_KIND_KIB;
	return CB_KIND_NUMBER;
}

/* The writers' own names are the format names --format takes. */
int cb_format_parse(const char *s, enum cb_format *out)
{
	static const enum cb_format formats[] = { CB_FORMAT_CSV, CB_FORMAT_JSON, CB_FORMAT_TABLE, CB_FORMAT_MARKDOWN };

	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		if (strcmp(s, cb_writer_for(formats[i])->name) == 0) {
			*out = formats[i];
			return 0;
		}
	}
	return -EINVAL;
}

const struct cb_out_writer *cb_writer_for(enum cb_format f)
{
	switch (f) {
	case CB_FORMAT_CSV:
		return &cb_writer_csv;
	case CB_FORMAT_JSON:
		return &cb_writer_json;
	case CB_FORMAT_MARKDOWN:
		return &cb_writer_markdown;
	case CB_FORMAT_TABLE:
		break;
	}
	return &cb_writer_table;
}

/* The table's field of that name (a record may have a data field and a view field of one name). */
static const struct cb_field *view_field(const struct cb_field *f, size_t nf, const char *name)
{
	for (size_t i = 0; i < nf; i++)
		if ((f[i].flags & CB_FIELD_VIEW) && strcmp(f[i].name, name) == 0)
			return &f[i];
	return NULL;
}

/* Walk a comma-separated list; calls fn for each name (no empty names). */
static int each_name(const char *list, int (*fn)(void *arg, const char *name), void *arg)
{
	const char *p = list;

	for (;;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		char name[64];
		int err;

		if (n == 0 || n >= sizeof(name))
			return -EINVAL;
		memcpy(name, p, n);
		name[n] = '\0';
		if ((err = fn(arg, name)) < 0)
			return err;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

struct check_ctx {
	const struct cb_field *f;
	size_t nf;
	char *err;
	size_t errlen;
	const char *bad;
};

static int check_one(void *arg, const char *name)
{
	struct check_ctx *c = arg;
	if (view_field(c->f, c->nf, name))
		return 0;
	snprintf(c->err, c->errlen, "unknown column '%s'", name);
	c->bad = name;
	return -ENOENT;
}

int cb_out_columns_check(const struct cb_field *f, size_t nf, const char *list, char *err, size_t errlen)
{
	struct check_ctx c = { .f = f, .nf = nf, .err = err, .errlen = errlen };
	int rc = list ? each_name(list, check_one, &c) : 0;
	size_t o;

	if (rc == 0)
		return 0;
	if (rc == -EINVAL)
		snprintf(err, errlen, "'%s' is not a comma-separated list of column names", list);
	o = strlen(err);
	o += (size_t)snprintf(err + o, o < errlen ? errlen - o : 0, "; the table's columns:");
	for (size_t i = 0, k = 0; i < nf && o < errlen; i++)
		if (view_field(f, nf, f[i].name) == &f[i])
			o += (size_t)snprintf(err + o, errlen - o, "%s %s", k++ ? "," : "", f[i].name);
	return -EINVAL;
}

struct choose_ctx {
	struct cb_out *o;
};

static int choose_one(void *arg, const char *name)
{
	struct cb_out *o = ((struct choose_ctx *)arg)->o;
	const struct cb_field *fd = view_field(o->f, o->nf, name);

	if (!fd)
		return -EINVAL;
	if (o->nchosen < CB_OUT_MAX_FIELDS)
		o->chosen[o->nchosen++] = (unsigned char)(fd - o->f);
	return 0;
}

int cb_out_open(struct cb_out *o, FILE *fp, enum cb_format format, const struct cb_field *f, size_t nf,
		const char *columns)
{
	memset(o, 0, sizeof(*o));
	if (nf > CB_OUT_MAX_FIELDS)
		return -EINVAL;
	o->fp = fp;
	o->format = format;
	o->w = cb_writer_for(format);
	o->f = f;
	o->nf = nf;
	o->units = cb_units_style_for(fp);
	o->width = format == CB_FORMAT_TABLE ? cb_terminal_width(fp) : 0;
	if (columns && *columns && each_name(columns, choose_one, &(struct choose_ctx){ o }) < 0)
		return -EINVAL;
	return 0;
}

static int begin(struct cb_out *o)
{
	if (o->began)
		return 0;
	o->began = true;
	return o->w->begin ? o->w->begin(o) : 0;
}

int cb_out_record(struct cb_out *o, const struct cb_val *v)
{
	int err = begin(o);

	if (err)
		return err;
	o->records++;
	return o->w->record(o, v);
}

int cb_out_header(struct cb_out *o, const struct cb_val *v)
{
	int err = begin(o);

	if (err)
		return err;
	return o->w->header ? o->w->header(o, v) : 0;
}

int cb_out_block_end(struct cb_out *o)
{
	return o->w->block_end ? o->w->block_end(o) : 0;
}

int cb_out_close(struct cb_out *o)
{
	int err = begin(o), e2 = o->w->finish ? o->w->finish(o) : 0;

	return err ? err : e2;
}

int cb_terminal_width(FILE *fp)
{
	const char *env = getenv("COLUMNS");
	struct winsize ws;
	char *end;

	if (!fp || !isatty(fileno(fp)))
		return 0;
	if (env && *env) {
		long c = strtol(env, &end, 10);

		if (!*end && c >= 20 && c <= 10000)
			return (int)c;
	}
	if (ioctl(fileno(fp), TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return 0;
}
