#ifndef COWBENCH_EXPLAIN_WHERE_H
#define COWBENCH_EXPLAIN_WHERE_H

#include <stdio.h>

/*
 * cowbench run --explain's "where" line, the run's counterpart of stat
 * --where: how many of the writer's COW copies (taskstats) landed in the
 * region mapping (pagemap). Means over reps; NAN when not measured.
 */
void cli_explain_where(FILE *fp, double region_copies, double writer_copies);

#endif
