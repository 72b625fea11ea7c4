#include <cowbench/workload.h>

/* Pages 0..N-1: the best case for any look-ahead (the study's "sequential"). */
static long seq_order(const struct cb_order_ctx *ctx, size_t *order)
{
	for (size_t i = 0; i < ctx->npages; i++)
		order[i] = i;
	return (long)ctx->npages;
}

const struct cb_workload cb_workload_seq = {
	.abi = CB_WORKLOAD_ABI,
	.name = "seq",
	.help = "write one word per page, pages 0..N-1 in order",
	.page_order = seq_order,
};
