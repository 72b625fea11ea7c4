/* cb_results_read: a whole results file (header, rows, torn or corrupt records). */
#include "fuzz.h"

#include <cowbench/results.h>


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cb_results res;
	char path[64], why[512];
	int fd = fuzz_file(data, size, path, sizeof(path));

	if (cb_results_read(path, &res, why, sizeof(why)) == 0) {
		for (size_t i = 0; i < res.n; i++) {
			char key[256];

			cb_row_key(&res.rows[i], key, sizeof(key));
		}
		cb_results_free(&res);
	}
	close(fd);
	return 0;
}
