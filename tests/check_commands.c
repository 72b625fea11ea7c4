/*
 * Every command of the table (cli/common/commands.def) against everything that
 * names commands: main.c's dispatch and --help, the unknown-command message,
 * bash completion, and docs/cowbench.1 (a SYNOPSIS line, a section that
 * documents every option the command's --help lists). Nothing else lists
 * commands, so a command added to the table and its own file is checked
 * everywhere it must appear.
 */
#include "testutil.h"

static const char *const commands[] = {
#define CLI_COMMAND(name, help) #name,
#include "common/commands.def"
#undef CLI_COMMAND
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static bool is_command(const char *name, size_t len)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strlen(commands[i]) == len && strncmp(commands[i], name, len) == 0)
			return true;
	return false;
}

/* cowbench NAME --help reaches the command (dispatch) and prints its usage. */
START_TEST(dispatch_and_help)
{
	const char *argv[] = { "cowbench", commands[_i], "--help", NULL };
	struct cli_result r = tu_run_cli(argv);
	char want[64];

	snprintf(want, sizeof(want), "usage: cowbench %s", commands[_i]);
	ck_assert_msg(r.status == 0, "cowbench %s --help: status %d: %s", commands[_i], r.status, r.err);
	ck_assert_msg(strncmp(r.out, want, strlen(want)) == 0, "cowbench %s --help starts: %.80s", commands[_i], r.out);
	tu_free(&r);
}
END_TEST

/* cowbench --help lists the table, in its order, and nothing else. */
START_TEST(top_help_lists_the_table)
{
	const char *argv[] = { "cowbench", "--help", NULL };
	struct cli_result r = tu_run_cli(argv);
	char *p;
	size_t i = 0;

	ck_assert_int_eq(r.status, 0);
	p = strstr(r.out, "\ncommands:\n");
	ck_assert_ptr_nonnull(p);
	for (p += strlen("\ncommands:\n"); strncmp(p, "  ", 2) == 0; p = strchr(p, '\n') + 1) {
		size_t n = strcspn(p + 2, " ");

		ck_assert_msg(i < NCOMMANDS, "--help lists more commands than the table: %.40s", p);
		ck_assert_msg(strlen(commands[i]) == n && strncmp(p + 2, commands[i], n) == 0,
			      "--help's command %zu is %.*s, the table's %s", i, (int)n, p + 2, commands[i]);
		i++;
	}
	ck_assert_uint_eq(i, NCOMMANDS);
	tu_free(&r);
}
END_TEST

/* A misspelt command: exit 2, one line naming every command of the table. */
START_TEST(unknown_command_names_the_table)
{
	const char *argv[] = { "cowbench", "nosuchcommand", NULL };
	struct cli_result r = tu_run_cli(argv);

	ck_assert_int_eq(r.status, 2);
	ck_assert_str_eq(r.out, "");
	ck_assert_ptr_nonnull(strchr(r.err, '\n'));
	ck_assert_msg(strchr(r.err, '\n')[1] == '\0', "more than one line: %s", r.err);
	for (size_t i = 0; i < NCOMMANDS; i++) {
		char word[64];

		snprintf(word, sizeof(word), " %s", commands[i]);
		ck_assert_msg(strstr(r.err, word), "the unknown-command message lacks %s: %s", commands[i], r.err);
	}
	tu_free(&r);
}
END_TEST

/* bash completion of the first word offers exactly the table's commands (and help, --help, --version). */
START_TEST(completion_offers_the_table)
{
	char cmd[1024], out[] = "/tmp/cbtest-complXXXXXX", want[512] = "";
	int fd = mkstemp(out);
	char *got;

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(system("bash -n " CB_SOURCE_DIR "/docs/cowbench.bash-completion"), 0);
	snprintf(cmd, sizeof(cmd),
		 "bash -c 'source " CB_SOURCE_DIR "/docs/cowbench.bash-completion; "
		 "COMP_WORDS=(\"" CB_CLI_PATH "\" \"\"); COMP_CWORD=1; COMP_LINE=\"${COMP_WORDS[0]} \"; "
		 "COMP_POINT=${#COMP_LINE}; COMPREPLY=(); _cowbench; echo \"${COMPREPLY[*]}\"' >%s",
		 out);
	ck_assert_int_eq(system(cmd), 0);
	got = tu_slurp(out, NULL);
	ck_assert_ptr_nonnull(got);
	for (size_t i = 0; i < NCOMMANDS; i++)
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s ", commands[i]);
	strcat(want, "help --help --version\n");
	ck_assert_str_eq(got, want);
	free(got);
	unlink(out);
}
END_TEST

/*
 * docs/cowbench.1: a SYNOPSIS line (".B cowbench NAME") and a section
 * (".SS \"cowbench NAME") for the command, and every option its --help lists.
 */
START_TEST(man_page_covers_every_command)
{
	char *man = tu_slurp(CB_SOURCE_DIR "/docs/cowbench.1", NULL), heading[64], *desc;
	const char *argv[] = { "cowbench", commands[_i], "--help", NULL };
	struct cli_result r = tu_run_cli(argv);
	char *save = NULL;

	ck_assert_ptr_nonnull(man);
	desc = strstr(man, "\n.SH DESCRIPTION");
	ck_assert_ptr_nonnull(desc);
	snprintf(heading, sizeof(heading), "\n.B cowbench %s\n", commands[_i]);
	ck_assert_msg(strstr(man, heading) && strstr(man, heading) < desc, "docs/cowbench.1's SYNOPSIS lacks cowbench %s",
		      commands[_i]);
	snprintf(heading, sizeof(heading), "\n.SS \"cowbench %s", commands[_i]);
	ck_assert_msg(strstr(man, heading), "docs/cowbench.1 has no section for cowbench %s", commands[_i]);
	for (char *line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[64], needle[160];
		size_t n = 0;

		while (*line == ' ')
			line++;
		if (line[0] == '-' && line[1] != '-' && line[1] && line[2] == ',' && line[3] == ' ')
			line += 4; /* "-w, --workload=NAME": the long name is checked */
		if (strncmp(line, "--", 2) != 0)
			continue;
		line += 2;
		while (n + 1 < sizeof(name) && ((*line >= 'a' && *line <= 'z') || *line == '-' || (*line >= '0' && *line <= '9')))
			name[n++] = *line++;
		name[n] = '\0';
		if (strcmp(name, "help") == 0 || strcmp(name, "AXIS") == 0 || n == 0)
			continue;
		/* groff spells a hyphen \- */
		needle[0] = '\0';
		strcat(needle, "\\-\\-");
		for (const char *p = name; *p; p++)
			strncat(needle, *p == '-' ? "\\-" : (char[]){ *p, 0 }, sizeof(needle) - strlen(needle) - 1);
		ck_assert_msg(strstr(man, needle), "docs/cowbench.1 does not document --%s of cowbench %s", name,
			      commands[_i]);
	}
	tu_free(&r);
	free(man);
}
END_TEST

/* The man page names no command the table lacks (in SYNOPSIS or as a section). */
START_TEST(man_page_names_no_other_command)
{
	char *man = tu_slurp(CB_SOURCE_DIR "/docs/cowbench.1", NULL);
	static const char *const marks[] = { "\n.B cowbench ", "\n.SS \"cowbench " };

	ck_assert_ptr_nonnull(man);
	for (size_t m = 0; m < 2; m++)
		for (const char *p = strstr(man, marks[m]); p; p = strstr(p + 1, marks[m])) {
			const char *name = p + strlen(marks[m]);
			size_t n = strspn(name, "abcdefghijklmnopqrstuvwxyz");

			if (n == 0)
				continue; /* "cowbench [--help | -V | --version]" */
			ck_assert_msg(is_command(name, n), "docs/cowbench.1 names cowbench %.*s, which the table lacks",
				      (int)n, name);
		}
	free(man);
}
END_TEST

static Suite *commands_suite(void)
{
	Suite *s = suite_create("commands");
	TCase *tc = tcase_create("table");

	tcase_add_loop_test(tc, dispatch_and_help, 0, NCOMMANDS);
	tcase_add_test(tc, top_help_lists_the_table);
	tcase_add_test(tc, unknown_command_names_the_table);
	tcase_add_test(tc, completion_offers_the_table);
	tcase_add_loop_test(tc, man_page_covers_every_command, 0, NCOMMANDS);
	tcase_add_test(tc, man_page_names_no_other_command);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(commands_suite)
