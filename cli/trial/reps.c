/*
 * How many reps a cell runs: a fixed --reps, or adaptive repetitions
 * (--target-ci with --max-reps/--max-time bounds, cowbench/adaptive.h).
 * cowbench run and cowbench matrix share this, so both stop alike.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/cowbench.h>
#include <cowbench/results.h>

#include "common/diag.h"
#include "trial/reps.h"

int cli_reps_check(struct cli_reps_opts *o, long reps)
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

int cli_reps_begin(struct cli_reps *r, const struct cli_reps_opts *o, long reps, const struct cb_workload *w)
{
	memset(r, 0, sizeof(*r));
	r->w = w;
	r->fixed = o->target > 0 ? 0 : reps;
	r->rule = (struct cb_adaptive){
		.target = o->target, .conf = 0.95, .min_reps = (size_t)(reps < 3 ? 3 : reps),
		.max_reps = (size_t)o->max_reps, .max_ns = o->max_ns,
	};
	r->cap = (size_t)(o->target > 0 ? o->max_reps : reps);
	r->v = malloc((r->cap ? r->cap : 1) * sizeof(*r->v));
	r->rv = malloc((r->cap ? r->cap : 1) * sizeof(*r->rv));
	r->rround = malloc((r->cap ? r->cap : 1) * sizeof(*r->rround));
	r->start_ns = cb_monotonic_ns();
	return r->v && r->rv && r->rround ? 0 : -ENOMEM;
}

void cli_reps_count(struct cli_reps *r, const struct cb_row *row)
{
	double v;

	r->reps++;
	if (cb_status_exit_code(row->status) != CB_EXIT_OK)
		return;
	if (r->n < r->cap && cb_row_headline(row, r->w, &v))
		r->v[r->n++] = v;
	if (r->ratio_metric && r->rn < r->cap && row->round != CB_NA && cb_row_number(row, r->ratio_metric, &v) &&
	    isfinite(v)) {
		r->rv[r->rn] = v;
		r->rround[r->rn++] = row->round;
	}
}

enum cb_stop cli_reps_judge(const struct cli_reps *r)
{
	if (r->fixed)
		return r->reps >= (size_t)r->fixed ? CB_STOP_MAX_REPS : CB_STOP_NO;
	return cb_adaptive_stop(&r->rule, r->v, r->n, r->reps, cb_monotonic_ns() - r->start_ns);
}

enum cb_stop cli_reps_judge_bounds(const struct cli_reps *r)
{
	struct cb_adaptive bounds = r->rule;

	if (r->fixed)
		return cli_reps_judge(r);
	bounds.target = 0;
	return cb_adaptive_stop(&bounds, r->v, r->n, r->reps, cb_monotonic_ns() - r->start_ns);
}

bool cli_reps_ratio_met(const struct cli_reps *num, const struct cli_reps *den, double target,
			size_t *pairs)
{
	struct cb_round_values a = { num->rv, num->rround, num->rn }, b = { den->rv, den->rround, den->rn };

	return cb_adaptive_ratio_met(&a, &b, target, num->rule.min_reps, pairs);
}

void cli_reps_mark(const struct cli_reps *r, enum cb_stop s, struct cb_row *row)
{
	/* Fixed reps are the plan, not a decision: the column stays empty. */
	snprintf(row->stop, sizeof(row->stop), "%s", r->fixed ? "" : cb_stop_name(s));
}

void cli_reps_end(struct cli_reps *r)
{
	free(r->v);
	free(r->rv);
	free(r->rround);
	r->v = r->rv = NULL;
	r->rround = NULL;
}
