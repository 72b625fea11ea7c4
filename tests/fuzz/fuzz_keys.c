/* Cell keys ("workload=seq size=16M"): cb_key_value and cb_key_replace, input split at the first two '\n'. */
#include "fuzz.h"

#include <cowbench/matrix.h>


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size), *name = strchr(s, '\n'), *value, out[CB_CELL_KEY_LEN], small[8];

	if (name) {
		*name++ = '\0';
		value = strchr(name, '\n');
		if (value)
			*value++ = '\0';
		else
			value = "x";
		(void)cb_key_value(s, name, out, sizeof(out));
		(void)cb_key_value(s, name, small, sizeof(small));
		(void)cb_key_replace(s, name, value, out, sizeof(out));
		(void)cb_key_replace(s, name, value, small, sizeof(small));
	}
	free(s);
	return 0;
}
