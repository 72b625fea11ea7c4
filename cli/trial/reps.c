/*
 * How many reps a cell runs, as the options give it: a fixed --reps, or
 * adaptive repetitions (--target-ci with --max-reps/--max-time bounds).
 * The rule that applies them is the repetition loop's (cowbench/reploop.h),
 * so cowbench run and cowbench matrix stop alike.
 */
#define _GNU_SOURCE
#include <cowbench/cowbench.h>

#include "common/diag.h"
#include "trial/reps.h"

int cli_reps_check(struct cb_reps_opts *o, long reps)
{
	if (o->target <= 0) {
		if (o->max_reps || o->max_ns) {
			cli_error("--max-reps and --max-time bound --target-ci: give --target-ci too (or use --reps)");
			return -1;
		}
		return 0;
	}
	if (!o->max_reps)
		o->max_reps = CLI_DEFAULT_MAX_REPS;
	if (o->max_reps < reps) {
		cli_error("--max-reps=%ld is below --reps=%ld (with --target-ci, --reps is the least a cell runs)",
			  o->max_reps, reps);
		return -1;
	}
	return 0;
}
