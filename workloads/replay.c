#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/error.h>
#include <cowbench/run.h>
#include <cowbench/touch.h>
#include <cowbench/trace.h>
#include <cowbench/workload.h>

/*
 * A recorded program's first writes after fork (cowbench record), played
 * back: the region holds the mappings the recorded side wrote, one after
 * the other in their snapshot order, and the writer writes their pages in
 * the recorded order. The fork with the most writes of the writer's side
 * is played; --writer says which side (the trace's own side must match).
 */
struct replay_opts {
	char trace[CB_OPT_PATH_MAX];
	bool gaps;
};

/* --gaps: a played fork longer than this is refused (a rep, and each warm-up, lasts that long). */
#define GAPS_MAX_NS (600ull * 1000000000ull)

static const struct cb_option replay_options[] = {
	{ .name = "trace", .type = CB_OPT_PATH, .offset = offsetof(struct replay_opts, trace),
	  .help = "the trace file cowbench record wrote (required)" },
	{ .name = "gaps", .type = CB_OPT_FLAG, .offset = offsetof(struct replay_opts, gaps), .def = 0,
	  .help = "keep the recorded time between writes (each write waits for its time after the first; "
		  "elapsed then includes the waits, latencies do not); the played span must be 600 s at most" },
	{ 0 },
};

/* The played fork's layout: region page of each recorded mapping's first page. */
struct layout {
	uint32_t fork;
	enum cb_trace_side side;
	uint32_t nmaps;
	uint64_t *base;   /* by map index; UINT64_MAX for mappings the side did not write */
	uint64_t pages;   /* the region the played writes need */
	size_t writes;
	uint64_t span_ns; /* from the side's first played write to its last */
};

static enum cb_trace_side side_of(const struct cb_run_spec *spec)
{
	return spec->writer == CB_WRITER_CHILD ? CB_TRACE_CHILD : CB_TRACE_PARENT;
}

/* The fork with the most records of side (the lowest on a tie). */
static uint32_t busiest_fork(const struct cb_trace *t, enum cb_trace_side side, size_t *writes)
{
	uint32_t best = 0, cur = 0;
	size_t best_n = 0, n = 0;

	for (size_t i = 0; i <= t->n; i++) {
		if (i == t->n || t->rec[i].fork != cur) {
			if (n > best_n) {
				best = cur;
				best_n = n;
			}
			if (i == t->n)
				break;
			cur = t->rec[i].fork;
			n = 0;
		}
		n += t->rec[i].side == side;
	}
	*writes = best_n;
	return best;
}

/* Time from the side's first write in the fork to its last (records are in time order within a fork). */
static uint64_t side_span(const struct cb_trace *t, uint32_t fork, enum cb_trace_side side)
{
	bool first = true;
	uint64_t t0 = 0, span = 0;

	for (size_t i = 0; i < t->n; i++) {
		const struct cb_trace_rec *r = &t->rec[i];

		if (r->fork != fork || r->side != side)
			continue;
		if (first)
			t0 = r->t_ns;
		first = false;
		span = r->t_ns - t0;
	}
	return span;
}

static int plan(const struct cb_trace *t, enum cb_trace_side side, struct layout *l)
{
	uint64_t *pages;

	memset(l, 0, sizeof(*l));
	l->side = side;
	l->fork = busiest_fork(t, side, &l->writes);
	if (!l->fork)
		return -ENOENT;
	for (size_t i = 0; i < t->n; i++)
		if (t->rec[i].fork == l->fork && t->rec[i].map + 1 > l->nmaps)
			l->nmaps = t->rec[i].map + 1;
	pages = calloc(l->nmaps, sizeof(*pages));
	l->base = malloc(l->nmaps * sizeof(*l->base));
	if (!pages || !l->base) {
		free(pages);
		free(l->base);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->n; i++) {
		const struct cb_trace_rec *r = &t->rec[i];

		if (r->fork != l->fork || r->side != side)
			continue;
		if (pages[r->map] && pages[r->map] != r->map_pages) {
			free(pages);
			free(l->base);
			return -EINVAL; /* one mapping, two sizes */
		}
		pages[r->map] = r->map_pages;
	}
	l->span_ns = side_span(t, l->fork, side);
	for (uint32_t m = 0; m < l->nmaps; m++) {
		l->base[m] = pages[m] ? l->pages : UINT64_MAX;
		l->pages += pages[m];
	}
	free(pages);
	return 0;
}

static int load(const struct cb_run_spec *spec, struct cb_trace *t, struct layout *l, char *why, size_t len)
{
	const char *path = CB_WL_OPTS(&spec->opts, struct replay_opts)->trace;
	char err[200];
	int e;

	if (!path[0]) {
		snprintf(why, len, "--workload=replay needs --trace=FILE (from cowbench record)");
		return -EINVAL;
	}
	if ((e = cb_trace_read(path, t, err, sizeof(err))) < 0) {
		snprintf(why, len, "--trace=%s: %s", path, e == CB_EFORMAT ? err : strerror(-e));
		return -EINVAL;
	}
	if ((e = plan(t, side_of(spec), l)) < 0) {
		snprintf(why, len, "--trace=%s: %s", path,
			 e == -ENOENT ? "no writes of this --writer's side (the trace's other side wrote: try the other "
					"--writer)"
			 : e == -EINVAL ? "one mapping with two sizes in one fork"
					: strerror(-e));
		cb_trace_free(t);
		return e == -ENOMEM ? e : -EINVAL;
	}
	return 0;
}

static int replay_check(const struct cb_run_spec *spec, char *why, size_t len)
{
	struct cb_trace t;
	struct layout l;
	int e = load(spec, &t, &l, why, len);

	if (e < 0)
		return e;
	if (spec->page_size != 4096 || spec->size / spec->page_size < l.pages) {
		snprintf(why, len, "--trace needs --size=%lluK at least (the %llu pages of the mappings its %zu writes "
			 "of fork %u land in; leave --size out for exactly that) and 4 KiB pages", (unsigned long long)l.pages * 4, (unsigned long long)l.pages,
			 l.writes, l.fork);
		e = -EINVAL;
	} else if (CB_WL_OPTS(&spec->opts, struct replay_opts)->gaps && l.span_ns > GAPS_MAX_NS) {
		snprintf(why, len, "--gaps: the %zu writes of fork %u span %.1f s; each rep would last that long, and "
			 "--gaps allows %.0f s at most (replay without --gaps, or record a shorter window)", l.writes,
			 l.fork, (double)l.span_ns / 1e9, (double)GAPS_MAX_NS / 1e9);
		e = -EINVAL;
	} else if (CB_WL_OPTS(&spec->opts, struct replay_opts)->gaps && !spec->fork) {
		snprintf(why, len, "--gaps replays the time after a fork: it needs the fork (not --no-fork)");
		e = -EINVAL;
	}
	free(l.base);
	cb_trace_free(&t);
	return e;
}

/* Without --size: the pages of the mappings the played fork's writes land in. */
static int replay_input_size(const struct cb_run_spec *spec, uint64_t *bytes, char *why, size_t len)
{
	struct cb_trace t;
	struct layout l;
	int e = load(spec, &t, &l, why, len);

	if (e < 0)
		return e;
	*bytes = l.pages * 4096;
	free(l.base);
	cb_trace_free(&t);
	return 0;
}

/*
 * --break=populate: what a program that knows what it will rewrite asks for,
 * one MADV_POPULATE_WRITE per contiguous run of the pages it writes in each
 * recorded mapping (a run never crosses into the next mapping, and no page
 * the trace does not write is populated). Returns the number of runs.
 */
static size_t written_runs(const struct layout *l, const uint8_t *seen, size_t npages, struct cb_page_run *runs)
{
	size_t n = 0;

	for (uint32_t m = 0; m < l->nmaps; m++) {
		uint64_t end = l->pages;

		if (l->base[m] == UINT64_MAX)
			continue;
		for (uint32_t k = m + 1; k < l->nmaps; k++)
			if (l->base[k] != UINT64_MAX) {
				end = l->base[k];
				break;
			}
		end = end < npages ? end : npages;
		for (uint64_t p = l->base[m]; p < end; p++) {
			if (!((seen[p / 8] >> (p % 8)) & 1))
				continue;
			if (p > l->base[m] && n && runs[n - 1].first + runs[n - 1].count == p)
				runs[n - 1].count++;
			else
				runs[n++] = (struct cb_page_run){ .first = (size_t)p, .count = 1 };
		}
	}
	return n;
}

static long replay_order(const struct cb_order_ctx *ctx, size_t *order)
{
	struct cb_run_spec spec;
	struct cb_trace t;
	struct layout l;
	char why[256];
	size_t n = 0;
	uint8_t *seen;
	uint64_t t0 = 0;
	bool gaps = CB_WL_OPTS(ctx->opts, struct replay_opts)->gaps && ctx->at_ns && ctx->paced;
	int e;

	memset(&spec, 0, sizeof(spec));
	spec.opts = *ctx->opts;
	spec.writer = (enum cb_writer)ctx->writer;
	if ((e = load(&spec, &t, &l, why, sizeof(why))) < 0)
		return e;
	seen = calloc(ctx->npages / 8 + 1, 1);
	for (size_t i = 0; seen && i < t.n; i++) {
		const struct cb_trace_rec *r = &t.rec[i];
		uint64_t page;

		if (r->fork != l.fork || r->side != l.side)
			continue;
		page = l.base[r->map] + r->page;
		if (page >= ctx->npages || (seen[page / 8] >> (page % 8)) & 1)
			continue; /* the check made room; a page twice is written once */
		seen[page / 8] |= (uint8_t)(1u << (page % 8));
		if (n == 0)
			t0 = r->t_ns;
		if (gaps)
			ctx->at_ns[n] = r->t_ns - t0;
		order[n++] = (size_t)page;
	}
	e = seen ? 0 : -ENOMEM;
	if (gaps && n)
		*ctx->paced = true;
	if (seen && ctx->break_runs)
		*ctx->break_nruns = written_runs(&l, seen, ctx->npages, ctx->break_runs);
	free(seen);
	free(l.base);
	cb_trace_free(&t);
	return e < 0 ? e : n ? (long)n : -EINVAL;
}

const struct cb_workload cb_workload_replay = {
	.abi = CB_WORKLOAD_ABI,
	.name = "replay",
	.help = "write the pages a recorded program wrote after fork (--trace=FILE from cowbench record), in its order",
	.flags = CB_WL_NEEDS_INPUT,
	.page_order = replay_order,
	.check = replay_check,
	.options = replay_options,
	.options_size = sizeof(struct replay_opts),
	.input_size = replay_input_size,
};
