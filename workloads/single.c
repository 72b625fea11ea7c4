#include <cowbench/workload.h>

/* One page only: the cost of a lone COW fault, and the worst case for any look-ahead. */
static long single_order(const struct cb_order_ctx *ctx, size_t *order)
{
	order[0] = ctx->npages / 2; /* the middle: no VMA edge on either side */
	return 1;
}

const struct cb_workload cb_workload_single = {
	.abi = CB_WORKLOAD_ABI,
	.name = "single",
	.help = "write one word to one page in the middle of the region",
	.page_order = single_order,
};
