#ifndef COWBENCH_CLI_COMPARE_INT_H
#define COWBENCH_CLI_COMPARE_INT_H

/*
 * What cowbench compare computes (cmd_compare.c) and prints
 * (compare_print.c): the options, the two sides of each comparison and
 * one line per cell and metric.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cowbench/compare.h>
#include <cowbench/matrix.h>
#include <cowbench/repstats.h>
#include <cowbench/report.h>
#include <cowbench/output.h>

#define MAX_METRICS 32

struct cmp_opts {
	char metric[MAX_METRICS][48]; /* --metric, split at commas */
	size_t nmetric;
	char by[64];      /* --by=AXIS: compare values of AXIS inside the files; "" = two files */
	char by_base[64]; /* --by=AXIS=VALUE: the baseline value; "" = the first in natural order */
	double alpha;
	double threshold;  /* --threshold as a fraction (0.05) */
	enum cb_p_adjust correction;
	double fail_above; /* percent; < 0 when not given */
	enum cb_format format;
	const char *columns; /* --columns: the table's */
	const char *output;
	bool force, quiet;
};

struct side {
	char label[CB_ROW_KEY_LEN + 72]; /* the file, or AXIS=VALUE */
	char value[CB_ROW_KEY_LEN]; /* --by: this side's value of the axis */
	struct cb_row_group *g;
	size_t ng;
	bool *constant; /* per column: one value on every row of the side (compare_match.h) */
};

enum present { BOTH, OLD_ONLY, NEW_ONLY };

struct line {
	const struct side *old, *new_;
	const char *cell, *metric; /* metric NULL: a cell on one side only, or with no common metric */
	enum present present;
	size_t failed_old, failed_new;
	struct cb_compare c;
	const char *verdict; /* ~ better worse changed only-old only-new no-data */
	double change, change_lo, change_hi; /* percent; NAN when the old centre is 0 */
	char conditions[160]; /* how the two sides' recorded conditions differ (load, steal, CPU, kernel); "" when alike */
};

struct lines {
	struct line *l;
	size_t n, cap;
	size_t compared; /* lines with a metric compared on both sides: the set the correction spans */
};

/** A compared line's fields (cowbench/output.h): CSV, JSON and the table's columns. */
extern const struct cb_field cmp_fields[];
extern const size_t cmp_nfields;

/** Print the comparison in o->format; returns how many metrics got worse beyond --fail-above. */
size_t cmp_print_lines(FILE *fp, const struct cmp_opts *o, const struct lines *ls);
/** One line on stderr per metric that got worse beyond --fail-above. */
void cmp_report_regressions(const struct cmp_opts *o, const struct lines *ls);

#endif
