/* cowbench plot's charts: write cost and fork (plot_write_cost.c), distributions, write order and pre-copy trade-off (plot_dists.c). */
#ifndef COWBENCH_CLI_PLOT_CHARTS_H
#define COWBENCH_CLI_PLOT_CHARTS_H

#include <stdbool.h>
#include <stdio.h>

#include <cowbench/repstats.h>

#include "plot_data.h"

/* Called for every plot written: its name (DIR/NAME.png) and a caption for the report. */
typedef void (*plot_made_fn)(void *arg, const char *name, const char *caption);

/** Whether the workload's rows carry lat_hist, so dist_WL replaces the six-point cdf_WL. */
bool plot_dist_covers(const struct cb_row_group *g, size_t ng, const char *workload);
/** dist_WL per workload with histograms: a CDF of every write per cell, and its tail (1 - CDF, log). */
int plot_dists(const char *dir, const struct cb_row_group *g, size_t ng, plot_made_fn made, void *arg);
/**
 * Check a --samples file before anything is written: its header and every
 * line. 0, or -1 after one line on stderr.
 */
int plot_samples_check(const char *path);
/** index_N: latency against write index from the N-th --samples file. */
int plot_index(const char *dir, const char *const *samples, int n, plot_made_fn made, void *arg);
/** tradeoff: per cell and pre-copy mode, faults saved against copies wasted, memory and p99. */
int plot_tradeoff(const char *dir, const struct cb_row_group *g, size_t ng, plot_made_fn made, void *arg);
/**
 * cost, the first plot: per cell, a write after fork against the same write
 * without (median ns per write with the median's 95 % CI), and their ratio
 * with its 95 % CI, paired by round where the rows carry rounds (plot_write_cost.c).
 */
int plot_write_cost(const char *dir, const struct cb_row_group *g, size_t ng, plot_made_fn made, void *arg);
/** fork: fork() latency against size per method, median with the median's 95 % CI (plot_write_cost.c). */
int plot_fork(const char *dir, const struct cb_row_group *g, size_t ng, plot_made_fn made, void *arg);
/** The report's table of the same (nothing when no cell has a --no-fork twin). */
void plot_write_cost_report(FILE *fp, const struct cb_row_group *g, size_t ng);
/** The report's pre-copy trade-off table (nothing when no cell has pre-copy on and off). */
void plot_tradeoff_report(FILE *fp, const struct cb_row_group *g, size_t ng);

#endif
