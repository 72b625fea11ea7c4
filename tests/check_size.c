#include <errno.h>
#include <stdint.h>

#include <cowbench/size.h>

#include "testutil.h"

static const struct {
	const char *text;
	uint64_t bytes;
} good[] = {
	{ "1", 1 }, { "4096", 4096 }, { "1K", 1024 }, { "1k", 1024 }, { "1KiB", 1024 },
	{ "1KB", 1024 }, { "64M", 64ull << 20 }, { "64m", 64ull << 20 }, { "64MiB", 64ull << 20 },
	{ "2G", 2ull << 30 }, { "2g", 2ull << 30 }, { "3T", 3ull << 40 }, { "512B", 512 },
	{ "16777216", 16777216 }, { "18446744073709551615", UINT64_MAX }, { "16777215T", 16777215ull << 40 },
};

START_TEST(test_good)
{
	uint64_t v = 0;

	ck_assert_msg(cb_size_parse(good[_i].text, &v) == 0, "rejected %s", good[_i].text);
	ck_assert_uint_eq(v, good[_i].bytes);
}
END_TEST

static const struct {
	const char *text;
	int err;
} bad[] = {
	{ "", -EINVAL }, { "-1", -EINVAL }, { "+1", -EINVAL }, { " 1", -EINVAL }, { "1 ", -EINVAL },
	{ "1.5M", -EINVAL }, { "M", -EINVAL }, { "1X", -EINVAL }, { "1MM", -EINVAL }, { "1Mi", -EINVAL },
	{ "0x10", -EINVAL }, { "0", -EDOM }, { "0K", -EDOM }, { "18446744073709551616", -ERANGE },
	{ "16777216T", -ERANGE }, { "99999999999999999999999G", -ERANGE }, { "abc", -EINVAL },
	{ "1e6", -EINVAL },
};

START_TEST(test_bad)
{
	uint64_t v = 12345;

	ck_assert_msg(cb_size_parse(bad[_i].text, &v) == bad[_i].err, "'%s' gave the wrong error", bad[_i].text);
	ck_assert_uint_eq(v, 12345); /* untouched on failure */
}
END_TEST

START_TEST(test_round)
{
	uint64_t r;

	ck_assert_int_eq(cb_size_round_pages(1, 4096, &r), 0);
	ck_assert_uint_eq(r, 4096);
	ck_assert_int_eq(cb_size_round_pages(4096, 4096, &r), 0);
	ck_assert_uint_eq(r, 4096);
	ck_assert_int_eq(cb_size_round_pages(4097, 4096, &r), 0);
	ck_assert_uint_eq(r, 8192);
	ck_assert_int_eq(cb_size_round_pages(UINT64_MAX, 4096, &r), -ERANGE);
}
END_TEST

START_TEST(test_format)
{
	char buf[32];

	cb_size_format(64ull << 20, buf, sizeof(buf));
	ck_assert_str_eq(buf, "64M");
	cb_size_format(1000, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1000");
	cb_size_format(3ull << 40, buf, sizeof(buf));
	ck_assert_str_eq(buf, "3T");
	cb_size_format(6144, buf, sizeof(buf));
	ck_assert_str_eq(buf, "6K");
}
END_TEST

static Suite *size_suite(void)
{
	Suite *s = suite_create("size");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, test_good, 0, sizeof(good) / sizeof(good[0]));
	tcase_add_loop_test(tc, test_bad, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, test_round);
	tcase_add_test(tc, test_format);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(size_suite)
