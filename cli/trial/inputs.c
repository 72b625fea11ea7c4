#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include <cowbench/cowbench.h>
#include <cowbench/results.h>
#include <cowbench/repstats.h>

#include "common/diag.h"
#include "trial/axis_values.h"
#include "trial/inputs.h"

/*
 * The one reader of several result files, for merge, summarize and plot:
 * every file is read and checked before any output; a torn last row (a
 * run cut short) is noted and left out; anything else malformed stops it.
 */
int cli_inputs_read(struct cli_inputs *in, int nfiles, char **files)
{
	char why[512];

	memset(in, 0, sizeof(*in));
	in->files = files;
	in->nfiles = nfiles;
	in->res = calloc((size_t)nfiles, sizeof(*in->res));
	if (!in->res) {
		cli_error("out of memory");
		return -1;
	}
	for (int f = 0; f < nfiles; f++) {
		struct cb_row *nr;

		if (cb_results_read(files[f], &in->res[f], why, sizeof(why)) < 0) {
			cli_error("%s", why);
			return -1;
		}
		if (in->res[f].torn)
			cli_note("%s: its last row is half-written (a run cut short): left out", files[f]);
		if (in->res[f].n == 0)
			continue;
		for (size_t i = 0; i < in->res[f].n; i++) /* size=4096K and size=4M: one configuration */
			cli_canonical_cell(in->res[f].rows[i].cell, sizeof(in->res[f].rows[i].cell));
		if (!in->rows) { /* the first file's rows become the array as they are */
			in->rows = in->res[f].rows;
			in->nrows = in->res[f].n;
			in->res[f].rows = NULL;
			continue;
		}
		nr = realloc(in->rows, (in->nrows + in->res[f].n) * sizeof(*nr));
		if (!nr) {
			cli_error("out of memory");
			return -1;
		}
		in->rows = nr;
		memcpy(in->rows + in->nrows, in->res[f].rows, in->res[f].n * sizeof(*nr));
		in->nrows += in->res[f].n;
		/* Moved, not copied: one copy of every row (their texts stay in the file's pool, res[f].texts). */
		free(in->res[f].rows);
		in->res[f].rows = NULL;
	}
	return 0;
}

/* The file rows[i] came from. */
static const char *file_of(const struct cli_inputs *in, size_t i)
{
	for (int f = 0; f < in->nfiles; f++) {
		if (i < in->res[f].n)
			return in->files[f];
		i -= in->res[f].n;
	}
	return "?";
}

int cli_inputs_check_duplicates(const struct cli_inputs *in, enum cb_dup_rule rule)
{
	size_t a, b;
	int rc = cb_rows_find_duplicate(in->rows, in->nrows, rule, &a, &b);
	const struct cb_row *row;
	char key[CB_ROW_KEY_LEN];

	if (rc < 0)
		cli_error("out of memory");
	if (rc <= 0)
		return rc;
	row = &in->rows[b];
	cb_row_key(row, key, sizeof(key));
	if (strcmp(file_of(in, a), file_of(in, b)) == 0)
		cli_error("duplicate cell: '%s' %srep %lld appears twice in %s%s", key, cb_row_is_evidence(row) ? "evidence " : "",
			  (long long)row->rep, file_of(in, b), rule == CB_DUP_MEASUREMENT ? " (the same measurement: every column equal)" : "");
	else
		cli_error("duplicate cell: '%s' %srep %lld is in both %s and %s%s", key,
			  cb_row_is_evidence(row) ? "evidence " : "", (long long)row->rep, file_of(in, a), file_of(in, b),
			  rule == CB_DUP_MEASUREMENT ? " (the same measurement: every column equal)" : "");
	return -1;
}

void cli_inputs_free(struct cli_inputs *in)
{
	for (int f = 0; in->res && f < in->nfiles; f++)
		cb_results_free(&in->res[f]);
	free(in->res);
	free(in->rows);
	memset(in, 0, sizeof(*in));
}

/*
 * The texts the rows refer to (CB_COL_REF: lat_hist), copied behind the rows
 * in their own allocation, so that freeing the rows frees them and the
 * files' pools can go.
 */
static int own_texts(struct cb_row **rows, size_t n)
{
	size_t ncols, total = 0, at = n * sizeof(**rows);
	const struct cb_column *cols = cb_columns(&ncols);
	struct cb_row *nr;

	for (size_t i = 0; i < n; i++)
		for (size_t c = 0; c < ncols; c++)
			if (cols[c].flags & CB_COL_REF && *cb_row_text(&(*rows)[i], &cols[c]))
				total += strlen(cb_row_text(&(*rows)[i], &cols[c])) + 1;
	if (total == 0)
		return 0;
	nr = realloc(*rows, at + total);
	if (!nr)
		return -1;
	*rows = nr;
	for (size_t i = 0; i < n; i++)
		for (size_t c = 0; c < ncols; c++) {
			const char *text = cb_row_text(&nr[i], &cols[c]);
			char *copy = (char *)nr + at;

			if (!(cols[c].flags & CB_COL_REF) || !*text)
				continue;
			memcpy(copy, text, strlen(text) + 1);
			at += strlen(text) + 1;
			memcpy((char *)&nr[i] + cols[c].offset, &copy, sizeof(copy));
		}
	return 0;
}

/* The rows of every file in one array (compare, summarize): an error when there are none. */
int cli_read_rows(int nfiles, char **files, struct cb_row **rows, size_t *n)
{
	struct cli_inputs in;
	int rc = cli_inputs_read(&in, nfiles, files);

	if (rc == 0)
		rc = cli_inputs_check_duplicates(&in, CB_DUP_MEASUREMENT);
	if (rc == 0 && in.nrows == 0) {
		cli_error("no result rows in %s%s", files[0], nfiles > 1 ? " and the other files" : "");
		rc = -1;
	}
	if (rc == 0 && own_texts(&in.rows, in.nrows) < 0) {
		cli_error("out of memory");
		rc = -1;
	}
	*rows = in.rows;
	*n = in.nrows;
	in.rows = NULL;
	cli_inputs_free(&in);
	return rc;
}
