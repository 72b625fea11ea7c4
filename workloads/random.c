#include <cowbench/stats.h>
#include <cowbench/workload.h>

/* Every page once, in a seeded Fisher-Yates permutation: same seed, same order. */
static long random_order(const struct cb_order_ctx *ctx, size_t *order)
{
	uint64_t state = ctx->seed;

	for (size_t i = 0; i < ctx->npages; i++)
		order[i] = i;
	for (size_t i = ctx->npages; i > 1; i--) {
		size_t j = (size_t)cb_rand_below(&state, i), tmp = order[i - 1];

		order[i - 1] = order[j];
		order[j] = tmp;
	}
	return (long)ctx->npages;
}

const struct cb_workload cb_workload_random = {
	.abi = CB_WORKLOAD_ABI,
	.name = "random",
	.help = "write one word per page, every page once in a seeded random order",
	.flags = CB_WL_USES_SEED,
	.page_order = random_order,
};
