#ifndef COWBENCH_REPSTATS_H
#define COWBENCH_REPSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Statistics of one cell's repetitions: what `cowbench summarize` prints.
 * The centre and its interval come from the engine (cowbench/estimate.h);
 * median, mean, stddev and CV describe the sample and are no interval.
 */

#define CB_NOISY_CV 0.10 /* a cell whose coefficient of variation exceeds this is flagged */

struct cb_summary {
	size_t n;
	double median;     /* middle value (mean of the two middle ones for even n) */
	double mean;
	double stddev;     /* sample standard deviation (n - 1); NAN for n < 2 */
	double centre;     /* Hodges-Lehmann estimate (cb_estimate; on logs when every value > 0) */
	double ci_lo, ci_hi; /* its interval, at least 95 % where n allows; NAN for n < 2 */
	double ci_level;   /* that interval's exact coverage (0.9375 at n = 5); NAN for n < 2 */
	double cv;         /* stddev / mean; NAN for n < 2 or mean 0 */
	size_t outliers;   /* outside Tukey's fences: [Q1 - 1.5 IQR, Q3 + 1.5 IQR] */
};

/** Summarise v[0..n) (v is left unchanged). -EINVAL when n == 0. */
int cb_summarize(const double *v, size_t n, struct cb_summary *out);

/* ---- rows grouped by cell ---- */

#define CB_ROW_KEY_LEN 512 /* a row's identity (cb_row_key): its cell and identity columns */

struct cb_row;

struct cb_row_group {
	char key[CB_ROW_KEY_LEN];   /* cb_row_key() of its rows, less the pairs after the cell every group shares */
	const struct cb_row **rows; /* rows whose status is ok */
	size_t n;
	size_t failed;              /* rows with another status (not in rows[]) */
};

/**
 * Group rows by cell key, in natural key order ("size=16M" before
 * "size=128M"). The groups point into rows[]: keep it alive.
 */
int cb_group_rows(const struct cb_row *rows, size_t n, struct cb_row_group **out, size_t *ngroups);
/**
 * A row's identity for grouping: write its key into buf, set *cell_len to
 * the length of its leading cell part (never trimmed), and return true;
 * or return false to leave the row out (e.g. rows of another side of a
 * comparison).
 */
typedef bool (*cb_row_key_fn)(const struct cb_row *row, char *buf, size_t len, size_t *cell_len, void *ctx);
/** cb_group_rows with the identity of key(); cb_group_rows uses cb_row_key(). */
int cb_group_rows_by(const struct cb_row *rows, size_t n, cb_row_key_fn key, void *ctx, struct cb_row_group **out,
		     size_t *ngroups);
void cb_row_groups_free(struct cb_row_group *g, size_t n);
/** The measured values of a numeric column in a group (out[] has room for g->n); returns how many. */
size_t cb_group_values(const struct cb_row_group *g, const char *column, double *out);

/**
 * Ratios and pairs mean something only inside one boot (emulated guests
 * drift from boot to boot): the boot both groups have rows of, with the
 * most of a's rows; NULL when none.
 */
const char *cb_shared_boot(const struct cb_row_group *a, const struct cb_row_group *b);
/** g's values of column from rows of boot; returns how many. */
size_t cb_values_in_boot(const struct cb_row_group *g, const char *column, const char *boot, double *out);
/**
 * The reps of a and b that ran in one round of an interleaved matrix
 * (the round column) in boot, side by side: a's column_a into av, b's
 * column_b into bv (each as large as a's rows); returns the pairs. 0 when
 * a round id repeats in either (rows of two runs on one boot): those
 * rounds were not side by side.
 */
size_t cb_round_pairs(const struct cb_row_group *a, const char *column_a, const struct cb_row_group *b,
		      const char *column_b, const char *boot, double *av, double *bv);
/** strcmp with runs of digits compared as numbers, and K/M/G/T size suffixes honoured. */
int cb_natural_cmp(const char *a, const char *b);

#endif
