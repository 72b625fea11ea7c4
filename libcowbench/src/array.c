/* The growing array (cowbench/array.h). */
#include <stdint.h>
#include <stdlib.h>

#include <cowbench/array.h>

void *cb_array_room(void *v, size_t *cap, size_t n, size_t size, size_t first)
{
	size_t want = *cap ? *cap * 2 : first ? first : 1;
	void *p;

	if (n < *cap)
		return v;
	if (want <= n)
		want = n + 1;
	if (size && want > SIZE_MAX / size)
		return NULL;
	if (!(p = realloc(v, want * size)))
		return NULL;
	*cap = want;
	return p;
}
