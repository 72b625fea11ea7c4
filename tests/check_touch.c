#include <errno.h>
#include <signal.h>
#include <sys/wait.h>

#include <cowbench/error.h>
#include <cowbench/touch.h>

#include "testutil.h"

#define PAGES 1024

static struct cb_clock clk;
static size_t order[PAGES];

static void setup(void)
{
	ck_assert_int_eq(cb_clock_init(&clk, CB_CLOCK_AUTO), 0);
	for (size_t i = 0; i < PAGES; i++)
		order[i] = i;
}

static struct cb_touch_params params(enum cb_writer w, bool fork)
{
	struct cb_touch_params p = {
		.size = PAGES * 4096ull, .page_size = 4096, .writer = w, .fork = fork, .cpu = -1,
		.clock = &clk, .order = order, .count = PAGES,
	};
	return p;
}

/* Nothing this process forked is left: neither running nor a zombie. */
static void assert_no_children(void)
{
	errno = 0;
	ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
	ck_assert_int_eq(errno, ECHILD);
}

START_TEST(test_every_write_faults_after_fork)
{
	enum cb_writer w = _i ? CB_WRITER_PARENT : CB_WRITER_CHILD;
	struct cb_touch_params p = params(w, true);
	struct cb_touch_result r;

	ck_assert_int_eq(cb_touch_run(&p, &r), 0);
	ck_assert_str_eq(r.status, "ok");
	ck_assert_uint_eq(r.count, PAGES);
	/* Each first write to a shared page is a COW fault (THP is off). */
	ck_assert_int_ge(r.minflt, PAGES);
	ck_assert_uint_gt(r.elapsed_ns, 0);
	for (size_t i = 0; i < r.count; i++)
		ck_assert_double_gt(r.lat_ns[i], 0);
	cb_touch_result_free(&r);
	assert_no_children();
}
END_TEST

START_TEST(test_no_fork_does_not_fault)
{
	enum cb_writer w = _i ? CB_WRITER_PARENT : CB_WRITER_CHILD;
	struct cb_touch_params p = params(w, false);
	struct cb_touch_result r;

	ck_assert_int_eq(cb_touch_run(&p, &r), 0);
	ck_assert_str_eq(r.status, "ok");
	/* Already-private, populated pages: far fewer faults than pages (usually none). */
	ck_assert_int_lt(r.minflt, PAGES / 4);
	cb_touch_result_free(&r);
	assert_no_children();
}
END_TEST

START_TEST(test_dead_child_is_reported_and_reaped)
{
	enum cb_writer w = _i ? CB_WRITER_PARENT : CB_WRITER_CHILD;
	struct cb_touch_params p = params(w, true);
	struct cb_touch_result r;

	p.inject_child_signal = SIGKILL;
	ck_assert_int_eq(cb_touch_run(&p, &r), CB_ECHILD);
	ck_assert_str_eq(r.status, "child-killed:SIGKILL");
	if (w == CB_WRITER_PARENT)
		ck_assert_uint_eq(r.count, PAGES); /* the parent still measured; the status says what happened */
	else
		ck_assert_ptr_null(r.lat_ns);
	cb_touch_result_free(&r);
	assert_no_children();
}
END_TEST

START_TEST(test_invalid_parameters)
{
	struct cb_touch_params p = params(CB_WRITER_CHILD, true);
	struct cb_touch_result r;

	p.size = 4097;
	ck_assert_int_eq(cb_touch_run(&p, &r), -EINVAL);
	p = params(CB_WRITER_CHILD, true);
	p.count = 0;
	ck_assert_int_eq(cb_touch_run(&p, &r), -EINVAL);
	assert_no_children();
}
END_TEST

START_TEST(test_single_page_and_pinning)
{
	struct cb_touch_params p = params(CB_WRITER_CHILD, true);
	struct cb_touch_result r;
	size_t one = PAGES / 2;

	p.order = &one;
	p.count = 1;
	p.cpu = 0;
	ck_assert_int_eq(cb_touch_run(&p, &r), 0);
	ck_assert_uint_eq(r.count, 1);
	ck_assert_int_ge(r.minflt, 1);
	cb_touch_result_free(&r);
	assert_no_children();
}
END_TEST

/* --break=populate copies the whole region in one call: one write after it still costs every page's copy. */
START_TEST(test_populate_breaks_the_whole_region)
{
	enum cb_writer w = _i ? CB_WRITER_PARENT : CB_WRITER_CHILD;
	struct cb_touch_params p = params(w, true);
	struct cb_touch_result r;
	size_t one = 7;

	p.order = &one;
	p.count = 1;
	p.brk = CB_BREAK_POPULATE;
	ck_assert_int_eq(cb_touch_run(&p, &r), 0);
	ck_assert_str_eq(r.status, "ok");
	ck_assert_int_ge(r.minflt, PAGES); /* the populate's faults are the writer's, inside the loop */
	ck_assert_int_ge(r.break_ns, 0);
	ck_assert_int_le(r.break_ns, (int64_t)r.elapsed_ns);
	/* The first write ends after the populate call, inside the loop: both lie within elapsed_ns. */
	ck_assert_int_ge(r.first_ns, r.break_ns);
	ck_assert_int_le(r.first_ns, (int64_t)r.elapsed_ns);
	cb_touch_result_free(&r);

	p.brk = CB_BREAK_FAULT; /* the same single write, trapping: one copy, no populate time */
	ck_assert_int_eq(cb_touch_run(&p, &r), 0);
	ck_assert_int_lt(r.minflt, PAGES / 4);
	ck_assert_int_eq(r.break_ns, -1);
	/* One write: the loop is its first write and the clock read after it. */
	ck_assert_int_gt(r.first_ns, 0);
	ck_assert_int_le(r.first_ns, (int64_t)r.elapsed_ns);
	cb_touch_result_free(&r);
	assert_no_children();
}
END_TEST

START_TEST(test_break_names_and_bad_value)
{
	struct cb_touch_params p = params(CB_WRITER_CHILD, true);
	struct cb_touch_result r;
	enum cb_break b;

	ck_assert_int_eq(cb_break_parse("populate", &b), 0);
	ck_assert_int_eq(b, CB_BREAK_POPULATE);
	ck_assert_int_eq(cb_break_parse("fault", &b), 0);
	ck_assert_int_eq(b, CB_BREAK_FAULT);
	ck_assert_int_lt(cb_break_parse("Populate", &b), 0);
	ck_assert_int_lt(cb_break_parse("", &b), 0);
	ck_assert_str_eq(cb_break_name(CB_BREAK_POPULATE), "populate");
	p.brk = (enum cb_break)7;
	ck_assert_int_eq(cb_touch_run(&p, &r), -EINVAL);
	assert_no_children();
}
END_TEST

START_TEST(test_memcpy_baseline)
{
	double ns = cb_memcpy_page_ns(&clk, 4096, 64);

	ck_assert_double_gt(ns, 0);
	ck_assert_double_lt(ns, 1e9);
}
END_TEST

START_TEST(test_writer_names)
{
	enum cb_writer w;

	ck_assert_int_eq(cb_writer_parse("child", &w), 0);
	ck_assert_int_eq(w, CB_WRITER_CHILD);
	ck_assert_int_eq(cb_writer_parse("parent", &w), 0);
	ck_assert_int_eq(w, CB_WRITER_PARENT);
	ck_assert_int_lt(cb_writer_parse("both", &w), 0);
	ck_assert_str_eq(cb_writer_name(CB_WRITER_PARENT), "parent");
}
END_TEST

static Suite *touch_suite(void)
{
	Suite *s = suite_create("touch");
	TCase *tc = tcase_create("fork-and-touch");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_loop_test(tc, test_every_write_faults_after_fork, 0, 2);
	tcase_add_loop_test(tc, test_no_fork_does_not_fault, 0, 2);
	tcase_add_loop_test(tc, test_dead_child_is_reported_and_reaped, 0, 2);
	tcase_add_test(tc, test_invalid_parameters);
	tcase_add_test(tc, test_single_page_and_pinning);
	tcase_add_loop_test(tc, test_populate_breaks_the_whole_region, 0, 2);
	tcase_add_test(tc, test_break_names_and_bad_value);
	tcase_add_test(tc, test_memcpy_baseline);
	tcase_add_test(tc, test_writer_names);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(touch_suite)
