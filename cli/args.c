#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	int c, idx, ret = -1;

	if (!lo) {
		cli_error("out of memory");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		lo[i].name = table[i].name;
		lo[i].has_arg = !table[i].metavar		  ? no_argument
				: CLI_OPTIONAL_VALUE(&table[i]) ? optional_argument
								: required_argument;
		lo[i].val = 0x100 + i;
	}
	lo[n].name = "help";
	lo[n].val = 'h';
	optind = 1;
	opterr = 0; /* we print our own one-line messages */
	while ((c = getopt_long(argc, argv, "+h", lo, &idx)) != -1) {
		if (c == 'h') {
			usage();
			exit(0);
		}
		if (c == '?' || c == ':') {
			if (optopt >= 0x100 && optopt < 0x100 + n)
				cli_error("option --%s needs a value", table[optopt - 0x100].name);
			else if (optopt)
				cli_error("unknown option -%c (see --help)", optopt);
			else
				cli_error("unknown option %s (see --help)", argv[optind - 1]);
			goto out;
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
		printf("  %-24s %s\n", left, table[i].help);
	}
	printf("  %-24s %s\n", "-h, --help", "show this help");
}

static void restore_and_reraise(int sig)
{
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
	else if (err < 0)
		cli_error("%s: cannot set %s: %s", option, path, strerror(-err));
	return err < 0 ? -1 : 0;
}
