/* Parsers of stat --where: /proc/PID/smaps per mapping and the tracepoint's format file. */
#include "testutil.h"

#include <errno.h>

#include <cowbench/cowbench.h>

static const char smaps_text[] =
	"55b3a1ac7000-55b3a1ac8000 rw-p 00003000 fe:00 10955250                   /tmp/prog\n"
	"Size:                  4 kB\n"
	"Rss:                   4 kB\n"
	"Shared_Dirty:          0 kB\n"
	"Private_Dirty:         4 kB\n"
	"Referenced:            4 kB\n"
	"AnonHugePages:         0 kB\n"
	"THPeligible:           0\n"
	"VmFlags: rd wr mr mw me ac \n"
	"7fce7cf65000-7fce7d735000 rw-p 00000000 00:00 0 \n"
	"Rss:                8000 kB\n"
	"Shared_Dirty:       4000 kB\n"
	"Private_Dirty:      4000 kB\n"
	"AnonHugePages:      2048 kB\n"
	"THPeligible:           1\n"
	"7ffccee65000-7ffcceece000 rw-p 00000000 00:00 0                          [stack]\n"
	"Private_Dirty:        16 kB\n";

START_TEST(test_vmas_parse)
{
	struct cb_vmas vs = { 0 };

	ck_assert_int_eq(cb_vmas_parse(smaps_text, &vs), 0);
	ck_assert_uint_eq(vs.n, 3);
	ck_assert_str_eq(vs.v[0].path, "/tmp/prog");
	ck_assert_str_eq(vs.v[1].path, ""); /* anonymous: no name carried over from the line before */
	ck_assert_str_eq(vs.v[2].path, "[stack]");
	ck_assert_int_eq(vs.v[1].shared_dirty_kb, 4000);
	ck_assert_int_eq(vs.v[1].anon_huge_kb, 2048);
	ck_assert_int_eq(vs.v[1].thp_eligible, 1);
	ck_assert_int_eq(vs.v[2].thp_eligible, -1);
	ck_assert_int_eq(vs.v[0].referenced_kb, 4);
	ck_assert(cb_vma_cow_candidate(&vs.v[1]));
	ck_assert_ptr_eq(cb_vmas_find(&vs, 0x7fce7cf65000ull), &vs.v[1]);
	ck_assert_ptr_eq(cb_vmas_find(&vs, 0x7fce7d734fffull), &vs.v[1]);
	ck_assert_ptr_null(cb_vmas_find(&vs, 0x7fce7d735000ull));
	ck_assert_int_eq(cb_vmas_parse("Rss: 4 kB\n", &vs), CB_EFORMAT);
	ck_assert_int_eq(cb_vmas_parse("", &vs), CB_EFORMAT);
	ck_assert_int_eq(cb_vmas_parse("ffff-0000 rw-p 0 0:0 0\n", &vs), CB_EFORMAT); /* end before start */
	cb_vmas_free(&vs);
}
END_TEST

/* Mutated input never crashes or reads out of bounds (the sanitizer build checks the latter). */
START_TEST(test_vmas_parse_mutations)
{
	size_t len = strlen(smaps_text);
	char *buf = malloc(len + 1);
	unsigned seed = 12345;

	for (int round = 0; round < 20000; round++) {
		struct cb_vmas vs = { 0 };
		size_t cut = (size_t)rand_r(&seed) % (len + 1);

		memcpy(buf, smaps_text, len + 1);
		for (int k = rand_r(&seed) % 8; k >= 0; k--)
			buf[(size_t)rand_r(&seed) % len] = (char)(rand_r(&seed) % 256 ?: '\n');
		buf[cut] = '\0';
		if (cb_vmas_parse(buf, &vs) == 0)
			for (size_t i = 0; i < vs.n; i++)
				ck_assert(vs.v[i].start <= vs.v[i].end && strlen(vs.v[i].perms) == 4);
		cb_vmas_free(&vs);
	}
	free(buf);
}
END_TEST

START_TEST(test_wpfault_format)
{
	const char *fmt = "name: page_fault_user\nID: 190\nformat:\n"
			  "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
			  "\tfield:unsigned long address;\toffset:8;\tsize:8;\tsigned:0;\n"
			  "\tfield:unsigned long ip;\toffset:16;\tsize:8;\tsigned:0;\n"
			  "\tfield:unsigned long error_code;\toffset:24;\tsize:8;\tsigned:0;\n";
	unsigned a, i, e;

	ck_assert_int_eq(cb_wpfault_parse_format(fmt, &a, &i, &e), 0);
	ck_assert_uint_eq(a, 8);
	ck_assert_uint_eq(i, 16);
	ck_assert_uint_eq(e, 24);
	ck_assert_int_eq(cb_wpfault_parse_format("name: x\n", &a, &i, &e), CB_EFORMAT);
	ck_assert_int_eq(cb_wpfault_parse_format("field:unsigned long address;\toffset:99999;\n"
						 "field:unsigned long ip;\toffset:1;\nfield:unsigned long error_code;"
						 "\toffset:2;\n", &a, &i, &e), CB_EFORMAT);
	ck_assert_str_ne(cb_wpfault_advice(-EACCES), "");
	ck_assert_ptr_nonnull(strstr(cb_wpfault_advice(-ENOENT), "tracepoint"));
}
END_TEST

static Suite *vmas_suite(void)
{
	Suite *s = suite_create("vmas");
	TCase *tc = tcase_create("vmas");

	tcase_add_test(tc, test_vmas_parse);
	tcase_add_test(tc, test_vmas_parse_mutations);
	tcase_add_test(tc, test_wpfault_format);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(vmas_suite)
