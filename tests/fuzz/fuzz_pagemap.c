/* cb_pagemap_classify: before/after/other entries and a touched-page list, all from the input. */
#include "fuzz.h"

#include <cowbench/pagemap.h>


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n, nt;
	uint64_t *e;
	size_t *touched;
	struct cb_pagemap_diff d;

	if (size < 1)
		return 0;
	n = (size - 1) / 24; /* three entries per page */
	nt = data[0] % 64;
	e = calloc(3 * n + 1, sizeof(*e));
	touched = calloc(nt + 1, sizeof(*touched));
	if (!e || !touched)
		abort();
	memcpy(e, data + 1, n * 24);
	for (size_t k = 0; k < nt; k++)
		touched[k] = n ? (size_t)data[(k % size)] % (n + 2) : k; /* some past the end on purpose */
	(void)cb_pagemap_classify(e, e + n, e + 2 * n, n, data[0] & 1 ? touched : NULL, nt, &d);
	(void)cb_pagemap_classify(e, e + n, NULL, n, NULL, 0, &d);
	free(e);
	free(touched);
	return 0;
}
