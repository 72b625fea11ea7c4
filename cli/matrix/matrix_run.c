/* cowbench matrix's running: the host's cells in --order, a guest's plan, then each --kernel guest. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cowbench/cowstats.h>
#include <cowbench/results.h>
#include <cowbench/sysctl.h>

#include "common/diag.h"
#include "common/guard.h"
#include "common/outfile.h"
#include "trial/evidence_loop.h"
#include "trial/run_notes.h"
#include "trial/reps.h"
#include "matrix_cmd.h"

/* ---- running ---- */

/*
 * On Ctrl-C (or SIGTERM/SIGHUP): "N of M reps done; continue with: ..." The
 * note is prepared after every row, so the signal handler only writes it.
 */
static char resume_cmd[4096];
static char note_buf[2][4608];
static int note_cur;

/* Append one argument, in single quotes when the shell would read it otherwise. */
static void append_arg(char *buf, size_t len, const char *a)
{
	size_t o = strlen(buf);

	if (*a && strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./=:,+-@%") == strlen(a)) {
		snprintf(buf + o, len - o, " %s", a);
		return;
	}
	snprintf(buf + o, len - o, " '");
	for (; *a; a++) {
		o = strlen(buf);
		snprintf(buf + o, len - o, *a == '\'' ? "'\\''" : "%c", *a);
	}
	o = strlen(buf);
	snprintf(buf + o, len - o, "'");
}

static void interrupt_note_update(size_t done, size_t total)
{
	char *b = note_buf[note_cur ^ 1];
	const char *clear = cli_progress_enabled() ? "\r\033[K" : "";

	if (resume_cmd[0] == '\0')
		return;
	if (strstr(resume_cmd, " --resume "))
		snprintf(b, sizeof(note_buf[0]), "%scowbench: interrupted: %zu of %zu reps done; continue with:\n  %s\n", clear, done,
			 total, resume_cmd);
	else
		snprintf(b, sizeof(note_buf[0]),
			 "%scowbench: interrupted: %zu of %zu reps done (rows went to standard output; give --output FILE "
			 "to be able to resume)\n",
			 clear, done, total);
	note_cur ^= 1;
	cli_set_interrupt_note(b);
}

static void interrupt_note_init(const struct matrix_opts *o, size_t done, size_t total)
{
	const char *file = o->resume ? o->resume : o->output;

	snprintf(resume_cmd, sizeof(resume_cmd), "cowbench matrix");
	for (int i = 1; i < o->typed_argc; i++) {
		const char *a = o->typed_argv[i];

		if (!strcmp(a, "--output") || !strcmp(a, "-o") || !strcmp(a, "--resume")) {
			i++; /* and its value */
			continue;
		}
		if (!strncmp(a, "--output=", 9) || !strncmp(a, "--resume=", 9) || !strncmp(a, "-o", 2))
			continue;
		append_arg(resume_cmd, sizeof(resume_cmd), a);
	}
	if (o->order == CB_ORDER_SHUFFLE) { /* the seed drawn from the clock, so the rest runs in the same rounds */
		char seeded[48];

		snprintf(seeded, sizeof(seeded), "--order=shuffle:%" PRIu64, o->order_seed);
		append_arg(resume_cmd, sizeof(resume_cmd), seeded);
	}
	if (file) {
		append_arg(resume_cmd, sizeof(resume_cmd), "--resume");
		append_arg(resume_cmd, sizeof(resume_cmd), file);
	}
	cli_restore_sysctls_at_exit(); /* hooks the signals that print the note */
	interrupt_note_update(done, total);
}


struct progress {
	bool on;
	uint64_t start_ns;
	size_t done, total, ncells;
};

/* Whether axis NAME has the same value in every cell (then a label need not repeat it). */
static bool axis_constant(const struct matrix_plan *p, const char *name, const char *value)
{
	for (size_t i = 0; i < p->cells.n; i++) {
		const struct cb_cell *c = &p->cells.cell[i];
		bool same = false;

		for (size_t k = 0; k < c->npairs; k++)
			same = same || (!strcmp(c->names[k], name) && !strcmp(c->values[k], value));
		if (!same)
			return false;
	}
	return true;
}

/* The cell's pairs whose axis varies across the plan: what tells this cell from the others. */
static void varying_label(const struct matrix_plan *p, size_t c, char *buf, size_t len)
{
	const struct cb_cell *cell = &p->cells.cell[c];

	buf[0] = '\0';
	for (size_t k = 0; k < cell->npairs; k++)
		if (!axis_constant(p, cell->names[k], cell->values[k]))
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s=%s", buf[0] ? " " : "", cell->names[k],
				 cell->values[k]);
	if (!buf[0])
		snprintf(buf, len, "%s", cell->key);
}

static void show_progress(const struct progress *pr, const struct matrix_plan *p, size_t c, size_t cell_no)
{
	double el = (double)(cb_monotonic_ns() - pr->start_ns) / 1e9;
	char e[48], eta[48] = "?", label[CB_CELL_KEY_LEN];

	if (!pr->on)
		return;
	cli_fmt_duration(e, sizeof(e), el);
	if (pr->done > 0)
		cli_fmt_duration(eta, sizeof(eta), el / (double)pr->done * (double)(pr->total - pr->done));
	varying_label(p, c, label, sizeof(label));
	cli_progress("[cell %zu/%zu, rep %zu/%zu] elapsed %s  ETA %s  %s", cell_no, pr->ncells, pr->done + 1, pr->total,
		     e, eta, label);
}

struct cell_sink {
	const struct cb_cell *cell;
	struct cb_report *rep;
	struct progress *pr;
	size_t resumed; /* reps the resumed file already held */
};

/* One finished rep: tagged with its cell, written and synced. */
static int emit_cell_row(void *arg, struct cb_row *row)
{
	struct cell_sink *k = arg;

	snprintf(row->cell, sizeof(row->cell), "%s", k->cell->key);
	cli_progress_clear(); /* the row starts on a clean line */
	if (cb_report_row(k->rep, row) < 0) {
		cli_error("cannot write results: %s", strerror(errno));
		return -1;
	}
	k->pr->done++;
	interrupt_note_update(k->pr->done + k->resumed, k->pr->total + k->resumed);
	return 0;
}

/*
 * The host's cells, in the order --order gives (cowbench/order.h). A cell's
 * sysctls are set before its reps whenever another cell ran in between,
 * delay accounting is on for its warm-up and timed reps where its probes
 * run inline, its warm-up comes before its first rep; every row is written
 * (and synced) as it completes. When a comparison set (sequential: a cell)
 * has run its timed reps, its cells' evidence reps follow.
 */
struct host_run {
	const struct matrix_opts *o;
	struct matrix_plan *p;
	struct cell_sink sink;
	size_t cur;              /* the cell whose sysctls are set (SIZE_MAX: none) */
	bool acct_switched;      /* delay accounting switched on for cur's inline probes */
	unsigned char *started;  /* per cell: warmed up, its --max-time clock running */
	unsigned char *halted;   /* per cell: --target-ci or a bound stopped it */
	unsigned char *ev_ran;   /* per cell: its evidence reps ran */
	size_t *left;            /* per cell: timed reps it may still run */
	size_t *block_cells, nblock; /* the cells the current block ran, in order */
	int64_t round_next, round_step; /* round ids: shard I of N numbers I, I + N, ... */
	int worst;
};

/* Make c the cell the system is set for: its sysctls, and (inline) delay accounting on. */
static int select_cell(struct host_run *h, size_t c, bool timed)
{
	const struct cb_run_spec *spec = &h->p->spec[c];

	if (h->cur != c) {
		cli_delayacct_back(h->acct_switched);
		h->acct_switched = false;
		if (cli_run_apply_sysctls(h->p->opts[c]) < 0)
			return -1;
		h->cur = c;
		h->acct_switched = timed && (spec->probes & CB_PROBES_INLINE) && cli_delayacct_on(spec);
	}
	return 0;
}

/* Whether a cell that takes b as its --baseline may still run reps (and needs b's beside them). */
static bool pairs_pending(const struct host_run *h, size_t b)
{
	for (size_t c = 0; h->p->partner && c < h->p->cells.n; c++)
		if (h->p->partner[c] == b && !h->halted[c] && h->left[c] > 0)
			return true;
	return false;
}

/*
 * Why cell c stops now, if it does. With --baseline the target also asks
 * that the cell's paired ratio to its baseline is as tight, and a baseline
 * does not stop on the target while a cell paired with it still runs:
 * until then only a bound stops them.
 */
static enum cb_stop judge(const struct host_run *h, size_t c)
{
	const struct cli_reps *reps = &h->p->reps[c];
	enum cb_stop s = cli_reps_judge(reps);
	size_t pairs, b;

	if (s != CB_STOP_TARGET || !h->p->partner)
		return s;
	b = h->p->partner[c];
	if ((b != SIZE_MAX && !cli_reps_ratio_met(reps, &h->p->reps[b], h->o->adaptive.target, &pairs)) ||
	    pairs_pending(h, c))
		return cli_reps_judge_bounds(reps);
	return s;
}

/* Before a cell's first rep: its warm-up, its --max-time clock, and what a resumed file already settles. */
static void begin_cell(struct host_run *h, size_t c)
{
	struct cli_reps *reps = &h->p->reps[c];

	h->started[c] = 1;
	for (long i = 0; i < h->o->warmup; i++) {
		struct cb_row row;

		show_progress(h->sink.pr, h->p, c, c + 1);
		cb_run_rep_accounted(&h->p->spec[c], 0, &row);
	}
	reps->start_ns = cb_monotonic_ns(); /* --max-time: this run's time on the cell */
	if (h->o->adaptive.target > 0 && reps->reps && judge(h, c) != CB_STOP_NO) {
		cli_note("%s: the %zu reps already there meet --target-ci or its bounds; nothing to add",
			 h->p->cells.cell[c].key, reps->reps);
		h->halted[c] = 1;
		h->sink.pr->total -= h->left[c]; /* a cell that stopped frees the rest of its bound */
		h->left[c] = 0;
	}
}

static int emit_row_of(struct host_run *h, size_t c, struct cb_row *row)
{
	h->sink.cell = &h->p->cells.cell[c];
	return emit_cell_row(&h->sink, row);
}

static int timed_rep(struct host_run *h, size_t c, long r, int64_t round)
{
	struct cli_reps *reps = &h->p->reps[c];
	enum cb_stop stop;
	struct cb_row row;

	if (select_cell(h, c, true) < 0)
		return -1;
	if (!h->started[c])
		begin_cell(h, c);
	if (h->halted[c])
		return 0;
	show_progress(h->sink.pr, h->p, c, c + 1);
	cb_run_rep_accounted(&h->p->spec[c], (int)r, &row);
	row.round = round;
	cli_reps_count(reps, &row);
	stop = judge(h, c);
	if (stop != CB_STOP_NO)
		cli_reps_mark(reps, stop, &row);
	h->worst = cb_exit_code_worst(h->worst, cb_status_exit_code(row.status));
	if (emit_row_of(h, c, &row) < 0)
		return -1;
	h->left[c]--;
	if (stop != CB_STOP_NO) { /* it drops out of the later rounds; the set goes on while a member does */
		h->halted[c] = 1;
		h->sink.pr->total -= h->left[c];
		h->left[c] = 0;
	}
	return 0;
}

static int evidence_reps(struct host_run *h, size_t c)
{
	int ev;

	h->ev_ran[c] = 1;
	if (!matrix_cell_evidence_todo(h->p, c))
		return 0;
	if (select_cell(h, c, true) < 0)
		return -1;
	if (!h->started[c])
		begin_cell(h, c);
	cli_delayacct_back(h->acct_switched); /* the evidence reps switch it themselves */
	h->acct_switched = false;
	show_progress(h->sink.pr, h->p, c, c + 1);
	h->sink.cell = &h->p->cells.cell[c];
	ev = cli_run_evidence_reps(&h->p->spec[c], &h->p->ev_done[c * CLI_EVIDENCE_REPS], CLI_EVIDENCE_REPS,
				   emit_cell_row, &h->sink);
	if (ev < 0)
		return -1;
	h->worst = cb_exit_code_worst(h->worst, ev);
	return 0;
}

/* The end of a block: the evidence reps of the cells it ran. */
static int end_block(struct host_run *h)
{
	for (size_t i = 0; i < h->nblock; i++)
		if (evidence_reps(h, h->block_cells[i]) < 0)
			return -1;
	h->nblock = 0;
	return 0;
}

/* The (cell, rep) steps of the host's cells; *sets gets the number of comparison sets. */
static int host_steps(const struct matrix_opts *o, const struct matrix_plan *p, struct cb_order_step **steps, size_t *n,
		      size_t *set_of, long *sets)
{
	unsigned char *done = malloc(p->cells.n * (size_t)o->cap + 1);
	int err = -ENOMEM;

	if (done) {
		for (size_t c = 0; c < p->cells.n; c++)
			for (long r = 0; r < o->cap; r++) /* a cell the resumed file shows stopped runs no more */
				done[c * (size_t)o->cap + (size_t)r] = p->stopped[c] || p->done[c * (size_t)o->cap + (size_t)r];
		*sets = matrix_host_sets(p, set_of);
		err = *sets < 0 ? (int)*sets :
				  cb_order_plan(set_of, p->cells.n, o->cap, done, o->order, o->order_seed, steps, n);
	}
	free(done);
	if (err)
		cli_error("out of memory");
	return err ? -1 : 0;
}

static void host_run_free(struct host_run *h)
{
	free(h->started);
	free(h->halted);
	free(h->ev_ran);
	free(h->left);
	free(h->block_cells);
}

static int host_run_init(struct host_run *h, const struct matrix_opts *o, struct matrix_plan *p, struct cb_report *rep,
			 struct progress *pr)
{
	size_t n = p->cells.n + 1;

	memset(h, 0, sizeof(*h));
	h->o = o;
	h->p = p;
	h->sink = (struct cell_sink){ NULL, rep, pr, p->resumed };
	h->cur = SIZE_MAX;
	h->round_step = o->shard_n ? o->shard_n : 1;
	h->round_next = p->last_round ? p->last_round + h->round_step : (o->shard_n ? o->shard_i : 1);
	h->started = calloc(n, 1);
	h->halted = calloc(n, 1);
	h->ev_ran = calloc(n, 1);
	h->left = calloc(n, sizeof(*h->left));
	h->block_cells = calloc(n, sizeof(*h->block_cells));
	if (!h->started || !h->halted || !h->ev_ran || !h->left || !h->block_cells) {
		cli_error("out of memory");
		return -1;
	}
	for (size_t c = 0; c < p->cells.n; c++)
		h->left[c] = matrix_cell_todo(p, c, o->cap);
	return 0;
}

/* Run the steps; a round gets its id when its first rep runs (a round of stopped cells gets none). */
static int run_steps(struct host_run *h, const struct cb_order_step *st, size_t n)
{
	int64_t round = CB_NA;

	for (size_t i = 0; i < n; i++) {
		size_t c = st[i].cell;
		bool new_round = i == 0 || st[i].block != st[i - 1].block || st[i].round != st[i - 1].round;

		if (new_round)
			round = CB_NA;
		if (i > 0 && st[i].block != st[i - 1].block && end_block(h) < 0)
			return -1;
		if (h->halted[c])
			continue;
		if (h->nblock == 0 || h->block_cells[h->nblock - 1] != c) {
			bool seen = false;

			for (size_t k = 0; k < h->nblock && !seen; k++)
				seen = h->block_cells[k] == c;
			if (!seen)
				h->block_cells[h->nblock++] = c;
		}
		if (st[i].round > 0 && round == CB_NA) {
			round = h->round_next;
			h->round_next += h->round_step;
		}
		if (timed_rep(h, c, st[i].rep, st[i].round > 0 ? round : CB_NA) < 0)
			return -1;
	}
	return end_block(h);
}

/* The host's part of the plan: its timed reps in --order, then evidence reps no block ran. 0..exit code, -1. */
static int run_host(const struct matrix_opts *o, struct matrix_plan *p, struct cb_report *rep, struct progress *pr)
{
	struct cb_order_step *steps = NULL;
	size_t n = 0, *set_of = calloc(p->cells.n + 1, sizeof(*set_of));
	struct host_run h;
	long sets;
	int rc = -1;

	if (!set_of) {
		cli_error("out of memory");
		return -1;
	}
	if (host_run_init(&h, o, p, rep, pr) == 0 && host_steps(o, p, &steps, &n, set_of, &sets) == 0 &&
	    run_steps(&h, steps, n) == 0) {
		rc = 0;
		for (size_t c = 0; c < p->cells.n && rc == 0; c++)
			if (set_of[c] != CB_ORDER_NO_SET && !h.ev_ran[c])
				rc = evidence_reps(&h, c);
	}
	cli_delayacct_back(h.acct_switched);
	host_run_free(&h);
	free(steps);
	free(set_of);
	return rc < 0 ? -1 : h.worst;
}

/*
 * In a guest (--plan): the host's order, which interleaves the cells it
 * compares rep by rep. A cell's sysctls are set before each of its reps
 * (its neighbours set theirs), its warm-up before its first.
 */
static int run_ordered(const struct matrix_opts *o, struct matrix_plan *p, struct cb_report *rep)
{
	unsigned char *warm = calloc(p->cells.n + 1, 1);
	int failed = 0;

	if (!warm) {
		cli_error("out of memory");
		return -1;
	}
	for (size_t i = 0; i < o->plan_lines.n && failed >= 0; i++) {
		long c = cb_cells_find(&p->cells, o->plan_lines.keys[i]);
		struct cb_row row;

		if (c < 0 || cli_run_apply_sysctls(p->opts[c]) < 0) {
			failed = -1;
			break;
		}
		for (long w = 0; !warm[c] && w < o->warmup; w++)
			cb_run_rep(&p->spec[c], 0, &row);
		warm[c] = 1;
		if (cb_run_rep(&p->spec[c], (int)o->plan_lines.reps[i], &row) != 0)
			failed = 1;
		row.round = o->plan_lines.rounds[i] > 0 ? o->plan_lines.rounds[i] : CB_NA;
		snprintf(row.cell, sizeof(row.cell), "%s", p->cells.cell[c].key);
		if (cb_report_row(rep, &row) < 0) {
			cli_error("cannot write results: %s", strerror(errno));
			failed = -1;
		}
	}
	free(warm);
	return failed;
}

/* The results file, opened and locked (cli_output_open_locked) before --resume reads it. */
int matrix_lock_results(struct matrix_opts *o)
{
	const char *path = o->resume ? o->resume : o->output;

	o->out_fd = -1;
	if (!path || o->dry_run)
		return 0;
	o->out_fd = cli_output_open_locked(path, o->resume != NULL, o->force, ", or --resume it to continue",
					   &o->out_created);
	return o->out_fd < 0 ? -1 : 0;
}

static FILE *open_results(struct matrix_opts *o, bool *append)
{
	struct stat st;
	FILE *fp;

	*append = false;
	if (o->out_fd < 0)
		return stdout;
	if (fstat(o->out_fd, &st) < 0 || lseek(o->out_fd, 0, SEEK_END) < 0 || !(fp = fdopen(o->out_fd, "a"))) {
		cli_error("cannot write %s: %s", o->resume ? o->resume : o->output, strerror(errno));
		return NULL;
	}
	*append = st.st_size > 0;
	o->out_fd = -1; /* the FILE owns it now */
	return fp;
}

/* A guest's row written: the interrupt note counts it as the host's rows are counted. */
struct guest_count {
	struct progress *pr;
	size_t resumed;
};

static void guest_row_done(void *arg)
{
	struct guest_count *gc = arg;

	gc->pr->done++;
	interrupt_note_update(gc->pr->done + gc->resumed, gc->pr->total + gc->resumed);
}

static long *precopy_knob(struct run_opts *o, bool depth)
{
	return depth ? &o->precopy_depth : &o->precopy;
}

/* Cells that leave the knob alone get the value it has now, when another cell sets it. */
static void pin_knob(struct matrix_plan *p, const char *path, bool depth)
{
	bool any = false;
	long now;

	for (size_t c = 0; c < p->cells.n; c++)
		any = any || *precopy_knob(p->opts[c], depth) >= 0;
	if (!any || cb_sysctl_read_long(path, &now) != 0)
		return;
	for (size_t c = 0; c < p->cells.n; c++)
		if (*precopy_knob(p->opts[c], depth) < 0)
			*precopy_knob(p->opts[c], depth) = now;
}

/*
 * A cell that names no pre-copy mode or depth runs with the values the
 * system had before the matrix, never with what the cell before it set:
 * rows record them as identity (precopy, precopy_depth), and in interleaved
 * order the cell before changes from round to round.
 */
static void pin_unset_sysctls(struct matrix_plan *p)
{
	pin_knob(p, CB_PRECOPY_SYSCTL, false);
	pin_knob(p, CB_PRECOPY_DEPTH_SYSCTL, true);
}

int matrix_run_plan(struct matrix_opts *o, struct matrix_plan *p)
{
	struct progress pr = { .on = cli_progress_enabled() && !o->quiet && !o->plan, .start_ns = cb_monotonic_ns(), .ncells = p->cells.n };
	struct cb_report rep;
	bool append;
	int status = 0;
	FILE *out;

	out = open_results(o, &append);
	if (!out)
		return EXIT_USAGE;
	for (size_t i = 0; i < p->cells.n; i++)
		pr.total += matrix_cell_todo(p, i, o->cap) + matrix_cell_evidence_todo(p, i);
	interrupt_note_init(o, p->resumed, pr.total + p->resumed);
	/* Rows up to 4 KiB reach the file in one write(): a kill leaves whole rows or one torn last row. */
	setvbuf(out, NULL, _IOFBF, 1 << 16);
	cb_report_init(&rep, out, o->format, o->resume || o->output);
	rep.columns = o->columns;
	rep.started = append; /* the resumed file has its header */
	pin_unset_sysctls(p);
	if (!o->plan)
		status = run_host(o, p, &rep, &pr);
	if (o->plan && status >= 0) {
		status = run_ordered(o, p, &rep);
	} else if (status >= 0) { /* then each guest kernel's cells, in one boot each */
		struct mk_run g = { .cells = &p->cells, .spec = p->spec, .done = p->done, .reps = o->reps,
				    .order = o->order, .seed = o->order_seed,
				    .warmup = o->warmup, .report = &rep, .progress = pr.on, .row_done = guest_row_done };
		struct guest_count gc = { &pr, p->resumed };
		int rc;

		g.row_arg = &gc;
		cli_progress_clear();
		rc = mk_run_guests(&g);
		status = rc < 0 ? -1 : rc > 0 ? 1 : status;
	}
	cli_progress_clear();
	if (cb_report_finish(&rep) < 0 && status >= 0) {
		cli_error("cannot write results: %s", strerror(errno));
		status = -1;
	}
	if (out != stdout && fflush(out) != 0 && status >= 0) {
		cli_error("cannot write results: %s", strerror(errno));
		status = -1;
	}
	if (out != stdout && status < 0) /* while the lock is still held */
		cli_output_drop_if_empty(o->resume ? o->resume : o->output, fileno(out), o->out_created);
	if (out != stdout && fclose(out) != 0 && status >= 0) {
		cli_error("cannot write results: %s", strerror(errno));
		status = -1;
	}
	if (status >= 0 && !o->quiet && !o->plan)
		cli_note_rows_onward(o->resume ? o->resume : o->output, rep.rows);
	return status < 0 ? EXIT_RUN_FAILED : status; /* the worst row's code (cowbench/error.h) */
}

