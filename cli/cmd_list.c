#include <stdio.h>

#include <cowbench/cowbench.h>

#include "common/diag.h"
#include "common/args.h"
#include "common/commands.h"

struct list_opts {
	bool columns;
};

static const struct cli_option list_options[] = {
	{ "columns", NULL, "list the result columns (name, type, meaning) instead: the CSV schema",
	  CLI_SET(CLI_STORE_TRUE, struct list_opts, columns) },
};

#define N_LIST_OPTIONS ((int)(sizeof(list_options) / sizeof(list_options[0])))

static void list_usage(void)
{
	printf("usage: cowbench list [--columns]\n\nList the workloads, with what each does.\n\n");
	cli_print_options(list_options, N_LIST_OPTIONS);
}

/* The CSV schema: numeric ones are what summarize --metric takes (and what completion offers). */
static void list_columns(void)
{
	static const char *const types[] = { [CB_COL_INT] = "integer", [CB_COL_FLOAT] = "number",
					     [CB_COL_STR] = "text" };
	size_t n;
	const struct cb_column *c = cb_columns(&n);

	printf("%-30s %-8s %s\n", "COLUMN", "TYPE", "MEANING");
	for (size_t i = 0; i < n; i++)
		printf("%-30s %-8s %s\n", c[i].name, types[c[i].type], c[i].help);
}

int cmd_list(int argc, char **argv)
{
	struct list_opts o = { .columns = false };
	int argi = cli_parse_options(argc, argv, list_options, N_LIST_OPTIONS, &o, list_usage);

	if (argi < 0)
		return EXIT_USAGE;
	if (argi < argc) {
		cli_error("list takes no arguments, not '%s' (see cowbench list --help)", argv[argi]);
		return EXIT_USAGE;
	}
	if (o.columns) {
		list_columns();
		return 0;
	}
	printf("%-10s %s\n", "WORKLOAD", "DESCRIPTION");
	for (size_t i = 0; i < cb_workload_count(); i++) {
		const struct cb_workload *w = cb_workload_at(i);

		printf("%-10s %s\n", w->name, w->help);
	}
	return 0;
}
