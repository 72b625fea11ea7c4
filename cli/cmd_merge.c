#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/cowbench.h>
#include <cowbench/results.h>
#include <cowbench/repstats.h>

#include "common/diag.h"
#include "common/args.h"
#include "common/outfile.h"
#include "trial/inputs.h"
#include "common/commands.h"

/*
 * cowbench merge A.csv B.csv ...: the shards of one matrix into one CSV.
 * Everything is read and checked before a byte is written: another schema
 * version, a column this build does not know, or a (cell, rep) present
 * twice rejects the whole merge (exit 2, nothing written).
 */

struct merge_opts {
	const char *output;
	bool force;
};

static const struct cli_option merge_options[] = {
	{ "output", "FILE", "write the merged CSV to FILE instead of standard output (an existing FILE needs --force)",
	  CLI_SET(CLI_STORE_FILE, struct merge_opts, output) },
	{ "force", NULL, "replace an existing --output FILE", CLI_SET(CLI_STORE_TRUE, struct merge_opts, force) },
};

#define N_MERGE_OPTIONS ((int)(sizeof(merge_options) / sizeof(merge_options[0])))

static void merge_usage(void)
{
	printf("usage: cowbench merge [OPTIONS] FILE.csv...\n\n"
	       "Concatenate result CSVs (e.g. the shards of one matrix) into one, after checking\n"
	       "that every file has this schema version and that no (cell, rep) appears twice.\n\n");
	cli_print_options(merge_options, N_MERGE_OPTIONS);
}

/* Every file read; a column this build does not know would be dropped: refuse. */
static int check_columns(const struct cli_inputs *in)
{
	for (int f = 0; f < in->nfiles; f++)
		if (in->res[f].unknown) {
			cli_error("%s: column '%s' is unknown to this cowbench (written by a newer one?): merging would drop it",
				  in->files[f], in->res[f].unknown_first);
			return -1;
		}
	return 0;
}

static int write_merged(const struct merge_opts *o, const struct cli_inputs *in)
{
	struct cli_output out;
	struct cb_report rep;
	int err = 0;

	if (cli_output_begin(&out, o->output, o->force) < 0)
		return EXIT_USAGE;
	cb_report_init(&rep, out.fp, CB_FORMAT_CSV, false);
	for (size_t i = 0; i < in->nrows && !err; i++)
		err = cb_report_row(&rep, &in->rows[i]);
	if (!err)
		err = cb_report_finish(&rep);
	if (err) {
		cli_output_abort(&out);
		cli_error("cannot write the merged CSV: %s (nothing written)", strerror(-err));
		return EXIT_RUN_FAILED;
	}
	return cli_output_commit(&out) < 0 ? EXIT_RUN_FAILED : 0;
}

int cmd_merge(int argc, char **argv)
{
	struct merge_opts o = { 0 };
	struct cli_inputs in;
	int argi, status = EXIT_USAGE, nfiles;

	argi = cli_parse_options(argc, argv, merge_options, N_MERGE_OPTIONS, &o, merge_usage);
	if (argi < 0)
		return EXIT_USAGE;
	nfiles = argc - argi;
	if (nfiles < 1) {
		cli_error("merge needs at least one CSV file (see cowbench merge --help)");
		return EXIT_USAGE;
	}
	if (cli_output_not_input("--output", o.output, argv + argi, nfiles) < 0)
		return EXIT_USAGE;
	if (cli_inputs_read(&in, nfiles, argv + argi) == 0 && check_columns(&in) == 0 &&
	    cli_inputs_check_duplicates(&in, CB_DUP_CONFIG_REP) == 0)
		status = write_merged(&o, &in);
	cli_inputs_free(&in);
	return status;
}
