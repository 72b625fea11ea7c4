#ifndef COWBENCH_RESULTS_H
#define COWBENCH_RESULTS_H

#include <stdbool.h>
#include <stddef.h>

#include <cowbench/report.h>

/*
 * Reading result CSVs back into rows, by column name through the column
 * table (cb_columns), for --resume, merge, summarize and plot.
 */

/** Columns every results file must have. */
#define CB_RESULTS_REQUIRED "schema", "workload", "size_bytes", "fork", "rep", "status"

struct cb_results {
	struct cb_row *rows;
	size_t n;
	bool torn;           /* the last record had no line end (a write cut short) and was dropped */
	long torn_offset;    /* file offset where that record starts: truncate here to repair */
	bool same_columns;   /* the header is exactly this build's column table */
	bool empty;          /* the file had no header at all (zero bytes) */
	size_t unknown;      /* header columns this build does not know (ignored) */
	char unknown_first[64]; /* the first of them, for messages */
};

/**
 * Read a results CSV. A zero-byte file is an empty result (empty = true).
 * Errors: CB_EFORMAT with why[] = "FILE: reason" (not a cowbench CSV,
 * another schema version, a missing required column, a malformed record),
 * or -errno when unreadable.
 */
int cb_results_read(const char *path, struct cb_results *res, char *why, size_t len);
void cb_results_free(struct cb_results *res);

/** Parse text into the row's column (empty = not measured); CB_EFORMAT when it does not parse. */
int cb_row_set(struct cb_row *row, const struct cb_column *c, const char *text);
/**
 * A numeric column by name; false when unknown, a string column, not
 * measured, or a timed column of an evidence rep (cb_row_counts).
 */
bool cb_row_number(const struct cb_row *row, const char *name, double *out);

/**
 * The row's identity: its `cell` column (a matrix row), then NAME=VALUE
 * for every identity column (CB_COL_IDENTITY) the cell does not already
 * name, the workload's options spelled out as their own pairs. Columns
 * left empty are left out: no sentinel numbers. Rows of one configuration
 * have one key; rows differing in any option, seed, cpu, THP setting,
 * NUMA policy, pre-copy setting or kernel have different keys.
 */
void cb_row_key(const struct cb_row *row, char *buf, size_t len);

#endif
