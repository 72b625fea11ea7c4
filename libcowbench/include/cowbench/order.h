#ifndef COWBENCH_ORDER_H
#define COWBENCH_ORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The order in which a matrix runs its (cell, rep) pairs: one plan for the
 * host and for a guest boot (cowbench matrix --order).
 *
 * Cells that differ only in the compared axes form a comparison set. In
 * interleaved order the set runs round by round, one rep of each member per
 * round, the members rotating (A B C, B C A, C A B, ...), so slow drift
 * (thermal, a neighbour's load) hits every member alike; shuffle draws each
 * round's order at random from a seed; sequential runs each cell's reps
 * back to back. Sets run one after another, in the order of their first
 * cell. interleaved-all makes every cell of the run (of one boot, in a
 * guest) a member of one set: each round runs them all, so cells that are
 * priced with unit costs measured beside them (cowbench project) see the
 * same drift as those units. Comparison sets still pair reps by round.
 */

enum cb_order_mode { CB_ORDER_INTERLEAVED = 0, CB_ORDER_SEQUENTIAL, CB_ORDER_SHUFFLE, CB_ORDER_INTERLEAVED_ALL };

/* The compared axes, as one line for help and errors: "fork, precopy, ...". */
#define CB_ORDER_AXES "fork, break, precopy, precopy-depth, snapshot, method"

/**
 * "interleaved", "sequential", "shuffle", "shuffle:SEED" or "interleaved-all". *seeded says
 * whether a seed was given (then *seed holds it). -EINVAL for anything else.
 */
int cb_order_parse(const char *s, enum cb_order_mode *mode, uint64_t *seed, bool *seeded);
const char *cb_order_name(enum cb_order_mode mode);
/** Whether NAME is a compared axis (CB_ORDER_AXES). */
bool cb_order_compared_axis(const char *name);

struct cb_cell;
struct cb_cells;

/** The cell's key without its compared axes: the cells of one comparison set share it. */
void cb_order_set_key(const struct cb_cell *c, char *out, size_t len);

#define CB_ORDER_NO_SET ((size_t)-1)

/**
 * Number the comparison sets of the cells whose include[] is true (NULL:
 * all) from 0, in the order of their first cell; set_of[c] gets the cell's
 * set, CB_ORDER_NO_SET for a cell left out. Returns the number of sets, or
 * -ENOMEM.
 */
long cb_order_sets(const struct cb_cells *cells, const bool *include, size_t *set_of);

struct cb_order_step {
	size_t cell;
	long rep;     /* 1-based */
	size_t block; /* steps of one block are contiguous: a set, or (sequential) a cell */
	long round;   /* the set's round, 1-based (round r holds each member's rep r); 0: sequential */
};

/**
 * Every (cell, rep) still to run once, in the order MODE runs them: cells
 * whose set_of[] is CB_ORDER_NO_SET run nothing; done[c * reps + r - 1]
 * (NULL: none) set means rep r of cell c is already there (--resume). SEED
 * draws shuffle's rounds. *out (freed by the caller) gets *n steps.
 * 0 or -ENOMEM.
 */
int cb_order_plan(const size_t *set_of, size_t ncells, long reps, const unsigned char *done,
		  enum cb_order_mode mode, uint64_t seed, struct cb_order_step **out, size_t *n);

#endif
