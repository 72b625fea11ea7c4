/*
 * The option parser (cli/common/args.c) whatever its stack held before:
 * check_badinput once failed under ASan and load with "option -p (--pid)
 * needs a value" for "record --output=F -p 1 -- true". getopt_table built
 * optstring in an unterminated stack buffer and asked strchr whether a
 * letter was in it already: an old 'p' byte after the letters written so
 * far (a pointer byte 0x70, say) kept "p:" out, so -p became an unknown
 * letter, reported as a missing value. Here the stack below the parser is
 * filled with each letter first, and every form of every option must parse.
 */
#include <string.h>

#include "common/args.h"
#include "testutil.h"

struct opts {
	const char *pid, *output;
	bool flag;
};

static bool set_pid(void *o, const char *v)
{
	((struct opts *)o)->pid = v;
	return true;
}

static const struct cli_option table[] = {
	{ "pid", "PID", "a process", .parse = set_pid, .letter = 'p' },
	{ "output", "FILE", "a file", CLI_SET(CLI_STORE_FILE, struct opts, output) }, /* -o: the common letter */
	{ "flag", NULL, "a flag", CLI_SET(CLI_STORE_TRUE, struct opts, flag), .letter = 'x' },
};

#define N_TABLE ((int)(sizeof(table) / sizeof(table[0])))

static void usage(void)
{
}

/* Old bytes where the parser's frames will be: every byte BYTE, no NUL. */
static __attribute__((noinline)) void spray_stack(char byte)
{
	char buf[32768];

	memset(buf, byte, sizeof(buf));
	__asm__ volatile("" : : "r"(buf) : "memory");
}

static __attribute__((noinline)) int parse_after_spray(char byte, int argc, char **argv, struct opts *o, bool first)
{
	spray_stack(byte);
	return first ? cli_parse_options_first(argc, argv, table, N_TABLE, o, usage)
		     : cli_parse_options(argc, argv, table, N_TABLE, o, usage);
}

static const char sprays[] = { 'p', 'o', 'x', 'h', ':', '+', '-', 'a', '\x70', '\xff' };

START_TEST(test_short_options_whatever_the_stack_held)
{
	for (size_t s = 0; s < sizeof(sprays); s++)
		for (int first = 0; first < 2; first++) {
			char a0[] = "record", a1[] = "--output=t.trace", a2[] = "-p", a3[] = "1", a4[] = "-x", a5[] = "--",
			     a6[] = "true";
			char *argv[] = { a0, a1, a2, a3, a4, a5, a6, NULL };
			struct opts o = { 0 };
			int argi = parse_after_spray(sprays[s], 7, argv, &o, first);

			ck_assert_msg(argi == 6, "stack of 0x%02x, %s: argi %d", (unsigned char)sprays[s],
				      first ? "first" : "any order", argi);
			ck_assert_str_eq(o.pid, "1");
			ck_assert_str_eq(o.output, "t.trace");
			ck_assert(o.flag);
			ck_assert_str_eq(argv[6], "true");
		}
}
END_TEST

START_TEST(test_short_value_attached_and_separate)
{
	for (size_t s = 0; s < sizeof(sprays); s++) {
		char a0[] = "stat", a1[] = "-p1", a2[] = "-o", a3[] = "f.csv", a4[] = "operand";
		char *argv[] = { a0, a1, a2, a3, a4, NULL };
		struct opts o = { 0 };
		int argi = parse_after_spray(sprays[s], 5, argv, &o, false);

		ck_assert_int_eq(argi, 4);
		ck_assert_str_eq(o.pid, "1");
		ck_assert_str_eq(o.output, "f.csv");
		ck_assert_str_eq(argv[4], "operand");
	}
}
END_TEST

static Suite *args_suite(void)
{
	Suite *s = suite_create("args");
	TCase *tc = tcase_create("parser");

	tcase_add_test(tc, test_short_options_whatever_the_stack_held);
	tcase_add_test(tc, test_short_value_attached_and_separate);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(args_suite)
