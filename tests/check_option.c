/* Workload option tables (cowbench/option.h): parsing, ranges, defaults, formatting, table checks. */
#include <errno.h>
#include <stddef.h>

#include <cowbench/option.h>
#include <cowbench/run.h>
#include <cowbench/workload.h>

#include "testutil.h"

struct demo_opts {
	unsigned count;
	uint64_t bytes;
	unsigned pct;
	unsigned mode;
	bool flag;
};

static const char *const modes[] = { "alpha", "beta-2", NULL };

static const struct cb_option demo_options[] = {
	{ .name = "count", .type = CB_OPT_UINT, .offset = offsetof(struct demo_opts, count), .min = 1, .max = 64,
	  .def = 3, .help = "a count" },
	{ .name = "bytes", .type = CB_OPT_SIZE, .offset = offsetof(struct demo_opts, bytes), .min = 0,
	  .max = 1ull << 30, .def = 4096, .help = "a size" },
	{ .name = "pct", .type = CB_OPT_PERCENT, .offset = offsetof(struct demo_opts, pct), .min = 0, .max = 100,
	  .def = 30, .help = "a share" },
	{ .name = "mode", .type = CB_OPT_ENUM, .offset = offsetof(struct demo_opts, mode), .names = modes,
	  .def = 1, .help = "a mode" },
	{ .name = "flag", .type = CB_OPT_FLAG, .offset = offsetof(struct demo_opts, flag), .help = "a flag" },
	{ 0 },
};

static long demo_order(const struct cb_order_ctx *ctx, size_t *order)
{
	order[0] = 0;
	return ctx->npages ? 1 : 0;
}

static const struct cb_workload demo = {
	.abi = CB_WORKLOAD_ABI, .name = "demo", .help = "a demo", .page_order = demo_order,
	.options = demo_options, .options_size = sizeof(struct demo_opts),
};

#define DEMO(o) ((const struct demo_opts *)(const void *)(o).bytes)

START_TEST(test_defaults_and_format)
{
	struct cb_wl_opts o;
	char buf[256];

	cb_options_default(&demo, &o);
	ck_assert_uint_eq(DEMO(o)->count, 3);
	ck_assert_uint_eq(DEMO(o)->bytes, 4096);
	ck_assert_uint_eq(DEMO(o)->pct, 30);
	ck_assert_uint_eq(DEMO(o)->mode, 1);
	ck_assert(!DEMO(o)->flag);
	cb_options_format(&demo, &o, buf, sizeof(buf));
	ck_assert_str_eq(buf, "count=3 bytes=4096 pct=30 mode=beta-2 flag=0");
	ck_assert_uint_eq(cb_option_count(&demo), 5);
	ck_assert_ptr_eq(cb_option_find(&demo, "pct"), &demo_options[2]);
	ck_assert_ptr_null(cb_option_find(&demo, "nope"));
}
END_TEST

static const struct {
	const char *name, *text;
	int ok;
	uint64_t want;
} cases[] = {
	{ "count", "1", 1, 1 },	      { "count", "64", 1, 64 },     { "count", "0", 0, 0 },
	{ "count", "65", 0, 0 },      { "count", "-1", 0, 0 },      { "count", " 1", 0, 0 },
	{ "count", "1x", 0, 0 },      { "count", "", 0, 0 },        { "count", NULL, 0, 0 },
	{ "count", "99999999999999999999", 0, 0 },		    { "count", "0x10", 0, 0 },
	{ "bytes", "0", 1, 0 },	      { "bytes", "2M", 1, 2u << 20 }, { "bytes", "1G", 1, 1u << 30 },
	{ "bytes", "2G", 0, 0 },      { "bytes", "1Q", 0, 0 },      { "bytes", "-4K", 0, 0 },
	{ "pct", "0", 1, 0 },	      { "pct", "100%", 1, 100 },    { "pct", "101", 0, 0 },
	{ "pct", "50%%", 0, 0 },      { "mode", "alpha", 1, 0 },    { "mode", "beta-2", 1, 1 },
	{ "mode", "Alpha", 0, 0 },    { "mode", "", 0, 0 },         { "flag", NULL, 1, 1 },
	{ "flag", "1", 1, 1 },	      { "flag", "0", 1, 0 },        { "flag", "2", 0, 0 },
	{ "flag", "yes", 0, 0 },
};

/* Every value parses to what it says, or is refused with a line naming the option; refused leaves the field. */
START_TEST(test_parse_cases)
{
	const struct cb_option *opt = cb_option_find(&demo, cases[_i].name);
	struct cb_wl_opts o;
	char why[256] = "", prefix[64];
	uint64_t before;
	int err;

	cb_options_default(&demo, &o);
	before = cb_option_value(opt, &o);
	err = cb_option_parse(opt, cases[_i].text, &o, why, sizeof(why));
	if (cases[_i].ok) {
		ck_assert_msg(err == 0, "--%s=%s: %s", cases[_i].name, cases[_i].text, why);
		ck_assert_uint_eq(cb_option_value(opt, &o), cases[_i].want);
	} else {
		ck_assert_msg(err == -EINVAL, "--%s=%s accepted", cases[_i].name, cases[_i].text);
		snprintf(prefix, sizeof(prefix), "--%s must be ", cases[_i].name);
		ck_assert_msg(strncmp(why, prefix, strlen(prefix)) == 0, "%s", why);
		ck_assert_ptr_null(strchr(why, '\n'));
		ck_assert_uint_eq(cb_option_value(opt, &o), before);
	}
}
END_TEST

START_TEST(test_help_and_metavar)
{
	char buf[256], mv[64];

	ck_assert_str_eq(cb_option_metavar(&demo_options[3], mv, sizeof(mv)), "alpha|beta-2");
	ck_assert_ptr_null(cb_option_metavar(&demo_options[4], mv, sizeof(mv)));
	ck_assert_str_eq(cb_option_metavar(&demo_options[1], mv, sizeof(mv)), "SIZE");
	cb_option_help(&demo_options[0], buf, sizeof(buf));
	ck_assert_str_eq(buf, "a count; 1-64, default 3");
	cb_option_help(&demo_options[3], buf, sizeof(buf));
	ck_assert_str_eq(buf, "a mode; default beta-2");
	cb_option_help(&demo_options[2], buf, sizeof(buf));
	ck_assert_str_eq(buf, "a share; 0-100, default 30%");
}
END_TEST

/* Malformed tables are refused with a reason naming the option. */
START_TEST(test_table_check)
{
	static const char *const none[] = { NULL };
	const struct cb_option bad[][2] = {
		{ { .name = "Bad", .type = CB_OPT_UINT, .max = 1, .help = "h" } },
		{ { .name = "x", .type = 99, .help = "h" } },
		{ { .name = "x", .type = CB_OPT_SIZE, .offset = 4, .max = 1, .help = "h" } },
		{ { .name = "x", .type = CB_OPT_UINT, .offset = 64, .max = 1, .help = "h" } },
		{ { .name = "x", .type = CB_OPT_UINT, .max = 1, .help = "" } },
		{ { .name = "x", .type = CB_OPT_ENUM, .names = none, .help = "h" } },
		{ { .name = "x", .type = CB_OPT_ENUM, .names = modes, .def = 2, .help = "h" } },
		{ { .name = "x", .type = CB_OPT_UINT, .min = 5, .max = 1, .def = 5, .help = "h" } },
		{ { .name = "x", .type = CB_OPT_UINT, .min = 1, .max = 9, .def = 0, .help = "h" } },
		{ { .name = "x", .type = CB_OPT_PERCENT, .max = 101, .help = "h" } },
		{ { .name = "x", .type = CB_OPT_FLAG, .def = 2, .help = "h" } },
	};
	char why[160];

	ck_assert_int_eq(cb_options_table_check(demo_options, sizeof(struct demo_opts), why, sizeof(why)), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		ck_assert_msg(cb_options_table_check(bad[i], 16, why, sizeof(why)) == -EINVAL, "entry %zu accepted", i);
		ck_assert_msg(why[0], "entry %zu: no reason", i);
	}
	ck_assert_int_eq(cb_options_table_check(demo_options, CB_WL_OPTS_MAX + 1, why, sizeof(why)), -EINVAL);
}
END_TEST

/* A spec takes only its workload's options, and says which it has. */
START_TEST(test_spec_set_option)
{
	struct cb_run_spec spec = { 0 };
	char why[256];

	cb_run_spec_set_workload(&spec, &demo);
	ck_assert_int_eq(cb_run_spec_set_option(&spec, "count", "7", why, sizeof(why)), 0);
	ck_assert_uint_eq(DEMO(spec.opts)->count, 7);
	ck_assert_int_eq(cb_run_spec_set_option(&spec, "stride", "2", why, sizeof(why)), -ENOENT);
	ck_assert_str_eq(why, "--stride is not an option of workload demo (its options: --count --bytes --pct --mode --flag)");
	cb_run_spec_set_workload(&spec, cb_workload_find("seq"));
	ck_assert_int_eq(cb_run_spec_set_option(&spec, "count", "7", why, sizeof(why)), -ENOENT);
	ck_assert_str_eq(why, "--count is not an option of workload seq (it has none)");
}
END_TEST

static Suite *option_suite(void)
{
	Suite *s = suite_create("option");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_defaults_and_format);
	tcase_add_loop_test(tc, test_parse_cases, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, test_help_and_metavar);
	tcase_add_test(tc, test_table_check);
	tcase_add_test(tc, test_spec_set_option);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(option_suite)
