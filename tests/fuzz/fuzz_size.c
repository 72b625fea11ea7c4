/* cb_size_parse and cb_size_round_pages: "64M", "1G", hostile numbers. */
#include "fuzz.h"

#include <cowbench/size.h>


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size);
	uint64_t bytes, rounded;

	if (cb_size_parse(s, &bytes) == 0)
		(void)cb_size_round_pages(bytes, 4096, &rounded);
	free(s);
	return 0;
}
