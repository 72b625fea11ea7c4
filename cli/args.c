#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cowbench/report.h>
#include <cowbench/sysctl.h>

#include "cli.h"

void cli_error(const char *fmt, ...)
{
	va_list ap;

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
	if (cb_format_parse(text, out) < 0) {
		cli_error("--format must be table, csv or json, not '%s'", text);
		return false;
	}
	return true;
}

bool cli_parse_output(const char *text, const char **out)
{
	if (!*text) {
		cli_error("--output needs a file name");
		return false;
	}
	*out = text;
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

const char *cli_short_option(char letter)
{
	for (size_t i = 0; i < sizeof(short_options) / sizeof(short_options[0]); i++)
		if (short_options[i].letter == letter)
			return short_options[i].name;
	return NULL;
}

char cli_short_letter(const char *name)
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

const char *cli_closest_name(const char *name, const char *const *names, size_t n)
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

/* "unknown option --workoad (did you mean --workload?)" */
static void unknown_option(const char *arg, const struct cli_option *table, int n)
{
	const char *names[128];
	char name[64];
	const char *hint;
	size_t k = 0;

	snprintf(name, sizeof(name), "%.*s", (int)strcspn(arg + 2, "="), arg + 2);
	for (int i = 0; i < n && k < 127; i++)
		names[k++] = table[i].name;
	names[k++] = "help";
	hint = cli_closest_name(name, names, k);
	if (hint)
		cli_error("unknown option --%s (did you mean --%s?)", name, hint);
	else
		cli_error("unknown option --%s (see --help)", name);
}

static const char *applying; /* the option whose parse runs (cli_option_name) */

bool cli_option_apply(const struct cli_option *o, void *opts, const char *value)
{
	bool ok;

	applying = o->name;
	ok = o->parse(opts, value);
	applying = NULL;
	return ok;
}

const char *cli_option_name(void)
{
	return applying;
}

int cli_parse_options(int argc, char **argv, const struct cli_option *table, int n, void *opts,
		      void (*usage)(void))
{
	struct option *lo = calloc((size_t)n + 2, sizeof(*lo));
	char optstring[64] = "+h";
	int c, idx, ret = -1;

	if (!lo) {
		cli_error("out of memory");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char letter = cli_short_letter(table[i].name);

		lo[i].name = table[i].name;
		lo[i].has_arg = !table[i].metavar		  ? no_argument
				: CLI_OPTIONAL_VALUE(&table[i]) ? optional_argument
								: required_argument;
		lo[i].val = 0x100 + i;
		if (letter && !CLI_OPTIONAL_VALUE(&table[i]) && strlen(optstring) + 3 < sizeof(optstring)) {
			size_t o = strlen(optstring);

			optstring[o] = letter;
			optstring[o + 1] = table[i].metavar ? ':' : '\0';
			optstring[o + 2] = '\0';
		}
	}
	lo[n].name = "help";
	lo[n].val = 'h';
	optind = 1;
	opterr = 0; /* we print our own one-line messages */
	while ((c = getopt_long(argc, argv, optstring, lo, &idx)) != -1) {
		if (c == 'h') {
			usage();
			exit(0);
		}
		if (c == '?' || c == ':') {
			const char *arg = argv[optind - 1];

			if (optopt >= 0x100 && optopt < 0x100 + n)
				cli_error(table[optopt - 0x100].metavar ? "option --%s needs a value"
									: "option --%s takes no value",
					  table[optopt - 0x100].name);
			else if (optopt && cli_short_option((char)optopt) && strchr(optstring, optopt))
				cli_error("option -%c (--%s) needs a value", optopt, cli_short_option((char)optopt));
			else if (optopt)
				cli_error("unknown option -%c (see --help)", optopt);
			else if (strncmp(arg, "--", 2) == 0)
				unknown_option(arg, table, n);
			else
				cli_error("unknown option %s (see --help)", arg);
			goto out;
		}
		if (c < 0x100) { /* a short option: its long twin */
			for (int i = 0; i < n; i++)
				if (cli_short_letter(table[i].name) == c)
					c = 0x100 + i;
		}
		if (!cli_option_apply(&table[c - 0x100], opts, optarg))
			goto out;
	}
	ret = optind;
out:
	free(lo);
	return ret;
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
		if (cli_short_letter(table[i].name) && !CLI_OPTIONAL_VALUE(&table[i])) {
			char with_short[72];

			snprintf(with_short, sizeof(with_short), "-%c, %s", cli_short_letter(table[i].name), left);
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

static void restore_and_reraise(int sig)
{
	const char *note = interrupt_note;

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
	else if (err < 0)
		cli_error("%s: cannot set %s: %s", option, path, strerror(-err));
	return err < 0 ? -1 : 0;
}
