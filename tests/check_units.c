/* Unit: the formatter for people (cowbench/units.h), table-driven. */
#include <math.h>

#include <cowbench/units.h>

#include "testutil.h"

static const struct {
	double ns;
	const char *ascii, *utf8;
} times[] = {
	{ 0, "0 ns", "0 ns" },           { 5.25, "5.2 ns", "5.2 ns" },
	{ 57, "57 ns", "57 ns" },         { 999, "999 ns", "999 ns" },
	{ 1000, "1.00 us", "1.00 \xc2\xb5s" }, { 2904, "2.90 us", "2.90 \xc2\xb5s" },
	{ 1183.2, "1.18 us", "1.18 \xc2\xb5s" }, { 999999, "1.00 ms", "1.00 ms" },
	{ 12.4e6, "12.4 ms", "12.4 ms" }, { 11651455.0, "11.7 ms", "11.7 ms" },
	{ 3.3e9, "3.30 s", "3.30 s" },    { 125e9, "125 s", "125 s" },
	{ NAN, "-", "-" },
};

START_TEST(test_times)
{
	char buf[32];

	cb_fmt_ns(buf, sizeof(buf), times[_i].ns, CB_UNITS_ASCII);
	ck_assert_str_eq(buf, times[_i].ascii);
	cb_fmt_ns(buf, sizeof(buf), times[_i].ns, CB_UNITS_UTF8);
	ck_assert_str_eq(buf, times[_i].utf8);
}
END_TEST

static const struct {
	double bytes;
	const char *text;
} sizes[] = {
	{ 512, "512 B" },           { 4096, "4 KiB" },          { 64.0 * 1048576, "64 MiB" },
	{ 1073741824.0, "1 GiB" },  { 1.5 * 1073741824.0, "1.50 GiB" }, { 2101248, "2.00 MiB" },
	{ 1099511627776.0, "1 TiB" },
};

START_TEST(test_sizes)
{
	char buf[32];

	ck_assert_str_eq(cb_fmt_bytes(buf, sizeof(buf), sizes[_i].bytes), sizes[_i].text);
}
END_TEST

START_TEST(test_percent_and_pad)
{
	char buf[16];

	ck_assert_str_eq(cb_fmt_percent(buf, sizeof(buf), 0.41), "41 %");
	ck_assert_str_eq(cb_fmt_percent(buf, sizeof(buf), 0.004), "0.4 %");
	ck_assert_int_eq(cb_pad_width("2.90 \xc2\xb5s", 9), 10);
	ck_assert_int_eq(cb_pad_width("2.90 us", 9), 9);
	ck_assert_int_eq(cb_pad_width("2.90 \xc2\xb5s", -9), -10);
}
END_TEST

/* Pipes and files never get µ, whatever the locale says. */
START_TEST(test_style_not_a_terminal)
{
	FILE *fp = tmpfile();

	setenv("LANG", "en_US.UTF-8", 1);
	ck_assert_int_eq(cb_units_style_for(fp), CB_UNITS_ASCII);
	fclose(fp);
}
END_TEST

static Suite *units_suite(void)
{
	Suite *s = suite_create("units");
	TCase *tc = tcase_create("units");

	tcase_add_loop_test(tc, test_times, 0, (int)(sizeof(times) / sizeof(times[0])));
	tcase_add_loop_test(tc, test_sizes, 0, (int)(sizeof(sizes) / sizeof(sizes[0])));
	tcase_add_test(tc, test_percent_and_pad);
	tcase_add_test(tc, test_style_not_a_terminal);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(units_suite)
