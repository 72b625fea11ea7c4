/* compare: which cells of the two sides are one configuration (compare_match.h). */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/report.h>
#include <cowbench/results.h>
#include <cowbench/stats.h>

#include "compare_match.h"

static bool is_identity(const struct cb_column *c)
{
	return (c->flags & (CB_COL_IDENTITY | CB_COL_IDENTITY_LEGACY)) != 0;
}

bool *cm_constant_columns(const struct cb_row_group *g, size_t ng)
{
	size_t ncols;
	const struct cb_column *cols = cb_columns(&ncols);
	bool *constant = calloc(ncols + 1, sizeof(*constant));
	const struct cb_row *first = NULL;

	if (!constant)
		return NULL;
	for (size_t i = 0; i < ng && !first; i++)
		first = g[i].n ? g[i].rows[0] : NULL;
	for (size_t c = 0; c < ncols && first; c++) {
		char want[256], v[256];

		if (!is_identity(&cols[c]))
			continue;
		cb_row_format(first, &cols[c], want, sizeof(want));
		constant[c] = true;
		for (size_t i = 0; i < ng && constant[c]; i++)
			for (size_t r = 0; r < g[i].n && constant[c]; r++) {
				cb_row_format(g[i].rows[r], &cols[c], v, sizeof(v));
				constant[c] = strcmp(v, want) == 0;
			}
	}
	return constant;
}

/*
 * Columns that say where a file was measured rather than what: the kernel
 * release, the pre-copy settings it ran with, the clock and CPU it chose
 * (--clock=auto, --pin=auto) and whether THP was allowed there. Two files
 * may differ in these at one value each (that is what they compare); a
 * workload, size, writer, fork, seed or workload option that differs is
 * another configuration, never a partner.
 */
static bool environment_column(const char *name)
{
	static const char *const env[] = { "kernel", "precopy", "precopy_depth", "clock", "cpu", "thp" };

	for (size_t i = 0; i < sizeof(env) / sizeof(env[0]); i++)
		if (strcmp(name, env[i]) == 0)
			return true;
	return false;
}

/* Columns whose empty value is a setting, not "not applicable": break by fault, no NUMA placement. */
static bool empty_is_a_value(const char *name)
{
	return strcmp(name, "break_mode") == 0 || strcmp(name, "numa_policy") == 0;
}

/* A workload's options ("threads=4 method=fork") less the pair of the --by axis, in place. */
static void options_without(char *opts, const char *by)
{
	size_t bl = strlen(by), o = 0;

	for (char *p = opts; *p;) {
		size_t n = strcspn(p, " ");

		if (!(n > bl && strncmp(p, by, bl) == 0 && p[bl] == '=')) {
			if (o)
				opts[o++] = ' ';
			memmove(opts + o, p, n);
			o += n;
		}
		p += n;
		while (*p == ' ')
			p++;
	}
	opts[o] = '\0';
}

bool cm_groups_agree(const struct cb_row_group *a, const struct cb_row_group *b, const bool *old_constant,
		     const bool *new_constant, const char *by)
{
	size_t ncols;
	const struct cb_column *cols = cb_columns(&ncols);

	if (!a->n || !b->n)
		return true; /* no row to tell: the keys decide */
	for (size_t c = 0; c < ncols; c++) {
		char va[256], vb[256];

		if (!is_identity(&cols[c]) || (by && by[0] && (strcmp(cols[c].name, by) == 0 ||
							       strcmp(cb_column_axis(cols[c].name), by) == 0)))
			continue;
		cb_row_format(a->rows[0], &cols[c], va, sizeof(va));
		cb_row_format(b->rows[0], &cols[c], vb, sizeof(vb));
		if (by && by[0] && strcmp(cols[c].name, "options") == 0) {
			options_without(va, by);
			options_without(vb, by);
		}
		if (strcmp(va, vb) == 0 || ((!va[0] || !vb[0]) && !empty_is_a_value(cols[c].name)))
			continue;
		if (old_constant && new_constant && old_constant[c] && new_constant[c] && environment_column(cols[c].name))
			continue;
		return false;
	}
	return true;
}

/* ---- the conditions each side ran under ---- */

/* The median of column col over g's rows that have it (divided by elapsed_ns where per_elapsed); NAN when none. */
static double condition_median(const struct cb_row_group *g, const char *col, bool per_elapsed)
{
	double *v = malloc((g->n + 1) * sizeof(*v)), m = NAN;
	size_t n = 0;

	for (size_t i = 0; v && i < g->n; i++) {
		double x, e;

		if (!cb_row_number(g->rows[i], col, &x))
			continue;
		if (per_elapsed && !(cb_row_number(g->rows[i], "elapsed_ns", &e) && e > 0))
			continue;
		v[n++] = per_elapsed ? x / e : x;
	}
	if (n) {
		qsort(v, n, sizeof(*v), cb_cmp_double);
		m = cb_quantile_sorted(v, n, 0.5);
	}
	free(v);
	return m;
}

/* Append "what" to out (comma-separated). */
static void add_condition(char *out, size_t len, const char *what)
{
	size_t at = strlen(out);

	if (at + strlen(what) + 3 < len)
		snprintf(out + at, len - at, "%s%s", at ? ", " : "", what);
}

void cm_conditions(const struct cb_row_group *a, const struct cb_row_group *b, const char *by, char *out, size_t len)
{
	/* Shares of the rep's wall time: steal on the machine and the writer's wait for a CPU. */
	static const struct {
		const char *col, *name;
	} shares[] = { { "steal_ns", "steal" }, { "run_delay_ns", "run-queue wait" } };
	char what[96];
	double x, y;

	out[0] = '\0';
	if (!a->n || !b->n)
		return;
	/* Runnable tasks (runq): a whole task more on the median rep is another load. */
	x = condition_median(a, "runq", false);
	y = condition_median(b, "runq", false);
	if (fabs(x - y) >= 1) {
		snprintf(what, sizeof(what), "load (runq %g -> %g)", x, y);
		add_condition(out, len, what);
	}
	for (size_t i = 0; i < sizeof(shares) / sizeof(shares[0]); i++) {
		x = condition_median(a, shares[i].col, true);
		y = condition_median(b, shares[i].col, true);
		if (fabs(x - y) >= 0.05) { /* 5 points of the rep's wall time */
			snprintf(what, sizeof(what), "%s (%.0f %% -> %.0f %% of the rep)", shares[i].name, x * 100, y * 100);
			add_condition(out, len, what);
		}
	}
	/* The machine-speed probe: the same fixed work, 10 % slower or faster. */
	x = condition_median(a, "ref_ns", false);
	y = condition_median(b, "ref_ns", false);
	if (x > 0 && y > 0 && fabs(y / x - 1) >= 0.10) {
		snprintf(what, sizeof(what), "machine speed (ref_ns %+.0f %%)", (y / x - 1) * 100);
		add_condition(out, len, what);
	}
	if (strcmp(a->rows[0]->cpu_model, b->rows[0]->cpu_model) != 0 && (!by || strcmp(by, "cpu_model") != 0))
		add_condition(out, len, "CPU model");
	if (strcmp(a->rows[0]->kernel, b->rows[0]->kernel) != 0 && (!by || strcmp(by, "kernel") != 0))
		add_condition(out, len, "kernel");
}
