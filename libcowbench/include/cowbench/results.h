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

struct cb_text_pool;

struct cb_results {
	struct cb_row *rows;
	size_t n;
	struct cb_text_pool *texts; /* what the rows' CB_COL_REF cells refer to: freed with them */
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

/**
 * Parse text into the row's column (empty = not measured); CB_EFORMAT when
 * it does not parse. A CB_COL_REF column is pointed at text itself: the
 * caller keeps text as long as the row is used.
 */
int cb_row_set(struct cb_row *row, const struct cb_column *c, const char *text);
/** The matrix axis (run option) that sets a column where the names differ: "size" for size_bytes, "thp" for thp_advice, "break" for break_mode; else the column's own name. */
const char *cb_column_axis(const char *column);

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

/**
 * The row records a rep that a guest never ran (status error:guest:*: no
 * image, a timeout, a guest that died): kept as the record of the failure,
 * not a measurement; --resume runs the rep again.
 */
bool cb_row_guest_failed(const struct cb_row *row);

/** What makes two rows one rep (cb_rows_find_duplicate). */
enum cb_dup_rule {
	CB_DUP_CONFIG_REP,  /* same configuration and rep: merge (the shards of one matrix) */
	CB_DUP_MEASUREMENT, /* and equal in every column: one measurement given twice */
};

/**
 * The first rep present twice among rows[0..n) by rule: same cb_row_key,
 * rep and rep kind (timed and evidence reps are numbered apart), and for
 * CB_DUP_MEASUREMENT equal in every other column too (two runs of one
 * configuration pool; one row given twice does not). Rows of a failed
 * guest (cb_row_guest_failed) are left out: a resumed file holds them
 * beside the rep's rerun. Returns 1 with the two indexes (*first <
 * *second), 0 when every rep is there once, -ENOMEM.
 */
int cb_rows_find_duplicate(const struct cb_row *rows, size_t n, enum cb_dup_rule rule, size_t *first,
			   size_t *second);

#endif
