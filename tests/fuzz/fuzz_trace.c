/* cb_trace_parse: trace files from cowbench record (or anyone), as --workload=replay reads them. */
#include "fuzz.h"

#include <cowbench/trace.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cb_trace t;
	char err[256];

	if (cb_trace_parse((const char *)data, size, &t, err, sizeof(err)) == 0) {
		for (size_t i = 0; i < t.n; i++) /* every record within the limits the reader promises */
			if (t.rec[i].page >= t.rec[i].map_pages || t.rec[i].fork == 0 ||
			    t.rec[i].map_pages > CB_TRACE_MAX_MAP_PAGES)
				__builtin_trap();
		cb_trace_free(&t);
	}
	return 0;
}
