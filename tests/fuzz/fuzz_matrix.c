/* cb_matrix_load + cb_matrix_cells: an INI matrix file, then every cell it enumerates. */
#include "fuzz.h"

#include <stdbool.h>

#include <cowbench/matrix.h>


/* Up to CB_MATRIX_MAX_CELLS cells are legal and take seconds under ASan: enumerate small plans only. */
static bool small_plan(const struct cb_matrix *m)
{
	size_t total = 0;

	for (size_t g = 0; g < m->ngroups; g++) {
		size_t n = 1;

		for (size_t a = 0; a < m->groups[g].naxes && n <= 20000; a++)
			n *= m->groups[g].axes[a].nvalues ? m->groups[g].axes[a].nvalues : 1;
		total += n;
	}
	return total <= 20000;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cb_matrix m;
	struct cb_cells cells;
	char path[64], why[512];
	int fd = fuzz_file(data, size, path, sizeof(path));

	cb_matrix_init(&m);
	if (cb_matrix_load(&m, path, why, sizeof(why)) == 0 && small_plan(&m) &&
	    cb_matrix_cells(&m, &cells, why, sizeof(why)) == 0) {
		if (cells.n)
			(void)cb_cells_find(&cells, cells.cell[cells.n - 1].key);
		cb_cells_shard(&cells, 1, 2);
		cb_cells_shuffle(&cells, 7);
		cb_cells_free(&cells);
	}
	cb_matrix_free(&m);
	close(fd);
	return 0;
}
