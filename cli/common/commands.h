/* The commands of cowbench (commands.def), which main.c dispatches. */
#ifndef COWBENCH_CLI_COMMANDS_H
#define COWBENCH_CLI_COMMANDS_H

#define CLI_COMMAND(name, help) int cmd_##name(int argc, char **argv);
#include "commands.def"
#undef CLI_COMMAND

/* main.c: run command NAME of the table (one command hands a whole invocation to another this way,
 * never by calling into its files). */
int cli_dispatch(const char *name, int argc, char **argv);

#endif
