/*
 * What every plot of cowbench plot writes: its data files (DIR/data/NAME.dat
 * and NAME.gp), labels that gnuplot reads as data and never as code, and
 * cell keys turned into titles and labels people read.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cowbench/results.h>

#include "common/diag.h"
#include "plot_data.h"

int plot_dataset_open(struct dataset *d, const char *dir, const char *name)
{
	int err;

	snprintf(d->dat_path, sizeof(d->dat_path), "%s/data/%s.dat", dir, name);
	snprintf(d->meta_path, sizeof(d->meta_path), "%s/data/%s.gp", dir, name);
	d->dat = fopen(d->dat_path, "we");
	d->meta = d->dat ? fopen(d->meta_path, "we") : NULL;
	if (d->meta)
		return 0;
	err = errno;
	cli_error("cannot write %s: %s", d->dat ? d->meta_path : d->dat_path, strerror(err));
	if (d->dat) {
		fclose(d->dat);
		unlink(d->dat_path); /* no empty data file left behind */
	}
	return -1;
}

int plot_md_open(struct cb_out *o, FILE *fp, const struct cb_field *f, size_t nf)
{
	int err = cb_out_open(o, fp, CB_FORMAT_MARKDOWN, f, nf, NULL);

	o->units = CB_UNITS_UTF8; /* report.md is UTF-8 wherever it is read */
	o->stream = true;         /* each row as it comes: every column is shown, none to wait for */
	return err;
}

/* Both files whole, or neither left (a full disk): -1 after saying why. */
int plot_dataset_close(struct dataset *d)
{
	int bad = ferror(d->dat) || ferror(d->meta), err = 0;

	errno = 0;
	if (fflush(d->dat) != 0 || fflush(d->meta) != 0)
		err = errno;
	if (fclose(d->dat) != 0 && !err)
		err = errno;
	if (fclose(d->meta) != 0 && !err)
		err = errno;
	if (!bad && !err)
		return 0;
	cli_error("cannot write %s: %s", d->dat_path, strerror(err ? err : EIO));
	unlink(d->dat_path);
	unlink(d->meta_path);
	return -1;
}

void plot_dataset_discard(struct dataset *d)
{
	fclose(d->dat);
	fclose(d->meta);
	unlink(d->dat_path);
	unlink(d->meta_path);
}

/*
 * Text from a CSV never reaches gnuplot as code: gnuplot runs `...` even
 * inside double quotes, and '@', '$' and quotes have meanings of their
 * own. Labels keep only characters with no meaning to gnuplot (others
 * become '_'), in single quotes in the loaded .gp files and in double
 * quotes in the .dat data files.
 */
static bool gp_safe_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c != 0 && strchr(" _.,:=+-/%*()[]<>~!", c) != NULL); /* "!": a mark, no command inside quotes */
}

static void gp_text(FILE *fp, const char *s, char quote)
{
	fputc(quote, fp);
	for (; *s; s++)
		fputc(gp_safe_char((unsigned char)*s) ? *s : '_', fp);
	fputc(quote, fp);
}

/* A label in a data file (read by gnuplot as data, never as a command). */
void gp_data_label(FILE *fp, const char *s)
{
	gp_text(fp, s, '"');
}

/* A string value in a .gp file that gnuplot loads. */
void plot_gp_string(FILE *fp, const char *s)
{
	gp_text(fp, s, '\'');
}

/*
 * Labels: the pairs every cell of a plot shares go into its title
 * ("size=64M threads=2"), each bar or line is named by what varies
 * ("16M no fork", "uffd-wp").
 */

void plot_keyset_add(struct plot_keyset *ks, const char *key)
{
	if (ks->n < 256)
		ks->key[ks->n++] = key;
}

/* Whether the pair (p, len) appears, exactly, in key. */
static bool has_pair(const char *key, const char *p, size_t len)
{
	for (const char *k = key; k && *k; k = strchr(k, ' '), k = k ? k + 1 : NULL)
		if (strncmp(k, p, len) == 0 && (k[len] == ' ' || k[len] == '\0'))
			return true;
	return false;
}

static bool pair_common(const struct plot_keyset *ks, const char *p, size_t len)
{
	for (size_t i = 0; i < ks->n; i++)
		if (!has_pair(ks->key[i], p, len))
			return false;
	return true;
}

/* Append one pair as people read it: values of well-known axes alone, "no fork" for fork=0. */
static void append_pair(char *out, size_t len, const char *p, size_t plen)
{
	const char *eq = memchr(p, '=', plen);
	size_t o = strlen(out), nl = eq ? (size_t)(eq - p) : plen;
	char text[160];

	if (eq && nl == 4 && strncmp(p, "fork", 4) == 0)
		snprintf(text, sizeof(text), "%s", eq[1] == '0' ? "no fork" : "after fork");
	else if (eq && nl == 7 && strncmp(p, "precopy", 7) == 0 && plen == 9 && eq[1] == '0')
		snprintf(text, sizeof(text), "pre-copy off");
	else if (eq && nl == 7 && strncmp(p, "precopy", 7) == 0)
		snprintf(text, sizeof(text), "pre-copy %.*s", (int)(plen - nl - 1), eq + 1);
	else if (eq && ((nl == 8 && !strncmp(p, "workload", 8)) || (nl == 4 && !strncmp(p, "size", 4)) ||
			(nl == 8 && !strncmp(p, "snapshot", 8)) || (nl == 6 && !strncmp(p, "method", 6))))
		snprintf(text, sizeof(text), "%.*s", (int)(plen - nl - 1), eq + 1);
	else
		snprintf(text, sizeof(text), "%.*s", (int)plen, p);
	snprintf(out + o, len - o, "%s%s", o ? " " : "", text);
}

/* The pairs of key that vary (common = false) or that all keys share (common = true). */
void plot_label_of(const struct plot_keyset *ks, const char *key, bool common, char *out, size_t len)
{
	out[0] = '\0';
	for (const char *p = key; p && *p;) {
		const char *e = strchr(p, ' ');
		size_t pl = e ? (size_t)(e - p) : strlen(p);

		if (pair_common(ks, p, pl) == common)
			append_pair(out, len, p, pl);
		p = e ? e + 1 : NULL;
	}
	if (!out[0] && !common)
		snprintf(out, len, "all");
}

void plot_meta_context(FILE *meta, const struct plot_keyset *ks)
{
	char ctx[CB_ROW_KEY_LEN];

	if (ks->n == 0)
		ctx[0] = '\0';
	else
		plot_label_of(ks, ks->key[0], true, ctx, sizeof(ctx));
	fputs("context = ", meta);
	plot_gp_string(meta, ctx);
	fputc('\n', meta);
}

/* The key without the pairs named in drop[] (NULL-terminated). */
void plot_key_strip(const char *key, const char *const *drop, char *out, size_t len)
{
	size_t o = 0;

	out[0] = '\0';
	for (const char *p = key; *p;) {
		const char *e = strchr(p, ' ');
		size_t pl = e ? (size_t)(e - p) : strlen(p);
		bool keep = true;

		for (size_t i = 0; drop[i]; i++)
			if (strncmp(p, drop[i], strlen(drop[i])) == 0 && p[strlen(drop[i])] == '=')
				keep = false;
		if (keep && o + pl + 2 < len) {
			o += (size_t)snprintf(out + o, len - o, "%s%.*s", o ? " " : "", (int)pl, p);
		}
		p += pl;
		while (*p == ' ')
			p++;
	}
}

const char *plot_group_workload(const struct cb_row_group *g)
{
	return g->n ? g->rows[0]->workload : "";
}

/* One pair as people read it: workload and size by value, "after fork" / "no fork", "pre-copy off". */
static void readable_pair(char *out, size_t len, const char *p, size_t pl)
{
	const char *eq = memchr(p, '=', pl), *v = eq ? eq + 1 : "";
	size_t nl = eq ? (size_t)(eq - p) : pl, o = strlen(out);
	int vl = eq ? (int)(pl - nl - 1) : 0;
	char text[160];

	if (eq && nl == 4 && strncmp(p, "fork", 4) == 0)
		snprintf(text, sizeof(text), "%s", vl == 1 && *v == '0' ? "no fork" : "after fork");
	else if (eq && nl == 7 && strncmp(p, "precopy", 7) == 0 && vl == 1 && *v == '0')
		snprintf(text, sizeof(text), "pre-copy off");
	else if (eq && nl == 7 && strncmp(p, "precopy", 7) == 0)
		snprintf(text, sizeof(text), "pre-copy %.*s", vl, v);
	else if (eq && ((nl == 8 && strncmp(p, "workload", 8) == 0) || (nl == 4 && strncmp(p, "size", 4) == 0)))
		snprintf(text, sizeof(text), "%.*s", vl, v);
	else
		snprintf(text, sizeof(text), "%.*s", (int)pl, p);
	if (o + strlen(text) + 2 < len)
		snprintf(out + o, len - o, "%s%s", o ? " " : "", text);
}

char *plot_readable(const char *key, char *out, size_t len)
{
	out[0] = '\0';
	for (const char *p = key; *p;) {
		size_t pl = strcspn(p, " ");

		if (pl)
			readable_pair(out, len, p, pl);
		p += pl;
		while (*p == ' ')
			p++;
	}
	return out;
}
