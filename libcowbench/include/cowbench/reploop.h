#ifndef COWBENCH_REPLOOP_H
#define COWBENCH_REPLOOP_H

/*
 * The repetition loop: the one place reps run, for `cowbench run` (a plan
 * of one cell), `cowbench matrix` (many) and a --kernel guest replaying its
 * host's plan alike. Per cell: its settings
 * when another cell ran in between, delay accounting on for inline probes,
 * warm-ups before its first rep, timed reps until a fixed count or the
 * adaptive rule stops it (cowbench/adaptive.h), then its evidence reps.
 * The caller plans the steps (cowbench/order.h) and sees everything through
 * hooks: the loop never prints and never writes a file.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cowbench/adaptive.h>

struct cb_row;
struct cb_run_spec;
struct cb_workload;
struct cb_order_step;

/** Evidence reps per cell (numbered from 1, apart from the timed reps). */
#define CB_EVIDENCE_REPS 1

/** How many reps a cell runs: a fixed count, or until its interval is tight. */
struct cb_reps_opts {
	double target;   /* --target-ci as a fraction; 0: a fixed count */
	long max_reps;   /* the adaptive rule's bound on reps */
	uint64_t max_ns; /* the adaptive rule's bound on time per cell; 0: none */
};

/** One cell's reps so far (a resumed file's included) and the rule that stops them. */
struct cb_reps {
	const struct cb_workload *w;
	struct cb_adaptive rule;
	long fixed;        /* > 0: exactly this many reps */
	size_t cap;        /* the most reps the cell can run */
	size_t reps;       /* reps counted, failed ones included */
	double *v;         /* headline values of the good ones */
	size_t n;
	uint64_t start_ns; /* the time bound counts from here */
	const char *ratio_metric; /* matrix --baseline: the column whose paired ratio must be tight too */
	double *rv;        /* its values in the good reps that carry a round id ... */
	int64_t *rround;   /* ... and those round ids */
	size_t rn;
};

/** A cell's counter: reps is the fixed count, or the least with a target. 0 or -ENOMEM. */
int cb_reps_begin(struct cb_reps *r, const struct cb_reps_opts *o, long reps, const struct cb_workload *w);
/** Count one rep (measured now or read back from a resumed file). */
void cb_reps_count(struct cb_reps *r, const struct cb_row *row);
enum cb_stop cb_reps_judge(const struct cb_reps *r);
/** The stop the bounds alone call for (the target left out): a cell that must keep pairing its rounds. */
enum cb_stop cb_reps_judge_bounds(const struct cb_reps *r);
/**
 * matrix --baseline: whether the ratio num / den over the rounds both ran
 * has an interval within +-target; *pairs gets how many rounds paired.
 * False while fewer than the rule's least reps paired up.
 */
bool cb_reps_ratio_met(const struct cb_reps *num, const struct cb_reps *den, double target, size_t *pairs);
/** Write why the cell stopped into the row's stop column (empty for fixed reps: they are the plan). */
void cb_reps_mark(const struct cb_reps *r, enum cb_stop s, struct cb_row *row);
void cb_reps_end(struct cb_reps *r);

/** What a rep of the loop is, for the rep_begins hook. */
enum cb_loop_rep { CB_LOOP_WARMUP, CB_LOOP_TIMED, CB_LOOP_EVIDENCE };

struct cb_reploop_hooks {
	/* Set cell c's own settings (its sysctls) before its reps; < 0 stops the loop. NULL: none. */
	int (*settings)(void *arg, size_t c);
	/* Before the loop itself changes a setting (delay accounting): have it put back at exit. */
	void (*journal)(void *arg);
	/*
	 * Before each rep (rep: warm-ups count up to 0, timed and evidence reps
	 * from 1): progress; spec may be changed for this rep (a test's injected
	 * signal). NULL: none.
	 */
	void (*rep_begins)(void *arg, size_t c, enum cb_loop_rep kind, long rep, struct cb_run_spec *spec);
	/* A finished timed or evidence rep's row, to record; < 0 stops the loop. */
	int (*emit)(void *arg, size_t c, struct cb_row *row);
	/*
	 * Cell c stops before its plan ran out (the target met, or a bound):
	 * freed reps of the plan will not run; at_start: it had nothing to add
	 * (a resumed file already met the rule). NULL: none.
	 */
	void (*stopped)(void *arg, size_t c, size_t freed, bool at_start);
	void *arg;
};

struct cb_reploop {
	size_t ncells;
	struct cb_run_spec *spec;         /* per cell */
	struct cb_reps *reps;             /* per cell, begun (cb_reps_begin) */
	const size_t *partner;            /* per cell: its --baseline cell (SIZE_MAX: none); NULL: no pairs */
	double target;                    /* the pairs' ratio target (with partner) */
	const bool *ev_done;              /* per cell x CB_EVIDENCE_REPS: already recorded; NULL: none */
	const size_t *set_of;             /* per cell: CB_ORDER_NO_SET runs nothing here, not even evidence */
	const struct cb_order_step *steps; /* the timed reps in the order to run them (cb_order_plan) */
	size_t nsteps;
	long warmup;                      /* unrecorded reps before each cell's first */
	int64_t round_first, round_step;  /* ids of the interleaved rounds: first, first + step, ... */
	const int64_t *round_ids;         /* NULL, or per step the id its row carries (CB_NA: none): a
					     guest replays the rounds its host numbered */
	struct cb_reploop_hooks hooks;
};

/**
 * Run the steps, each cell's evidence reps after the block that ran its
 * timed reps (and those of cells no step named), leaving the system as it
 * was. The worst row's exit code (cowbench/error.h), or a negative code:
 * -ENOMEM, or -ECANCELED when a hook stopped the loop (it said why).
 */
int cb_reploop_run(const struct cb_reploop *l);

/**
 * As root, kernel.task_delayacct on for reps whose probes run taskstats
 * while it is off: true when switched (journal runs first, so it can be
 * put back at exit). cb_delayacct_back(true) puts it back to off.
 */
bool cb_delayacct_on_for(const struct cb_run_spec *spec, void (*journal)(void *), void *arg);
void cb_delayacct_back(bool switched);

#endif
