#define _GNU_SOURCE
#include <errno.h>
#include <time.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cowbench/report.h>
#include <cowbench/sysctl.h>

#include "common/diag.h"
#include "common/args.h"
#include "common/spawn.h"
#include "common/guard.h"

static bool error_printed;
static int stdout_errno; /* the cause of the first failed flush of stdout (cli_flush_stdout) */

void cli_flush_stdout(void)
{
	errno = 0;
	if (fflush(stdout) != 0 && !stdout_errno)
		stdout_errno = errno ? errno : EIO;
}

int cli_stdout_errno(void)
{
	return stdout_errno;
}

bool cli_error_printed(void)
{
	return error_printed;
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	error_printed = true;
	fputs("cowbench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_note(const char *fmt, ...)
{
	va_list ap;

	fputs("cowbench: note: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

bool cli_parse_long(const char *text, long min, long max, long *out)
{
	char *end;
	long v;

	if (!text || !*text)
		return false;
	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

bool cli_parse_format(const char *text, enum cb_format *out)
{
	static const char *const formats[] = { "table", "csv", "json", "markdown" };
	char hint[64];

	if (cb_format_parse(text, out) < 0) {
		cli_error("--format must be table, csv, json or markdown, not '%s'%s", text,
			  cli_hint(text, formats, 4, hint, sizeof(hint)));
		return false;
	}
	return true;
}

bool cli_row_columns(const char *list)
{
	size_t n;
	const struct cb_field *f = cb_row_fields(&n);

	return cli_check_columns(f, n, list);
}

bool cli_check_columns(const struct cb_field *f, size_t nf, const char *list)
{
	char why[2048];

	if (cb_out_columns_check(f, nf, list, why, sizeof(why)) < 0) {
		cli_error("--columns: %s", why);
		return false;
	}
	return true;
}

bool cli_parse_u64(const char *text, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!text || *text < '0' || *text > '9')
		return false;
	errno = 0;
	v = strtoull(text, &end, 0);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

/* Short options for the common long ones, as fio and hyperfine have them (docs/reference.md: Options of cowbench run). */
static const struct {
	char letter;
	const char *name;
} short_options[] = {
	{ 'w', "workload" }, { 's', "size" }, { 'r', "reps" }, { 'o', "output" }, { 'f', "format" }, { 'q', "quiet" },
};

/* The short letter of a common long option (0: none). */
static char cli_short_letter(const char *name)
{
	for (size_t i = 0; i < sizeof(short_options) / sizeof(short_options[0]); i++)
		if (strcmp(short_options[i].name, name) == 0)
			return short_options[i].letter;
	return 0;
}

/* Edit distance (insertions, deletions, substitutions), capped: names are short. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[64];

	if (la >= 63 || lb >= 63)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

/* The name closest to a misspelt one (at most two edits), or NULL: for "did you mean --workload?". */
static const char *cli_closest_name(const char *name, const char *const *names, size_t n)
{
	const char *best = NULL;
	size_t best_d = 3; /* at most two edits away, and less than half the name */

	for (size_t i = 0; i < n; i++) {
		size_t d = edit_distance(name, names[i]);

		if (d < best_d && d * 2 <= strlen(names[i])) {
			best = names[i];
			best_d = d;
		}
	}
	return best;
}

/*
 * What a misspelt NAME probably meant: the closest of names (at most two
 * edits), else the one name that starts with it ("lat_p50": lat_p50_ns);
 * NULL when none, or when that is NAME itself.
 */
const char *cli_suggest(const char *name, const char *const *names, size_t n)
{
	const char *hint = cli_closest_name(name, names, n), *prefixed = NULL;
	size_t len = strlen(name), nprefixed = 0;

	for (size_t i = 0; !hint && len >= 3 && i < n; i++)
		if (strncmp(names[i], name, len) == 0 && nprefixed++ == 0)
			prefixed = names[i];
	if (!hint && nprefixed == 1)
		hint = prefixed;
	return hint && strcmp(hint, name) != 0 ? hint : NULL;
}

const char *cli_hint(const char *name, const char *const *names, size_t n, char *buf, size_t len)
{
	const char *hint = cli_suggest(name, names, n);

	if (hint)
		snprintf(buf, len, " (did you mean %s?)", hint);
	else
		snprintf(buf, len, "%s", "");
	return buf;
}

bool cli_numeric_column(const char *option, const char *name)
{
	size_t n, k = 0;
	const struct cb_column *c = cb_columns(&n), *found = cb_column_find(name);
	const char **names;
	char hint[96] = "";

	if (found && found->type != CB_COL_STR)
		return true;
	names = calloc(n + 1, sizeof(*names));
	for (size_t i = 0; names && i < n; i++)
		if (c[i].type != CB_COL_STR)
			names[k++] = c[i].name;
	if (names)
		cli_hint(name, names, k, hint, sizeof(hint));
	free(names);
	cli_error("%s: '%s' is not a numeric column%s (see cowbench list --columns)", option, name, hint);
	return false;
}

const char *cli_printable(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p && o + 5 < len; p++) {
		bool c1 = p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f; /* C1 controls in UTF-8 (CSI is one) */

		if (*p < 0x20 || *p == 0x7f || c1) {
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", c1 ? *++p : *p);
			continue;
		}
		buf[o++] = (char)*p;
	}
	buf[o] = '\0';
	return buf;
}

/* The table's names a misspelt one may have meant (help too). */
static size_t option_names(const struct cli_option *table, int n, const char **names, size_t max)
{
	size_t k = 0;

	for (int i = 0; i < n && k + 1 < max; i++)
		if (!table[i].hidden)
			names[k++] = table[i].name;
	names[k++] = "help";
	return k;
}

/*
 * "unknown option --workoad (did you mean --workload?)"; "--s" that
 * starts several names is ambiguous, and a hint is given only when it
 * differs from what was typed.
 */
static void unknown_option(const char *arg, const struct cli_option *table, int n)
{
	const char *names[256], *hint;
	char name[64], starts[160] = "";
	size_t k = option_names(table, n, names, 256), len, nstart = 0;

	snprintf(name, sizeof(name), "%.*s", (int)strcspn(arg + 2, "="), arg + 2);
	len = strlen(name);
	for (size_t i = 0; len && i < k; i++)
		if (strncmp(names[i], name, len) == 0 && strlen(starts) + strlen(names[i]) + 5 < sizeof(starts))
			snprintf(starts + strlen(starts), sizeof(starts) - strlen(starts), "%s--%s", nstart++ ? ", " : "",
				 names[i]);
	if (nstart > 1) {
		cli_error("option --%s is ambiguous (%s)", name, starts);
		return;
	}
	hint = cli_suggest(name, names, k);
	if (hint)
		cli_error("unknown option --%s (did you mean --%s?)", name, hint);
	else
		cli_error("unknown option --%s (see --help)", name);
}

static const char *applying; /* the option whose parse runs (cli_option_name) */

/* Typed options store their value at their offset; the others call their parse function. */
static bool store_value(const struct cli_option *o, void *opts, const char *value)
{
	char *field = (char *)opts + o->offset;

	switch (o->store) {
	case CLI_STORE_TRUE:
		*(bool *)field = true;
		return true;
	case CLI_STORE_FALSE:
		*(bool *)field = false;
		return true;
	case CLI_STORE_FILE:
		if (!*value) {
			cli_error("--%s needs a file name", o->name);
			return false;
		}
		*(const char **)field = value;
		return true;
	case CLI_STORE_FORMAT:
		return cli_parse_format(value, (enum cb_format *)field);
	case CLI_STORE_ROW_FORMAT:
		if (cb_format_parse(value, (enum cb_format *)field) < 0) {
			cli_error("--format must be csv, json, table or markdown, not '%s'", value);
			return false;
		}
		return true;
	case CLI_STORE_CALL:
		break;
	}
	return o->parse(opts, value);
}

bool cli_option_apply(const struct cli_option *o, void *opts, const char *value)
{
	bool ok;

	applying = o->name;
	ok = store_value(o, opts, value);
	applying = NULL;
	return ok;
}

const char *cli_option_name(void)
{
	return applying;
}

/* The short letter of an entry: its own, else the common one of its name (-w -s -r -o -f -q). */
static char letter_of(const struct cli_option *o)
{
	if (CLI_OPTIONAL_VALUE(o))
		return 0; /* "-xVALUE" only: too easy to misread */
	return o->letter ? o->letter : cli_short_letter(o->name);
}

/*
 * getopt_long's view of the table: long options, and the short letters in
 * optstring after mode and ':' (a missing value then comes back as ':', an
 * unknown letter as '?'). optstring is terminated as it grows: the letter
 * test below reads it, and a stack buffer's old bytes once held a 'p' that
 * kept -p out of record's optstring ("-p 1": "option -p needs a value").
 */
static struct option *getopt_table(const struct cli_option *table, int n, char mode, char *optstring, size_t len)
{
	struct option *lo = calloc((size_t)n + 2, sizeof(*lo));
	size_t o = 0;

	if (!lo)
		return NULL;
	memset(optstring, 0, len);
	optstring[o++] = mode;
	optstring[o++] = ':';
	optstring[o++] = 'h';
	for (int i = 0; i < n; i++) {
		char letter = letter_of(&table[i]);

		lo[i].name = table[i].name;
		lo[i].has_arg = !table[i].metavar		  ? no_argument
				: CLI_OPTIONAL_VALUE(&table[i]) ? optional_argument
								: required_argument;
		lo[i].val = 0x100 + i;
		if (letter && !strchr(optstring, letter) && o + 3 < len) {
			optstring[o++] = letter;
			if (table[i].metavar)
				optstring[o++] = ':';
		}
	}
	optstring[o] = '\0';
	lo[n].name = "help";
	lo[n].val = 'h';
	return lo;
}

/* The entry a short letter stands for. */
static int entry_of_letter(int c, const struct cli_option *table, int n)
{
	for (int i = 0; i < n; i++)
		if (letter_of(&table[i]) == c)
			return i;
	return -1;
}

/*
 * What getopt_long could not take: c is ':' for a missing value, '?' for
 * the rest (optopt: the option, 0 for an unknown or ambiguous long one).
 */
static void explain_rejected(int c, const char *arg, const struct cli_option *table, int n)
{
	if (optopt >= 0x100 && optopt < 0x100 + n)
		cli_error(c == ':' ? "option --%s needs a value" : "option --%s takes no value",
			  table[optopt - 0x100].name);
	else if (c == ':' && entry_of_letter(optopt, table, n) >= 0)
		cli_error("option -%c (--%s) needs a value", optopt, table[entry_of_letter(optopt, table, n)].name);
	else if (optopt && entry_of_letter(optopt, table, n) >= 0) /* a letter of the table not in optstring */
		cli_error("internal: option -%c (--%s) is missing from the parser", optopt,
			  table[entry_of_letter(optopt, table, n)].name);
	else if (optopt)
		cli_error("unknown option -%c (see --help)", optopt);
	else if (strncmp(arg, "--", 2) == 0)
		unknown_option(arg, table, n);
	else
		cli_error("unknown option %s (see --help)", arg);
}

/*
 * getopt_long in order mode ('-': operands come back as 1, in place) or
 * stop mode ('+'); either way POSIXLY_CORRECT does not change what a
 * command line means. The operands end up at argv's tail, in order.
 */
static int parse_table(int argc, char **argv, const struct cli_option *table, int n, void *opts,
		       void (*usage)(void), char mode)
{
	char optstring[128];
	struct option *lo = getopt_table(table, n, mode, optstring, sizeof(optstring));
	char **operands = calloc((size_t)argc + 1, sizeof(*operands));
	int c, idx, nops = 0, ret = -1;

	if (!lo || !operands) {
		cli_error("out of memory");
		goto out;
	}
	optind = 0; /* a full reset: each command line is parsed afresh */
	opterr = 0; /* we print our own one-line messages */
	while ((c = getopt_long(argc, argv, optstring, lo, &idx)) != -1) {
		int entry = c >= 0x100 ? c - 0x100 : -1;

		if (c == 1) {
			operands[nops++] = optarg;
			continue;
		}
		if (c == 'h') {
			usage();
			exit(0);
		}
		if (c == '?' || c == ':') {
			explain_rejected(c, argv[optind - 1], table, n);
			goto out;
		}
		if (entry < 0)
			entry = entry_of_letter(c, table, n);
		if (entry < 0 || !cli_option_apply(&table[entry], opts, optarg))
			goto out;
	}
	while (optind < argc)
		operands[nops++] = argv[optind++];
	memcpy(argv + argc - nops, operands, (size_t)nops * sizeof(*argv));
	ret = argc - nops;
out:
	free(operands);
	free(lo);
	return ret;
}

int cli_parse_options(int argc, char **argv, const struct cli_option *table, int n, void *opts,
		      void (*usage)(void))
{
	return parse_table(argc, argv, table, n, opts, usage, '-');
}

int cli_parse_options_first(int argc, char **argv, const struct cli_option *table, int n, void *opts,
			    void (*usage)(void))
{
	return parse_table(argc, argv, table, n, opts, usage, '+');
}

void cli_print_options(const struct cli_option *table, int n)
{
	for (int i = 0; i < n; i++) {
		char left[64];

		if (CLI_OPTIONAL_VALUE(&table[i]))
			snprintf(left, sizeof(left), "--%s[=%s", table[i].name, table[i].metavar + 1);
		else
			snprintf(left, sizeof(left), "--%s%s%s", table[i].name, table[i].metavar ? "=" : "",
				 table[i].metavar ? table[i].metavar : "");
		if (table[i].hidden)
			continue;
		if (letter_of(&table[i])) {
			char with_short[72];

			snprintf(with_short, sizeof(with_short), "-%c, %s", letter_of(&table[i]), left);
			printf("  %-24s %s\n", with_short, table[i].help);
		} else {
			printf("  %-24s %s\n", left, table[i].help);
		}
	}
	printf("  %-24s %s\n", "-h, --help", "show this help");
}

static const char *volatile interrupt_note;

void cli_set_interrupt_note(const char *text)
{
	interrupt_note = text;
}

/* Temporary paths a signal must not leave behind (files first, their directory last). */
#define MAX_SIGNAL_PATHS 16
static char signal_paths[MAX_SIGNAL_PATHS][4096];
static volatile sig_atomic_t n_signal_paths;

void cli_remove_on_signal(const char *path)
{
	if (n_signal_paths == MAX_SIGNAL_PATHS || strlen(path) >= sizeof(signal_paths[0]))
		return;
	memcpy(signal_paths[n_signal_paths], path, strlen(path) + 1);
	n_signal_paths = n_signal_paths + 1; /* the path is whole before the handler can see it */
	cli_restore_sysctls_at_exit();       /* hooks the signals */
}

void cli_remove_on_signal_clear(void)
{
	n_signal_paths = 0;
}

/* unlink and rmdir are async-signal-safe; a directory is removed once its files are. */
static void remove_signal_paths(void)
{
	for (sig_atomic_t i = 0; i < n_signal_paths; i++)
		if (unlink(signal_paths[i]) != 0)
			rmdir(signal_paths[i]);
}

static void restore_and_reraise(int sig)
{
	const char *note = interrupt_note;

	remove_signal_paths();
	if (note) { /* async-signal-safe: one write of a string prepared beforehand */
		ssize_t w = write(STDERR_FILENO, note, strlen(note));

		(void)w;
	}
	cb_sysctl_restore_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void restore_at_exit(void)
{
	cb_sysctl_restore_all();
}

void cli_restore_sysctls_at_exit(void)
{
	static bool hooked;

	if (hooked)
		return;
	atexit(restore_at_exit);
	signal(SIGINT, restore_and_reraise);
	signal(SIGTERM, restore_and_reraise);
	signal(SIGHUP, restore_and_reraise);
	hooked = true;
}

int cli_apply_sysctl(const char *option, const char *path, long value)
{
	int err;

	if (value < 0)
		return 0;
	cli_restore_sysctls_at_exit();
	err = cb_sysctl_override(path, value);
	if (err == -ENOENT)
		cli_error("%s needs the cowbench kernel: %s is absent (see kernel/README.md)", option, path);
	else if (err == -EACCES || err == -EPERM)
		cli_error("%s needs root to write %s", option, path);
	else if (err == -EBUSY)
		cli_error("%s: %s is held at another value by a running cowbench (see cowbench info)", option, path);
	else if (err == -EUSERS)
		cli_error("%s: %d concurrent cowbench runs hold %s already, the most the settings journal tracks",
			  option, CB_SYSCTL_MAX_OWNERS, path);
	else if (err < 0)
		cli_error("%s: cannot set %s: %s", option, path, strerror(-err));
	return err < 0 ? -1 : 0;
}

bool cli_parse_seconds(const char *option, const char *text, double *out)
{
	char *end;
	double s;

	errno = 0;
	s = strtod(text, &end);
	if (errno || end == text || *end || !(s >= 0.01 && s <= 86400)) {
		cli_error("%s must be seconds from 0.01 to 86400, not '%s'", option, text);
		return false;
	}
	*out = s;
	return true;
}

int cli_check_target(int argc, char *const *argv, int argi, bool have_pid, const char *synopsis)
{
	if (argi < argc && strcmp(argv[argi - 1], "--") != 0 && !have_pid) {
		cli_error("put the command after '--': %s -- %s ...", synopsis, argv[argi]);
		return -1;
	}
	if (have_pid && argi < argc) {
		cli_error("give either -p PID or -- COMMAND, not both");
		return -1;
	}
	return 0;
}

double cli_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

bool cli_parse_target_ci(const char *text, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (end != text && *end == '%')
		end++;
	if (end == text || *end || errno || !(v > 0) || !(v < 100)) {
		cli_error("--target-ci must be a percentage above 0 and below 100 (e.g. 2 or 2%%), not '%s'", text);
		return false;
	}
	*out = v / 100;
	return true;
}

bool cli_parse_max_time(const char *text, uint64_t *ns)
{
	static const struct { const char *suffix; double scale; } units[] = {
		{ "", 1e9 }, { "s", 1e9 }, { "ms", 1e6 }, { "m", 60e9 }, { "min", 60e9 }, { "h", 3600e9 },
	};
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	for (size_t i = 0; end != text && !errno && v > 0 && i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(end, units[i].suffix) == 0 && v * units[i].scale < 1e19) {
			*ns = (uint64_t)(v * units[i].scale);
			if (*ns)
				return true;
		}
	cli_error("--max-time must be a positive duration such as 30s, 500ms, 2m or 1h, not '%s'", text);
	return false;
}
