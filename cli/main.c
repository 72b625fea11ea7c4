#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cowbench/cowbench.h>

#include "common/diag.h"
#include "common/args.h"
#include "common/guard.h"
#include "common/commands.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
#define CLI_COMMAND(name, help) { #name, cmd_##name, help },
#include "common/commands.def"
#undef CLI_COMMAND
};

static void usage(FILE *fp)
{
	int width = 0; /* the longest name's, so every help text starts in one column */

	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if ((int)strlen(commands[i].name) > width)
			width = (int)strlen(commands[i].name);
	fprintf(fp, "usage: cowbench COMMAND [OPTIONS]\n\n"
		    "Measure what copy-on-write really costs after fork().\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(fp, "  %-*s %s\n", width, commands[i].name, commands[i].help);
	fprintf(fp, "\n'cowbench COMMAND --help' describes a command's options; -V, --version the build.\n"
		    "Exit status: 0 ok, 1 a measurement failed (its row says how), 2 bad input (one line on stderr),\n"
		    "3 unsupported here, 4 a resource missing.\n");
}

static pid_t main_pid;
static bool stdout_checked;

/* Flush and close stdout: 0, or the errno of what could not be written. */
static int close_stdout_errno(void)
{
	int err = 0;

	stdout_checked = true;
	errno = 0;
	if (fflush(stdout) != 0)
		err = errno ? errno : EIO;
	else if (ferror(stdout))
		err = cli_stdout_errno() ? cli_stdout_errno() : EIO; /* an earlier write failed */
	if (fclose(stdout) != 0 && !err && errno != EBADF)
		err = errno;
	return err;
}

/*
 * One check for every command's standard output: what could not be
 * written (a full disk, /dev/full) makes the exit status 1 with one line,
 * never a silent 0. A command that already said why keeps its line and
 * its status.
 */
static int finish_stdout(int status)
{
	int err = close_stdout_errno();

	if (!err)
		return status;
	if (!cli_error_printed())
		cli_error("cannot write standard output: %s", strerror(err));
	return status ? status : EXIT_RUN_FAILED;
}

/* The same for the paths that end in exit() (--help, usage): registered first, so it runs last. */
static void close_stdout_at_exit(void)
{
	int err;

	if (getpid() != main_pid || stdout_checked)
		return; /* a forked child that exits: the parent owns stdout */
	err = close_stdout_errno();
	if (err && !cli_error_printed()) {
		cli_error("cannot write standard output: %s", strerror(err));
		_exit(EXIT_RUN_FAILED);
	}
}

int main(int argc, char **argv)
{
	char why[256];

	main_pid = getpid();
	atexit(close_stdout_at_exit);

	if (cb_registry_check(why, sizeof(why)) < 0) {
		cli_error("%s", why);
		return EXIT_INTERNAL;
	}
	if (argc < 2) {
		cli_error("no command given (see cowbench --help)");
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return finish_stdout(0);
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "version") == 0) {
		printf("cowbench %s (%s)\n", cb_version(), cb_git_revision());
		return finish_stdout(0);
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0) {
			cli_guard_start(argv[1]);
			return finish_stdout(commands[i].fn(argc - 1, argv + 1));
		}
	{
		const char *names[sizeof(commands) / sizeof(commands[0])];
		char hint[64];

		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			names[i] = commands[i].name;
		char list[1024] = ""; /* every name of the table, comma-separated (check_commands checks all appear) */

		/* The list is the table's: a command added there is named here too. */
		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "", commands[i].name);
		cli_error("unknown command '%s'%s (commands: %s; see --help)", argv[1],
			  cli_hint(argv[1], names, sizeof(names) / sizeof(names[0]), hint, sizeof(hint)), list);
	}
	return EXIT_USAGE;
}
