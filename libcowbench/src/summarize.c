/* cowbench summarize's lines, computed (cowbench/summarize.h); the CLI prints them. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/compare.h>
#include <cowbench/matrix.h>
#include <cowbench/noise.h>
#include <cowbench/order.h>
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
 * The ratio of this cell to its baseline cell (same key, NAME=VALUE) measured in the same boot:
 * over the reps of the same rounds where NAME is an axis matrix --order interleaves, else unpaired.
 */
static void baseline_ratio(const struct cb_summarize_opts *o, const struct cb_row_group *g, size_t ng, size_t gi,
			   const char *metric, struct cb_summary_line *l)
{
	char bkey[CB_ROW_KEY_LEN];
	const struct cb_row_group *b;
	const char *boot;
	double *av, *bv;
	size_t na, nb;

	if (!o->base_name || !cb_key_replace(g[gi].key, o->base_name, o->base_value, bkey, sizeof(bkey)) ||
	    strcmp(bkey, g[gi].key) == 0)
		return; /* no such axis here, or this is the baseline itself */
	b = find_group(g, ng, bkey);
	if (!b)
		b = collapsed_baseline(o, g, ng, g[gi].key);
	if (!b || b->n == 0 || !(boot = cb_shared_boot(&g[gi], b)))
		return;
	av = malloc(g[gi].n * sizeof(*av));
	bv = malloc(b->n * sizeof(*bv));
	if (av && bv && cb_order_compared_axis(o->base_name)) {
		double *pb = malloc(g[gi].n * sizeof(*pb));
		size_t np = pb ? cb_round_pairs(&g[gi], metric, b, metric, boot, av, pb) : 0;

		if (np >= 2 && cb_boot_ratio_ci_paired(av, pb, np, o->ratio_center, 0.95, CB_BOOTSTRAP_RESAMPLES, o->seed,
						       &l->ratio, &l->rlo, &l->rhi) == 0) {
			l->has_ratio = true;
			l->pairs = np;
		}
		free(pb);
	}
	if (av && bv && !l->has_ratio) {
		na = cb_values_in_boot(&g[gi], metric, boot, av);
		nb = cb_values_in_boot(b, metric, boot, bv);
		if (na > 0 && nb > 0 &&
		    cb_boot_ratio_ci(av, na, bv, nb, o->ratio_center, 0.95, CB_BOOTSTRAP_RESAMPLES, o->seed, &l->ratio,
				     &l->rlo, &l->rhi) == 0)
			l->has_ratio = true;
	}
	free(av);
	free(bv);
}

bool cb_summary_line_noisy(const struct cb_summary_line *l)
{
	return l->s.cv > CB_NOISY_CV;
}

int cb_summarize_cells(const struct cb_row_group *g, size_t ng, const struct cb_summarize_opts *o,
		       int (*fn)(void *arg, const struct cb_summary_line *l), void *arg)
{
	char *metrics = strdup(o->metrics), *save = NULL;
	struct cb_summary_line *l = malloc(sizeof(*l));
	int err = metrics && l ? 0 : -ENOMEM;

	for (char *m = err ? NULL : strtok_r(metrics, ",", &save); m && !err; m = strtok_r(NULL, ",", &save)) {
		for (size_t i = 0; i < ng && !err; i++) {
			double *v = malloc((g[i].n ? g[i].n : 1) * sizeof(*v));
			size_t nv;

			if (!v) {
				err = -ENOMEM;
				break;
			}
			*l = (struct cb_summary_line){ .key = g[i].key, .metric = m, .failed = g[i].failed, .group = &g[i] };
			nv = cb_group_values(&g[i], m, v);
			if (nv == 0 || cb_summarize(v, nv, o->seed, &l->s) < 0) {
				free(v);
				continue; /* this metric is not measured in this cell */
			}
			baseline_ratio(o, g, ng, i, m, l);
			free(v);
			if (cb_summary_line_noisy(l)) {
				l->explained = cb_noise_explain(&g[i], g, ng, m, l->cause, sizeof(l->cause));
				if (l->explained < 0) {
					err = l->explained;
					break;
				}
			}
			err = fn(arg, l);
		}
	}
	free(l);
	free(metrics);
	return err;
}
