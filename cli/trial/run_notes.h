/* Notes on stderr about a run's defaults and where its rows went (run_notes.c). */
#ifndef COWBENCH_CLI_RUN_NOTES_H
#define COWBENCH_CLI_RUN_NOTES_H

#include <stddef.h>

/* A workload's default thread counts beyond cpus (options not in given[]): one note (run_notes.c). */
struct cb_workload;
void cli_note_thread_defaults(const struct cb_workload *w, const char *const *given, size_t ngiven, long cpus);
/* A matrix that ended: where its rows went (file, NULL: stdout) and what reads them, on stderr. */
void cli_note_rows_onward(const char *file, size_t rows);

#endif
