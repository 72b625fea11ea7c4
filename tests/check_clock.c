#include <cowbench/clock.h>

#include "testutil.h"

START_TEST(test_monotonic)
{
	struct cb_clock c;
	uint64_t a, b;

	ck_assert_int_eq(cb_clock_init(&c, CB_CLOCK_MONOTONIC), 0);
	ck_assert_int_eq(c.kind, CB_CLOCK_MONOTONIC);
	ck_assert_double_eq(c.ticks_per_ns, 1.0);
	a = cb_clock_read(&c);
	usleep(2000);
	b = cb_clock_read(&c);
	ck_assert_double_ge(cb_clock_ns(&c, b - a), 2000000.0);
	ck_assert_double_ge(c.overhead_ns, 0.0);
	ck_assert_double_le(c.overhead_min_ns, c.overhead_ns);
}
END_TEST

START_TEST(test_tsc_agrees_with_monotonic)
{
	struct cb_clock c;
	uint64_t t0, c0, t1, c1;

	if (cb_clock_init(&c, CB_CLOCK_TSC) != 0) {
		tu_skip("no TSC with rdtscp on this machine: nothing to compare");
		return;
	}
	ck_assert_int_eq(c.kind, CB_CLOCK_TSC);
	ck_assert_double_gt(c.ticks_per_ns, 0.1); /* > 100 MHz */
	t0 = cb_monotonic_ns();
	c0 = cb_clock_read(&c);
	usleep(50000);
	c1 = cb_clock_read(&c);
	t1 = cb_monotonic_ns();
	/* The calibrated TSC never runs ahead of the wall clock that encloses it by more than 1 %. */
	ck_assert_double_le(cb_clock_ns(&c, c1 - c0), (double)(t1 - t0) * 1.01);
	ck_assert_double_ge(cb_clock_ns(&c, c1 - c0), 50000000.0 * 0.99);
}
END_TEST

START_TEST(test_auto_and_parse)
{
	struct cb_clock c;
	enum cb_clock_kind k;

	ck_assert_int_eq(cb_clock_init(&c, CB_CLOCK_AUTO), 0);
	ck_assert(c.kind == CB_CLOCK_TSC || c.kind == CB_CLOCK_MONOTONIC);
	if (c.kind == CB_CLOCK_TSC)
		ck_assert(c.tsc_invariant);
	ck_assert_int_eq(cb_clock_parse("tsc", &k), 0);
	ck_assert_int_eq(k, CB_CLOCK_TSC);
	ck_assert_int_eq(cb_clock_parse("monotonic", &k), 0);
	ck_assert_int_eq(k, CB_CLOCK_MONOTONIC);
	ck_assert_int_lt(cb_clock_parse("TSC ", &k), 0);
	ck_assert_str_eq(cb_clock_name(CB_CLOCK_TSC), "tsc");
}
END_TEST

/*
 * An x86 CPU without rdtscp (some machines of this kind), on any machine: a
 * fixture /proc/cpuinfo. The library falls back to CLOCK_MONOTONIC_RAW, run
 * refuses --clock=tsc in one line, and info says which instruction is missing.
 */
START_TEST(test_no_rdtscp)
{
	const char *env = "COWBENCH_CPUINFO=" CB_FIXTURE_DIR "/cpuinfo_no_rdtscp.txt";
	const char *run[] = { "cowbench", "run", "--clock=tsc", "--size=64K", "--reps=1", "--warmup=0", "--probes=none",
			      NULL };
	const char *info[] = { "cowbench", "info", NULL };
	struct cb_clock c;
	struct cli_result r;

	ck_assert_int_eq(setenv("COWBENCH_CPUINFO", CB_FIXTURE_DIR "/cpuinfo_no_rdtscp.txt", 1), 0);
	ck_assert_int_lt(cb_clock_init(&c, CB_CLOCK_TSC), 0);
	ck_assert_int_eq(cb_clock_init(&c, CB_CLOCK_AUTO), 0);
	ck_assert_int_eq(c.kind, CB_CLOCK_MONOTONIC);
	unsetenv("COWBENCH_CPUINFO");
	r = tu_run_cli_env(run, env);
	ck_assert_msg(r.status == 2 && strstr(r.err, "not usable here") && tu_count_lines(r.err) == 1 && r.out_len == 0,
		      "exit %d: %s", r.status, r.err);
	tu_free(&r);
	r = tu_run_cli_env(info, env);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
#if defined(__x86_64__) || defined(__i386__)
	ck_assert_msg(strstr(r.out, "tsc:                   unavailable: this CPU has no rdtscp"), "%s", r.out);
#endif
	ck_assert_msg(strstr(r.out, "default clock:         monotonic"), "%s", r.out);
	tu_free(&r);
}
END_TEST

static Suite *clock_suite(void)
{
	Suite *s = suite_create("clock");
	TCase *tc = tcase_create("clock");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_monotonic);
	tcase_add_test(tc, test_tsc_agrees_with_monotonic);
	tcase_add_test(tc, test_auto_and_parse);
	tcase_add_test(tc, test_no_rdtscp);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(clock_suite)
