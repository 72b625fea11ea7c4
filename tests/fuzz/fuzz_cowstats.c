/* cb_cowstats_parse: /proc/cow_stats text as the patched kernel (or anyone) writes it. */
#include "fuzz.h"

#include <cowbench/cowstats.h>


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size);
	struct cb_cowstats a, b;
	uint64_t v, d;

	if (cb_cowstats_parse(s, &a) == 0) {
		(void)cb_cowstats_get(&a, "cow_faults", &v);
		b = a;
		(void)cb_cowstats_delta(&a, &b, "cow_faults", &d);
		(void)cb_cowstats_delta(&a, &b, "copy_ns_max", &d);
	}
	free(s);
	return 0;
}
