#ifndef COWBENCH_MATRIX_H
#define COWBENCH_MATRIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A measurement matrix: the union of groups, each group the cross product
 * of its axes (an axis is a NAME and a list of values). The library knows
 * nothing about what the names mean: the CLI applies each pair as the
 * `cowbench run --NAME=VALUE` option. Every cell is enumerated before the
 * first run (the plan is computed up front, as in the kernel's mm/cow.c).
 *
 * A cell's key ("workload=seq size=16M fork=1": its pairs in axis order,
 * separated by single spaces) names it in the CSV `cell` column, for
 * --resume, merge and summarize.
 */

#define CB_CELL_KEY_LEN 192 /* == sizeof(struct cb_row.cell) */
#define CB_MATRIX_MAX_LINE 4096     /* longest line of a matrix file (longer: FILE:LINE error) */
#define CB_MATRIX_MAX_BYTES (1 << 20) /* largest matrix file */
#define CB_MATRIX_MAX_CELLS 1000000   /* most cells one matrix may enumerate */

struct cb_axis {
	char *name;
	char **values;
	size_t nvalues;
};

struct cb_group {
	char *name; /* "" for axes given as flags */
	struct cb_axis *axes;
	size_t naxes;
};

struct cb_matrix {
	struct cb_group *groups;
	size_t ngroups;
	/* Settings a matrix file may carry ([matrix] section); -1 / false: not given. */
	long reps, warmup;
	bool shuffle;
	uint64_t shuffle_seed;
	int order;            /* enum cb_order_mode (cowbench/order.h); -1: not given */
	bool order_seeded;    /* order = shuffle:SEED */
	uint64_t order_seed;
};

struct cb_cell {
	size_t index;        /* position in the full enumeration (before shard and shuffle) */
	size_t npairs;
	const char **names;  /* point into the matrix: keep it alive while cells are used */
	const char **values;
	char key[CB_CELL_KEY_LEN];
};

struct cb_strmap;
struct cb_cells {
	struct cb_cell *cell;
	size_t n;
	size_t cap;
	struct cb_strmap *index; /* key -> position (hashed: 90,000 cells stay fast); built on demand */
};

void cb_matrix_init(struct cb_matrix *m);
void cb_matrix_free(struct cb_matrix *m);

/**
 * Set axis NAME of group GROUP (created when new) to the comma-separated
 * VALUES, replacing an axis of the same name. Names are [a-z0-9_-]+,
 * values [A-Za-z0-9._:/+-]+. CB_EFORMAT with a reason in why[] otherwise.
 */
int cb_matrix_set_axis(struct cb_matrix *m, const char *group, const char *name, const char *values,
		       char *why, size_t len);
/** Rename axis FROM to TO in every group (aliases such as sizes -> size). */
int cb_matrix_rename_axis(struct cb_matrix *m, const char *from, const char *to, char *why, size_t len);
/** Order every group's axes by rank(name), ascending (stable), so keys do not depend on input order. */
void cb_matrix_sort_axes(struct cb_matrix *m, int (*rank)(const char *name));

/**
 * Load a matrix file (INI, parsed by inih). Section [matrix] holds
 * reps, warmup and shuffle (a seed); every other section is a group whose
 * keys are axes ("size = 16M, 64M"); keys before any section form group "".
 * A regular file only, up to CB_MATRIX_MAX_BYTES, no NUL byte, no line
 * over CB_MATRIX_MAX_LINE characters. CB_EFORMAT (why[]: "FILE:LINE:
 * reason"), or -errno when unreadable.
 */
int cb_matrix_load(struct cb_matrix *m, const char *path, char *why, size_t len);

/**
 * Enumerate every cell, group by group, the first axis slowest. Cells with
 * the same key (from overlapping groups) appear once. CB_EFORMAT when a
 * group has no axes or a key is longer than CB_CELL_KEY_LEN - 1.
 */
int cb_matrix_cells(const struct cb_matrix *m, struct cb_cells *out, char *why, size_t len);
void cb_cells_free(struct cb_cells *c);

/**
 * Drop pair NAME from one cell (an axis that does not apply to it) and
 * rebuild its key; false when the cell has no such pair.
 */
bool cb_cell_drop_pair(struct cb_cell *c, const char *name);
/** Remove cells whose key an earlier cell has (after dropping pairs); the first stays. */
void cb_cells_dedupe(struct cb_cells *c);

/** Parse "I/N" (1 <= I <= N <= 1000000); -EINVAL otherwise. */
int cb_shard_parse(const char *text, unsigned *i, unsigned *n);
/** Keep shard I of N: the cells whose index % N == I - 1 (a deterministic partition). */
void cb_cells_shard(struct cb_cells *c, unsigned i, unsigned n);
/** Keep shard I of N by part[] (one per cell, e.g. its comparison set): cells of one part stay together. */
void cb_cells_shard_by(struct cb_cells *c, const size_t *part, unsigned i, unsigned n);
/** Shuffle the cells with a seeded Fisher-Yates (same seed, same order). */
void cb_cells_shuffle(struct cb_cells *c, uint64_t seed);

/** Position of the cell whose key is KEY, or -1 (-ENOMEM when the index cannot be built). */
long cb_cells_find(struct cb_cells *c, const char *key);

/** Value of NAME in the cell, or NULL. */
const char *cb_cell_value(const struct cb_cell *c, const char *name);
/**
 * Value of NAME in a key string ("a=1 b=2"), copied into value[]; false
 * when the key has no such pair.
 */
bool cb_key_value(const char *key, const char *name, char *value, size_t len);
/** Copy key into out[] with NAME's value replaced by VALUE; false when the key has no NAME. */
bool cb_key_replace(const char *key, const char *name, const char *value, char *out, size_t len);

#endif
