#ifndef COWBENCH_CLI_H
#define COWBENCH_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cowbench/units.h>

#include <cowbench/compare.h> /* enum cb_center */
#include <cowbench/report.h> /* enum cb_format */

/* Exit statuses of the cowbench program (rows' codes 0/1/3/4: cowbench/error.h). */
#define EXIT_RUN_FAILED 1 /* a measurement failed; its row says how (CB_EXIT_FAILED) */
#define EXIT_USAGE      2 /* bad input: nothing was measured or written (CB_EXIT_USAGE) */
#define EXIT_INTERNAL   70

/* Print "cowbench: ..." and one newline on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Strict number parsing for option values: the whole text, in range, or false. */
bool cli_parse_long(const char *text, long min, long max, long *out);
bool cli_parse_u64(const char *text, uint64_t *out);
/* --format=table|csv|json and --output=FILE (not empty); false after printing why. */
bool cli_parse_format(const char *text, enum cb_format *out);
bool cli_parse_output(const char *text, const char **out);

/*
 * Options are data: one table per command drives getopt_long, the
 * parsing and --help alike.
 */
struct cli_option {
	const char *name;
	const char *metavar; /* NULL: a flag without a value */
	const char *help;
	/* Parse the value into the command's options; return false after printing an error. */
	bool (*parse)(void *opts, const char *value);
};

/*
 * Parse one option's value; false after printing an error. While parse
 * runs, cli_option_name() is its option's name: one parse function serves
 * every option that comes from a table (a workload's).
 */
bool cli_option_apply(const struct cli_option *o, void *opts, const char *value);
const char *cli_option_name(void);

/* A metavar in brackets ("[A|B]") makes the value optional: "--name" alone passes NULL. */
#define CLI_OPTIONAL_VALUE(o) ((o)->metavar && (o)->metavar[0] == '[')

/* Parse argv against the table; returns the index of the first operand, or -1 (error printed). */
int cli_parse_options(int argc, char **argv, const struct cli_option *table, int n, void *opts,
		      void (*usage)(void));
void cli_print_options(const struct cli_option *table, int n);
/* -w -s -r -o -f -q: the long option a short letter stands for, and back (0/NULL: none). */
const char *cli_short_option(char letter);
char cli_short_letter(const char *name);
/* The name closest to a misspelt one (at most two edits), or NULL: for "did you mean --workload?". */
const char *cli_closest_name(const char *name, const char *const *names, size_t n);

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
 * cowbench run's options, shared with cowbench matrix (cmd_run.c): a
 * matrix cell is a list of NAME=VALUE pairs applied through the same
 * table, so a workload's new option is a matrix axis with no other code.
 */
#define CLI_NCLOCKS 3 /* enum cb_clock_kind values: index of the clock cache */
struct run_opts;
struct cb_clock;
struct cb_run_spec;
const struct cli_option *cli_run_options(int *n);
struct run_opts *cli_run_opts_new(void); /* the defaults of cowbench run */
void cli_run_opts_free(struct run_opts *o);
/* Check the options and build the spec (clocks[]: zeroed cache); -1 after printing why. */
int cli_run_make_spec(const struct run_opts *o, struct cb_clock *clocks, struct cb_run_spec *spec);
/* Set the sysctls the options ask for (restored at exit); -1 after printing why. */
int cli_run_apply_sysctls(const struct run_opts *o);

/* cowbench run --explain (explain.c): rows in, a short summary for people out (stderr). */
struct cb_row;
struct cli_explain;
struct cli_explain *cli_explain_new(void);
void cli_explain_add(struct cli_explain *ex, const struct cb_row *row);
void cli_explain_print(const struct cli_explain *ex, FILE *fp);
void cli_explain_free(struct cli_explain *ex);
/* As root, turn kernel.task_delayacct on for the run (restored at exit): 1 when it was off. */
int cli_evidence_prepare(void);
/*
 * A cell's evidence reps (evreps.c), after its timed reps, when its probes
 * call for them (cb_run_wants_evidence): delay accounting on for them as
 * root when it was off, and off again after, reps 1..n less those done[] marks (NULL: none);
 * emit() records each row (< 0: stop). The worst row's exit code, or -1.
 */
#define CLI_EVIDENCE_REPS 1
/*
 * As root, kernel.task_delayacct on for reps that run taskstats while it is
 * off (evidence reps, --probes=inline), restored at exit and on signals:
 * true when switched. cli_delayacct_back(true) puts it back to off, so the
 * next timed reps see the system as it was.
 */
bool cli_delayacct_on(const struct cb_run_spec *spec);
void cli_delayacct_back(bool switched);
typedef int (*cli_emit_fn)(void *arg, struct cb_row *row);
int cli_run_evidence_reps(const struct cb_run_spec *spec, const bool *done, int n, cli_emit_fn emit, void *arg);
/* cowbench info's lines on instrumentation on system-wide that taxes every fault (instrumentation.c). */
void cli_instrumentation_info(void);
/* Before a measuring command: restore what dead runs left, hook restoring this one's changes. */
void cli_guard_start(const char *command);
/* cowbench info's line on the override journal: held, stale, or none. */
void cli_overrides_info(void);
/* cowbench info's lines on the stock-kernel probes: which can measure here, and if not, why. */
void cli_evidence_info(void);
/* cowbench info's lines on the matrix's --kernel guests (guest_info.c): can QEMU run them here, and if not, why. */
void cli_guest_info(void);

/* The closing summary of cowbench run on a terminal (closing.c). */
struct cli_closing;
struct cli_closing *cli_closing_new(void);
void cli_closing_add(struct cli_closing *cl, const struct cb_row *row);
/* One unrecorded --no-fork rep of the same writes: the reference the summary compares with. */
void cli_closing_reference(struct cli_closing *cl, const struct cb_run_spec *spec);
void cli_closing_print(const struct cli_closing *cl, FILE *fp);
void cli_closing_free(struct cli_closing *cl);

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
/* Whole-file writers (merge, summarize): a temporary file, renamed over PATH by commit. */
struct cli_output {
	FILE *fp;         /* stdout when path is NULL */
	const char *path;
	char tmp[4096];
	int lockfd;
};
int cli_output_begin(struct cli_output *out, const char *path, bool force);
int cli_output_commit(struct cli_output *out); /* -1 after printing why; PATH untouched then */
void cli_output_abort(struct cli_output *out);

int cmd_run(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_matrix(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_summarize(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_project(int argc, char **argv);

/* Let options follow operands: move them (with their separate values) before the first operand. */
void cli_options_first(int argc, char **argv, const struct cli_option *table, int n);
/* The summary of rows (cmd_summarize.c), also written by cowbench plot into its report. */
struct cb_row;
int cli_summarize_rows(FILE *fp, const struct cb_row *rows, size_t n, const char *metrics, int format,
		       const char *baseline, enum cb_center ratio_center, bool quiet);
/* Read result CSVs (all checked before anything is printed) into one row array; -1 after printing why. */
int cli_read_rows(int nfiles, char **files, struct cb_row **rows, size_t *n);
/* A number for people in its metric's unit (cowbench/units.h): _ns scaled times, _bytes/_kb binary sizes, else plain; "-" for NAN. */
void cli_human(char *buf, size_t len, double v, const char *metric, enum cb_units_style style);

/* ---- how many reps a cell runs (reps.c): fixed, or until its interval is tight ---- */

#include <cowbench/adaptive.h>

#define CLI_DEFAULT_MAX_REPS 50 /* --target-ci without --max-reps */
#define CLI_BOOT_SEED 20261122u /* summarize's and matrix --baseline's bootstrap: the same input, the same interval */

struct cli_reps_opts {
	double target;   /* --target-ci as a fraction; 0: fixed --reps */
	long max_reps;   /* 0: CLI_DEFAULT_MAX_REPS once --target-ci is given */
	uint64_t max_ns; /* --max-time per cell; 0: none */
};

bool cli_parse_target_ci(const char *text, double *out);
bool cli_parse_max_time(const char *text, uint64_t *ns);
/* --ratio-center: mean or trimmed (a median ratio is not offered). */
bool cli_parse_ratio_center(const char *text, enum cb_center *out);
/* Bounds need a target; a target fills in the default rep bound. -1 after printing why. */
int cli_reps_check(struct cli_reps_opts *o, long reps);

struct cb_workload;

/* One cell's reps so far (resumed ones included) and the rule that stops them. */
struct cli_reps {
	const struct cb_workload *w;
	struct cb_adaptive rule;
	long fixed;        /* > 0: exactly this many reps */
	size_t cap;        /* the most reps the cell can run */
	size_t reps;       /* reps counted, failed ones included */
	double *v;         /* headline values of the good ones */
	size_t n;
	uint64_t start_ns; /* --max-time counts from here */
	const char *ratio_metric; /* matrix --baseline: the column whose paired ratio must be tight too */
	double *rv;        /* its values in the good reps that carry a round id ... */
	int64_t *rround;   /* ... and those round ids */
	size_t rn;
};

int cli_reps_begin(struct cli_reps *r, const struct cli_reps_opts *o, long reps, const struct cb_workload *w);
/* Count one rep (measured now or read back from a resumed file). */
void cli_reps_count(struct cli_reps *r, const struct cb_row *row);
enum cb_stop cli_reps_judge(const struct cli_reps *r);
/* Write why the cell stopped into the row's stop column (empty for fixed reps). */
void cli_reps_mark(const struct cli_reps *r, enum cb_stop s, struct cb_row *row);
void cli_reps_end(struct cli_reps *r);
/* The stop the bounds alone call for (the target left out): a cell that must keep pairing its rounds. */
enum cb_stop cli_reps_judge_bounds(const struct cli_reps *r);
/*
 * matrix --baseline: whether centre(num) / centre(den) over the rounds both ran
 * has a 95 % interval (paired bootstrap, as summarize --baseline prints it)
 * within +-target; *pairs gets how many rounds paired. False while fewer
 * than the rule's least reps paired up.
 */
bool cli_reps_ratio_met(const struct cli_reps *num, const struct cli_reps *den, enum cb_center c, double target,
			size_t *pairs);

/* cowbench info: what on this machine adds noise and could be tuned (info_tune.c). */
void cli_info_tuning(void);

#define CLI_PIN_AUTO (-2) /* run_opts.cpu: --pin=auto, resolved when the spec is made */

#endif
