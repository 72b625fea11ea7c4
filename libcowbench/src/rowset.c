/*
 * Questions about a set of rows as a whole: which rows stand for a rep that
 * never ran, and whether any (configuration, rep) is there twice. merge,
 * summarize and compare ask the same question the same way.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <stdio.h>

#include <cowbench/results.h>
#include <cowbench/summary.h>

bool cb_row_guest_failed(const struct cb_row *row)
{
	return strncmp(row->status, "error:guest:", 12) == 0;
}

struct keyed {
	char key[CB_ROW_KEY_LEN + 96]; /* cb_row_key, and for CB_DUP_MEASUREMENT when and where it ran */
	int64_t rep;
	bool evidence;
	size_t index;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c == 0)
		c = (int)x->evidence - (int)y->evidence;
	if (c == 0)
		c = (x->rep > y->rep) - (x->rep < y->rep);
	return c ? c : (x->index > y->index) - (x->index < y->index);
}

static bool same_rep(const struct keyed *x, const struct keyed *y)
{
	return strcmp(x->key, y->key) == 0 && x->evidence == y->evidence && x->rep == y->rep;
}

/* Where and when the row was measured, after its key: rows given twice agree on all of it. */
static void append_when(const struct cb_row *row, char *key, size_t len)
{
	size_t used = strlen(key);

	snprintf(key + used, len - used, "\x1f%s\x1f%lld\x1f%s", row->boot, (long long)row->round, row->timestamp);
}

int cb_rows_find_duplicate(const struct cb_row *rows, size_t n, enum cb_dup_rule rule, size_t *first,
			   size_t *second)
{
	struct keyed *k = calloc(n ? n : 1, sizeof(*k));
	size_t m = 0;
	int found = 0;

	if (!k)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (cb_row_guest_failed(&rows[i]))
			continue;
		cb_row_key(&rows[i], k[m].key, CB_ROW_KEY_LEN);
		if (rule == CB_DUP_MEASUREMENT)
			append_when(&rows[i], k[m].key, sizeof(k[m].key));
		k[m].rep = rows[i].rep;
		k[m].evidence = cb_row_is_evidence(&rows[i]);
		k[m++].index = i;
	}
	qsort(k, m, sizeof(*k), cmp_keyed);
	for (size_t i = 1; i < m && !found; i++)
		if (same_rep(&k[i - 1], &k[i])) {
			*first = k[i - 1].index;
			*second = k[i].index;
			found = 1;
		}
	free(k);
	return found;
}
