/* What the program says on stderr: errors, notes, progress (args.c, progress.c), and its exit statuses. */
#ifndef COWBENCH_CLI_DIAG_H
#define COWBENCH_CLI_DIAG_H

#include <stdbool.h>
#include <stddef.h>

/* Exit statuses of the cowbench program (rows' codes 0/1/3/4: cowbench/error.h). */
#define EXIT_RUN_FAILED 1 /* a measurement failed; its row says how (CB_EXIT_FAILED) */
#define EXIT_USAGE      2 /* bad input: nothing was measured or written (CB_EXIT_USAGE) */
#define EXIT_INTERNAL   70

/* Print "cowbench: ..." and one newline on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Whether cli_error has printed a line (the exit check of stdout then adds none). */
bool cli_error_printed(void);
/* fflush(stdout) that keeps the cause of a failure for the exit check (a full disk: ENOSPC, not EIO). */
void cli_flush_stdout(void);
int cli_stdout_errno(void);
/* S with control characters (C0, DEL, C1) as \xNN, for a terminal: text from a CSV never drives it. */
const char *cli_printable(const char *s, char *buf, size_t len);

/* One transient progress line on stderr at a terminal (progress.c); cleared before other output. */
bool cli_progress_enabled(void);
void cli_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_progress_clear(void);
void cli_fmt_duration(char *buf, size_t len, double s);

#endif
