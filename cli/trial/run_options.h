#ifndef COWBENCH_RUN_OPTIONS_H
#define COWBENCH_RUN_OPTIONS_H

/*
 * cowbench run's options and the trial spec they make (run_options.c), shared
 * by cowbench run and cowbench matrix: a matrix cell is a list of NAME=VALUE
 * pairs applied through the same table, so a workload's new option is a
 * matrix axis with no other code.
 */

#include <stdbool.h>
#include <stdint.h>

#include <cowbench/cowbench.h>

#include "common/args.h"
#include "trial/reps.h"

#define MAX_WL_SETTINGS 32

struct run_opts {
	const char *workload;
	uint64_t size;               /* --size in bytes, parsed as it is read (page rounding: cli_run_make_spec) */
	const char *size_text;       /* --size as typed (when given), only to quote it in messages */
	bool size_given;             /* else: the workload's input or default size, or 64M */
	long reps, warmup, cpu;
	enum cb_writer writer;
	enum cb_break brk;           /* --break: how COW breaks (fault or populate) */
	bool no_fork, thp;
	bool prefault;               /* --prefault (cowbench/run.h) */
	uint64_t seed;
	enum cb_clock_kind clock;
	const char *output;
	const char *samples;         /* --samples=FILE: every first write as CSV */
	bool force; /* --force: replace a non-empty --output */
	enum cb_format format;
	const char *columns; /* --columns: the table's */
	long precopy, precopy_depth; /* -1: leave the sysctl alone */
	struct cb_wl_params params;  /* the region: page type, NUMA placement */
	bool workload_given, writer_given, seed_given, break_given; /* refused where the workload cannot honour them */
	/* The workload's own options as given, applied to its table once the workload is known. */
	struct { const char *name, *value; } wl[MAX_WL_SETTINGS];
	int nwl;
	bool explain;                /* --explain: a summary for people on stderr */
	bool quiet;                  /* --quiet: no progress, no closing summary */
	unsigned probes;             /* --probes (cowbench/evidence.h); 0: the default set */
	struct cb_reps_opts adaptive; /* --target-ci, --max-reps, --max-time */
	const char *kernel;          /* run --kernel=K: in a QEMU guest of K (NULL: here); never a matrix cell's */
	bool build;                  /* run --kernel --build: K (and QEMU) may be built and installed */
};

/*
 * The options run was given, as NAME=VALUE pairs the way a matrix cell
 * names them (fork=0 for --no-fork, 1 for a flag), the ones a cell cannot
 * vary left out: the one cell run --kernel hands its guest.
 */
#define CLI_RUN_MAX_GIVEN 64
struct run_given {
	struct { const char *name, *value; } pair[CLI_RUN_MAX_GIVEN];
	int n;
};
/*
 * cli_parse_options over run's table and extra (entries of run's own, not
 * axes), recording the axes given into *given. The index of the first
 * operand, or -1 after printing why.
 */
int cli_run_parse(int argc, char **argv, const struct cli_option *extra, int nextra, struct run_opts *o,
		  struct run_given *given, void (*usage)(void));
/* --reps, --warmup, --max-reps (run's and matrix's alike): an integer from min to 1000000; false after saying why. */
bool cli_run_parse_count(const char *name, const char *v, long min, long *out);
/* Canonical axis order: kernel first, then run's option table ("fork" where "no-fork" is). */
int cli_run_axis_rank(const char *name);

/*
 * What making specs reads from the machine, read once per context and kept
 * for every spec made with it (a 90,000-cell matrix plan must not read
 * meminfo 90,000 times, nor calibrate a clock per cell): the calibrated
 * clocks, MemAvailable, the cgroup's memory headroom and the --pin=auto CPU.
 * A spec points at the context's clock: the context outlives its specs.
 */
#define CLI_PIN_AUTO (-2) /* run_opts.cpu: --pin=auto, resolved when the spec is made */
#define CLI_NCLOCKS 3 /* enum cb_clock_kind values: index of clocks[] */
struct run_spec_ctx {
	struct cb_clock clocks[CLI_NCLOCKS]; /* by requested kind; ticks_per_ns 0: not calibrated yet */
	bool mem_read;
	int mem_err;                         /* cb_mem_available's answer (< 0: no meminfo) */
	uint64_t mem_avail;
	bool cgroup_read;
	int cgroup_err;                      /* < 0: no limit known */
	uint64_t cgroup_room;
	char cgroup_where[4096];
	bool pin_chosen;
	int pin;                             /* --pin=auto's CPU (-1: none) */
};

void cli_run_spec_init(struct run_spec_ctx *ctx);

/* run's options table: the generic options, then every workload's own (once per name). */
const struct cli_option *cli_run_options(int *n);
/* cowbench run's option NAME (cli_run_options), or NULL. */
const struct cli_option *cli_run_option_find(const char *name);
/* Whether option NAME names a file the run reads (a workload's path option: replay's --trace). */
bool cli_run_option_is_input(const char *name);
/* -1 after saying why when --output or --samples is one of the files o reads (cli_output_not_input). */
int cli_run_outputs_not_inputs(const struct run_opts *o);
/* --help's lines for run's options (a workload's own alone when o named one). */
void cli_run_print_options(const struct run_opts *o);

struct run_opts *cli_run_opts_new(void); /* the defaults of cowbench run */
void cli_run_opts_free(struct run_opts *o);
extern const struct run_opts cli_run_defaults;
/* Check the options and build the spec; -1 after printing why. */
int cli_run_make_spec(struct run_spec_ctx *ctx, const struct run_opts *o, struct cb_run_spec *spec);
/* Set the sysctls the options ask for (restored at exit); -1 after printing why. */
int cli_run_apply_sysctls(const struct run_opts *o);

#endif
