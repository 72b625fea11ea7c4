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
#include <cowbench/strmap.h>
#include <cowbench/repstats.h>

bool cb_row_guest_failed(const struct cb_row *row)
{
	return strncmp(row->status, "error:guest:", 12) == 0;
}

struct keyed {
	const char *key; /* one copy a configuration (keys): a big file's rows share a few */
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

/* Every column the same: one measurement given twice (two runs never agree on every time and count). */
static bool rows_identical(const struct cb_row *a, const struct cb_row *b)
{
	enum { LEN = CB_LAT_HIST_LEN + 64 }; /* the longest cell: a latency histogram */
	char *va = malloc(LEN), *vb = malloc(LEN);
	size_t n;
	const struct cb_column *cols = cb_columns(&n);
	bool same = va && vb; /* out of memory: taken as one measurement (refused, never counted twice) */

	for (size_t c = 0; c < n && same && va && vb; c++) {
		cb_row_format(a, &cols[c], va, LEN);
		cb_row_format(b, &cols[c], vb, LEN);
		same = strcmp(va, vb) == 0;
	}
	free(va);
	free(vb);
	return same || !va || !vb;
}

/* Two of the entries k[from..to) (one configuration and rep) that are a duplicate by rule. */
static bool find_in_run(const struct cb_row *rows, const struct keyed *k, size_t from, size_t to,
			enum cb_dup_rule rule, size_t *first, size_t *second)
{
	for (size_t i = from; i < to; i++)
		for (size_t j = i + 1; j < to; j++)
			if (rule == CB_DUP_CONFIG_REP || rows_identical(&rows[k[i].index], &rows[k[j].index])) {
				*first = k[i].index;
				*second = k[j].index;
				return true;
			}
	return false;
}

/* The configurations' keys, each kept once: a file of 10,000 rows of two cells holds two. */
struct keys {
	struct cb_strmap index; /* key -> its place in text[] */
	char **text;
	size_t n;
};

static const char *key_of(struct keys *k, const char *key)
{
	size_t at;
	int put = cb_strmap_put(&k->index, key, k->n, &at);
	char **nt;

	if (put < 0)
		return NULL;
	if (put == 0)
		return k->text[at];
	nt = realloc(k->text, (k->n + 1) * sizeof(*nt));
	if (!nt)
		return NULL;
	k->text = nt;
	k->text[k->n] = strdup(key);
	return k->text[k->n++];
}

static void keys_free(struct keys *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->text[i]);
	free(k->text);
	cb_strmap_free(&k->index);
}

int cb_rows_find_duplicate(const struct cb_row *rows, size_t n, enum cb_dup_rule rule, size_t *first,
			   size_t *second)
{
	struct keyed *k = calloc(n ? n : 1, sizeof(*k));
	struct keys keys = { 0 };
	size_t m = 0;
	int found = 0;

	if (!k)
		return -ENOMEM;
	for (size_t i = 0; i < n && found == 0; i++) {
		char key[CB_ROW_KEY_LEN];

		if (cb_row_guest_failed(&rows[i]))
			continue;
		cb_row_key(&rows[i], key, sizeof(key));
		k[m].key = key_of(&keys, key);
		if (!k[m].key)
			found = -ENOMEM;
		k[m].rep = rows[i].rep;
		k[m].evidence = cb_row_is_evidence(&rows[i]);
		k[m++].index = i;
	}
	if (found == 0)
		qsort(k, m, sizeof(*k), cmp_keyed);
	for (size_t from = 0, to; from < m && !found; from = to) {
		for (to = from + 1; to < m && same_rep(&k[from], &k[to]); to++)
			;
		found = find_in_run(rows, k, from, to, rule, first, second);
	}
	keys_free(&keys);
	free(k);
	return found;
}
