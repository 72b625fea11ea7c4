/*
 * What every writer (out_*.c) is built from, one cell at a time: CSV and
 * JSON escaping, Markdown escaping, a value in the units people read, text
 * width and wrapping, and the order of the table's columns. The writers
 * call only this; output.c (the front: picks a writer, drives records)
 * calls the writers. Nothing here calls either, so data flows one way.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/output.h>

#include "out_cell.h"

/* ---- CSV and JSON Lines: the primitives every record of every command is written with ---- */

int cb_out_write_error(void)
{
	return errno > 0 ? -errno : -EIO;
}

int cb_csv_write_field(FILE *fp, const char *field)
{
	errno = 0;
	if (strpbrk(field, ",\"\r\n") == NULL)
		return fputs(field, fp) < 0 ? cb_out_write_error() : 0;
	if (fputc('"', fp) == EOF)
		return cb_out_write_error();
	for (const char *p = field; *p; p++) {
		if (*p == '"' && fputc('"', fp) == EOF)
			return cb_out_write_error();
		if (fputc(*p, fp) == EOF)
			return cb_out_write_error();
	}
	return fputc('"', fp) == EOF ? cb_out_write_error() : 0;
}

int cb_record_end(FILE *fp)
{
	errno = 0;
	return fputs(CB_RECORD_END, fp) < 0 ? cb_out_write_error() : 0;
}

int cb_csv_number(FILE *fp, double v, int decimals)
{
	int n = 0;

	errno = 0;
	if (!isfinite(v))
		return 0;
	if (decimals >= 0)
		n = fprintf(fp, "%.*f", decimals, v);
	else
		n = fprintf(fp, "%.10g", v);
	return n < 0 ? cb_out_write_error() : 0;
}

int cb_json_number(FILE *fp, const char *name, double v)
{
	int n;

	errno = 0;
	n = isfinite(v) ? fprintf(fp, ",\"%s\":%.10g", name, v) : fprintf(fp, ",\"%s\":null", name);
	return n < 0 ? cb_out_write_error() : 0;
}

void cb_json_string(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(fp, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(fp, "\\u%04x", c);
		else
			fputc(c, fp);
	}
	fputc('"', fp);
}

/* ---- the table's and Markdown's cells ---- */

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
