#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/cowbench.h>
#include <cowbench/results.h>
#include <cowbench/summary.h>

#include "cli.h"

/*
 * cowbench merge A.csv B.csv ...: the shards of one matrix into one CSV.
 * Everything is read and checked before a byte is written: another schema
 * version, a column this build does not know, or a (cell, rep) present
 * twice rejects the whole merge (exit 2, nothing written).
 */

struct merge_opts {
	const char *output;
};

static bool opt_output(void *o, const char *v)
{
	if (!*v) {
		cli_error("--output needs a file name");
		return false;
	}
	((struct merge_opts *)o)->output = v;
	return true;
}

static const struct cli_option merge_options[] = {
	{ "output", "FILE", "write the merged CSV to FILE instead of standard output", opt_output },
};

#define N_MERGE_OPTIONS ((int)(sizeof(merge_options) / sizeof(merge_options[0])))

static void merge_usage(void)
{
	printf("usage: cowbench merge [OPTIONS] FILE.csv...\n\n"
	       "Concatenate result CSVs (e.g. the shards of one matrix) into one, after checking\n"
	       "that every file has this schema version and that no (cell, rep) appears twice.\n\n");
	cli_print_options(merge_options, N_MERGE_OPTIONS);
}

struct entry {
	char key[CB_ROW_KEY_LEN];
	int64_t rep;
	bool evidence; /* timed and evidence reps are numbered apart */
	size_t file;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c == 0)
		c = (int)x->evidence - (int)y->evidence;
	return c ? c : (x->rep > y->rep) - (x->rep < y->rep);
}

/* Sort (key, rep) pairs and report the first pair present twice. */
static int check_duplicates(struct cb_results *res, int nfiles, char **files)
{
	size_t total = 0, k = 0;
	struct entry *e;
	int rc = 0;

	for (int f = 0; f < nfiles; f++)
		total += res[f].n;
	e = calloc(total ? total : 1, sizeof(*e));
	if (!e) {
		cli_error("out of memory");
		return -1;
	}
	for (int f = 0; f < nfiles; f++)
		for (size_t i = 0; i < res[f].n; i++) {
			cb_row_key(&res[f].rows[i], e[k].key, sizeof(e[k].key));
			e[k].rep = res[f].rows[i].rep;
			e[k].evidence = cb_row_is_evidence(&res[f].rows[i]);
			e[k++].file = (size_t)f;
		}
	qsort(e, total, sizeof(*e), cmp_entry);
	for (size_t i = 1; i < total; i++) {
		if (cmp_entry(&e[i - 1], &e[i]) == 0) {
			const char *a = files[e[i - 1].file], *b = files[e[i].file];

			if (e[i - 1].file == e[i].file)
				cli_error("duplicate cell: '%s' %srep %lld appears twice in %s", e[i].key,
					  e[i].evidence ? "evidence " : "", (long long)e[i].rep, a);
			else
				cli_error("duplicate cell: '%s' %srep %lld is in both %s and %s", e[i].key,
					  e[i].evidence ? "evidence " : "", (long long)e[i].rep, a, b);
			rc = -1;
			break;
		}
	}
	free(e);
	return rc;
}

static int read_inputs(int nfiles, char **files, struct cb_results *res)
{
	char why[512];

	for (int f = 0; f < nfiles; f++) {
		if (cb_results_read(files[f], &res[f], why, sizeof(why)) < 0) {
			cli_error("%s", why);
			return -1;
		}
		if (res[f].unknown) {
			cli_error("%s: column '%s' is unknown to this cowbench (written by a newer one?): merging would drop it",
				  files[f], res[f].unknown_first);
			return -1;
		}
		if (res[f].torn)
			cli_note("%s: its last row is half-written (a run cut short): left out", files[f]);
	}
	return 0;
}

static int write_merged(const char *path, int nfiles, const struct cb_results *res)
{
	FILE *out = stdout;
	struct cb_report rep;
	int err = 0;

	if (path && !(out = fopen(path, "we"))) {
		cli_error("cannot write %s: %s", path, strerror(errno));
		return EXIT_USAGE;
	}
	cb_report_init(&rep, out, CB_FORMAT_CSV, path != NULL);
	for (int f = 0; f < nfiles && !err; f++)
		for (size_t i = 0; i < res[f].n && !err; i++)
			err = cb_report_row(&rep, &res[f].rows[i]);
	if (!err)
		err = cb_report_finish(&rep);
	if (out != stdout && fclose(out) != 0 && !err)
		err = -errno;
	if (err) {
		cli_error("cannot write the merged CSV: %s", strerror(-err));
		return EXIT_RUN_FAILED;
	}
	return 0;
}

int cmd_merge(int argc, char **argv)
{
	struct merge_opts o = { 0 };
	struct cb_results *res;
	int argi, status = EXIT_USAGE, nfiles;

	cli_options_first(argc, argv, merge_options, N_MERGE_OPTIONS);
	argi = cli_parse_options(argc, argv, merge_options, N_MERGE_OPTIONS, &o, merge_usage);
	if (argi < 0)
		return EXIT_USAGE;
	nfiles = argc - argi;
	if (nfiles < 1) {
		cli_error("merge needs at least one CSV file (see cowbench merge --help)");
		return EXIT_USAGE;
	}
	res = calloc((size_t)nfiles, sizeof(*res));
	if (!res) {
		cli_error("out of memory");
		return EXIT_INTERNAL;
	}
	if (read_inputs(nfiles, argv + argi, res) == 0 && check_duplicates(res, nfiles, argv + argi) == 0)
		status = write_merged(o.output, nfiles, res);
	for (int f = 0; f < nfiles; f++)
		cb_results_free(&res[f]);
	free(res);
	return status;
}
