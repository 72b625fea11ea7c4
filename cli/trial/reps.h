/* How many reps a cell runs, as the options give it (reps.c); the rule itself: cowbench/reploop.h. */
#ifndef COWBENCH_CLI_REPS_H
#define COWBENCH_CLI_REPS_H

#include <cowbench/reploop.h>

#define CLI_DEFAULT_MAX_REPS 50 /* --target-ci without --max-reps */

/* Bounds need a target; a target fills in the default rep bound. -1 after printing why. */
int cli_reps_check(struct cb_reps_opts *o, long reps);

#endif
