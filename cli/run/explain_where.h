#ifndef COWBENCH_EXPLAIN_WHERE_H
#define COWBENCH_EXPLAIN_WHERE_H

#include <stdio.h>

/*
 * cowbench run --explain's "where" line, the run's counterpart of stat
 * --where: how many of the writer's COW copies (taskstats) landed in the
 * region mapping (pagemap). Medians over reps; NAN when not measured.
 * With pre-copy (precopied > 0, /proc/cow_stats) the region holds pages the
 * kernel copied ahead too, which no fault of the writer's counts.
 */
void cli_explain_where(FILE *fp, double region_copies, double writer_copies, double precopied);

#endif
