#include <stddef.h>

#include <cowbench/stats.h>
#include <cowbench/workload.h>

/*
 * A seeded random P % of the pages, each once, in random order: a
 * Redis-like write set during BGSAVE, where any look-ahead mostly copies
 * pages nobody writes.
 */
struct hotset_opts {
	unsigned touch; /* P, percent of the region's pages */
};

static const struct cb_option hotset_options[] = {
	{ .name = "touch", .type = CB_OPT_PERCENT, .offset = offsetof(struct hotset_opts, touch),
	  .min = 1, .max = 100, .def = 10, .help = "percent of the region's pages to write (rounded down, at least 1)" },
	{ 0 },
};

static long hotset_order(const struct cb_order_ctx *ctx, size_t *order)
{
	size_t n = ctx->npages, want = cb_pages_percent(n, CB_WL_OPTS(ctx->opts, struct hotset_opts)->touch);
	uint64_t state = ctx->seed;

	for (size_t i = 0; i < n; i++)
		order[i] = i;
	cb_shuffle_prefix(order, n, want, &state);
	return (long)want;
}

const struct cb_workload cb_workload_hotset = {
	.abi = CB_WORKLOAD_ABI,
	.name = "hotset",
	.help = "write one word to a seeded random P % of the pages (--touch=P), in random order",
	.flags = CB_WL_USES_SEED,
	.page_order = hotset_order,
	.options = hotset_options,
	.options_size = sizeof(struct hotset_opts),
};
