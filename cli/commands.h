/* The commands of cowbench (main.c dispatches them). */
#ifndef COWBENCH_CLI_COMMANDS_H
#define COWBENCH_CLI_COMMANDS_H



int cmd_run(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_matrix(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_summarize(int argc, char **argv);
int cmd_estimate(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_plot(int argc, char **argv);
/* main.c: run command NAME of the table above (one command hands a whole invocation to another this way,
 * never by calling into its files). */
int cli_dispatch(const char *name, int argc, char **argv);
int cmd_project(int argc, char **argv);

#endif
