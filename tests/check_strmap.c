/*
 * The string map (cowbench/strmap.h) that indexes matrix cells and counts
 * stat --where=code's functions, and the growing array (cowbench/array.h)
 * the lists are kept in.
 */
#include <stdint.h>
#include <stdlib.h>

#include <cowbench/array.h>
#include <cowbench/strmap.h>

#include "testutil.h"

/* Counts add up per key; sorted is most first, then by key, and a freed map is empty. */
START_TEST(strmap_counts_most_first)
{
	struct cb_strmap m = { 0 };
	struct cb_strmap_entry *e;
	size_t n, v;
	char key[16];

	for (int i = 0; i < 300; i++) { /* past a few grows */
		snprintf(key, sizeof(key), "k%d", i);
		ck_assert_int_eq(cb_strmap_add(&m, key, (size_t)(i % 3)), 0);
	}
	ck_assert_int_eq(cb_strmap_add(&m, "k1", 5), 0);
	ck_assert(cb_strmap_get(&m, "k1", &v));
	ck_assert_uint_eq(v, 6);
	e = cb_strmap_sorted(&m, &n);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(n, 300);
	ck_assert_str_eq(e[0].key, "k1");
	ck_assert_uint_eq(e[0].value, 6);
	ck_assert_str_eq(e[1].key, "k101"); /* value 2, the first by key */
	for (size_t i = 1; i < n; i++)
		ck_assert(e[i - 1].value > e[i].value ||
			  (e[i - 1].value == e[i].value && strcmp(e[i - 1].key, e[i].key) < 0));
	free(e);
	cb_strmap_free(&m);
	e = cb_strmap_sorted(&m, &n);
	ck_assert_uint_eq(n, 0);
	free(e);
}
END_TEST

/* Room doubles from its first size, the elements stay, and a size too big leaves the array as it was. */
START_TEST(array_room_grows_and_keeps)
{
	size_t cap = 0, n = 0;
	int *v = NULL, *p;

	for (n = 0; n < 100; n++) {
		ck_assert_ptr_nonnull(p = cb_array_room(v, &cap, n, sizeof(*v), 4));
		v = p;
		v[n] = (int)n * 7;
		ck_assert_uint_ge(cap, n + 1);
	}
	ck_assert_uint_eq(cap, 128); /* 4, 8, ..., 128: doubled, not grown one by one */
	ck_assert_ptr_eq(cb_array_room(v, &cap, 127, sizeof(*v), 4), v); /* room left: the array as it is */
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(v[i], (int)i * 7);
	ck_assert_ptr_null(cb_array_room(v, &cap, cap, SIZE_MAX / 64, 4)); /* 256 * that overflows */
	ck_assert_uint_eq(cap, 128);
	ck_assert_int_eq(v[99], 99 * 7);
	free(v);
}
END_TEST

static Suite *strmap_suite(void)
{
	Suite *s = suite_create("strmap");
	TCase *tc = tcase_create("strmap");

	tcase_add_test(tc, strmap_counts_most_first);
	tcase_add_test(tc, array_room_grows_and_keeps);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(strmap_suite)
