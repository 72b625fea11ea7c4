#ifndef COWBENCH_CLI_H
#define COWBENCH_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <cowbench/units.h>

#include <cowbench/compare.h>
#include <cowbench/report.h> /* enum cb_format */
#include <cowbench/results.h> /* enum cb_dup_rule */

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

/* Strict number parsing for option values: the whole text, in range, or false. */
bool cli_parse_long(const char *text, long min, long max, long *out);
bool cli_parse_u64(const char *text, uint64_t *out);
/*
 * stat and record watch -p PID or -- COMMAND: argv[argi..] is the command. -1 (one line printed)
 * when it came without "--" ("put the command after '--': SYNOPSIS -- CMD ...") or with a PID too.
 */
int cli_check_target(int argc, char *const *argv, int argi, bool have_pid, const char *synopsis);
/*
 * stat and record's COMMAND, started held before exec (spawn.c): it runs once
 * go_fd is written. With err_fd, an exec failure comes back through it
 * (cli_release_held: 0 once the command runs, else its errno, the child
 * reaped); without, the child says it on stderr and exits 127. -1: no fork.
 */
pid_t cli_spawn_held(char **argv, int *go_fd, int *err_fd);
/*
 * Sleep up to seconds for stat and record: 1 as soon as pidfd (the root,
 * -1: none) ends; 0 at the timeout, or with *rung set as soon as a process
 * forks or exits (wp's bells, cb_wpfault_task_fds): the caller then
 * drains at once, and a fork's page map is read while its process runs.
 */
#define CLI_MAX_BELLS 256
struct cb_wpfault;
int cli_wait_watched(int pidfd, struct cb_wpfault *wp, double seconds, bool *rung);
/* The same, also woken (*ready set) when extra_fd (-1: none) has data: stat's taskstats exit records. */
int cli_wait_watched_fd(int pidfd, struct cb_wpfault *wp, int extra_fd, double seconds, bool *rung, bool *ready);
int cli_release_held(pid_t pid, int go_fd, int err_fd);
/* Seconds on CLOCK_MONOTONIC: when stat and record sample and stop. */
double cli_now_s(void);
/* OPTION's value in seconds, 0.01 to 86400 (a day); false after printing why. */
bool cli_parse_seconds(const char *option, const char *text, double *out);
/* --format=table|csv|json and --output=FILE (not empty); false after printing why. */
bool cli_parse_format(const char *text, enum cb_format *out);
/* --columns=NAME[,NAME]: names of the table's columns in f; false after printing them all. */
bool cli_check_columns(const struct cb_field *f, size_t nf, const char *list);
/* The same for the rows' table (run, matrix). */
bool cli_row_columns(const char *list);
bool cli_parse_output(const char *text, const char **out);
/* --target-ci=PCT (a fraction out), --max-time=DURATION (ns); false after printing why. */
bool cli_parse_target_ci(const char *text, double *out);
bool cli_parse_max_time(const char *text, uint64_t *ns);
/*
 * Rows without --format (run, matrix): a table for a person at a terminal,
 * CSV when stdout is a pipe or a file or --output is given, which is what
 * scripts read. CLI_FORMAT_AUTO marks "not given".
 */
#define CLI_FORMAT_AUTO ((enum cb_format)-1)
enum cb_format cli_format_resolve(enum cb_format f, const char *output);

/*
 * Options are data: one table per command drives getopt_long, the
 * parsing and --help alike. An entry either stores its value at offset
 * in the command's options struct (store, like cb_option's typed
 * offsets) or calls parse.
 */
enum cli_store {
	CLI_STORE_CALL,   /* parse(opts, value) */
	CLI_STORE_TRUE,   /* a flag: bool at offset = true */
	CLI_STORE_FALSE,  /* a flag: bool at offset = false */
	CLI_STORE_FILE,   /* const char * at offset = a non-empty file name */
	CLI_STORE_FORMAT, /* enum cb_format at offset: table, csv or json */
	CLI_STORE_ROW_FORMAT, /* the same for rows (run, matrix), whose default is not table */
};
struct cli_option {
	const char *name;
	const char *metavar; /* NULL: a flag without a value */
	const char *help;
	/* Parse the value into the command's options; return false after printing an error. */
	bool (*parse)(void *opts, const char *value);
	enum cli_store store;
	size_t offset;
	char letter; /* its short option; 0: the common one of its name, if any (cli_short_letter) */
	bool hidden; /* parsed, but left out of --help and of "did you mean" */
	bool not_axis; /* run's option that a matrix cell cannot vary (how many reps, where rows go) */
};
/* { "force", NULL, "help", CLI_SET(CLI_STORE_TRUE, struct sum_opts, force) } */
#define CLI_SET(how, type, field) .store = (how), .offset = offsetof(type, field)

/*
 * Parse one option's value; false after printing an error. While parse
 * runs, cli_option_name() is its option's name: one parse function serves
 * every option that comes from a table (a workload's).
 */
bool cli_option_apply(const struct cli_option *o, void *opts, const char *value);
const char *cli_option_name(void);

/* A metavar in brackets ("[A|B]") makes the value optional: "--name" alone passes NULL. */
#define CLI_OPTIONAL_VALUE(o) ((o)->metavar && (o)->metavar[0] == '[')

/*
 * Parse argv against the table as getopt_long does (-x VALUE, -xVALUE,
 * --name VALUE, --name=VALUE, bundled flags, unambiguous prefixes), with
 * options and operands in any order and "--" ending the options. The
 * operands are moved to argv's tail, in their order; returns the index of
 * the first, or -1 (one line printed). -h/--help print usage and exit 0.
 */
int cli_parse_options(int argc, char **argv, const struct cli_option *table, int n, void *opts,
		      void (*usage)(void));
/* The same, but the first operand ends the options (cowbench stat COMMAND ARGS...). */
int cli_parse_options_first(int argc, char **argv, const struct cli_option *table, int n, void *opts,
			    void (*usage)(void));
void cli_print_options(const struct cli_option *table, int n);
/* -w -s -r -o -f -q: the long option a short letter stands for, and back (0/NULL: none). */
const char *cli_short_option(char letter);
char cli_short_letter(const char *name);
/* The name closest to a misspelt one (at most two edits), or NULL: for "did you mean --workload?". */
const char *cli_closest_name(const char *name, const char *const *names, size_t n);
/* That, else the only name NAME starts ("lat_p50": lat_p50_ns); NULL when none or NAME itself. */
const char *cli_suggest(const char *name, const char *const *names, size_t n);
/* " (did you mean X?)" in buf, or "": for one-line messages about a misspelt value. */
const char *cli_hint(const char *name, const char *const *names, size_t n, char *buf, size_t len);
/* Whether NAME is a numeric result column; false after "OPTION: 'NAME' is not a numeric column (did you mean ...?)". */
bool cli_numeric_column(const char *option, const char *name);
/* S with control characters (C0, DEL, C1) as \xNN, for a terminal: text from a CSV never drives it. */
const char *cli_printable(const char *s, char *buf, size_t len);

/*
 * Set a kernel knob for this run (value < 0: leave it). The old value
 * is put back at exit and on SIGINT/SIGTERM/SIGHUP. -1 after printing why.
 */
int cli_apply_sysctl(const char *option, const char *path, long value);
/* Put back, at exit and on those signals, what the library changed with cb_sysctl_override. */
void cli_restore_sysctls_at_exit(void);
/* Text written to stderr when one of those signals stops the program (NULL: none); kept by the caller. */
void cli_set_interrupt_note(const char *text);
/*
 * A temporary file or directory (given after its files) that one of those
 * signals removes before the program dies (up to 8); cleared once the
 * caller has removed them itself.
 */
void cli_remove_on_signal(const char *path);
void cli_remove_on_signal_clear(void);

/*
 * One spelling per value (axis_values.c): sizes as cb_size_format writes
 * them (4096K -> 4M), counts without leading zeros, flags as 1/0; other
 * values and values that do not parse stay as they are.
 */
void cli_canonical_value(const char *axis, const char *value, char *out, size_t len);
/* Every axis of the matrix in that spelling, each value once; -ENOMEM. */
struct cb_matrix;
int cli_canonical_axes(struct cb_matrix *m);
/* A cell key ("name=value ...") rewritten in place in that spelling (when it fits in len). */
void cli_canonical_cell(char *cell, size_t len);

struct cb_run_spec;

/* As root, turn kernel.task_delayacct on for the run (restored at exit): 1 when it was off (evreps.c). */
int cli_evidence_prepare(void);
/* Before a measuring command: restore what dead runs left, hook restoring this one's changes. */
void cli_guard_start(const char *command);
/*
 * delayacct_held.c: the PID of a running cowbench that holds kernel.task_delayacct off (0: none),
 * and one phrase saying why delay accounting is off here (buf of 256).
 */
long cli_delayacct_holder(void);
const char *cli_delayacct_off_why(char *buf, size_t len);
/* cowbench info's line on the override journal: held, stale, or none. */
void cli_overrides_info(void);

/* A workload's default thread counts beyond cpus (options not in given[]): one note (run_notes.c). */
struct cb_workload;
void cli_note_thread_defaults(const struct cb_workload *w, const char *const *given, size_t ngiven, long cpus);
/* A matrix that ended: where its rows went (file, NULL: stdout) and what reads them, on stderr. */
void cli_note_rows_onward(const char *file, size_t rows);

/* One transient progress line on stderr at a terminal (progress.c); cleared before other output. */
bool cli_progress_enabled(void);
void cli_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_progress_clear(void);
void cli_fmt_duration(char *buf, size_t len, double s);
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

/*
 * Output files (output.c), one rule for every command: an existing
 * non-empty FILE is replaced only with --force; a FILE another cowbench
 * holds (flock) is refused with "FILE is being written by PID".
 */
/* Appending writers (run, matrix): FILE opened and locked; -1 after printing why (nothing left). */
int cli_output_open_locked(const char *path, bool resume, bool force, const char *hint, bool *created);
/* Undo cli_output_open_locked after a later error: close, and remove the file if it created it. */
void cli_output_discard(const char *path, int fd, bool created);
/* After a failed write, before closing FD: a file this run created and left empty goes again. */
void cli_output_drop_if_empty(const char *path, int fd, bool created);
/* Whole-file writers (merge, summarize): a temporary file, renamed over PATH by commit. */
struct cli_output {
	FILE *fp;         /* stdout when path is NULL */
	const char *path;
	char target[4096]; /* the file written: PATH, or the file its symbolic link names */
	char tmp[4096];
	int lockfd;
	bool existed, force; /* without either, commit never replaces a file that appeared meanwhile */
};
int cli_output_begin(struct cli_output *out, const char *path, bool force);
/* The same for an option other than --output (its name in messages). */
int cli_output_begin_as(struct cli_output *out, const char *option, const char *path, bool force);
/*
 * What begin checks before anything runs (every output of every command):
 * -1 after one line (a usage error) for a directory, device, FIFO, a name
 * under /dev or /proc, too long a name, a folder that is not there or takes
 * no files, or a non-empty file without FORCE. TARGET: the file to write (a
 * symbolic link followed).
 */
int cli_output_check(const char *option, const char *path, bool force, char *target, size_t tlen);
/*
 * No command writes over one of its inputs (paths.c): whether two names
 * are one file (device and inode; for files not yet there, the resolved
 * directory and name), and -1 after "OPTION OUTPUT is also an input (IN)"
 * when OUTPUT (NULL: none) is one of inputs[n].
 */
bool cli_same_file(const char *a, const char *b);
int cli_output_not_input(const char *option, const char *output, char *const *inputs, int n);
/* plot --out DIR: -1 after one line when an input is DIR/report.md, a PNG/SVG in DIR or a .dat in DIR/data. */
int cli_plot_dir_not_input(const char *dir, char *const *inputs, int n);
/* -1 after one line when an output names /dev/... or /proc/... (stdout, null, fd links): omit it instead. */
int cli_output_path_check(const char *option, const char *path);
int cli_output_commit(struct cli_output *out); /* -1 after printing why; PATH untouched then */
/* Data text escaped for Markdown and HTML (report.md's cells): one of 8 rotating static buffers. */
const char *cli_md(const char *s);
void cli_output_abort(struct cli_output *out);
/*
 * Where a folder of data files lives (paths.c): $ENV_VAR, else the source
 * tree's when it holds MARKER (running from a build), else the installed one.
 */
const char *cli_find_dir(const char *env_var, const char *source_dir, const char *marker, const char *install_dir);
/* kernel/: $COWBENCH_KERNEL_DIR, the source tree, or share/cowbench/kernel. */
const char *cli_kernel_dir(void);
/* A named input opened for reading without waiting on a FIFO: NULL with errno (EINVAL: not a regular file). */
FILE *cli_fopen_input(const char *path);
/* A copy of a regular file as it is now (TO created, never replaced): 0 or -errno, TO removed on failure (paths.c). */
int cli_copy_file(const char *from, const char *to);

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
int cmd_project(int argc, char **argv);

/* Read result CSVs (all checked before anything is printed) into one row array; -1 after printing why. */
int cli_read_rows(int nfiles, char **files, struct cb_row **rows, size_t *n);

/* ---- how many reps a cell runs (reps.c; the rule itself: cowbench/reploop.h) ---- */

#include <cowbench/reploop.h>

#define CLI_DEFAULT_MAX_REPS 50 /* --target-ci without --max-reps */

/* Bounds need a target; a target fills in the default rep bound. -1 after printing why. */
int cli_reps_check(struct cb_reps_opts *o, long reps);

#endif
