/*
 * The output layer (cowbench/output.h): what every writer shares. The
 * writers themselves are one file each, out_*.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
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

size_t cb_out_view_fields(const struct cb_out *o, unsigned char *idx)
{
	size_t n = 0;

	if (o->nchosen) {
		memcpy(idx, o->chosen, o->nchosen);
		return o->nchosen;
	}
	for (size_t i = 0; i < o->nf; i++) {
		size_t k = n;

		if (!(o->f[i].flags & CB_FIELD_VIEW))
			continue;
		/* Insertion by pos, stable: fields without one keep the table's order. */
		while (k > 0 && o->f[idx[k - 1]].pos > o->f[i].pos)
			k--;
		memmove(idx + k + 1, idx + k, n - k);
		idx[k] = (unsigned char)i;
		n++;
	}
	return n;
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

int cb_text_width(const char *s)
{
	int w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80; /* continuation bytes take no column */
	return w;
}

/* Columns of the n bytes at s on screen. */
static int span_width(const char *s, size_t n)
{
	int w = 0;

	for (size_t i = 0; i < n; i++)
		w += ((unsigned char)s[i] & 0xc0) != 0x80;
	return w;
}

void cb_print_wrapped_at(FILE *fp, int width, int col, int indent, const char *text)
{
	const char *p = text;

	while (*p) {
		const char *word = p;
		size_t n;

		while (*word == ' ')
			word++;
		n = strcspn(word, " \n");
		/* The spaces before the word stay where the line does not break. */
		if (col > indent && width > 0 && col + span_width(p, (size_t)(word - p) + n) > width) {
			fprintf(fp, "\n%*s", indent, "");
			col = indent;
		} else {
			fwrite(p, 1, (size_t)(word - p), fp);
			col += (int)(word - p);
		}
		/* A word wider than the line (a path, a call chain) breaks where the line ends. */
		for (size_t i = 0; i < n;) {
			size_t len = 1;

			while (i + len < n && (word[i + len] & 0xc0) == 0x80)
				len++;
			if (width > 0 && col >= width && width > indent + 8) {
				fprintf(fp, "\n%*s", indent, "");
				col = indent;
			}
			fwrite(word + i, 1, len, fp);
			i += len;
			col++;
		}
		p = word + n;
		if (*p == '\n') {
			fputc('\n', fp);
			col = 0;
			p++;
			if (!*p)
				return;
		}
	}
	fputc('\n', fp);
}

void cb_print_wrapped(FILE *fp, int width, int indent, const char *text)
{
	cb_print_wrapped_at(fp, width, 0, indent, text);
}

/* What Markdown or HTML give a meaning inside a line: a table's '|', a tag's '<', an entity's '&', ... */
static bool md_special(unsigned char c)
{
	return c && strchr("\\`*_[]<>#|&~", c);
}

char *cb_md_escape(char *buf, size_t len, const char *s)
{
	size_t o = 0;

	if (!len)
		return buf;
	for (; s && *s && o + 3 <= len; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f) {
			buf[o++] = ' ';
			continue;
		}
		if (md_special(c))
			buf[o++] = '\\';
		buf[o++] = (char)c;
	}
	buf[o] = '\0';
	return buf;
}

void cb_md_fputs(FILE *fp, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f) {
			fputc(' ', fp);
			continue;
		}
		if (md_special(c))
			fputc('\\', fp);
		fputc(c, fp);
	}
}

const char *cb_fmt_ratio(char *buf, size_t len, double r)
{
	if (isnan(r))
		snprintf(buf, len, "-");
	else if (!isfinite(r) || fabs(r) >= 1e6)
		snprintf(buf, len, "%.3gx", r);
	else if (fabs(r) >= 100)
		snprintf(buf, len, "%.0fx", r);
	else
		snprintf(buf, len, "%.3gx", r);
	return buf;
}

const char *cb_fmt_value(char *buf, size_t len, const struct cb_val *v, enum cb_kind kind, enum cb_units_style st)
{
	double x = v->num;

	if (v->type == CB_VAL_NONE || ((v->type == CB_VAL_TEXT || v->type == CB_VAL_RAW) && !v->text[0])) {
		snprintf(buf, len, "-");
		return buf;
	}
	if (v->type == CB_VAL_TEXT || kind == CB_KIND_TEXT) {
		snprintf(buf, len, "%s", v->type == CB_VAL_TEXT || v->type == CB_VAL_RAW ? v->text : "");
		return buf;
	}
	if (v->type == CB_VAL_RAW)
		x = strtod(v->text, NULL);
	if (v->type == CB_VAL_BOOL) {
		snprintf(buf, len, "%s", x != 0 ? "yes" : "no");
		return buf;
	}
	if (isnan(x)) {
		snprintf(buf, len, "-");
		return buf;
	}
	switch (kind) {
	case CB_KIND_TIME_NS:
		return cb_fmt_ns(buf, len, x, st);
	case CB_KIND_BYTES:
		return cb_fmt_bytes(buf, len, x);
	case CB_KIND_KIB:
		return cb_fmt_bytes(buf, len, x * 1024);
	case CB_KIND_RATIO:
		return cb_fmt_ratio(buf, len, x);
	case CB_KIND_PERCENT:
		snprintf(buf, len, "%+.1f %%", x);
		return buf;
	case CB_KIND_FRACTION:
		snprintf(buf, len, "%.1f %%", x * 100);
		return buf;
	case CB_KIND_COUNT:
		if (v->type == CB_VAL_RAW)
			snprintf(buf, len, "%s", v->text);
		else
			snprintf(buf, len, "%.0f", x);
		return buf;
	default:
		if (v->type == CB_VAL_RAW)
			snprintf(buf, len, "%s", v->text);
		else if (fabs(x) >= 1e4)
			snprintf(buf, len, "%.0f", x);
		else
			snprintf(buf, len, "%.4g", x);
		return buf;
	}
}
