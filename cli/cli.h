#ifndef COWBENCH_CLI_H
#define COWBENCH_CLI_H

#include <stdbool.h>
#include <stdint.h>

/* Exit statuses of the cowbench program. */
#define EXIT_RUN_FAILED 1 /* a measurement failed; its row says how */
#define EXIT_USAGE      2 /* bad input: nothing was measured or written */
#define EXIT_INTERNAL   70

/* Print "cowbench: ..." and one newline on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Strict number parsing for option values: the whole text, in range, or false. */
bool cli_parse_long(const char *text, long min, long max, long *out);
bool cli_parse_u64(const char *text, uint64_t *out);

/*
 * Options are data: one table per command drives getopt_long, the
 * parsing and --help alike.
 */
struct cli_option {
	const char *name;
	const char *metavar; /* NULL: a flag without a value */
	const char *help;
	/* Parse the value into the command's options; return false after printing an error. */
	bool (*parse)(void *opts, const char *value);
};

/* Parse argv against the table; returns the index of the first operand, or -1 (error printed). */
int cli_parse_options(int argc, char **argv, const struct cli_option *table, int n, void *opts,
		      void (*usage)(void));
void cli_print_options(const struct cli_option *table, int n);

/*
 * Set a kernel knob for this run (value < 0: leave it). The old value
 * is put back at exit and on SIGINT/SIGTERM/SIGHUP. -1 after printing why.
 */
int cli_apply_sysctl(const char *option, const char *path, long value);

int cmd_run(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_info(int argc, char **argv);

#endif
