/* NUMA helpers: node lists, placement and the where-are-my-pages query (one node suffices). */
#include <errno.h>
#include <sys/mman.h>

#include <cowbench/numa.h>

#include "testutil.h"

START_TEST(test_node_count)
{
	ck_assert_int_ge(cb_numa_node_count(), 1);
}
END_TEST

START_TEST(test_parse_and_format)
{
	uint64_t m = 0;
	char buf[64];

	ck_assert_int_eq(cb_nodes_parse("0", &m), 0);
	ck_assert_uint_eq(m, 1);
	cb_nodes_format(m, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0");
	cb_nodes_format(0x2f, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0-3,5");
	cb_nodes_format(0, buf, sizeof(buf));
	ck_assert_str_eq(buf, "");
	if (cb_numa_node_count() >= 2) {
		ck_assert_int_eq(cb_nodes_parse("0-1", &m), 0);
		ck_assert_uint_eq(m, 3);
	}
}
END_TEST

static const char *const malformed[] = { "", "a", "0,", ",0", "1-0", "0-", "-1", "0;1", " 0", "0 " };

START_TEST(test_parse_rejects_malformed)
{
	uint64_t m = 42;

	ck_assert_int_eq(cb_nodes_parse(malformed[_i], &m), -EINVAL);
	ck_assert_uint_eq(m, 42); /* untouched on error */
}
END_TEST

START_TEST(test_parse_rejects_out_of_range)
{
	uint64_t m = 42;
	char text[16];

	snprintf(text, sizeof(text), "%d", cb_numa_node_count());
	ck_assert_int_eq(cb_nodes_parse(text, &m), -ERANGE);
	ck_assert_int_eq(cb_nodes_parse("0-63", &m), cb_numa_node_count() == 64 ? 0 : -ERANGE);
	ck_assert_int_eq(cb_nodes_parse("64", &m), -ERANGE);
	ck_assert_int_eq(cb_nodes_parse("99999999999999999999", &m), -ERANGE);
}
END_TEST

/* Bound to node 0, every populated page is on node 0; untouched pages are "-". */
START_TEST(test_place_and_where)
{
	size_t ps = 4096, n = 64;
	char *p = mmap(NULL, n * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char where[64], want[64];
	int err;

	ck_assert_ptr_ne(p, MAP_FAILED);
	err = cb_numa_place(p, n * ps, 1, 0);
	if (err == -ENOTSUP || err == -ENOSYS) {
		munmap(p, n * ps);
		tu_skip("kernel without NUMA: nothing to place");
		return;
	}
	ck_assert_int_eq(err, 0);
	for (size_t i = 0; i < n / 2; i++)
		p[i * ps] = 1;
	ck_assert_int_eq(cb_numa_where(p, n * ps, ps, where, sizeof(where)), 0);
	snprintf(want, sizeof(want), "0:%zu -:%zu", n / 2, n / 2);
	ck_assert_str_eq(where, want);
	ck_assert_int_eq(cb_numa_place(p, n * ps, 0, 0), 0); /* no policy: no-op */
	munmap(p, n * ps);
}
END_TEST

START_TEST(test_run_on_node0)
{
	int err = cb_numa_run_on(1);

	ck_assert(err == 0 || err == -ENOTSUP);
	ck_assert_int_eq(cb_numa_run_on(0), 0);
}
END_TEST

static Suite *numa_suite(void)
{
	Suite *s = suite_create("numa");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_node_count);
	tcase_add_test(tc, test_parse_and_format);
	tcase_add_loop_test(tc, test_parse_rejects_malformed, 0, (int)(sizeof(malformed) / sizeof(malformed[0])));
	tcase_add_test(tc, test_parse_rejects_out_of_range);
	tcase_add_test(tc, test_place_and_where);
	tcase_add_test(tc, test_run_on_node0);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(numa_suite)
