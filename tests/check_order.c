/* cowbench/order.h: comparison sets and the order of (cell, rep) pairs for matrix --order. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/matrix.h>
#include <cowbench/order.h>

#include "testutil.h"

/* Cells of "workload=seq,random size=1M fork=1,0 precopy=0,1": two sets of four. */
static void seq_random_cells(struct cb_matrix *m, struct cb_cells *c)
{
	char why[256];

	cb_matrix_init(m);
	ck_assert_int_eq(cb_matrix_set_axis(m, "", "workload", "seq,random", why, sizeof(why)), 0);
	ck_assert_int_eq(cb_matrix_set_axis(m, "", "size", "1M", why, sizeof(why)), 0);
	ck_assert_int_eq(cb_matrix_set_axis(m, "", "fork", "1,0", why, sizeof(why)), 0);
	ck_assert_int_eq(cb_matrix_set_axis(m, "", "precopy", "0,1", why, sizeof(why)), 0);
	ck_assert_int_eq(cb_matrix_cells(m, c, why, sizeof(why)), 0);
	ck_assert_uint_eq(c->n, 8);
}

START_TEST(sets_group_cells_that_differ_in_compared_axes)
{
	struct cb_matrix m;
	struct cb_cells c;
	size_t set_of[8];
	char key[CB_CELL_KEY_LEN];

	seq_random_cells(&m, &c);
	ck_assert_int_eq(cb_order_sets(&c, NULL, set_of), 2);
	for (size_t i = 0; i < c.n; i++) {
		ck_assert_uint_eq(set_of[i], strstr(c.cell[i].key, "workload=seq") ? 0 : 1);
		cb_order_set_key(&c.cell[i], key, sizeof(key));
		ck_assert_str_eq(key, set_of[i] == 0 ? "workload=seq size=1M" : "workload=random size=1M");
	}
	/* A cell left out is in no set. */
	{
		bool include[8] = { false, true, true, true, true, true, true, true };

		ck_assert_int_eq(cb_order_sets(&c, include, set_of), 2);
		ck_assert_uint_eq(set_of[0], CB_ORDER_NO_SET);
	}
	cb_cells_free(&c);
	cb_matrix_free(&m);
}
END_TEST

/* st[0..n) is round after round of k steps each (round r holds rep r, one block), cells as in want. */
static void assert_rounds(const struct cb_order_step *st, size_t n, const size_t *want, size_t k)
{
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(st[i].cell, want[i]);
		ck_assert_int_eq(st[i].rep, (long)(i / k + 1));
		ck_assert_int_eq(st[i].round, (long)(i / k + 1));
		ck_assert_uint_eq(st[i].block, 0);
	}
}

/* Three cells in one set: the rounds rotate A B C, B C A, C A B; round r holds rep r. */
START_TEST(interleaved_rotates)
{
	size_t set_of[3] = { 0, 0, 0 };
	struct cb_order_step *st;
	size_t n;
	const size_t want[9] = { 0, 1, 2, 1, 2, 0, 2, 0, 1 };

	ck_assert_int_eq(cb_order_plan(set_of, 3, 3, NULL, CB_ORDER_INTERLEAVED, 0, &st, &n), 0);
	ck_assert_uint_eq(n, 9);
	assert_rounds(st, n, want, 3);
	free(st);
}
END_TEST

/* Sequential is the order before --order: cell by cell, each cell's reps in a row, no rounds. */
START_TEST(sequential_is_cell_by_cell)
{
	size_t set_of[3] = { 0, 1, 0 };
	struct cb_order_step *st;
	size_t n;

	ck_assert_int_eq(cb_order_plan(set_of, 3, 2, NULL, CB_ORDER_SEQUENTIAL, 0, &st, &n), 0);
	ck_assert_uint_eq(n, 6);
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(st[i].cell, i / 2);
		ck_assert_int_eq(st[i].rep, (long)(i % 2 + 1));
		ck_assert_int_eq(st[i].round, 0);
		ck_assert_uint_eq(st[i].block, i / 2);
	}
	free(st);
}
END_TEST

/* Every pending (cell, rep) exactly once, in every mode; done reps (--resume) and left-out cells never. */
START_TEST(every_pending_rep_once)
{
	enum { NC = 7, REPS = 5 };
	size_t set_of[NC] = { 0, 1, 0, 2, 1, 0, CB_ORDER_NO_SET };
	unsigned char done[NC * REPS] = { 0 };
	enum cb_order_mode modes[] = { CB_ORDER_INTERLEAVED, CB_ORDER_SEQUENTIAL, CB_ORDER_SHUFFLE };

	done[0 * REPS + 1] = done[3 * REPS + 0] = done[3 * REPS + 4] = done[5 * REPS + 2] = 1;
	for (size_t mi = 0; mi < 3; mi++) {
		unsigned seen[NC * REPS] = { 0 };
		struct cb_order_step *st;
		size_t n;

		ck_assert_int_eq(cb_order_plan(set_of, NC, REPS, done, modes[mi], 42, &st, &n), 0);
		ck_assert_uint_eq(n, (NC - 1) * REPS - 4);
		for (size_t i = 0; i < n; i++) {
			ck_assert_uint_lt(st[i].cell, NC - 1);
			ck_assert(st[i].rep >= 1 && st[i].rep <= REPS);
			seen[st[i].cell * REPS + (size_t)(st[i].rep - 1)]++;
			/* Blocks are contiguous: once left, a block never comes back. */
			for (size_t j = 0; i > 0 && j + 1 < i; j++)
				ck_assert(!(st[j].block == st[i].block && st[j + 1].block != st[i].block));
		}
		for (size_t k = 0; k < NC * REPS; k++)
			ck_assert_uint_eq(seen[k], k / REPS == NC - 1 || done[k] ? 0 : 1);
		free(st);
	}
}
END_TEST

/* A set whose member has rep 2 done already: round 2 runs the others, still rotated. */
START_TEST(resume_skips_done_reps)
{
	size_t set_of[2] = { 0, 0 };
	unsigned char done[2 * 3] = { 0 };
	struct cb_order_step *st;
	size_t n;

	done[0 * 3 + 0] = done[0 * 3 + 1] = 1; /* cell 0: reps 1 and 2 are in the file */
	ck_assert_int_eq(cb_order_plan(set_of, 2, 3, done, CB_ORDER_INTERLEAVED, 0, &st, &n), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert(st[0].cell == 1 && st[0].rep == 1 && st[0].round == 1);
	ck_assert(st[1].cell == 1 && st[1].rep == 2 && st[1].round == 2);
	ck_assert(st[2].cell == 0 && st[2].rep == 3 && st[2].round == 3);
	ck_assert(st[3].cell == 1 && st[3].rep == 3 && st[3].round == 3);
	free(st);
}
END_TEST

static void plan_of(enum cb_order_mode mode, uint64_t seed, size_t k, long reps, size_t *cells)
{
	size_t set_of[16] = { 0 };
	struct cb_order_step *st;
	size_t n;

	ck_assert_int_eq(cb_order_plan(set_of, k, reps, NULL, mode, seed, &st, &n), 0);
	ck_assert_uint_eq(n, k * (size_t)reps);
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_eq(st[i].round, (long)(i / k + 1));
		cells[i] = st[i].cell;
	}
	free(st);
}

/* Shuffle: the same seed gives the same order, another seed another; each round a permutation. */
START_TEST(shuffle_is_seeded_permutations)
{
	enum { K = 6, REPS = 8 };
	size_t a[K * REPS], b[K * REPS], c[K * REPS], rot[K * REPS];

	plan_of(CB_ORDER_SHUFFLE, 7, K, REPS, a);
	plan_of(CB_ORDER_SHUFFLE, 7, K, REPS, b);
	plan_of(CB_ORDER_SHUFFLE, 8, K, REPS, c);
	plan_of(CB_ORDER_INTERLEAVED, 7, K, REPS, rot);
	ck_assert_mem_eq(a, b, sizeof(a));
	ck_assert_msg(memcmp(a, c, sizeof(a)) != 0, "seeds 7 and 8 gave the same order");
	ck_assert_msg(memcmp(a, rot, sizeof(a)) != 0, "shuffle gave the rotation");
	for (size_t r = 0; r < REPS; r++) {
		unsigned seen[K] = { 0 };

		for (size_t j = 0; j < K; j++)
			seen[a[r * K + j]]++;
		for (size_t j = 0; j < K; j++)
			ck_assert_uint_eq(seen[j], 1);
	}
}
END_TEST

/* interleaved-all: two sets and a cell left out; every included cell in each round, rotating, one block. */
START_TEST(interleaved_all_one_round)
{
	size_t set_of[4] = { 0, 1, CB_ORDER_NO_SET, 0 };
	unsigned char done[4 * 2] = { 0 };
	struct cb_order_step *st;
	size_t n;
	const size_t want[6] = { 0, 1, 3, 1, 3, 0 };

	ck_assert_int_eq(cb_order_plan(set_of, 4, 2, NULL, CB_ORDER_INTERLEAVED_ALL, 0, &st, &n), 0);
	ck_assert_uint_eq(n, 6);
	assert_rounds(st, n, want, 3);
	free(st);
	/* --resume: rep 1 of cell 1 is there; the rest keeps its rounds. */
	done[1 * 2 + 0] = 1;
	ck_assert_int_eq(cb_order_plan(set_of, 4, 2, done, CB_ORDER_INTERLEAVED_ALL, 0, &st, &n), 0);
	ck_assert_uint_eq(n, 5);
	ck_assert_uint_eq(st[0].cell, 0);
	ck_assert_uint_eq(st[1].cell, 3);
	ck_assert_uint_eq(st[2].cell, 1);
	ck_assert_int_eq(st[2].round, 2);
	free(st);
}
END_TEST

START_TEST(parse_modes)
{
	enum cb_order_mode m;
	uint64_t seed = 0;
	bool seeded;
	const char *bad[] = { "", "Interleaved", "shuffle:", "shuffle:x", "shuffle:-1", "shuffle:1x", "random", "interleaved-all:1" };

	ck_assert_int_eq(cb_order_parse("interleaved", &m, &seed, &seeded), 0);
	ck_assert(m == CB_ORDER_INTERLEAVED && !seeded);
	ck_assert_int_eq(cb_order_parse("sequential", &m, &seed, &seeded), 0);
	ck_assert(m == CB_ORDER_SEQUENTIAL);
	ck_assert_int_eq(cb_order_parse("shuffle:42", &m, &seed, &seeded), 0);
	ck_assert(m == CB_ORDER_SHUFFLE && seeded && seed == 42);
	ck_assert_str_eq(cb_order_name(CB_ORDER_SHUFFLE), "shuffle");
	ck_assert_int_eq(cb_order_parse("interleaved-all", &m, &seed, &seeded), 0);
	ck_assert(m == CB_ORDER_INTERLEAVED_ALL && !seeded);
	ck_assert_str_eq(cb_order_name(m), "interleaved-all");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(cb_order_parse(bad[i], &m, &seed, &seeded) == -EINVAL, "accepted '%s'", bad[i]);
	ck_assert(cb_order_compared_axis("precopy-depth") && cb_order_compared_axis("fork") && cb_order_compared_axis("break"));
	ck_assert(!cb_order_compared_axis("size") && !cb_order_compared_axis("kernel"));
}
END_TEST

static Suite *order_suite(void)
{
	Suite *s = suite_create("order");
	TCase *t = tcase_create("order");

	tcase_add_test(t, sets_group_cells_that_differ_in_compared_axes);
	tcase_add_test(t, interleaved_rotates);
	tcase_add_test(t, interleaved_all_one_round);
	tcase_add_test(t, sequential_is_cell_by_cell);
	tcase_add_test(t, every_pending_rep_once);
	tcase_add_test(t, resume_skips_done_reps);
	tcase_add_test(t, shuffle_is_seeded_permutations);
	tcase_add_test(t, parse_modes);
	suite_add_tcase(s, t);
	return s;
}

TU_MAIN(order_suite)
