#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <cowbench/run.h>
#include <cowbench/stats.h>
#include <cowbench/workload.h>

/*
 * Runs of L consecutive pages, each written in ascending order, at seeded
 * random places that do not overlap (runs may abut), in random order, until
 * P % of the pages are written; the last run written is cut to make P %
 * exact. The partly sequential case where a look-ahead window should win
 * inside a run and waste at its end.
 */
struct burst_opts {
	unsigned burst; /* L, pages per run */
	unsigned touch; /* P, percent of the region's pages */
};

static const struct cb_option burst_options[] = {
	{ .name = "burst", .type = CB_OPT_UINT, .offset = offsetof(struct burst_opts, burst),
	  .min = 1, .max = 1u << 20, .def = 16, .help = "pages per run of consecutive writes" },
	{ .name = "touch", .type = CB_OPT_PERCENT, .offset = offsetof(struct burst_opts, touch),
	  .min = 1, .max = 100, .def = 10, .help = "percent of the region's pages to write (rounded down, at least 1)" },
	{ 0 },
};

/*
 * k sorted distinct values of [0, m) (Knuth's selection sampling): slot s's
 * value minus s is the number of unwritten pages before run s.
 */
static void choose_sorted(size_t m, size_t k, uint64_t *state, size_t *out)
{
	size_t got = 0;

	for (size_t i = 0; i < m && got < k; i++)
		if (cb_rand_below(state, m - i) < k - got)
			out[got++] = i;
}

static long burst_order(const struct cb_order_ctx *ctx, size_t *order)
{
	const struct burst_opts *o = CB_WL_OPTS(ctx->opts, struct burst_opts);
	size_t n = ctx->npages, want = cb_pages_percent(n, o->touch), len = o->burst;
	size_t runs = (want + len - 1) / len, last = want - (runs - 1) * len, done = 0, before = 0;
	size_t *start = malloc(runs * sizeof(*start)), *perm = malloc(runs * sizeof(*perm));
	uint64_t state = ctx->seed;

	if (!start || !perm || len > n) {
		free(start);
		free(perm);
		return len > n ? -EINVAL : -ENOMEM;
	}
	/* Which run is written when: the last one written is the short one. */
	for (size_t s = 0; s < runs; s++)
		perm[s] = s;
	cb_shuffle_prefix(perm, runs, runs, &state);
	/* Where: runs placed among the n - want unwritten pages, uniformly. */
	choose_sorted(n - want + runs, runs, &state, start);
	for (size_t s = 0; s < runs; s++) {
		start[s] = start[s] - s + before;
		before += s == perm[runs - 1] ? last : len;
	}
	for (size_t j = 0; j < runs; j++) {
		size_t s = perm[j], l = j == runs - 1 ? last : len;

		for (size_t p = 0; p < l; p++)
			order[done++] = start[s] + p;
	}
	free(start);
	free(perm);
	return (long)done;
}

static int burst_check(const struct cb_run_spec *spec, char *why, size_t len)
{
	unsigned l = CB_WL_OPTS(&spec->opts, struct burst_opts)->burst;
	uint64_t pages = spec->size / spec->page_size;

	if (l <= pages)
		return 0;
	snprintf(why, len, "--burst=%u is longer than the region (%llu pages)", l, (unsigned long long)pages);
	return -EINVAL;
}

const struct cb_workload cb_workload_burst = {
	.abi = CB_WORKLOAD_ABI,
	.name = "burst",
	.help = "write runs of L consecutive pages (--burst=L) at random places until P % are written (--touch=P)",
	.flags = CB_WL_USES_SEED,
	.page_order = burst_order,
	.check = burst_check,
	.options = burst_options,
	.options_size = sizeof(struct burst_opts),
};
