/* The commands of cowbench (commands.def), which main.c dispatches. */
#ifndef COWBENCH_CLI_COMMANDS_H
#define COWBENCH_CLI_COMMANDS_H

#define CLI_COMMAND(name, help) int cmd_##name(int argc, char **argv);
#include "commands.def"
#undef CLI_COMMAND

#endif
