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
		if (!va[0] || !vb[0] || strcmp(va, vb) == 0)
			continue;
		if (old_constant && new_constant && old_constant[c] && new_constant[c])
			continue;
		return false;
	}
	return true;
}
