/* Unit: the formatter for people (cowbench/units.h), table-driven. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/estimate.h>
#include <cowbench/output.h>
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

/* Ratios: three significant digits, no exponent below a million, an interval that is one point printed once. */
START_TEST(test_ratio)
{
	char b[64];

	ck_assert_str_eq(cb_fmt_ratio(b, sizeof(b), 4097), "4097x");
	ck_assert_str_eq(cb_fmt_ratio(b, sizeof(b), 141.4), "141x");
	ck_assert_str_eq(cb_fmt_ratio(b, sizeof(b), 2.434), "2.43x");
	ck_assert_str_eq(cb_fmt_ratio(b, sizeof(b), 0.34412), "0.344x");
	ck_assert_str_eq(cb_fmt_ratio(b, sizeof(b), NAN), "-");
	/* The one spelling of a ratio with its interval is built on it. */
	cb_ratio_text(b, sizeof(b), 4097, 4097, 4097);
	ck_assert_str_eq(b, "4097x");
	cb_ratio_text(b, sizeof(b), 2.434, 2.1, 2.9);
	ck_assert_str_eq(b, "2.43x [2.1x, 2.9x]");
	cb_ratio_text(b, sizeof(b), 2.434, NAN, NAN);
	ck_assert_str_eq(b, "2.43x");
	cb_ratio_text(b, sizeof(b), 2.434, 2.1, INFINITY);
	ck_assert_str_eq(b, "2.43x");
}
END_TEST

/* Wrapped text: no line wider than asked, every word kept, one too long for a line broken. */
START_TEST(test_wrap)
{
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0, words = 0;
	FILE *fp = open_memstream(&buf, &len);
	const char *text = "total over 6 processes: 3337 write faults; pages: 0 copied, "
			   "a/very/long/path/that/does/not/fit/on/one/line/of/thirty/columns/at/all end";

	cb_print_wrapped(fp, 30, 4, text);
	fclose(fp);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		ck_assert_int_le((int)strlen(line), 30);
		for (char *p = line; *p; p++)
			words += *p != ' ' && (p == line || p[-1] == ' ');
	}
	ck_assert_uint_ge(words, 10);
	free(buf);
}
END_TEST

/* --columns: a name the table lacks is refused with the table's names. */
START_TEST(test_columns_check)
{
	static const struct cb_field f[] = {
		{ "cell", "cell", CB_KIND_TEXT, CB_FIELD_ALL, 0, -1, 0, 0 },
		{ "n", "n", CB_KIND_COUNT, CB_FIELD_DATA, 0, -1, 0, 0 },
		{ "ci95", "95 % CI", CB_KIND_TEXT, CB_FIELD_VIEW, 1, -1, 0, 0 },
	};
	char err[256];

	ck_assert_int_eq(cb_out_columns_check(f, 3, "ci95,cell", err, sizeof(err)), 0);
	ck_assert_int_lt(cb_out_columns_check(f, 3, "n", err, sizeof(err)), 0); /* data only, not a table column */
	ck_assert_str_eq(err, "unknown column 'n'; the table's columns: cell, ci95");
	ck_assert_int_lt(cb_out_columns_check(f, 3, "cell,,ci95", err, sizeof(err)), 0);
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
	tcase_add_test(tc, test_ratio);
	tcase_add_test(tc, test_wrap);
	tcase_add_test(tc, test_columns_check);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(units_suite)
