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
 * The host's cells run in the repetition loop (cowbench/reploop.h), in the
 * order --order gives (cowbench/order.h); what the loop reports comes back
 * through these hooks: a cell's sysctls, progress, rows, cells that stop.
 */
struct host_run {
	const struct matrix_opts *o;
	struct matrix_plan *p;
	struct cell_sink sink;
};

static int host_settings(void *arg, size_t c)
{
	struct host_run *h = arg;

	return cli_run_apply_sysctls(h->p->opts[c]);
}

static void host_journal(void *arg)
{
	(void)arg;
	cli_restore_sysctls_at_exit(); /* also on SIGINT/SIGTERM/SIGHUP in the middle of the reps */
}

static void host_rep_begins(void *arg, size_t c, enum cb_loop_rep kind, long rep, struct cb_run_spec *spec)
{
	struct host_run *h = arg;

	(void)kind;
	(void)rep;
	(void)spec;
	show_progress(h->sink.pr, h->p, c, c + 1);
}

static int host_emit(void *arg, size_t c, struct cb_row *row)
{
	struct host_run *h = arg;

	h->sink.cell = &h->p->cells.cell[c];
	return emit_cell_row(&h->sink, row);
}

/* A cell that stopped frees the rest of its bound. */
static void host_stopped(void *arg, size_t c, size_t freed, bool at_start)
{
	struct host_run *h = arg;

	if (at_start)
		cli_note("%s: the %zu reps already there meet --target-ci or its bounds; nothing to add",
			 h->p->cells.cell[c].key, h->p->reps[c].reps);
	h->sink.pr->total -= freed;
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

/*
 * The host's part of the plan: its timed reps in --order, each comparison
 * set's evidence reps after it, then evidence reps no block ran. Round ids:
 * shard I of N numbers I, I + N, ... 0..exit code, -1.
 */
static int run_host(const struct matrix_opts *o, struct matrix_plan *p, struct cb_report *rep, struct progress *pr)
{
	struct host_run h = { o, p, { NULL, rep, pr, p->resumed } };
	struct cb_order_step *steps = NULL;
	size_t n = 0, *set_of = calloc(p->cells.n + 1, sizeof(*set_of));
	int64_t step = o->shard_n ? o->shard_n : 1;
	long sets;
	int rc = -1;

	if (!set_of) {
		cli_error("out of memory");
		return -1;
	}
	if (host_steps(o, p, &steps, &n, set_of, &sets) == 0) {
		struct cb_reploop loop = {
			.ncells = p->cells.n, .spec = p->spec, .reps = p->reps, .partner = p->partner,
			.target = o->adaptive.target, .ev_done = p->ev_done, .set_of = set_of, .steps = steps,
			.nsteps = n, .warmup = o->warmup, .round_step = step,
			.round_first = p->last_round ? p->last_round + step : (o->shard_n ? o->shard_i : 1),
			.hooks = { host_settings, host_journal, host_rep_begins, host_emit, host_stopped, &h },
		};

		rc = cb_reploop_run(&loop);
		if (rc == -ENOMEM)
			cli_error("out of memory");
	}
	free(steps);
	free(set_of);
	return rc < 0 ? -1 : rc;
}

/*
 * In a guest (--plan): the host's steps in the host's order, which
 * interleaves the cells it compares rep by rep, each row with the round id
 * the host gave it; the guest's cells have no evidence reps (the host's
 * plan holds timed reps only).
 */
static int run_ordered(const struct matrix_opts *o, struct matrix_plan *p, struct cb_report *rep, struct progress *pr)
{
	struct host_run h = { o, p, { NULL, rep, pr, p->resumed } };
	size_t n = o->plan_lines.n, ncells = p->cells.n;
	struct cb_order_step *steps = calloc(n + 1, sizeof(*steps));
	int64_t *ids = calloc(n + 1, sizeof(*ids));
	size_t *set_of = malloc((ncells + 1) * sizeof(*set_of));
	bool *ev_done = malloc((ncells * CB_EVIDENCE_REPS + 1) * sizeof(*ev_done));
	int rc = -1;

	if (!steps || !ids || !set_of || !ev_done) {
		cli_error("out of memory");
		goto out;
	}
	for (size_t c = 0; c < ncells; c++)
		set_of[c] = CB_ORDER_NO_SET;
	for (size_t i = 0; i < ncells * CB_EVIDENCE_REPS; i++)
		ev_done[i] = true;
	for (size_t i = 0; i < n; i++) {
		long c = cb_cells_find(&p->cells, o->plan_lines.keys[i]);

		if (c < 0)
			goto out; /* the plan made the cells: never */
		steps[i] = (struct cb_order_step){ .cell = (size_t)c, .rep = o->plan_lines.reps[i] };
		ids[i] = o->plan_lines.rounds[i] > 0 ? o->plan_lines.rounds[i] : CB_NA;
	}
	rc = cb_reploop_run(&(struct cb_reploop){
		.ncells = ncells, .spec = p->spec, .reps = p->reps, .ev_done = ev_done, .set_of = set_of,
		.steps = steps, .nsteps = n, .warmup = o->warmup, .round_ids = ids,
		.hooks = { host_settings, host_journal, host_rep_begins, host_emit, host_stopped, &h },
	});
	if (rc == -ENOMEM)
		cli_error("out of memory");
	rc = rc < 0 ? -1 : rc > 0; /* 1: a rep failed (its row says how) */
out:
	free(steps);
	free(ids);
	free(set_of);
	free(ev_done);
	return rc;
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
		status = run_ordered(o, p, &rep, &pr);
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

