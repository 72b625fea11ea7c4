/* cb_smaps_parse: smaps / smaps_rollup text (sums over mappings must not overflow). */
#include "fuzz.h"

#include <cowbench/smaps.h>


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size);
	struct cb_smaps sm;

	(void)cb_smaps_parse(s, &sm);
	free(s);
	return 0;
}
