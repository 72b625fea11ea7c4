/*
 * Notes cowbench run owes a person before it measures: a workload whose
 * default thread counts exceed this machine's CPUs (snapshot keeps the
 * seed's 28 writers and 4 checkpointers, so its results compare with the
 * seed's) says so instead of silently time-sharing them. And what a
 * matrix owes one when it ends: where its rows went and what reads them.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cowbench/option.h>
#include <cowbench/workload.h>

#include "common/diag.h"
#include "trial/run_notes.h"

/* The options whose value is a number of threads running at once. */
static const char *const thread_options[] = { "threads", "checkpointers" };

static bool was_given(const char *name, const char *const *given, size_t ngiven)
{
	for (size_t i = 0; i < ngiven; i++)
		if (strcmp(given[i], name) == 0)
			return true;
	return false;
}

void cli_note_thread_defaults(const struct cb_workload *w, const char *const *given, size_t ngiven, long cpus)
{
	char list[160] = "";
	uint64_t total = 0;
	size_t o = 0;

	for (size_t i = 0; i < sizeof(thread_options) / sizeof(thread_options[0]); i++) {
		const struct cb_option *opt = cb_option_find(w, thread_options[i]);

		if (!opt || opt->type != CB_OPT_UINT || was_given(opt->name, given, ngiven))
			continue;
		total += opt->def;
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s--%s=%llu", o ? " and " : "", opt->name,
				      (unsigned long long)opt->def);
		if (o >= sizeof(list))
			break;
	}
	if (total == 0 || cpus <= 0 || total <= (uint64_t)cpus)
		return;
	cli_note("%s runs with its defaults %s on %ld CPU%s: the threads time-share; give smaller values to fit "
		 "this machine",
		 w->name, list, cpus, cpus == 1 ? "" : "s");
}

void cli_note_rows_onward(const char *file, size_t rows)
{
	if (file)
		cli_note("%zu rows written to %s; next: cowbench summarize %s, cowbench plot %s --out DIR", rows, file, file,
			 file);
	else
		cli_note("%zu rows written; cowbench summarize and cowbench plot read them from a file (--output=FILE)",
			 rows);
}
