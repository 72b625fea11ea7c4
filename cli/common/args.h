/* Options as data (args.c): one table per command drives parsing, --help and "did you mean"; strict value parsers. */
#ifndef COWBENCH_CLI_ARGS_H
#define COWBENCH_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cowbench/output.h> /* struct cb_field */
#include <cowbench/report.h> /* enum cb_format */

/* Strict number parsing for option values: the whole text, in range, or false. */
bool cli_parse_long(const char *text, long min, long max, long *out);
bool cli_parse_u64(const char *text, uint64_t *out);
/* OPTION's value in seconds, 0.01 to 86400 (a day); false after printing why. */
bool cli_parse_seconds(const char *option, const char *text, double *out);
/* --format=table|csv|json; false after printing why. */
bool cli_parse_format(const char *text, enum cb_format *out);
/* --columns=NAME[,NAME]: names of the table's columns in f; false after printing them all. */
bool cli_check_columns(const struct cb_field *f, size_t nf, const char *list);
/* The same for the rows' table (run, matrix). */
bool cli_row_columns(const char *list);
/* --target-ci=PCT (a fraction out), --max-time=DURATION (ns); false after printing why. */
bool cli_parse_target_ci(const char *text, double *out);
bool cli_parse_max_time(const char *text, uint64_t *ns);
/*
 * Rows without --format (run, matrix): a table for a person at a terminal,
 * CSV when stdout is a pipe or a file or --output is given, which is what
 * scripts read (outfile.c). CLI_FORMAT_AUTO marks "not given".
 */
#define CLI_FORMAT_AUTO ((enum cb_format)-1)
enum cb_format cli_format_resolve(enum cb_format f, const char *output);

/*
 * Options are data: one table per command drives getopt_long, the
 * parsing and --help alike. An entry either stores its value at offset
 * in the command's options struct (store, like cb_option's typed
 * offsets) or calls parse.
 */
enum cli_store {
	CLI_STORE_CALL,   /* parse(opts, value) */
	CLI_STORE_TRUE,   /* a flag: bool at offset = true */
	CLI_STORE_FALSE,  /* a flag: bool at offset = false */
	CLI_STORE_FILE,   /* const char * at offset = a non-empty file name */
	CLI_STORE_FORMAT, /* enum cb_format at offset: table, csv or json */
	CLI_STORE_ROW_FORMAT, /* the same for rows (run, matrix), whose default is not table */
};
struct cli_option {
	const char *name;
	const char *metavar; /* NULL: a flag without a value */
	const char *help;
	/* Parse the value into the command's options; return false after printing an error. */
	bool (*parse)(void *opts, const char *value);
	enum cli_store store;
	size_t offset;
	char letter; /* its short option; 0: the common one of its name, if any (-w -s -r -o -f -q) */
	bool hidden; /* parsed, but left out of --help and of "did you mean" */
	bool not_axis; /* run's option that a matrix cell cannot vary (how many reps, where rows go) */
};
/* { "force", NULL, "help", CLI_SET(CLI_STORE_TRUE, struct sum_opts, force) } */
#define CLI_SET(how, type, field) .store = (how), .offset = offsetof(type, field)

/*
 * Parse one option's value; false after printing an error. While parse
 * runs, cli_option_name() is its option's name: one parse function serves
 * every option that comes from a table (a workload's).
 */
bool cli_option_apply(const struct cli_option *o, void *opts, const char *value);
const char *cli_option_name(void);

/* A metavar in brackets ("[A|B]") makes the value optional: "--name" alone passes NULL. */
#define CLI_OPTIONAL_VALUE(o) ((o)->metavar && (o)->metavar[0] == '[')

/*
 * Parse argv against the table as getopt_long does (-x VALUE, -xVALUE,
 * --name VALUE, --name=VALUE, bundled flags, unambiguous prefixes), with
 * options and operands in any order and "--" ending the options. The
 * operands are moved to argv's tail, in their order; returns the index of
 * the first, or -1 (one line printed). -h/--help print usage and exit 0.
 */
int cli_parse_options(int argc, char **argv, const struct cli_option *table, int n, void *opts,
		      void (*usage)(void));
/* The same, but the first operand ends the options (cowbench stat COMMAND ARGS...). */
int cli_parse_options_first(int argc, char **argv, const struct cli_option *table, int n, void *opts,
			    void (*usage)(void));
void cli_print_options(const struct cli_option *table, int n);
/*
 * The name closest to a misspelt one (at most two edits), else the only name NAME starts
 * ("lat_p50": lat_p50_ns); NULL when none or NAME itself.
 */
const char *cli_suggest(const char *name, const char *const *names, size_t n);
/* " (did you mean X?)" in buf, or "": for one-line messages about a misspelt value. */
const char *cli_hint(const char *name, const char *const *names, size_t n, char *buf, size_t len);
/* Whether NAME is a numeric result column; false after "OPTION: 'NAME' is not a numeric column (did you mean ...?)". */
bool cli_numeric_column(const char *option, const char *name);

#endif
