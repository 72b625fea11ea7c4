#include <cowbench/error.h>
#include <cowbench/workload.h>

#include "testutil.h"

START_TEST(test_table_is_valid)
{
	char why[256] = "";

	ck_assert_msg(cb_registry_check(why, sizeof(why)) == 0, "%s", why);
	ck_assert_uint_ge(cb_workload_count(), 3);
	ck_assert_ptr_null(cb_workload_at(cb_workload_count()));
}
END_TEST

/* Loop test: every registered workload, checked on its own and found by its name. */
START_TEST(test_each_entry)
{
	const struct cb_workload *w = cb_workload_at((size_t)_i);
	char why[256] = "";

	ck_assert_ptr_nonnull(w);
	ck_assert_msg(cb_workload_check(w, why, sizeof(why)) == 0, "%s", why);
	ck_assert_ptr_eq(cb_workload_find(w->name), w);
	ck_assert_ptr_nonnull(strstr(cb_workload_names(), w->name));
	if (w->page_order && !(w->flags & CB_WL_NEEDS_INPUT)) {
		size_t order[64];
		bool seen[64] = { false };
		struct cb_wl_opts opts;
		struct cb_order_ctx ctx = { .npages = 64, .seed = 7, .opts = &opts };
		long n;

		cb_options_default(w, &opts); /* what the runner passes without options given */
		n = w->page_order(&ctx, order);

		ck_assert_int_ge(n, 1);
		ck_assert_int_le(n, 64);
		for (long i = 0; i < n; i++) {
			ck_assert_uint_lt(order[i], 64);
			ck_assert_msg(!seen[order[i]], "%s writes page %zu twice", w->name, order[i]);
			seen[order[i]] = true;
		}
	}
}
END_TEST

static long dummy_order(const struct cb_order_ctx *ctx, size_t *order)
{
	order[0] = 0;
	(void)ctx;
	return 1;
}

static const struct cb_workload good = {
	.abi = CB_WORKLOAD_ABI, .name = "good", .help = "fine", .page_order = dummy_order,
};

static const struct {
	struct cb_workload w;
	const char *needle;
} bad[] = {
	{ { .abi = 0, .name = "oldabi", .help = "h", .page_order = dummy_order }, "oldabi" },
	{ { .abi = CB_WORKLOAD_ABI, .name = "", .help = "h", .page_order = dummy_order }, "name" },
	{ { .abi = CB_WORKLOAD_ABI, .name = "Upper", .help = "h", .page_order = dummy_order }, "Upper" },
	{ { .abi = CB_WORKLOAD_ABI, .name = "nohelp", .help = "", .page_order = dummy_order }, "nohelp" },
	{ { .abi = CB_WORKLOAD_ABI, .name = "twolines", .help = "a\nb", .page_order = dummy_order }, "twolines" },
	{ { .abi = CB_WORKLOAD_ABI, .name = "nohook", .help = "h" }, "nohook" },
};

START_TEST(test_bad_entry_named)
{
	char why[256] = "";

	ck_assert_int_eq(cb_workload_check(&bad[_i].w, why, sizeof(why)), CB_EREGISTRY);
	ck_assert_msg(strstr(why, bad[_i].needle), "reason '%s' lacks '%s'", why, bad[_i].needle);
}
END_TEST

START_TEST(test_duplicate_names)
{
	const struct cb_workload *table[] = { &good, &good };
	char why[256] = "";

	ck_assert_int_eq(cb_workload_table_check(table, 1, why, sizeof(why)), 0);
	ck_assert_int_eq(cb_workload_table_check(table, 2, why, sizeof(why)), CB_EREGISTRY);
	ck_assert_ptr_nonnull(strstr(why, "duplicate"));
	ck_assert_ptr_nonnull(strstr(why, "good"));
}
END_TEST

START_TEST(test_random_is_seeded)
{
	const struct cb_workload *w = cb_workload_find("random");
	size_t a[256], b[256], c[256];
	struct cb_order_ctx s1 = { .npages = 256, .seed = 1 }, s2 = { .npages = 256, .seed = 2 };

	ck_assert_int_eq(w->page_order(&s1, a), 256);
	ck_assert_int_eq(w->page_order(&s1, b), 256);
	ck_assert_int_eq(w->page_order(&s2, c), 256);
	ck_assert_mem_eq(a, b, sizeof(a));
	ck_assert(memcmp(a, c, sizeof(a)) != 0);
}
END_TEST

static Suite *registry_suite(void)
{
	Suite *s = suite_create("registry");
	TCase *tc = tcase_create("table");

	tcase_add_test(tc, test_table_is_valid);
	tcase_add_loop_test(tc, test_each_entry, 0, (int)cb_workload_count());
	tcase_add_loop_test(tc, test_bad_entry_named, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, test_duplicate_names);
	tcase_add_test(tc, test_random_is_seeded);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(registry_suite)
