#ifndef COWBENCH_STRMAP_H
#define COWBENCH_STRMAP_H

#include <stdbool.h>
#include <stddef.h>

/*
 * A string -> index hash map (open addressing, FNV-1a), so duplicate
 * checks over header columns and matrix cells stay linear: a 100k-column
 * header or a 90,000-cell matrix must not take a quadratic minute.
 */
struct cb_strmap {
	struct cb_strmap_slot *slot;
	size_t cap, n;
};

/** Insert key (copied) -> value. 1: added; 0: present already (*old = its value); -ENOMEM. */
int cb_strmap_put(struct cb_strmap *m, const char *key, size_t value, size_t *old);
/** The value of key, or false. */
bool cb_strmap_get(const struct cb_strmap *m, const char *key, size_t *value);
void cb_strmap_free(struct cb_strmap *m);

#endif
