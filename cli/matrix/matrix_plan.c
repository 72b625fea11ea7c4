/* cowbench matrix's plan: the cells, their options and specs, and what a resumed file already holds. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cowbench/results.h>

#include "common/diag.h"
#include "common/args.h"
#include "trial/axis_values.h"
#include "trial/reps.h"
#include "matrix_cmd.h"

void matrix_plan_free(struct matrix_plan *p)
{
	for (size_t i = 0; p->opts && i < p->cells.n; i++)
		cli_run_opts_free(p->opts[i]);
	free(p->opts);
	free(p->spec);
	free(p->done);
	for (size_t i = 0; p->reps && i < p->cells.n; i++)
		cb_reps_end(&p->reps[i]);
	free(p->reps);
	free(p->stopped);
	free(p->ev_done);
	free(p->partner);
	cb_cells_free(&p->cells);
}

/* Apply a cell's pairs as run options and check them; -1 after printing why. */
static int cell_options(const struct cb_cell *c, struct run_opts *ro)
{
	for (size_t i = 0; i < c->npairs; i++) {
		const char *name = c->names[i], *v = c->values[i];
		bool on = !strcmp(v, "1") || !strcmp(v, "on") || !strcmp(v, "yes") || !strcmp(v, "true");
		bool off = !strcmp(v, "0") || !strcmp(v, "off") || !strcmp(v, "no") || !strcmp(v, "false");
		const struct cli_option *opt;

		if (mk_is_axis(name))
			continue; /* where the cell runs, not how */
		if (strcmp(name, "fork") == 0) {
			if (!on && !off) {
				cli_error("axis fork takes 1 or 0, not '%s'", v);
				return -1;
			}
			opt = cli_run_option_find("no-fork");
			if (off && !cli_option_apply(opt, ro, NULL))
				return -1;
			continue;
		}
		opt = cli_run_option_find(name);
		if (!opt->metavar) {
			if (!on && !off) {
				cli_error("axis %s is a flag: its values are 1 and 0, not '%s'", name, v);
				return -1;
			}
			if (on && !cli_option_apply(opt, ro, NULL))
				return -1;
			continue;
		}
		if (!cli_option_apply(opt, ro, v))
			return -1;
	}
	return 0;
}

/* A shard takes whole comparison sets when they interleave (their rounds pair reps), else cells. */
static int shard_cells(const struct matrix_opts *o, struct cb_cells *cells)
{
	size_t *set_of;

	if (o->order == CB_ORDER_SEQUENTIAL) {
		cb_cells_shard(cells, o->shard_i, o->shard_n);
		return 0;
	}
	set_of = calloc(cells->n + 1, sizeof(*set_of));
	if (!set_of || cb_order_sets(cells, NULL, set_of) < 0) {
		free(set_of);
		cli_error("out of memory");
		return -1;
	}
	cb_cells_shard_by(cells, set_of, o->shard_i, o->shard_n);
	free(set_of);
	return 0;
}

int matrix_plan_build(struct matrix_opts *o, struct matrix_plan *p)
{
	char why[256];
	int err = cli_canonical_axes(&o->m);

	if (err == 0)
		err = cb_matrix_cells(&o->m, &p->cells, why, sizeof(why));
	if (err) {
		cli_error("%s", err == -ENOMEM ? "out of memory" : why);
		return -1;
	}
	/* Pre-copy exists only on a kernel with the patch: elsewhere its axes collapse (rows leave precopy empty). */
	if (!o->plan) {
		mk_collapse(&p->cells, &o->collapsed);
		for (size_t i = 0; i < o->collapsed.n; i++)
			cli_note("%s", o->collapsed.line[i]);
		if (mk_check_values(&p->cells) < 0)
			return -1;
	}
	if (o->shard_n && shard_cells(o, &p->cells) < 0)
		return -1;
	if (o->shuffle)
		cb_cells_shuffle(&p->cells, o->shuffle_seed);
	p->opts = calloc(p->cells.n ? p->cells.n : 1, sizeof(*p->opts));
	p->spec = calloc(p->cells.n ? p->cells.n : 1, sizeof(*p->spec));
	p->done = calloc(p->cells.n * (size_t)o->cap + 1, 1);
	p->reps = calloc(p->cells.n ? p->cells.n : 1, sizeof(*p->reps));
	p->stopped = calloc(p->cells.n + 1, 1);
	p->ev_done = calloc(p->cells.n * CB_EVIDENCE_REPS + 1, sizeof(*p->ev_done));
	if (!p->opts || !p->spec || !p->done || !p->reps || !p->stopped || !p->ev_done) {
		cli_error("out of memory");
		return -1;
	}
	/* Every cell is checked before anything runs: bad input measures nothing. */
	for (size_t i = 0; i < p->cells.n; i++) {
		p->opts[i] = cli_run_opts_new();
		if (!p->opts[i]) {
			cli_error("out of memory");
			return -1;
		}
		if (cell_options(&p->cells.cell[i], p->opts[i]) < 0 ||
		    cli_run_make_spec(&p->ctx, p->opts[i], &p->spec[i]) < 0)
			return -1; /* the option's own message names the value */
		if (cb_reps_begin(&p->reps[i], &o->adaptive, o->reps, p->spec[i].workload) < 0) {
			cli_error("out of memory");
			return -1;
		}
	}
	return 0;
}

/* Whether cell c is a --baseline or has one: its target also waits on the pair (judge()). */
static bool in_pair(const struct matrix_plan *p, size_t c)
{
	for (size_t k = 0; p->partner && k < p->cells.n; k++)
		if (p->partner[k] == c || (k == c && p->partner[k] != SIZE_MAX))
			return true;
	return false;
}

/*
 * A resumed cell whose file holds the row that stopped it: judged again
 * under this run's rule (a higher --max-reps, a tighter --target-ci let it
 * go on; the same options stop it again). A time bound that stopped it
 * stays: the time spent before is not known. Fixed --reps: stopped stays.
 */
static void resume_stops(const struct matrix_opts *o, struct matrix_plan *p)
{
	for (size_t c = 0; o->adaptive.target > 0 && c < p->cells.n; c++) {
		if (p->stopped[c] != 1)
			continue;
		p->stopped[c] = (in_pair(p, c) ? cb_reps_judge_bounds(&p->reps[c]) : cb_reps_judge(&p->reps[c])) !=
				CB_STOP_NO;
	}
}

/*
 * --resume: read FILE, cut off a row a crash left half-written, and mark
 * the reps it holds as done. A missing file is a fresh start.
 */
int matrix_plan_resume(const struct matrix_opts *o, struct matrix_plan *p)
{
	struct cb_results res;
	char why[512];
	size_t seen = 0, foreign = 0, rerun = 0, total = p->cells.n * (size_t)o->cap, todo = 0; /* adaptive: at most */
	int err;

	if (access(o->resume, F_OK) != 0 || (o->out_created && !o->dry_run))
		return 0;
	err = cb_results_read(o->resume, &res, why, sizeof(why));
	if (err) {
		cli_error("%s", why);
		return -1;
	}
	if (!res.empty && !res.same_columns) {
		cli_error("%s has other columns than this cowbench writes: resume it with the cowbench that began it",
			  o->resume);
		cb_results_free(&res);
		return -1;
	}
	if (res.torn && !o->dry_run) {
		if (ftruncate(o->out_fd, res.torn_offset) < 0) {
			cli_error("cannot drop the half-written last row of %s: %s", o->resume, strerror(errno));
			cb_results_free(&res);
			return -1;
		}
		cli_note("dropped the half-written last row of %s (a run cut short)", o->resume);
	}
	for (size_t r = 0; r < res.n; r++) {
		long c;
		bool ev = cb_row_is_evidence(&res.rows[r]);

		cli_canonical_cell(res.rows[r].cell, sizeof(res.rows[r].cell)); /* a file of -s 4096K resumes -s 4M */
		c = cb_cells_find(&p->cells, res.rows[r].cell);

		/* Timed and evidence reps are numbered apart: each kind from 1. */
		if (c < 0 || res.rows[r].rep < 1 || res.rows[r].rep > (ev ? CB_EVIDENCE_REPS : o->cap) ||
		    (ev && !cb_run_wants_evidence(&p->spec[c]))) {
			foreign++;
			continue;
		}
		if (cb_row_guest_failed(&res.rows[r])) {
			res.rows[r].rep = -res.rows[r].rep; /* counted below, unless a later row measured it */
			continue;
		}
		if (ev) {
			p->ev_done[(size_t)c * CB_EVIDENCE_REPS + (size_t)(res.rows[r].rep - 1)] = true;
		} else {
			p->done[(size_t)c * (size_t)o->cap + (size_t)(res.rows[r].rep - 1)] = 1;
			/* Reps already there count toward the cell's interval; a row that stopped it ends it (resume_stops). */
			cb_reps_count(&p->reps[c], &res.rows[r]);
			p->stopped[c] |= res.rows[r].stop[0] == '\0' ? 0 : strcmp(res.rows[r].stop, "max-time") == 0 ? 2 : 1;
			if (res.rows[r].round != CB_NA && res.rows[r].round > p->last_round && !mk_cell_in_guest(&p->cells.cell[c]))
				p->last_round = res.rows[r].round; /* the next rounds number on from here */
		}
		seen++;
	}
	/* The guest never ran these: each row stays as the record; the rep runs again unless a resume since has. */
	for (size_t r = 0; r < res.n; r++) {
		long c = res.rows[r].rep < 0 && !cb_row_is_evidence(&res.rows[r]) ?
				 cb_cells_find(&p->cells, res.rows[r].cell) : -1;

		if (c >= 0 && !p->done[(size_t)c * (size_t)o->cap + (size_t)(-res.rows[r].rep - 1)])
			rerun++;
	}
	if (foreign)
		cli_note("%s: %zu rows belong to no cell of this matrix (or shard); kept as they are", o->resume, foreign);
	if (rerun)
		cli_note("%s: %zu rows record reps a guest never ran (error:guest:*): kept, and those reps run again",
			 o->resume, rerun);
	p->resumed = seen;
	resume_stops(o, p);
	for (size_t c = 0; c < p->cells.n; c++) {
		total += cb_run_wants_evidence(&p->spec[c]) && !mk_cell_in_guest(&p->cells.cell[c]) ? CB_EVIDENCE_REPS : 0;
		todo += matrix_cell_todo(p, c, o->cap) + matrix_cell_evidence_todo(p, c);
	}
	cli_note("--resume %s: %zu of %zu reps already there, skipped; %s%zu to run", o->resume, seen, total,
		 o->adaptive.target > 0 && todo ? "at most " : "", todo);
	cb_results_free(&res);
	return 0;
}

/* Reps cell c may still run (adaptive: at most this many). */
size_t matrix_cell_todo(const struct matrix_plan *p, size_t c, long reps)
{
	size_t n = 0;

	if (p->stopped[c])
		return 0;
	for (long r = 0; r < reps; r++)
		n += !p->done[c * (size_t)reps + (size_t)r];
	return n;
}

/* Evidence reps the cell still needs (none when its probes can add nothing inside the fault path, nor in a guest). */
size_t matrix_cell_evidence_todo(const struct matrix_plan *p, size_t c)
{
	size_t n = 0;

	if (!cb_run_wants_evidence(&p->spec[c]) || mk_cell_in_guest(&p->cells.cell[c]))
		return 0; /* a guest runs its plan's timed reps only: its cells have no evidence reps */
	for (size_t r = 0; r < CB_EVIDENCE_REPS; r++)
		n += !p->ev_done[c * CB_EVIDENCE_REPS + r];
	return n;
}

/* The comparison sets of the cells that run on the host (guest cells: CB_ORDER_NO_SET); -ENOMEM. */
long matrix_host_sets(const struct matrix_plan *p, size_t *set_of)
{
	bool *host = calloc(p->cells.n + 1, sizeof(*host));
	long sets;

	if (!host)
		return -ENOMEM;
	for (size_t c = 0; c < p->cells.n; c++)
		host[c] = !mk_cell_in_guest(&p->cells.cell[c]);
	sets = cb_order_sets(&p->cells, host, set_of);
	free(host);
	return sets;
}

/* The host's comparison sets that --order interleaves. */
static void print_host_sets(const struct matrix_opts *o, const struct matrix_plan *p)
{
	size_t *set_of = calloc(p->cells.n + 1, sizeof(*set_of));
	long sets = set_of ? matrix_host_sets(p, set_of) : -ENOMEM;

	if (sets > 0)
		mk_print_sets(&p->cells, set_of, (size_t)sets, o->order, o->order_seed, stdout);
	free(set_of);
}

/*
 * --baseline NAME=VALUE: each host cell's partner is the member of its
 * comparison set with NAME=VALUE. Both record the ratio metric by round,
 * and neither stops on the target until the ratio is as tight (judge()).
 */
int matrix_pair_baselines(const struct matrix_opts *o, struct matrix_plan *p)
{
	size_t *set_of, bases = 0;
	int rc = -1;

	if (!o->baseline)
		return 0;
	set_of = calloc(p->cells.n + 1, sizeof(*set_of));
	p->partner = malloc((p->cells.n + 1) * sizeof(*p->partner));
	if (!set_of || !p->partner || matrix_host_sets(p, set_of) < 0) {
		cli_error("out of memory");
		goto out;
	}
	for (size_t c = 0; c < p->cells.n; c++) {
		const char *v = cb_cell_value(&p->cells.cell[c], o->base_name);
		char bkey[CB_CELL_KEY_LEN];
		long b;

		p->partner[c] = SIZE_MAX;
		if (set_of[c] == CB_ORDER_NO_SET || !v)
			continue;
		if (strcmp(v, o->base_value) == 0) {
			bases++;
		} else if (cb_key_replace(p->cells.cell[c].key, o->base_name, o->base_value, bkey, sizeof(bkey)) &&
			   (b = cb_cells_find(&p->cells, bkey)) >= 0 && set_of[b] == set_of[c]) {
			p->partner[c] = (size_t)b;
		}
	}
	if (!bases) {
		cli_error("--baseline %s: no cell of this matrix has %s=%s", o->baseline, o->base_name, o->base_value);
		goto out;
	}
	for (size_t c = 0; c < p->cells.n; c++)
		if (p->partner[c] != SIZE_MAX)
			for (size_t k = 0; k < 2; k++) { /* the cell and its baseline, in the same column */
				size_t at = k ? p->partner[c] : c;

				p->reps[at].ratio_metric = o->baseline_metric ? o->baseline_metric :
										cb_workload_headline(p->spec[c].workload);
			}
	rc = 0;
out:
	free(set_of);
	return rc;
}

void matrix_plan_print(const struct matrix_opts *o, const struct matrix_plan *p)
{
	size_t todo = 0, ev = 0;

	for (size_t i = 0; i < p->cells.n; i++) {
		todo += matrix_cell_todo(p, i, o->cap);
		ev += matrix_cell_evidence_todo(p, i);
	}
	if (o->adaptive.target > 0)
		printf("# %zu cells x %ld to %ld reps until +-%g %% (+%ld warm-up each)", p->cells.n, o->reps, o->cap,
		       o->adaptive.target * 100, o->warmup);
	if (o->baseline)
		printf(", with each cell's %s ratio to its %s cell",
		       o->baseline_metric ? o->baseline_metric : "headline", o->baseline);
	else
		printf("# %zu cells x %ld reps (+%ld warm-up each)", p->cells.n, o->reps, o->warmup);
	if (o->shard_n)
		printf(", shard %u/%u", o->shard_i, o->shard_n);
	if (o->shuffle)
		printf(", shuffled (seed %" PRIu64 ")", o->shuffle_seed);
	printf(", order %s", cb_order_name(o->order));
	if (o->order == CB_ORDER_SHUFFLE)
		printf(":%" PRIu64, o->order_seed);
	printf("; %s%zu reps to run, %zu evidence reps (probes that can add work inside the fault path)\n",
	       o->adaptive.target > 0 ? "at most " : "", todo, ev);
	for (size_t i = 0; i < p->cells.n; i++) {
		size_t t = matrix_cell_todo(p, i, o->cap);

		printf("%zu\t%s", p->cells.cell[i].index + 1, p->cells.cell[i].key);
		if (p->stopped[i])
			printf("\t(%zu reps done, stopped)", p->reps[i].reps);
		else if (t < (size_t)o->cap)
			printf("\t(%zu of %ld reps done)", (size_t)o->cap - t, o->cap);
		putchar('\n');
	}
	cli_flush_stdout();
	print_host_sets(o, p);
	mk_print_boots(&(struct mk_run){ .cells = &p->cells, .spec = p->spec, .done = p->done, .reps = o->reps,
					 .warmup = o->warmup, .order = o->order, .seed = o->order_seed },
		       &o->collapsed, stdout);
}

/*
 * Adaptive reps decide after each rep; a guest boot runs a plan fixed
 * before it starts (guest/kernel_axis.h): the two do not mix yet.
 */
int matrix_adaptive_on_host_only(const struct matrix_opts *o, const struct matrix_plan *p)
{
	for (size_t i = 0; o->adaptive.target > 0 && i < p->cells.n; i++)
		if (mk_cell_in_guest(&p->cells.cell[i])) {
			cli_error("--target-ci runs on the host only: a --kernel guest runs a fixed plan of reps (use --reps)");
			return -1;
		}
	return 0;
}

