#include <stddef.h>

#include <cowbench/workload.h>

/* Pages 0, K, 2K, ...: how much of a look-ahead's work is wasted when only every K-th page is written. */
struct stride_opts {
	unsigned stride; /* K */
};

static const struct cb_option stride_options[] = {
	{ .name = "stride", .type = CB_OPT_UINT, .offset = offsetof(struct stride_opts, stride),
	  .min = 1, .max = 1u << 20, .def = 2, .help = "write every K-th page (1: every page, as seq)" },
	{ 0 },
};

static long stride_order(const struct cb_order_ctx *ctx, size_t *order)
{
	size_t k = CB_WL_OPTS(ctx->opts, struct stride_opts)->stride, n = 0;

	for (size_t page = 0; page < ctx->npages; page += k)
		order[n++] = page;
	return (long)n;
}

const struct cb_workload cb_workload_stride = {
	.abi = CB_WORKLOAD_ABI,
	.name = "stride",
	.help = "write one word to every K-th page (--stride=K), pages 0, K, 2K, ... in order",
	.page_order = stride_order,
	.options = stride_options,
	.options_size = sizeof(struct stride_opts),
};
