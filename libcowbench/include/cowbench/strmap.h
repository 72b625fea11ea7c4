#ifndef COWBENCH_STRMAP_H
#define COWBENCH_STRMAP_H

#include <stdbool.h>
#include <stddef.h>

/*
 * A string -> index hash map (open addressing, FNV-1a), so duplicate
 * checks over header columns and matrix cells stay linear: a 100k-column
 * header or a 90,000-cell matrix must not take a quadratic minute. It also
 * counts (cb_strmap_add): how often each function or call path was seen.
 * A zeroed struct is an empty map.
 */
struct cb_strmap {
	struct cb_strmap_slot *slot;
	size_t cap, n;
};

/** Insert key (copied) -> value. 1: added; 0: present already (*old = its value); -ENOMEM. */
int cb_strmap_put(struct cb_strmap *m, const char *key, size_t value, size_t *old);
/** The value of key, or false. */
bool cb_strmap_get(const struct cb_strmap *m, const char *key, size_t *value);
/** Count: add n to key's value (a new key, copied, starts at n). 0, or -ENOMEM. */
int cb_strmap_add(struct cb_strmap *m, const char *key, size_t n);
void cb_strmap_free(struct cb_strmap *m);

struct cb_strmap_entry {
	const char *key; /* the map's own copy: valid until the map is freed */
	size_t value;
};

/**
 * Every entry, the largest value first and equal values by key: a table of
 * counts, most common first. *n gets how many; NULL (*n = 0) when out of
 * memory. The caller frees the array.
 */
struct cb_strmap_entry *cb_strmap_sorted(const struct cb_strmap *m, size_t *n);

#endif
