/* cb_nodes_parse: NUMA node lists ("0-1,3"). */
#include "fuzz.h"

#include <cowbench/numa.h>


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size);
	uint64_t mask;

	(void)cb_nodes_parse(s, &mask);
	free(s);
	return 0;
}
