/* cb_shard_parse: "I/N". */
#include "fuzz.h"

#include <cowbench/matrix.h>


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size);
	unsigned i, n;

	if (cb_shard_parse(s, &i, &n) == 0 && (i < 1 || i > n))
		abort(); /* the contract: 1 <= I <= N */
	free(s);
	return 0;
}
