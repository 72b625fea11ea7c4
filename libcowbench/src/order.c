#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/matrix.h>
#include <cowbench/order.h>
#include <cowbench/stats.h>

#include <cowbench/strmap.h>

static const char *const mode_names[] = { "interleaved", "sequential", "shuffle", "interleaved-all" };
#define NMODES (sizeof(mode_names) / sizeof(mode_names[0]))

/* Axes whose values a comparison sets side by side: the rest of a cell's key names its set. */
static const char *const compared_axes[] = { "fork", "break", "precopy", "precopy-depth", "snapshot", "method" };

int cb_order_parse(const char *s, enum cb_order_mode *mode, uint64_t *seed, bool *seeded)
{
	*seeded = false;
	for (size_t i = 0; i < NMODES; i++)
		if (strcmp(s, mode_names[i]) == 0) {
			*mode = (enum cb_order_mode)i;
			return 0;
		}
	if (strncmp(s, "shuffle:", 8) == 0 && s[8] >= '0' && s[8] <= '9') {
		char *end;

		errno = 0;
		*seed = strtoull(s + 8, &end, 10);
		if (errno || *end)
			return -EINVAL;
		*mode = CB_ORDER_SHUFFLE;
		*seeded = true;
		return 0;
	}
	return -EINVAL;
}

const char *cb_order_name(enum cb_order_mode mode)
{
	return (size_t)mode < NMODES ? mode_names[mode] : "?";
}

bool cb_order_compared_axis(const char *name)
{
	for (size_t i = 0; i < sizeof(compared_axes) / sizeof(compared_axes[0]); i++)
		if (strcmp(compared_axes[i], name) == 0)
			return true;
	return false;
}

void cb_order_set_key(const struct cb_cell *c, char *out, size_t len)
{
	size_t off = 0;

	out[0] = '\0';
	for (size_t i = 0; i < c->npairs && off < len; i++) {
		if (cb_order_compared_axis(c->names[i]))
			continue;
		off += (size_t)snprintf(out + off, len - off, "%s%s=%s", off ? " " : "", c->names[i], c->values[i]);
	}
}

long cb_order_sets(const struct cb_cells *cells, const bool *include, size_t *set_of)
{
	struct cb_strmap map = { 0 };
	char key[CB_CELL_KEY_LEN];
	size_t nsets = 0;

	for (size_t c = 0; c < cells->n; c++) {
		size_t old;
		int put;

		set_of[c] = CB_ORDER_NO_SET;
		if (include && !include[c])
			continue;
		cb_order_set_key(&cells->cell[c], key, sizeof(key));
		put = cb_strmap_put(&map, key, nsets, &old);
		if (put < 0) {
			cb_strmap_free(&map);
			return -ENOMEM;
		}
		set_of[c] = put ? nsets++ : old;
	}
	cb_strmap_free(&map);
	return (long)nsets;
}

/* The members of round ROUND in the order they run: rotated by the round, or drawn from the seed. */
static void order_round(size_t *m, size_t k, const size_t *members, long round, enum cb_order_mode mode,
			uint64_t seed, size_t set)
{
	for (size_t j = 0; j < k; j++)
		m[j] = members[(j + (size_t)(round - 1)) % k];
	if (mode == CB_ORDER_SHUFFLE) {
		/* Each (set, round) its own stream: one round's draw never depends on which others ran. */
		uint64_t st = seed ^ (0x9e3779b97f4a7c15ULL * (set + 1)) ^ ((uint64_t)round << 32);

		for (size_t j = 0; j < k; j++)
			m[j] = members[j];
		cb_splitmix64(&st);
		cb_shuffle_prefix(m, k, k, &st);
	}
}

static bool is_pending(const unsigned char *done, size_t c, long reps, long r)
{
	return !done || !done[c * (size_t)reps + (size_t)(r - 1)];
}

static int plan_sets(const size_t *set_of, size_t ncells, long reps, const unsigned char *done,
		     enum cb_order_mode mode, uint64_t seed, struct cb_order_step *st, size_t *n)
{
	size_t nsets = 0, *start, *members, *fill, *m;

	for (size_t c = 0; c < ncells; c++)
		if (set_of[c] != CB_ORDER_NO_SET && set_of[c] + 1 > nsets)
			nsets = set_of[c] + 1;
	start = calloc(nsets + 2, sizeof(*start));
	members = calloc(ncells + 1, sizeof(*members));
	fill = calloc(nsets + 1, sizeof(*fill));
	m = calloc(ncells + 1, sizeof(*m));
	if (!start || !members || !fill || !m) {
		free(start), free(members), free(fill), free(m);
		return -ENOMEM;
	}
	/* Members of each set in cell order (a counting sort by set). */
	for (size_t c = 0; c < ncells; c++)
		if (set_of[c] != CB_ORDER_NO_SET)
			start[set_of[c] + 1]++;
	for (size_t s = 0; s < nsets; s++)
		start[s + 1] += start[s];
	for (size_t c = 0; c < ncells; c++)
		if (set_of[c] != CB_ORDER_NO_SET)
			members[start[set_of[c]] + fill[set_of[c]]++] = c;
	for (size_t s = 0; s < nsets; s++) {
		size_t k = start[s + 1] - start[s];

		for (long r = 1; r <= reps; r++) {
			order_round(m, k, members + start[s], r, mode, seed, s);
			for (size_t j = 0; j < k; j++)
				if (is_pending(done, m[j], reps, r))
					st[(*n)++] = (struct cb_order_step){ m[j], r, s, r };
		}
	}
	free(start), free(members), free(fill), free(m);
	return 0;
}

/* interleaved-all: every included cell a member of one set, so each round runs them all. */
static int plan_one_set(const size_t *set_of, size_t ncells, long reps, const unsigned char *done, uint64_t seed,
			struct cb_order_step *st, size_t *n)
{
	size_t *one = calloc(ncells + 1, sizeof(*one));
	int err;

	if (!one)
		return -ENOMEM;
	for (size_t c = 0; c < ncells; c++)
		one[c] = set_of[c] == CB_ORDER_NO_SET ? CB_ORDER_NO_SET : 0;
	err = plan_sets(one, ncells, reps, done, CB_ORDER_INTERLEAVED_ALL, seed, st, n);
	free(one);
	return err;
}

int cb_order_plan(const size_t *set_of, size_t ncells, long reps, const unsigned char *done,
		  enum cb_order_mode mode, uint64_t seed, struct cb_order_step **out, size_t *n)
{
	struct cb_order_step *st = calloc(ncells * (size_t)(reps > 0 ? reps : 0) + 1, sizeof(*st));
	int err = 0;

	*out = NULL;
	*n = 0;
	if (!st)
		return -ENOMEM;
	if (mode == CB_ORDER_SEQUENTIAL) {
		for (size_t c = 0; c < ncells; c++)
			for (long r = 1; set_of[c] != CB_ORDER_NO_SET && r <= reps; r++)
				if (is_pending(done, c, reps, r))
					st[(*n)++] = (struct cb_order_step){ c, r, c, 0 };
	} else if (mode == CB_ORDER_INTERLEAVED_ALL) {
		err = plan_one_set(set_of, ncells, reps, done, seed, st, n);
	} else {
		err = plan_sets(set_of, ncells, reps, done, mode, seed, st, n);
	}
	if (err) {
		free(st);
		*n = 0;
		return err;
	}
	*out = st;
	return 0;
}
