#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/array.h>
#include <cowbench/compare.h>
#include <cowbench/matrix.h>
#include <cowbench/order.h>
#include <cowbench/results.h>
#include <cowbench/repstats.h>

#include "common/diag.h"
#include "common/args.h"
#include "common/outfile.h"
#include "trial/inputs.h"
#include "common/commands.h"
#include "compare_int.h"
#include "compare_match.h"

/*
 * cowbench compare OLD.csv NEW.csv (benchstat for copy-on-write): per cell
 * and metric each side's centre and interval, the change (Hodges-Lehmann
 * ratio new/old) with its exact interval and the Mann-Whitney p-value, all
 * from the engine (cowbench/estimate.h); "~" when the change is not
 * significant over the whole set (cb_compare_decide). With
 * --by=AXIS, the values of one axis inside the same files are compared
 * against a baseline value instead. Everything is computed before the
 * first byte is printed.
 */

#define DEFAULT_METRICS "elapsed_ns,faults,lat_p50_ns,lat_p99_ns,cow_faults,fork_ns,slowdown"

#define COPTS(p) ((struct cmp_opts *)(p))

/* Metrics where less is better (the column table's CB_COL_LOWER_BETTER). Others have no direction (never a regression). */
static bool is_lower_better(const char *metric)
{
	const struct cb_column *c = cb_column_find(metric);

	return c && (c->flags & CB_COL_LOWER_BETTER);
}

/* ---- options ---- */

static bool opt_columns(void *o, const char *v)
{
	if (!cli_check_columns(cmp_fields, cmp_nfields, v))
		return false;
	COPTS(o)->columns = v;
	return true;
}

static bool opt_metric(void *o, const char *v)
{
	char copy[512], *save = NULL;

	if (!*v || strlen(v) >= sizeof(copy)) {
		cli_error("--metric needs a comma-separated list of numeric columns");
		return false;
	}
	snprintf(copy, sizeof(copy), "%s", v);
	COPTS(o)->nmetric = 0;
	for (char *m = strtok_r(copy, ",", &save); m; m = strtok_r(NULL, ",", &save)) {
		const struct cb_column *c = cb_column_find(m);

		if (!cli_numeric_column("--metric", m))
			return false;
		if (COPTS(o)->nmetric == MAX_METRICS) {
			cli_error("--metric: at most %d columns", MAX_METRICS);
			return false;
		}
		snprintf(COPTS(o)->metric[COPTS(o)->nmetric++], sizeof(COPTS(o)->metric[0]), "%s", c->name);
	}
	if (COPTS(o)->nmetric == 0) {
		cli_error("--metric needs a comma-separated list of numeric columns");
		return false;
	}
	return true;
}

static bool axis_name_ok(const char *s, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-'))
			return false;
	return true;
}

static bool opt_by(void *o, const char *v)
{
	const char *eq = strchr(v, '=');
	size_t nl = eq ? (size_t)(eq - v) : strlen(v);

	if (!axis_name_ok(v, nl) || nl >= sizeof(COPTS(o)->by) || (eq && (!eq[1] || strchr(eq + 1, ' ') ||
									  strlen(eq + 1) >= sizeof(COPTS(o)->by_base)))) {
		cli_error("--by must be AXIS or AXIS=BASELINE (e.g. --by=precopy or --by=fork=0), not '%s'", v);
		return false;
	}
	snprintf(COPTS(o)->by, sizeof(COPTS(o)->by), "%.*s", (int)nl, v);
	snprintf(COPTS(o)->by_base, sizeof(COPTS(o)->by_base), "%s", eq ? eq + 1 : "");
	return true;
}

/* A finite number, the whole text (a trailing % allowed where percent_ok). */
static bool parse_number(const char *v, bool percent_ok, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (percent_ok && *end == '%')
		end++;
	if (end == v || *end || errno || !isfinite(d))
		return false;
	*out = d;
	return true;
}

static bool opt_alpha(void *o, const char *v)
{
	double a;

	if (!parse_number(v, false, &a) || !(a > 0 && a < 0.5)) {
		cli_error("--alpha must be a significance level between 0 and 0.5 (e.g. 0.05), not '%s'", v);
		return false;
	}
	COPTS(o)->alpha = a;
	return true;
}

static bool opt_fail_above(void *o, const char *v)
{
	double p;

	if (!parse_number(v, true, &p) || p < 0) {
		cli_error("--fail-above must be a change in percent >= 0 (e.g. 5), not '%s'", v);
		return false;
	}
	COPTS(o)->fail_above = p;
	return true;
}

static bool opt_threshold(void *o, const char *v)
{
	double p;

	if (!parse_number(v, true, &p) || p < 0 || p >= 100) {
		cli_error("--threshold must be the smallest change worth a verdict, in percent from 0 to below 100 "
			  "(e.g. 5), not '%s'",
			  v);
		return false;
	}
	COPTS(o)->threshold = p / 100;
	return true;
}

static bool opt_correction(void *o, const char *v)
{
	if (cb_p_adjust_parse(v, &COPTS(o)->correction) < 0) {
		cli_error("--correction must be bh, holm or none, not '%s'", v);
		return false;
	}
	return true;
}

static const struct cli_option cmp_options[] = {
	{ "metric", "COL[,COL]", "numeric columns to compare; default " DEFAULT_METRICS, .parse = opt_metric },
	{ "by", "AXIS[=BASE]", "compare the values of AXIS inside the files against BASE (default: the first)", .parse = opt_by },
	{ "alpha", "A", "significance level, after the correction for many comparisons (default 0.05)", .parse = opt_alpha },
	{ "threshold", "PCT", "smallest change called better/worse: its interval must lie beyond +-PCT % (default 5)",
	  .parse = opt_threshold },
	{ "correction", "bh|holm|none", "adjust p-values over the comparison set (default bh: Benjamini-Hochberg)",
	  .parse = opt_correction },
	{ "fail-above", "PCT", "exit 1 when a metric gets significantly worse by more than PCT %", .parse = opt_fail_above },
	{ "format", "table|csv|json|markdown", "output: a table for people (default), CSV, JSON Lines or Markdown",
	  CLI_SET(CLI_STORE_FORMAT, struct cmp_opts, format) },
	{ "columns", "NAME[,NAME]", "the table's columns, in this order (default: what fits the terminal)",
	  .parse = opt_columns },
	{ "output", "FILE", "write to FILE instead of standard output (an existing FILE needs --force)",
	  CLI_SET(CLI_STORE_FILE, struct cmp_opts, output) },
	{ "force", NULL, "replace an existing --output FILE", CLI_SET(CLI_STORE_TRUE, struct cmp_opts, force) },
	{ "quiet", NULL, "no notes on stderr (regressions beyond --fail-above are still named)",
	  CLI_SET(CLI_STORE_TRUE, struct cmp_opts, quiet) },
};

#define N_CMP_OPTIONS ((int)(sizeof(cmp_options) / sizeof(cmp_options[0])))

static void cmp_usage(void)
{
	printf("usage: cowbench compare [OPTIONS] OLD.csv NEW.csv\n"
	       "       cowbench compare [OPTIONS] --by=AXIS[=BASE] RESULTS.csv...\n\n"
	       "Per cell and metric: each side's Hodges-Lehmann centre with its exact interval,\n"
	       "the change (the two-sample Hodges-Lehmann ratio new/old; a difference where a\n"
	       "value is <= 0) with its exact interval, and the Mann-Whitney U p-value (5+5\n"
	       "reps reach p = 0.008). Every change is printed with its interval. It is better\n"
	       "or worse when p, adjusted over all comparisons (Benjamini-Hochberg), is below\n"
	       "alpha, its whole interval lies beyond +-threshold and, for a count (faults,\n"
	       "copies), the centres differ by more than 8; otherwise '~', with the reps that\n"
	       "would decide it. Where the two sides ran under other conditions (load, steal,\n"
	       "CPU, kernel), a note says so. Cells on one side only are listed.\n"
	       "docs/reference.md, section Statistics, says what each number is.\n"
	       "Exit status: 0, 1 with --fail-above when a metric got worse beyond PCT, 2 bad input.\n\n");
	cli_print_options(cmp_options, N_CMP_OPTIONS);
}

/* ---- sides and cell identity ---- */

/* Which rows make one side: all (two files), or those whose AXIS has VALUE (--by). */
struct side_filter {
	const char *axis;  /* NULL: every row */
	const char *value;
};

/*
 * A row's cell identity: the one place compare asks, so it follows
 * whatever cb_row_key() takes a cell to be.
 */
static void cell_identity(const struct cb_row *row, char *buf, size_t len)
{
	cb_row_key(row, buf, len);
}

/* The row's value of AXIS: from its cell key, else from the column of that name ("" when neither). */
static void axis_value(const struct cb_row *row, const char *key, const char *axis, char *out, size_t len)
{
	const struct cb_column *c;

	if (cb_key_value(key, axis, out, len))
		return;
	c = cb_column_find(axis);
	if (c)
		cb_row_format(row, c, out, len);
	else
		snprintf(out, len, "%s", "");
}

/* The key without its AXIS=... pair. */
static void key_without(const char *key, const char *axis, char *out, size_t len)
{
	size_t al = strlen(axis), o = 0;

	out[0] = '\0';
	for (const char *p = key; *p;) {
		const char *e = strchr(p, ' ');
		size_t tl = e ? (size_t)(e - p) : strlen(p);

		if (!(tl > al && strncmp(p, axis, al) == 0 && p[al] == '=') && o + tl + 2 <= len) {
			o += (size_t)snprintf(out + o, len - o, "%s%.*s", o ? " " : "", (int)tl, p);
		}
		p += tl;
		while (*p == ' ')
			p++;
	}
}

static bool side_key(const struct cb_row *row, char *buf, size_t len, size_t *cell_len, void *ctx)
{
	const struct side_filter *f = ctx;
	char key[CB_ROW_KEY_LEN], value[CB_ROW_KEY_LEN], cell[CB_ROW_KEY_LEN];

	cell_identity(row, key, sizeof(key));
	if (!f->axis) {
		snprintf(buf, len, "%s", key);
		*cell_len = strlen(row->cell);
		return true;
	}
	axis_value(row, key, f->axis, value, sizeof(value));
	if (strcmp(value, f->value) != 0)
		return false;
	key_without(key, f->axis, buf, len);
	key_without(row->cell, f->axis, cell, sizeof(cell)); /* the key's leading cell part, less the axis */
	*cell_len = strlen(cell);
	return true;
}


/*
 * Group one side's rows by cell. Grouping drops the pairs after the cell
 * that every group of the side shares (the kernel of a one-kernel file),
 * so two sides that differ only in those still match cell by cell; a side
 * of one group gets the same treatment, which grouping leaves out.
 */
static int group_side(const struct cb_row *rows, size_t n, const char *axis, struct side *s)
{
	struct side_filter f = { axis, s->value };
	char key[CB_ROW_KEY_LEN];
	size_t cell_len;
	int err = cb_group_rows_by(rows, n, side_key, &f, &s->g, &s->ng);

	if (!err && !(s->constant = cm_constant_columns(s->g, s->ng)))
		err = -ENOMEM;
	if (err || s->ng != 1 || s->g[0].n == 0)
		return err;
	side_key(s->g[0].rows[0], key, sizeof(key), &cell_len, &f);
	if (cell_len > 0 && cell_len < sizeof(s->g[0].key))
		s->g[0].key[cell_len] = '\0';
	else if (cell_len == 0)
		snprintf(s->g[0].key, sizeof(s->g[0].key), "workload=%s", s->g[0].rows[0]->workload);
	return 0;
}

/* ---- lines of the comparison ---- */


static struct line *add_line(struct lines *ls)
{
	struct line *nl = cb_array_room(ls->l, &ls->cap, ls->n, sizeof(*nl), 64);

	if (!nl)
		return NULL;
	ls->l = nl;
	memset(&ls->l[ls->n], 0, sizeof(ls->l[0]));
	return &ls->l[ls->n++];
}

static const char *verdict_of(const struct cb_compare *c, const char *metric)
{
	bool up = c->change.ratio ? c->change.est > 1 : c->change.est > 0;

	if (!c->significant)
		return "~";
	if (!is_lower_better(metric))
		return "changed";
	return up ? "worse" : "better";
}

/* One metric of a cell present on both sides; returns 1 when compared, 0 when not measured on both. */
static int compare_metric(const struct cmp_opts *o, const struct cb_row_group *a, const struct cb_row_group *b,
			  const char *metric, struct line *l)
{
	struct cb_compare_opts co = CB_COMPARE_DEFAULTS;
	size_t most = (a->n > b->n ? a->n : b->n) + 1, na, nb;
	double *va = malloc(2 * most * sizeof(*va)), *vb = va ? va + most : NULL;
	int err = 0;

	if (!va) {
		err = -ENOMEM;
		goto out;
	}
	na = cb_group_values(a, metric, va);
	nb = cb_group_values(b, metric, vb);
	if (na == 0 || nb == 0)
		goto out;
	co.alpha = o->alpha;
	co.threshold = o->threshold;
	err = cb_compare_samples(va, na, vb, nb, cb_metric_is_count(metric), &co, &l->c);
	if (err)
		goto out;
	l->metric = metric;
	if (l->c.change.ratio) {
		l->change = (l->c.ratio - 1) * 100;
		l->change_lo = (l->c.ratio_lo - 1) * 100;
		l->change_hi = (l->c.ratio_hi - 1) * 100;
	} else { /* a difference: in percent of the old centre, where that is not 0 */
		double base = l->c.old_center != 0 ? fabs(l->c.old_center) / 100 : NAN;

		l->change = l->c.change.est / base;
		l->change_lo = l->c.change.lo / base;
		l->change_hi = l->c.change.hi / base;
	}
	err = 1;
out:
	free(va);
	return err;
}

static const struct cb_row_group *find_group(const struct side *s, const char *key)
{
	for (size_t i = 0; i < s->ng; i++)
		if (strcmp(s->g[i].key, key) == 0)
			return &s->g[i];
	return NULL;
}

static int compare_cell(const struct cmp_opts *o, const struct side *old, const struct side *new_,
			const struct cb_row_group *a, const struct cb_row_group *b, const char *cell, struct lines *ls)
{
	size_t before = ls->n;

	for (size_t m = 0; m < o->nmetric; m++) {
		struct line *l = add_line(ls);
		int rc;

		if (!l)
			return -ENOMEM;
		rc = compare_metric(o, a, b, o->metric[m], l);
		if (rc <= 0) {
			ls->n--;
			if (rc < 0)
				return rc;
			continue;
		}
		l->old = old;
		l->new_ = new_;
		l->cell = cell;
		l->failed_old = a->failed;
		l->failed_new = b->failed;
		if (ls->n - 1 == before && !o->by[0]) /* two files; --by's sides share one file's conditions by design */
			cm_conditions(a, b, o->by, l->conditions, sizeof(l->conditions));
		else
			memcpy(l->conditions, ls->l[before].conditions, sizeof(l->conditions));
	}
	if (ls->n == before) {
		struct line *l = add_line(ls);

		if (!l)
			return -ENOMEM;
		*l = (struct line){ .old = old, .new_ = new_, .cell = cell, .present = BOTH, .verdict = "no-data",
				    .failed_old = a->failed, .failed_new = b->failed };
	}
	return 0;
}

/* Whether any group key of side s has a NAME=... pair. */
static bool side_has_axis(const struct side *s, const char *name)
{
	char v[CB_ROW_KEY_LEN];

	for (size_t i = 0; i < s->ng; i++)
		if (cb_key_value(s->g[i].key, name, v, sizeof(v)))
			return true;
	return false;
}

/*
 * The key without the pairs whose axis no cell of the other side has: a
 * kernel without the pre-copy patch collapses the precopy axes, so its
 * "workload=seq size=16M" is what every patched "workload=seq size=16M
 * precopy=N" cell is compared against. False when nothing was dropped.
 */
static bool key_collapsed(const char *key, const struct side *other, char *out, size_t len)
{
	char name[CB_ROW_KEY_LEN];
	size_t o = 0;
	bool dropped = false;

	out[0] = '\0';
	for (const char *p = key; *p;) {
		const char *e = strchr(p, ' '), *eq;
		size_t tl = e ? (size_t)(e - p) : strlen(p);

		eq = memchr(p, '=', tl);
		snprintf(name, sizeof(name), "%.*s", eq ? (int)(eq - p) : (int)tl, p);
		if (eq && !side_has_axis(other, name))
			dropped = true;
		else if (o + tl + 2 <= len)
			o += (size_t)snprintf(out + o, len - o, "%s%.*s", o ? " " : "", (int)tl, p);
		p += tl;
		while (*p == ' ')
			p++;
	}
	return dropped;
}

/*
 * A cell of one side with no exact twin on the other: its twin with the
 * axes the other side collapsed, the line named by the fuller key. Several
 * cells (every pre-copy mode) may share one twin.
 */
static int compare_collapsed(const struct cmp_opts *o, const struct side *old, const struct side *new_,
			     bool old_has_more, const struct cb_row_group *g, bool *twin_used, bool *matched,
			     struct lines *ls)
{
	const struct side *other = old_has_more ? new_ : old;
	char key[CB_ROW_KEY_LEN];
	const struct cb_row_group *t;

	if (!key_collapsed(g->key, other, key, sizeof(key)) || !(t = find_group(other, key)))
		return 0;
	if (!(old_has_more ? cm_groups_agree(g, t, old->constant, new_->constant, o->by) :
			     cm_groups_agree(t, g, old->constant, new_->constant, o->by)))
		return 0; /* another configuration (fork=0 against fork=1): each on its own side only */
	*matched = true;
	twin_used[t - other->g] = true;
	return old_has_more ? compare_cell(o, old, new_, g, t, g->key, ls) : compare_cell(o, old, new_, t, g, g->key, ls);
}

static int compare_sides(const struct cmp_opts *o, const struct side *old, const struct side *new_,
			 struct lines *ls)
{
	bool *old_done = calloc(old->ng + 1, sizeof(bool)), *new_done = calloc(new_->ng + 1, sizeof(bool));
	int err = old_done && new_done ? 0 : -ENOMEM;

	for (size_t i = 0; i < old->ng && !err; i++) {
		const struct cb_row_group *b = find_group(new_, old->g[i].key);

		if (b && cm_groups_agree(&old->g[i], b, old->constant, new_->constant, o->by)) {
			old_done[i] = new_done[b - new_->g] = true;
			err = compare_cell(o, old, new_, &old->g[i], b, old->g[i].key, ls);
		}
	}
	for (size_t i = 0; i < new_->ng && !err; i++)
		if (!new_done[i])
			err = compare_collapsed(o, old, new_, false, &new_->g[i], old_done, &new_done[i], ls);
	for (size_t i = 0; i < old->ng && !err; i++)
		if (!old_done[i])
			err = compare_collapsed(o, old, new_, true, &old->g[i], new_done, &old_done[i], ls);
	for (size_t i = 0; i < old->ng && !err; i++) {
		struct line *l;

		if (old_done[i])
			continue;
		if (!(l = add_line(ls)))
			err = -ENOMEM;
		else
			*l = (struct line){ .old = old, .new_ = new_, .cell = old->g[i].key, .present = OLD_ONLY,
					    .verdict = "only-old", .failed_old = old->g[i].failed };
	}
	for (size_t i = 0; i < new_->ng && !err; i++) {
		struct line *l;

		if (new_done[i])
			continue;
		if (!(l = add_line(ls)))
			err = -ENOMEM;
		else
			*l = (struct line){ .old = old, .new_ = new_, .cell = new_->g[i].key, .present = NEW_ONLY,
					    .verdict = "only-new", .failed_new = new_->g[i].failed };
	}
	free(old_done);
	free(new_done);
	return err;
}

/* ---- the sides of a run ---- */

static int cmp_value(const void *a, const void *b)
{
	const struct side *x = a, *y = b;
	int c = cb_natural_cmp(x->value, y->value);

	return c ? c : strcmp(x->value, y->value);
}

/*
 * The axes of the rows, for a refused --by: every NAME of a NAME=VALUE
 * pair of their keys that takes more than one value, comma-separated.
 */
static void file_axes(const struct cb_row *rows, size_t n, char *out, size_t len)
{
	char names[32][64], first[32][64];
	bool varies[32] = { false };
	size_t k = 0, o = 0;

	for (size_t i = 0; i < n; i++) {
		char key[CB_ROW_KEY_LEN];

		cell_identity(&rows[i], key, sizeof(key));
		for (const char *p = key; *p;) {
			size_t tl = strcspn(p, " "), nl = strcspn(p, "=");
			size_t j;

			if (nl < tl && nl < sizeof(names[0]) && tl - nl - 1 < sizeof(first[0])) {
				for (j = 0; j < k && !(strlen(names[j]) == nl && strncmp(names[j], p, nl) == 0); j++)
					;
				if (j == k && k < 32) {
					snprintf(names[k], sizeof(names[k]), "%.*s", (int)nl, p);
					snprintf(first[k++], sizeof(first[0]), "%.*s", (int)(tl - nl - 1), p + nl + 1);
				} else if (j < k && (strlen(first[j]) != tl - nl - 1 || strncmp(first[j], p + nl + 1, tl - nl - 1)))
					varies[j] = true;
			}
			p += tl;
			while (*p == ' ')
				p++;
		}
	}
	out[0] = '\0';
	for (size_t j = 0; j < k; j++)
		if (varies[j] && o + strlen(names[j]) + 3 < len)
			o += (size_t)snprintf(out + o, len - o, "%s%s", o ? ", " : "", names[j]);
	if (!o)
		snprintf(out, len, "none (every row is one configuration)");
}

/* The distinct values of AXIS among the rows, naturally ordered, the baseline first. */
static int axis_sides(const struct cmp_opts *o, const struct cb_row *rows, size_t n, struct side **out, size_t *ns)
{
	struct side *s = NULL;
	size_t k = 0;
	bool in_key = false;

	for (size_t i = 0; i < n; i++) {
		char key[CB_ROW_KEY_LEN], value[CB_ROW_KEY_LEN];
		size_t j;

		cell_identity(&rows[i], key, sizeof(key));
		in_key |= cb_key_value(key, o->by, value, sizeof(value));
		axis_value(&rows[i], key, o->by, value, sizeof(value));
		for (j = 0; j < k && strcmp(s[j].value, value) != 0; j++)
			;
		if (j < k)
			continue;
		struct side *ns_ = realloc(s, (k + 1) * sizeof(*s));

		if (!ns_) {
			free(s);
			cli_error("out of memory");
			return -1;
		}
		s = ns_;
		memset(&s[k], 0, sizeof(s[k]));
		snprintf(s[k].value, sizeof(s[k].value), "%s", value);
		snprintf(s[k].label, sizeof(s[k].label), "%s=%s", o->by, value[0] ? value : "-");
		k++;
	}
	if (!in_key && !cb_column_find(o->by)) {
		char axes[512];

		file_axes(rows, n, axes, sizeof(axes));
		cli_error("--by=%s: the files have no axis %s; their axes: %s", o->by, o->by, axes);
		free(s);
		return -1;
	}
	qsort(s, k, sizeof(*s), cmp_value);
	if (o->by_base[0]) {
		size_t j;

		for (j = 0; j < k && strcmp(s[j].value, o->by_base) != 0; j++)
			;
		if (j == k) {
			cli_error("--by=%s=%s: no row has %s=%s", o->by, o->by_base, o->by, o->by_base);
			free(s);
			return -1;
		}
		struct side base = s[j];

		memmove(&s[1], &s[0], j * sizeof(*s));
		s[0] = base;
	}
	if (k < 2) {
		char axes[512];

		file_axes(rows, n, axes, sizeof(axes));
		cli_error("--by=%s: every row has %s=%s, nothing to compare; the files' axes: %s", o->by, o->by,
			  k ? s[0].value : "", axes);
		free(s);
		return -1;
	}
	*out = s;
	*ns = k;
	return 0;
}

static void free_sides(struct side *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		cb_row_groups_free(s[i].g, s[i].ng);
		free(s[i].constant);
	}
	free(s);
}

/* What was read: two files, or (--by) all files in rows[0]. */
struct inputs {
	struct cb_row *rows[2];
	size_t n[2];
	struct side *sides; /* [0] is the baseline */
	size_t nsides;
};

static void free_inputs(struct inputs *in)
{
	free_sides(in->sides, in->nsides);
	free(in->rows[0]);
	free(in->rows[1]);
}

/* Read the inputs and split them into sides. -1 after printing why. */
static int make_sides(const struct cmp_opts *o, int nfiles, char **files, struct inputs *in)
{
	if (o->by[0]) {
		if (cli_read_rows(nfiles, files, &in->rows[0], &in->n[0]) < 0 ||
		    axis_sides(o, in->rows[0], in->n[0], &in->sides, &in->nsides) < 0)
			return -1;
		for (size_t i = 0; i < in->nsides; i++)
			if (group_side(in->rows[0], in->n[0], o->by, &in->sides[i]) < 0)
				goto nomem;
		return 0;
	}
	if (cli_read_rows(1, files, &in->rows[0], &in->n[0]) < 0 ||
	    cli_read_rows(1, files + 1, &in->rows[1], &in->n[1]) < 0)
		return -1;
	in->sides = calloc(2, sizeof(*in->sides));
	if (!in->sides)
		goto nomem;
	in->nsides = 2;
	for (int i = 0; i < 2; i++) {
		snprintf(in->sides[i].label, sizeof(in->sides[i].label), "%s", files[i]);
		if (group_side(in->rows[i], in->n[i], NULL, &in->sides[i]) < 0)
			goto nomem;
	}
	return 0;
nomem:
	cli_error("out of memory");
	return -1;
}

/*
 * Every compared line is one of the set: adjust their p-values together,
 * apply the threshold, then name each line's verdict.
 */
static int judge_lines(const struct cmp_opts *o, struct lines *ls)
{
	struct cb_compare_opts co = CB_COMPARE_DEFAULTS;
	struct cb_compare **set = malloc((ls->n + 1) * sizeof(*set));
	int err;

	if (!set)
		return -ENOMEM;
	ls->compared = 0;
	for (size_t i = 0; i < ls->n; i++)
		if (ls->l[i].metric)
			set[ls->compared++] = &ls->l[i].c;
	co.alpha = o->alpha;
	co.threshold = o->threshold;
	err = cb_compare_decide(set, ls->compared, o->correction, &co);
	for (size_t i = 0; i < ls->n && !err; i++)
		if (ls->l[i].metric)
			ls->l[i].verdict = verdict_of(&ls->l[i].c, ls->l[i].metric);
	free(set);
	return err;
}

static int compare_all(const struct cmp_opts *o, const struct inputs *in, struct lines *ls)
{
	for (size_t i = 1; i < in->nsides; i++) {
		int err = compare_sides(o, &in->sides[0], &in->sides[i], ls);

		if (err)
			return err;
	}
	return judge_lines(o, ls);
}

/* Write the comparison to --output or stdout; the exit status. */
static int write_out(const struct cmp_opts *o, const struct lines *ls)
{
	struct cli_output out;
	size_t regressions;

	if (cli_output_begin(&out, o->output, o->force) < 0)
		return EXIT_USAGE;
	regressions = cmp_print_lines(out.fp, o, ls);
	if (cli_output_commit(&out) < 0)
		return EXIT_RUN_FAILED;
	if (regressions) {
		cmp_report_regressions(o, ls);
		return EXIT_RUN_FAILED;
	}
	return 0;
}

int cmd_compare(int argc, char **argv)
{
	struct cmp_opts o = { .alpha = 0.05, .threshold = 0.05, .correction = CB_ADJUST_BH, .fail_above = -1,
			      .format = CB_FORMAT_TABLE };
	struct inputs in = { 0 };
	struct lines ls = { 0 };
	int argi, nfiles, status = EXIT_USAGE, err;

	opt_metric(&o, DEFAULT_METRICS);
	argi = cli_parse_options(argc, argv, cmp_options, N_CMP_OPTIONS, &o, cmp_usage);
	if (argi < 0)
		return EXIT_USAGE;
	nfiles = argc - argi;
	if (!o.by[0] && nfiles != 2) {
		cli_error("compare needs two results files, OLD.csv NEW.csv (or --by=AXIS and one or more files)");
		return EXIT_USAGE;
	}
	if (o.by[0] && nfiles < 1) {
		cli_error("compare --by=%s needs a results file", o.by);
		return EXIT_USAGE;
	}
	if (cli_output_not_input("--output", o.output, argv + argi, nfiles) < 0)
		return EXIT_USAGE;
	if (make_sides(&o, nfiles, argv + argi, &in) == 0) {
		err = compare_all(&o, &in, &ls);
		if (err) {
			cli_error("compare: %s", strerror(-err));
			status = EXIT_INTERNAL;
		} else {
			status = write_out(&o, &ls);
		}
	}
	free(ls.l);
	free_inputs(&in);
	return status;
}
