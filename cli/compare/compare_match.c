/* compare: which cells of the two sides are one configuration (compare_match.h). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include <cowbench/report.h>

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

bool cm_groups_agree(const struct cb_row_group *a, const struct cb_row_group *b, const bool *old_constant,
		     const bool *new_constant, const char *by)
{
	size_t ncols;
	const struct cb_column *cols = cb_columns(&ncols);

	if (!a->n || !b->n)
		return true; /* no row to tell: the keys decide */
	for (size_t c = 0; c < ncols; c++) {
		char va[256], vb[256];

		if (!is_identity(&cols[c]) || (by && by[0] && strcmp(cols[c].name, by) == 0))
			continue;
		cb_row_format(a->rows[0], &cols[c], va, sizeof(va));
		cb_row_format(b->rows[0], &cols[c], vb, sizeof(vb));
		if (strcmp(va, vb) == 0 || ((!va[0] || !vb[0]) && !empty_is_a_value(cols[c].name)))
			continue;
		if (old_constant && new_constant && old_constant[c] && new_constant[c] && environment_column(cols[c].name))
			continue;
		return false;
	}
	return true;
}
