/*
 * The repetition loop (cowbench/reploop.h): how many reps a cell runs (a
 * fixed count, or adaptive repetitions with bounds, cowbench/adaptive.h),
 * and the loop that runs them for cowbench run and cowbench matrix alike,
 * so both stop, warm up, switch delay accounting and run evidence reps
 * the same way.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cowbench/clock.h>
#include <cowbench/error.h>
#include <cowbench/evidence.h>
#include <cowbench/order.h>
#include <cowbench/reploop.h>
#include <cowbench/results.h>
#include <cowbench/run.h>
#include <cowbench/sysctl.h>
#include <cowbench/taskstats.h>

/* ---- how many reps a cell runs ---- */

int cb_reps_begin(struct cb_reps *r, const struct cb_reps_opts *o, long reps, const struct cb_workload *w)
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

void cb_reps_count(struct cb_reps *r, const struct cb_row *row)
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

enum cb_stop cb_reps_judge(const struct cb_reps *r)
{
	if (r->fixed)
		return r->reps >= (size_t)r->fixed ? CB_STOP_MAX_REPS : CB_STOP_NO;
	return cb_adaptive_stop(&r->rule, r->v, r->n, r->reps, cb_monotonic_ns() - r->start_ns);
}

enum cb_stop cb_reps_judge_bounds(const struct cb_reps *r)
{
	struct cb_adaptive bounds = r->rule;

	if (r->fixed)
		return cb_reps_judge(r);
	bounds.target = 0;
	return cb_adaptive_stop(&bounds, r->v, r->n, r->reps, cb_monotonic_ns() - r->start_ns);
}

bool cb_reps_ratio_met(const struct cb_reps *num, const struct cb_reps *den, double target, size_t *pairs)
{
	struct cb_round_values a = { num->rv, num->rround, num->rn }, b = { den->rv, den->rround, den->rn };

	return cb_adaptive_ratio_met(&a, &b, target, num->rule.min_reps, pairs);
}

void cb_reps_mark(const struct cb_reps *r, enum cb_stop s, struct cb_row *row)
{
	/* Fixed reps are the plan, not a decision: the column stays empty. */
	snprintf(row->stop, sizeof(row->stop), "%s", r->fixed ? "" : cb_stop_name(s));
}

void cb_reps_end(struct cb_reps *r)
{
	free(r->v);
	free(r->rv);
	free(r->rround);
	r->v = r->rv = NULL;
	r->rround = NULL;
}

/* ---- delay accounting for the reps whose probes read taskstats ---- */

bool cb_delayacct_on_for(const struct cb_run_spec *spec, void (*journal)(void *), void *arg)
{
	unsigned p = spec->probes ? spec->probes : CB_PROBES_DEFAULT;

	if (!(cb_probes_intrusive(p) & (1u << CB_PROBE_TASKSTATS)) || geteuid() != 0)
		return false; /* not asked for, already on, or not ours to change: the row's notes say why */
	if (journal)
		journal(arg); /* also on SIGINT/SIGTERM/SIGHUP in the middle of the reps */
	return cb_delayacct_enable() == 0 && cb_delayacct_enabled() == 1;
}

void cb_delayacct_back(bool switched)
{
	if (switched)
		(void)cb_sysctl_override(CB_DELAYACCT_SYSCTL, 0);
}

/* ---- the loop ---- */

struct loop {
	const struct cb_reploop *l;
	size_t cur;                  /* the cell whose settings are in place (SIZE_MAX: none) */
	bool acct_switched;          /* delay accounting switched on for cur's inline probes */
	unsigned char *started;      /* per cell: warmed up, its time bound running */
	unsigned char *halted;       /* per cell: the target or a bound stopped it */
	unsigned char *ev_ran;       /* per cell: its evidence reps ran */
	size_t *left;                /* per cell: timed reps the plan still holds for it */
	size_t *block_cells, nblock; /* the cells the current block ran, in order */
	int64_t round_next;
	int worst;
};

/* Make c the cell the system is set for: its settings, and (inline probes) delay accounting on. */
static int select_cell(struct loop *s, size_t c)
{
	const struct cb_reploop *l = s->l;

	if (s->cur == c)
		return 0;
	cb_delayacct_back(s->acct_switched);
	s->acct_switched = false;
	if (l->hooks.settings && l->hooks.settings(l->hooks.arg, c) < 0)
		return -ECANCELED;
	s->cur = c;
	s->acct_switched = (l->spec[c].probes & CB_PROBES_INLINE) &&
			   cb_delayacct_on_for(&l->spec[c], l->hooks.journal, l->hooks.arg);
	return 0;
}

static void rep_begins(const struct loop *s, size_t c, enum cb_loop_rep kind, long rep)
{
	if (s->l->hooks.rep_begins)
		s->l->hooks.rep_begins(s->l->hooks.arg, c, kind, rep, &s->l->spec[c]);
}

/* Whether a cell that takes b as its baseline may still run reps (and needs b's beside them). */
static bool pairs_pending(const struct loop *s, size_t b)
{
	for (size_t c = 0; s->l->partner && c < s->l->ncells; c++)
		if (s->l->partner[c] == b && !s->halted[c] && s->left[c] > 0)
			return true;
	return false;
}

/*
 * Why cell c stops now, if it does. With a baseline the target also asks
 * that the cell's paired ratio to its baseline is as tight, and a baseline
 * does not stop on the target while a cell paired with it still runs:
 * until then only a bound stops them.
 */
static enum cb_stop judge(const struct loop *s, size_t c)
{
	const struct cb_reploop *l = s->l;
	const struct cb_reps *reps = &l->reps[c];
	enum cb_stop st = cb_reps_judge(reps);
	size_t pairs, b;

	if (st != CB_STOP_TARGET || !l->partner)
		return st;
	b = l->partner[c];
	if ((b != SIZE_MAX && !cb_reps_ratio_met(reps, &l->reps[b], l->target, &pairs)) || pairs_pending(s, c))
		return cb_reps_judge_bounds(reps);
	return st;
}

static void halt(struct loop *s, size_t c, bool at_start)
{
	size_t freed = s->left[c];

	s->halted[c] = 1;
	s->left[c] = 0;
	if (s->l->hooks.stopped)
		s->l->hooks.stopped(s->l->hooks.arg, c, freed, at_start);
}

/* Before a cell's first rep: its warm-up, its time bound's clock, and what a resumed file already settles. */
static void begin_cell(struct loop *s, size_t c)
{
	const struct cb_reploop *l = s->l;
	struct cb_reps *reps = &l->reps[c];

	s->started[c] = 1;
	for (long i = 0; i < l->warmup; i++) {
		struct cb_row row;

		rep_begins(s, c, CB_LOOP_WARMUP, i + 1 - l->warmup);
		cb_run_rep_accounted(&l->spec[c], 0, &row); /* measured, not recorded */
	}
	reps->start_ns = cb_monotonic_ns(); /* --max-time: this run's time on the cell */
	if (reps->rule.target > 0 && reps->reps && judge(s, c) != CB_STOP_NO)
		halt(s, c, true);
}

static int timed_rep(struct loop *s, size_t c, long r, int64_t round)
{
	const struct cb_reploop *l = s->l;
	struct cb_reps *reps = &l->reps[c];
	enum cb_stop stop;
	struct cb_row row;
	int err = select_cell(s, c);

	if (err < 0)
		return err;
	if (!s->started[c])
		begin_cell(s, c);
	if (s->halted[c])
		return 0;
	rep_begins(s, c, CB_LOOP_TIMED, r);
	cb_run_rep_accounted(&l->spec[c], (int)r, &row);
	row.round = round;
	cb_reps_count(reps, &row);
	stop = judge(s, c);
	if (stop != CB_STOP_NO)
		cb_reps_mark(reps, stop, &row);
	s->worst = cb_exit_code_worst(s->worst, cb_status_exit_code(row.status));
	if (l->hooks.emit(l->hooks.arg, c, &row) < 0)
		return -ECANCELED;
	s->left[c]--;
	if (stop != CB_STOP_NO) /* it drops out of the later rounds; the set goes on while a member does */
		halt(s, c, false);
	return 0;
}

/*
 * A cell's evidence reps, after its timed reps, which ran with the system
 * as the user has it: the probes that add work inside the fault path run
 * in reps of their own, delay accounting on for them as root when it was
 * off, and off again after.
 */
static int evidence_reps(struct loop *s, size_t c)
{
	const struct cb_reploop *l = s->l;
	const bool *done = l->ev_done ? &l->ev_done[c * CB_EVIDENCE_REPS] : NULL;
	struct cb_run_spec ev;
	bool switched, todo = false;
	int err;

	s->ev_ran[c] = 1;
	for (size_t i = 0; i < CB_EVIDENCE_REPS; i++)
		todo = todo || !done || !done[i];
	if (!cb_run_wants_evidence(&l->spec[c]) || !todo)
		return 0;
	if ((err = select_cell(s, c)) < 0)
		return err;
	if (!s->started[c])
		begin_cell(s, c);
	cb_delayacct_back(s->acct_switched); /* the evidence reps switch it themselves */
	s->acct_switched = false;
	ev = l->spec[c];
	ev.inject_child_signal = 0; /* a test's injected signal names timed reps */
	switched = cb_delayacct_on_for(&ev, l->hooks.journal, l->hooks.arg);
	for (long i = 1; i <= CB_EVIDENCE_REPS; i++) {
		struct cb_row row;

		if (done && done[i - 1])
			continue;
		rep_begins(s, c, CB_LOOP_EVIDENCE, i);
		cb_run_evidence_rep(&ev, (int)i, &row);
		s->worst = cb_exit_code_worst(s->worst, cb_status_exit_code(row.status));
		if (l->hooks.emit(l->hooks.arg, c, &row) < 0) {
			cb_delayacct_back(switched);
			return -ECANCELED;
		}
	}
	cb_delayacct_back(switched);
	return 0;
}

/* The end of a block: the evidence reps of the cells it ran. */
static int end_block(struct loop *s)
{
	for (size_t i = 0; i < s->nblock; i++) {
		int err = evidence_reps(s, s->block_cells[i]);

		if (err < 0)
			return err;
	}
	s->nblock = 0;
	return 0;
}

/* Run the steps; a round gets its id when its first rep runs (a round of stopped cells gets none). */
static int run_steps(struct loop *s)
{
	const struct cb_order_step *st = s->l->steps;
	int64_t round = CB_NA;
	int err;

	for (size_t i = 0; i < s->l->nsteps; i++) {
		size_t c = st[i].cell;
		bool new_round = i == 0 || st[i].block != st[i - 1].block || st[i].round != st[i - 1].round;

		if (new_round)
			round = CB_NA;
		if (i > 0 && st[i].block != st[i - 1].block && (err = end_block(s)) < 0)
			return err;
		if (s->halted[c])
			continue;
		if (s->nblock == 0 || s->block_cells[s->nblock - 1] != c) {
			bool seen = false;

			for (size_t k = 0; k < s->nblock && !seen; k++)
				seen = s->block_cells[k] == c;
			if (!seen)
				s->block_cells[s->nblock++] = c;
		}
		if (s->l->round_ids) {
			round = s->l->round_ids[i];
		} else if (st[i].round > 0 && round == CB_NA) {
			round = s->round_next;
			s->round_next += s->l->round_step;
		}
		if ((err = timed_rep(s, c, st[i].rep, st[i].round > 0 || s->l->round_ids ? round : CB_NA)) < 0)
			return err;
	}
	return end_block(s);
}

int cb_reploop_run(const struct cb_reploop *l)
{
	size_t n = l->ncells + 1;
	struct loop s = { .l = l, .cur = SIZE_MAX, .round_next = l->round_first, .worst = CB_EXIT_OK };
	int err = -ENOMEM;

	s.started = calloc(n, 1);
	s.halted = calloc(n, 1);
	s.ev_ran = calloc(n, 1);
	s.left = calloc(n, sizeof(*s.left));
	s.block_cells = calloc(n, sizeof(*s.block_cells));
	if (s.started && s.halted && s.ev_ran && s.left && s.block_cells) {
		for (size_t i = 0; i < l->nsteps; i++)
			s.left[l->steps[i].cell]++;
		err = run_steps(&s);
		/* Then the evidence reps of cells whose timed reps were all done before (a resumed file). */
		for (size_t c = 0; c < l->ncells && err == 0; c++)
			if (l->set_of[c] != CB_ORDER_NO_SET && !s.ev_ran[c])
				err = evidence_reps(&s, c);
	}
	cb_delayacct_back(s.acct_switched);
	free(s.started);
	free(s.halted);
	free(s.ev_ran);
	free(s.left);
	free(s.block_cells);
	return err < 0 ? err : s.worst;
}
