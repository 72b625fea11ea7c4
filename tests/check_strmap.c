/* The string map (cowbench/strmap.h) that indexes matrix cells and counts stat --where=code's functions. */
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

static Suite *strmap_suite(void)
{
	Suite *s = suite_create("strmap");
	TCase *tc = tcase_create("strmap");

	tcase_add_test(tc, strmap_counts_most_first);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(strmap_suite)
