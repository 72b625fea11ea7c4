#ifndef COWBENCH_ARRAY_H
#define COWBENCH_ARRAY_H

/*
 * The growing array every list of the library and the commands is kept in
 * (rows, cells, lines, groups, events): n elements of size bytes in room
 * for *cap, the room doubled when it is full.
 */
#include <stddef.h>

/**
 * Room for element n of the array v (n elements of size bytes, room for
 * *cap): v itself while n < *cap; else v grown to twice *cap (to first
 * when *cap is 0), *cap raised, and the new array returned. NULL when out
 * of memory or when the size overflows: v and *cap stay as they were.
 * Store the result back before using it:
 *
 *	struct line *l = cb_array_room(ls->l, &ls->cap, ls->n, sizeof(*l), 64);
 *	if (!l)
 *		return -ENOMEM;
 *	ls->l = l;
 */
void *cb_array_room(void *v, size_t *cap, size_t n, size_t size, size_t first);

#endif
