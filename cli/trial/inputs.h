/* Result files read for merge, summarize and plot (inputs.c). */
#ifndef COWBENCH_CLI_INPUTS_H
#define COWBENCH_CLI_INPUTS_H

#include <stddef.h>

#include <cowbench/results.h> /* enum cb_dup_rule */

struct cb_row;
/* Result files read for merge, summarize and plot (inputs.c): every file checked before any output. */
struct cb_results;
struct cli_inputs {
	char **files;
	int nfiles;
	struct cb_results *res; /* per file */
	struct cb_row *rows;    /* all rows, in file order */
	size_t nrows;
};
/* -1 after printing why (one line); free with cli_inputs_free either way. */
int cli_inputs_read(struct cli_inputs *in, int nfiles, char **files);
/* A rep present twice by rule (cowbench/results.h): -1 after one line naming it and its files. */
int cli_inputs_check_duplicates(const struct cli_inputs *in, enum cb_dup_rule rule);
void cli_inputs_free(struct cli_inputs *in);

/* Read result CSVs (all checked before anything is printed) into one row array; -1 after printing why. */
int cli_read_rows(int nfiles, char **files, struct cb_row **rows, size_t *n);

#endif
