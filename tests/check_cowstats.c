#include <errno.h>

#include <cowbench/cowstats.h>
#include <cowbench/error.h>

#include "sysctl_test_hook.h"
#include "testutil.h"

START_TEST(test_seed_format)
{
	struct cb_cowstats s;
	uint64_t v;

	ck_assert_int_eq(cb_cowstats_read(CB_FIXTURE_DIR "/cowstats_seed.txt", &s), 0);
	ck_assert(cb_cowstats_get(&s, "faults", &v));
	ck_assert_uint_eq(v, 49242);
	/* The study's spelling answers for the current key. */
	ck_assert(cb_cowstats_get(&s, "copy_ns_total", &v));
	ck_assert_uint_eq(v, 16543417);
	ck_assert(cb_cowstats_get(&s, "copy_ns_max", &v));
	ck_assert_uint_eq(v, 12924);
	ck_assert(cb_cowstats_get(&s, "precopy_success", &v));
	ck_assert_uint_eq(v, 24580);
	ck_assert(!cb_cowstats_get(&s, "path_ns_total", &v));
}
END_TEST

START_TEST(test_patch_format_and_unknown_keys)
{
	struct cb_cowstats s;
	uint64_t v;

	ck_assert_int_eq(cb_cowstats_read(CB_FIXTURE_DIR "/cowstats_patch.txt", &s), 0);
	ck_assert_uint_eq(s.count, 12);
	ck_assert(cb_cowstats_get(&s, "path_ns_total", &v));
	ck_assert_uint_eq(v, 21004800);
	ck_assert(cb_cowstats_get(&s, "some_future_key", &v));
	ck_assert_uint_eq(v, 7);
	ck_assert(cb_cowstats_get(&s, "copy_hist_512", &v));
	ck_assert_uint_eq(v, 16000);
}
END_TEST

START_TEST(test_delta)
{
	struct cb_cowstats a, b;
	uint64_t d;

	ck_assert_int_eq(cb_cowstats_parse("faults: 100\ncopy_ns_total: 1000\n", &a), 0);
	ck_assert_int_eq(cb_cowstats_parse("faults: 164\ncopy_ns_total: 900\n", &b), 0);
	ck_assert(cb_cowstats_delta(&a, &b, "faults", &d));
	ck_assert_uint_eq(d, 64);
	/* A counter that went backwards was reset in between: no delta, not a huge number. */
	ck_assert(!cb_cowstats_delta(&a, &b, "copy_ns_total", &d));
	ck_assert(!cb_cowstats_delta(&a, &b, "absent", &d));
}
END_TEST

static const char *const malformed[] = {
	"", "   \n", "faults 12\n", "faults: abc\n", "faults: -3\n", ": 5\n", "faults: 12x\n",
	"faults:\n", "faults: 99999999999999999999999\n", "a key: 1\n",
};

/* The v3 series' per-fault histograms: their growth over a rep, _max and other families left out. */
START_TEST(test_hist_delta)
{
	struct cb_cowstats a, b;
	char buf[256];

	ck_assert_int_eq(cb_cowstats_parse("faults: 10\nprecopy_fault_pages_max: 16\nprecopy_fault_pages_0: 5\n"
					   "precopy_fault_pages_1: 3\nprecopy_fault_pages_16: 0\n"
					   "precopy_fault_hist_128: 1\nprecopy_fault_hist_inf: 0\n", &a), 0);
	ck_assert_int_eq(cb_cowstats_parse("faults: 99\nprecopy_fault_pages_max: 16\nprecopy_fault_pages_0: 5\n"
					   "precopy_fault_pages_1: 4003\nprecopy_fault_pages_16: 250\n"
					   "precopy_fault_hist_128: 1\nprecopy_fault_hist_inf: 2\n", &b), 0);
	ck_assert_int_eq(cb_cowstats_hist_delta(&a, &b, "precopy_fault_pages_", buf, sizeof(buf)), 2);
	ck_assert_str_eq(buf, "1:4000;16:250");
	ck_assert_int_eq(cb_cowstats_hist_delta(&a, &b, "precopy_fault_hist_", buf, sizeof(buf)), 1);
	ck_assert_str_eq(buf, "inf:2");
	ck_assert_int_eq(cb_cowstats_hist_delta(&a, &a, "precopy_fault_pages_", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(cb_cowstats_hist_delta(&a, &b, "copy_hist_", buf, sizeof(buf)), -ENOENT); /* older kernel */
	ck_assert_int_eq(cb_cowstats_hist_delta(&a, &b, "precopy_fault_pages_", buf, 8), -ENOSPC);
	ck_assert_str_eq(buf, "1:4000"); /* cut at a whole bucket */
}
END_TEST

START_TEST(test_malformed)
{
	struct cb_cowstats s;

	ck_assert_msg(cb_cowstats_parse(malformed[_i], &s) == CB_EFORMAT, "accepted '%s'", malformed[_i]);
}
END_TEST

START_TEST(test_missing_file)
{
	struct cb_cowstats s;

	ck_assert_int_eq(cb_cowstats_read(CB_FIXTURE_DIR "/does-not-exist", &s), -ENOENT);
}
END_TEST

START_TEST(test_sysctl_read)
{
	char path[] = "/tmp/cbtest-sysctlXXXXXX";
	int fd = mkstemp(path);
	long v;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "2\n", 2), 2);
	close(fd);
	ck_assert_int_eq(cb_sysctl_read_long(path, &v), 0);
	ck_assert_int_eq(v, 2);
	/* Only known settings may be changed: a plain file is not one until it stands in for a sysctl. */
	ck_assert_int_eq(cb_sysctl_override(path, 7), -EINVAL);
	cb_sysctl_test_key(path);
	/* override + restore puts the old text back */
	ck_assert_int_eq(cb_sysctl_override(path, 7), 0);
	ck_assert_int_eq(cb_sysctl_read_long(path, &v), 0);
	ck_assert_int_eq(v, 7);
	ck_assert_int_eq(cb_sysctl_override(path, 9), 0);
	cb_sysctl_restore_all();
	ck_assert_int_eq(cb_sysctl_read_long(path, &v), 0);
	ck_assert_int_eq(v, 2);
	unlink(path);
	ck_assert_int_eq(cb_sysctl_read_long(path, &v), -ENOENT);
	ck_assert_int_eq(cb_sysctl_override(path, 1), -ENOENT);
	cb_sysctl_test_key(NULL);
}
END_TEST

static Suite *cowstats_suite(void)
{
	Suite *s = suite_create("cowstats");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_seed_format);
	tcase_add_test(tc, test_patch_format_and_unknown_keys);
	tcase_add_test(tc, test_delta);
	tcase_add_test(tc, test_hist_delta);
	tcase_add_loop_test(tc, test_malformed, 0, sizeof(malformed) / sizeof(malformed[0]));
	tcase_add_test(tc, test_missing_file);
	tcase_add_test(tc, test_sysctl_read);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(cowstats_suite)
