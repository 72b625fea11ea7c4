#ifndef COWBENCH_SUMMARIZE_H
#define COWBENCH_SUMMARIZE_H

/*
 * What cowbench summarize computes, for any front end: per cell and metric
 * the statistics of its reps (cb_summarize), the ratio to a baseline cell
 * with the engine's interval and test (cb_compare_samples, the same as
 * compare's), judged together over every ratio of the output (cb_compare_decide),
 * and for a noisy line what co-varied with it (cb_noise_explain). Printing is the caller's.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cowbench/compare.h>
#include <cowbench/repstats.h>

struct cb_summarize_opts {
	const char *metrics;      /* comma-separated numeric columns */
	const char *base_name;    /* --baseline NAME=VALUE (NULL: no ratios) */
	const char *base_value;
	double alpha;             /* false-discovery rate of the ratios' verdicts (0: 0.05) */
	double threshold;         /* minimum effect of a verdict (0: 0.05) */
};

/* One line: a cell, a metric, its statistics and optional ratio. */
struct cb_summary_line {
	const char *key, *metric; /* valid while the callback runs */
	size_t failed;
	struct cb_summary s;
	bool has_ratio;
	double ratio, rlo, rhi; /* c.change: a ratio, or a difference where a value is <= 0 (c.change.ratio false) */
	struct cb_compare c;    /* this cell against its baseline (old) cell, decided over the output's ratios */
	const char *verdict;    /* significant: "worse"/"better" than the baseline where less is better (CB_COL_LOWER_BETTER), else "higher"/"lower"; "~"; "" without a ratio */
	const struct cb_row_group *group;
	int explained;     /* noisy lines: 1 when cb_noise_explain found what co-varied, else 0 */
	char cause[512];   /* noisy lines: that cause, or that none was found */
};

/** Whether a line is noisy: its coefficient of variation above CB_NOISY_CV. */
bool cb_summary_line_noisy(const struct cb_summary_line *l);

/**
 * Every line, metric by metric and cell by cell in g's order (a metric a
 * cell did not measure gives none), all computed and their ratios judged
 * as one set before the first is handed to fn; fn's negative return stops
 * and is returned. 0, or -ENOMEM.
 */
int cb_summarize_cells(const struct cb_row_group *g, size_t ng, const struct cb_summarize_opts *o,
		       int (*fn)(void *arg, const struct cb_summary_line *l), void *arg);

#endif
