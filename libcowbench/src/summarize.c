/* cowbench summarize's lines, computed (cowbench/summarize.h); the CLI prints them. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/array.h>
#include <cowbench/compare.h>
#include <cowbench/matrix.h>
#include <cowbench/noise.h>
#include <cowbench/order.h>
#include <cowbench/report.h>
#include <cowbench/summarize.h>

static const struct cb_row_group *find_group(const struct cb_row_group *g, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(g[i].key, key) == 0)
			return &g[i];
	return NULL;
}

/*
 * Whether PAIR (a name) is the identity column that records the setting of an axis CELL names
 * ("precopy_depth" for "precopy-depth=15"): the baseline ran with its own value, which means nothing there.
 */
static bool shadows_cell_axis(const char *pair, const char *cell)
{
	char axis[CB_ROW_KEY_LEN], v[CB_ROW_KEY_LEN];
	bool dashed = false;

	snprintf(axis, sizeof(axis), "%s", pair);
	for (char *p = axis; *p; p++)
		if (*p == '_') {
			*p = '-';
			dashed = true;
		}
	return dashed && cb_key_value(cell, axis, v, sizeof(v));
}

/* Every pair of KEY other than NAME=... (and the identity shadows of CELL's axes) is in CELL. */
static bool pairs_within(const char *key, const char *cell, const char *name)
{
	char buf[CB_ROW_KEY_LEN], *save = NULL, v[CB_ROW_KEY_LEN];

	snprintf(buf, sizeof(buf), "%s", key);
	for (char *pair = strtok_r(buf, " ", &save); pair; pair = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(pair, '=');

		if (!eq)
			return false;
		*eq = '\0';
		if (strcmp(pair, name) == 0 || shadows_cell_axis(pair, cell))
			continue;
		if (!cb_key_value(cell, pair, v, sizeof(v)) || strcmp(v, eq + 1) != 0)
			return false;
	}
	return true;
}

/*
 * The baseline of a cell whose other axes collapse at NAME=VALUE (precopy-depth
 * exists only at precopy=1): the NAME=VALUE cell with the most pairs, all of them in KEY.
 */
static const struct cb_row_group *collapsed_baseline(const struct cb_summarize_opts *o, const struct cb_row_group *g,
						     size_t ng, const char *key)
{
	const struct cb_row_group *best = NULL;
	char v[CB_ROW_KEY_LEN];

	for (size_t i = 0; i < ng; i++) {
		if (!cb_key_value(g[i].key, o->base_name, v, sizeof(v)) || strcmp(v, o->base_value) != 0 ||
		    !pairs_within(g[i].key, key, o->base_name))
			continue;
		if (!best || strlen(g[i].key) > strlen(best->key))
			best = &g[i];
	}
	return best;
}

/*
 * This cell against its baseline cell (same key, NAME=VALUE) measured in
 * the same boot, with the engine's one method: old = the baseline.
 */
static int baseline_ratio(const struct cb_summarize_opts *o, const struct cb_row_group *g, size_t ng, size_t gi,
			  const char *metric, struct cb_summary_line *l)
{
	struct cb_compare_opts co = CB_COMPARE_DEFAULTS;
	char bkey[CB_ROW_KEY_LEN];
	const struct cb_row_group *b;
	const char *boot;
	double *av, *bv;
	size_t na, nb;
	int err = 0;

	if (!o->base_name || !cb_key_replace(g[gi].key, o->base_name, o->base_value, bkey, sizeof(bkey)) ||
	    strcmp(bkey, g[gi].key) == 0)
		return 0; /* no such axis here, or this is the baseline itself */
	b = find_group(g, ng, bkey);
	if (!b)
		b = collapsed_baseline(o, g, ng, g[gi].key);
	if (!b || b->n == 0 || !(boot = cb_shared_boot(&g[gi], b)))
		return 0;
	av = malloc(g[gi].n * sizeof(*av));
	bv = malloc(b->n * sizeof(*bv));
	if (!av || !bv) {
		err = -ENOMEM;
		goto out;
	}
	na = cb_values_in_boot(&g[gi], metric, boot, av);
	nb = cb_values_in_boot(b, metric, boot, bv);
	if (o->alpha > 0)
		co.alpha = o->alpha;
	if (o->threshold > 0)
		co.threshold = o->threshold;
	if (na > 0 && nb > 0) {
		err = cb_compare_samples(bv, nb, av, na, cb_metric_is_count(metric), &co, &l->c);
		if (!err) {
			l->has_ratio = true;
			l->ratio = l->c.change.est;
			l->rlo = l->c.change.lo;
			l->rhi = l->c.change.hi;
		}
	}
out:
	free(av);
	free(bv);
	return err;
}

bool cb_summary_line_noisy(const struct cb_summary_line *l)
{
	return l->s.cv > CB_NOISY_CV;
}

struct line_set {
	struct cb_summary_line *l;
	size_t n, cap;
};

static struct cb_summary_line *next_line(struct line_set *ls)
{
	struct cb_summary_line *l = cb_array_room(ls->l, &ls->cap, ls->n, sizeof(*l), 64);

	if (!l)
		return NULL;
	ls->l = l;
	return &ls->l[ls->n++];
}

/* One cell's line of metric m into l; 1 when measured, 0 when not, or an error. */
static int cell_line(const struct cb_row_group *g, size_t ng, size_t i, const struct cb_summarize_opts *o,
		     const char *m, struct cb_summary_line *l)
{
	double *v = malloc((g[i].n ? g[i].n : 1) * sizeof(*v));
	size_t nv;
	int err;

	if (!v)
		return -ENOMEM;
	*l = (struct cb_summary_line){ .key = g[i].key, .metric = m, .failed = g[i].failed, .group = &g[i], .verdict = "" };
	nv = cb_group_values(&g[i], m, v);
	err = nv ? cb_summarize(v, nv, &l->s) : 0;
	free(v);
	if (nv == 0 || err)
		return err; /* this metric is not measured in this cell */
	err = baseline_ratio(o, g, ng, i, m, l);
	if (!err && cb_summary_line_noisy(l)) {
		l->explained = cb_noise_explain(&g[i], g, ng, m, l->cause, sizeof(l->cause));
		err = l->explained < 0 ? l->explained : 0;
	}
	return err ? err : 1;
}

/* Every ratio of the output is one comparison of one set: p adjusted over all, then each verdict. */
static int judge_ratios(const struct cb_summarize_opts *o, struct line_set *ls)
{
	struct cb_compare_opts co = CB_COMPARE_DEFAULTS;
	struct cb_compare **set = malloc((ls->n + 1) * sizeof(*set));
	size_t k = 0;
	int err;

	if (!set)
		return -ENOMEM;
	if (o->alpha > 0)
		co.alpha = o->alpha;
	if (o->threshold > 0)
		co.threshold = o->threshold;
	for (size_t i = 0; i < ls->n; i++)
		if (ls->l[i].has_ratio)
			set[k++] = &ls->l[i].c;
	err = cb_compare_decide(set, k, CB_ADJUST_BH, &co);
	for (size_t i = 0; i < ls->n; i++) {
		const struct cb_compare *c = &ls->l[i].c;
		const struct cb_column *col = cb_column_find(ls->l[i].metric);
		bool up = c->change.ratio ? c->change.est > 1 : c->change.est > 0;

		if (!ls->l[i].has_ratio)
			continue;
		/* The column table knows where less is better; elsewhere a change has no direction. */
		if (!c->significant)
			ls->l[i].verdict = "~";
		else if (col && (col->flags & CB_COL_LOWER_BETTER))
			ls->l[i].verdict = up ? "worse" : "better";
		else
			ls->l[i].verdict = up ? "higher" : "lower";
	}
	free(set);
	return err;
}

int cb_summarize_cells(const struct cb_row_group *g, size_t ng, const struct cb_summarize_opts *o,
		       int (*fn)(void *arg, const struct cb_summary_line *l), void *arg)
{
	char *metrics = strdup(o->metrics), *save = NULL;
	struct line_set ls = { 0 };
	int err = metrics ? 0 : -ENOMEM;

	for (char *m = err ? NULL : strtok_r(metrics, ",", &save); m && !err; m = strtok_r(NULL, ",", &save))
		for (size_t i = 0; i < ng && !err; i++) {
			struct cb_summary_line *l = next_line(&ls);
			int rc = l ? cell_line(g, ng, i, o, m, l) : -ENOMEM;

			if (rc <= 0 && l)
				ls.n--;
			err = rc < 0 ? rc : 0;
		}
	if (!err)
		err = judge_ratios(o, &ls);
	for (size_t i = 0; i < ls.n && !err; i++)
		err = fn(arg, &ls.l[i]);
	free(ls.l);
	free(metrics);
	return err;
}
