/*
 * The closing summary of cowbench run on a terminal, as hyperfine and
 * `perf stat -r` end: the result in scaled units, its spread over reps,
 * and references measured in the same run (the same writes without COW,
 * a 4 KiB memcpy). Quiet when stdout is not a terminal or with --quiet.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/cowbench.h>
#include <cowbench/repstats.h>
#include <cowbench/units.h>

#include "run_cmd.h"

enum { V_P50, V_P99, V_MEMCPY, V_MEMCPY_COLD, V_FORK, V_MSGIB, V_PTE, V_SLOWDOWN, V_COPY, V_N };

struct cli_closing {
	struct cb_row first;    /* identity of the run */
	size_t ok, failed;
	double *v[V_N];
	size_t n[V_N], cap;
	double reference_p50;   /* the same writes on private pages, one unrecorded rep; NaN: none */
	struct cb_row *rows;    /* the ok reps themselves, for the warnings' causes */
	size_t nrows;
	double timer_ns;        /* the clock's read cost; 0: unknown */
	char stop[12];          /* --target-ci: why the reps stopped (the stop column); "": fixed reps */
};

struct cli_closing *cli_closing_new(void)
{
	struct cli_closing *cl = calloc(1, sizeof(*cl));

	if (cl)
		cl->reference_p50 = NAN;
	return cl;
}

void cli_closing_free(struct cli_closing *cl)
{
	if (!cl)
		return;
	for (int i = 0; i < V_N; i++)
		free(cl->v[i]);
	free(cl->rows);
	free(cl);
}

static double int_value(int64_t v)
{
	return v == CB_NA ? NAN : (double)v;
}

void cli_closing_add(struct cli_closing *cl, const struct cb_row *row)
{
	const double v[V_N] = {
		[V_P50] = row->lat_p50_ns, [V_P99] = row->lat_p99_ns, [V_MEMCPY] = row->memcpy_ns, [V_MEMCPY_COLD] = row->memcpy_cold_ns,
		[V_FORK] = int_value(row->fork_ns), [V_MSGIB] = row->ms_per_gib, [V_PTE] = int_value(row->vm_pte_kb),
		[V_SLOWDOWN] = row->slowdown, [V_COPY] = int_value(row->copy_ns),
	};

	if (!cl)
		return;
	if (cl->ok + cl->failed == 0) {
		cl->first = *row;
		cb_row_drop_refs(&cl->first); /* kept past the rep whose buffers its texts are */
	}
	if (row->stop[0])
		snprintf(cl->stop, sizeof(cl->stop), "%s", row->stop);
	if (strcmp(row->status, "ok") != 0) {
		cl->failed++;
		return;
	}
	if (cl->ok == cl->cap) {
		size_t cap = cl->cap ? cl->cap * 2 : 8;
		struct cb_row *nr;

		for (int i = 0; i < V_N; i++) {
			double *nv = realloc(cl->v[i], cap * sizeof(*nv));

			if (!nv)
				return; /* out of memory: this rep is left out of the summary */
			cl->v[i] = nv;
		}
		nr = realloc(cl->rows, cap * sizeof(*nr));
		if (!nr)
			return;
		cl->rows = nr;
		cl->cap = cap;
	}
	cl->rows[cl->nrows] = *row;
	cb_row_drop_refs(&cl->rows[cl->nrows++]); /* texts in the rep's buffers, which the next rep writes over */
	cl->ok++;
	for (int i = 0; i < V_N; i++)
		if (!isnan(v[i]))
			cl->v[i][cl->n[i]++] = v[i];
}

/*
 * The no-fork reference: one more rep of the same workload's writes on
 * already-private pages, unrecorded, without probes, over the first 16 MiB
 * at most (a private write's latency does not depend on the region's size,
 * and 4096 writes give a stable median). It costs one populate of at most
 * 16 MiB and one pass of cheap writes (docs/guide.md: "Measure: cowbench run").
 */
#define REFERENCE_MAX_BYTES (16u << 20)
bool cli_closing_wants_reference(const struct cli_closing *cl, const struct cb_run_spec *spec)
{
	/* Self-driven workloads (fork, snapshot, multi) have no page order to repeat without a fork. */
	return cl && spec->workload->page_order && spec->fork && cl->ok > 0;
}

void cli_closing_reference(struct cli_closing *cl, const struct cb_run_spec *spec)
{
	struct cb_run_spec ref = *spec;
	struct cb_row row;

	if (cl && spec->clock)
		cl->timer_ns = spec->clock->overhead_ns;
	if (!cli_closing_wants_reference(cl, spec))
		return;
	ref.fork = false;
	if (ref.size > REFERENCE_MAX_BYTES)
		ref.size = REFERENCE_MAX_BYTES;
	ref.probes = CB_PROBES_NONE;
	ref.inject_child_signal = 0;
	if (cb_run_rep(&ref, 0, &row) == 0 && !strcmp(row.status, "ok"))
		cl->reference_p50 = row.lat_p50_ns;
}

/*
 * One value over reps: the engine's centre and its interval at the level
 * the reps allow (cb_summarize, cowbench/estimate.h), and the CV: the
 * point and its interval from one method, as summarize prints them.
 */
struct spread {
	double centre, cv, ci_lo, ci_hi, level;
	size_t n;
};

static bool spread_of(const struct cli_closing *cl, int which, struct spread *s)
{
	const double *v = cl->v[which];
	size_t n = cl->n[which];
	struct cb_summary sum;

	if (n == 0 || cb_summarize(v, n, &sum) < 0)
		return false;
	*s = (struct spread){ .centre = sum.centre, .cv = sum.cv, .ci_lo = sum.ci_lo, .ci_hi = sum.ci_hi,
			      .level = sum.ci_level, .n = n };
	return true;
}

/* "over 5 reps, CV 1.2 %, 93.8 % CI [2.81 µs, 3.05 µs]": each number says what it is, the CI its exact level. */
static void print_spread(FILE *fp, const struct spread *s, bool time, enum cb_units_style st)
{
	char lo[24], hi[24];

	fprintf(fp, " over %zu rep%s", s->n, s->n == 1 ? "" : "s");
	if (isnan(s->cv))
		return;
	fprintf(fp, ", CV %.1f %%", s->cv * 100);
	if (!isfinite(s->ci_lo) || !isfinite(s->ci_hi) || isnan(s->level))
		return;
	if (time)
		fprintf(fp, ", %.1f %% CI [%s, %s]", s->level * 100, cb_fmt_ns(lo, sizeof(lo), s->ci_lo, st),
			cb_fmt_ns(hi, sizeof(hi), s->ci_hi, st));
	else
		fprintf(fp, ", %.1f %% CI [%.3g, %.3g]", s->level * 100, s->ci_lo, s->ci_hi);
}

static void print_writes(const struct cli_closing *cl, FILE *fp, enum cb_units_style st)
{
	const struct cb_row *r = &cl->first;
	struct spread p50, p99, mc;
	char a[24], b[24];

	if (!spread_of(cl, V_P50, &p50))
		return;
	if (r->fork == 1)
		fprintf(fp, ", %s writes after fork: COW write p50 %s", r->writer, cb_fmt_ns(a, sizeof(a), p50.centre, st));
	else if (r->fork == 0)
		fprintf(fp, ", %s writes without fork: write p50 %s", r->writer, cb_fmt_ns(a, sizeof(a), p50.centre, st));
	else
		fprintf(fp, ": write p50 %s", cb_fmt_ns(a, sizeof(a), p50.centre, st));
	if (spread_of(cl, V_P99, &p99))
		fprintf(fp, " (p99 %s)", cb_fmt_ns(b, sizeof(b), p99.centre, st));
	print_spread(fp, &p50, true, st);
	if (!isnan(cl->reference_p50) && cl->reference_p50 > 0 && cli_at_timer_floor(cl->reference_p50, cl->timer_ns))
		/* The measured private write is mostly the timer's own cost: the true one is smaller, the ratio larger. */
		fprintf(fp, ";\n  at least %.0f%s the same write without COW (%s, one unrecorded --no-fork rep, is within "
			    "%d reads of the timer's cost, %s a read: the private write is below what the timer resolves)",
			p50.centre / cl->reference_p50, st == CB_UNITS_UTF8 ? "\303\227" : "x",
			cb_fmt_ns(a, sizeof(a), cl->reference_p50, st), CLI_TIMER_FLOOR_READS,
			cb_fmt_ns(b, sizeof(b), cl->timer_ns, st));
	else if (!isnan(cl->reference_p50) && cl->reference_p50 > 0)
		fprintf(fp, ";\n  %.0f%s the same write without COW (%s, one unrecorded --no-fork rep)",
			p50.centre / cl->reference_p50, st == CB_UNITS_UTF8 ? "\303\227" : "x", cb_fmt_ns(a, sizeof(a), cl->reference_p50, st));
	if (spread_of(cl, V_MEMCPY, &mc)) {
		struct spread cold;

		fprintf(fp, ";\n  a 4 KiB memcpy in user space takes %s (warm)", cb_fmt_ns(b, sizeof(b), mc.centre, st));
		if (spread_of(cl, V_MEMCPY_COLD, &cold))
			fprintf(fp, ", %s into a page just populated (its first touch%s)", cb_fmt_ns(a, sizeof(a), cold.centre, st),
				cold.centre > 4 * mc.centre && cold.centre - mc.centre > 1000
					? ": the host backs this VM's memory lazily, and every COW copy pays it too; "
					  "cowbench info, --prefault"
					: "");
	}
}

/* The headline the summary led with, and its warnings. */
static void warn(const struct cli_closing *cl, FILE *fp, enum cb_units_style st)
{
	struct cli_noise_input in = { .rows = cl->rows, .n = cl->nrows, .timer_ns = cl->timer_ns };

	if (cl->n[V_FORK]) {
		in.column = "fork_ns", in.what = "fork()", in.time = true;
	} else if (cl->n[V_SLOWDOWN]) {
		in.column = "slowdown", in.what = "slowdown", in.time = false;
	} else if (cl->n[V_P50]) {
		in.column = "lat_p50_ns", in.time = true;
		in.what = cl->first.fork == 1 ? "COW write p50" : "write p50";
	} else {
		return;
	}
	cli_noise_warnings(&in, fp, st);
}

void cli_closing_print(const struct cli_closing *cl, FILE *out)
{
	enum cb_units_style st = cb_units_style_for(out);
	const struct cb_row *r;
	struct spread s;
	char a[24], size[24], *text = NULL;
	size_t len = 0;
	FILE *fp;

	if (!cl || cl->ok + cl->failed == 0)
		return;
	/* Written whole, then wrapped to the terminal's width. */
	if (!(fp = open_memstream(&text, &len)))
		return;
	r = &cl->first;
	fprintf(fp, "\n%s %s", r->workload, cb_fmt_bytes(size, sizeof(size), (double)r->size_bytes));
	if (r->method[0])
		fprintf(fp, " (%s)", r->method);
	if (spread_of(cl, V_FORK, &s)) {
		fprintf(fp, ": fork() %s", cb_fmt_ns(a, sizeof(a), s.centre, st));
		print_spread(fp, &s, true, st);
		if (spread_of(cl, V_MSGIB, &s))
			fprintf(fp, "; %.3g ms per GiB", s.centre);
		if (spread_of(cl, V_PTE, &s))
			fprintf(fp, ", page tables %s", cb_fmt_bytes(a, sizeof(a), s.centre * 1024));
	} else if (spread_of(cl, V_SLOWDOWN, &s)) {
		fprintf(fp, ": writers %.2f%s as slow as without a snapshot", s.centre,
			st == CB_UNITS_UTF8 ? "\303\227" : "x");
		print_spread(fp, &s, false, st);
		if (spread_of(cl, V_COPY, &s))
			fprintf(fp, "; checkpoint %s", cb_fmt_ns(a, sizeof(a), s.centre, st));
	} else {
		print_writes(cl, fp, st);
	}
	if (cl->failed)
		fprintf(fp, "; %zu of %zu reps failed (see status)", cl->failed, cl->ok + cl->failed);
	if (cl->stop[0] && !strcmp(cl->stop, "target"))
		fprintf(fp, ";\n  --target-ci: met after %zu reps", cl->ok + cl->failed);
	else if (cl->stop[0])
		fprintf(fp, ";\n  --target-ci: not met, stopped at %s after %zu reps", cl->stop, cl->ok + cl->failed);
	fputc('\n', fp);
	warn(cl, fp, st);
	if (fclose(fp) == 0 && text)
		cb_print_wrapped(out, cb_terminal_width(out), 4, text);
	free(text);
}
