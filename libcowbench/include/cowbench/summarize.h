#ifndef COWBENCH_SUMMARIZE_H
#define COWBENCH_SUMMARIZE_H

/*
 * What cowbench summarize computes, for any front end: per cell and metric
 * the statistics of its reps (cb_summarize), the ratio to a baseline cell
 * with a 95 % bootstrap interval (paired by round where the baseline's axis
 * is one matrix --order interleaves), and for a noisy line what co-varied
 * with it (cb_noise_explain). Printing is the caller's.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cowbench/compare.h> /* enum cb_center */
#include <cowbench/summary.h>

struct cb_summarize_opts {
	const char *metrics;      /* comma-separated numeric columns */
	const char *base_name;    /* --baseline NAME=VALUE (NULL: no ratios) */
	const char *base_value;
	enum cb_center ratio_center; /* mean or trimmed */
	uint64_t seed;            /* of the bootstraps: the same input, the same intervals */
};

/* One line: a cell, a metric, its statistics and optional ratio. */
struct cb_summary_line {
	const char *key, *metric; /* valid while the callback runs */
	size_t failed;
	struct cb_summary s;
	bool has_ratio;
	double ratio, rlo, rhi;
	size_t pairs;      /* the ratio pairs reps of the same round (matrix --order); 0: unpaired */
	const struct cb_row_group *group;
	int explained;     /* noisy lines: 1 when cb_noise_explain found what co-varied, else 0 */
	char cause[512];   /* noisy lines: that cause, or that none was found */
};

/** Whether a line is noisy: its coefficient of variation above CB_NOISY_CV. */
bool cb_summary_line_noisy(const struct cb_summary_line *l);

/**
 * Every line, metric by metric and cell by cell in g's order (a metric a
 * cell did not measure gives none), each handed to fn; fn's negative
 * return stops and is returned. 0, or -ENOMEM.
 */
int cb_summarize_cells(const struct cb_row_group *g, size_t ng, const struct cb_summarize_opts *o,
		       int (*fn)(void *arg, const struct cb_summary_line *l), void *arg);

#endif
