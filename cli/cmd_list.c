#include <stdio.h>

#include <cowbench/cowbench.h>

#include "cli.h"

int cmd_list(int argc, char **argv)
{
	(void)argv;
	if (argc > 1) {
		cli_error("list takes no arguments");
		return EXIT_USAGE;
	}
	printf("%-10s %s\n", "WORKLOAD", "DESCRIPTION");
	for (size_t i = 0; i < cb_workload_count(); i++) {
		const struct cb_workload *w = cb_workload_at(i);

		printf("%-10s %s\n", w->name, w->help);
	}
	return 0;
}
