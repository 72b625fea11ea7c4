#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cowbench/cowbench.h>
#include <cowbench/units.h>

#include "common/diag.h"
#include "common/args.h"
#include "common/outfile.h"
#include "trial/evidence_loop.h"
#include "trial/run_notes.h"
#include "trial/reps.h"
#include "common/commands.h"
#include "run_cmd.h"
#include "trial/run_options.h"

static const struct run_opts *usage_opts; /* what --help was given with (--workload=NAME --help) */

static void run_usage(void)
{
	printf("usage: cowbench run [OPTIONS]\n\n"
	       "Map a region, populate it, fork, and time every first write of one side.\n\n");
	cli_run_print_options(usage_opts);
}

/* Open (and lock) the output only after every check passed, so bad input leaves no file behind. */
static FILE *open_output_path(const char *path, bool force, bool *created_out)
{
	bool created;
	int fd;
	FILE *fp;

	if (!path)
		return stdout;
	fd = cli_output_open_locked(path, false, force, NULL, &created);
	if (fd < 0)
		return NULL;
	if (created_out)
		*created_out = created;
	fp = fdopen(fd, "w");
	if (!fp) {
		cli_error("cannot write %s: %s", path, strerror(errno));
		cli_output_discard(path, fd, created);
	}
	return fp;
}

static FILE *open_output(const struct run_opts *o, bool *created)
{
	*created = false;
	return open_output_path(o->output, o->force, created);
}

/* --samples: one CSV line per first write of every measured rep (warm-ups are not written). */
struct samples_file {
	FILE *fp;
	bool failed;
	int err; /* the errno of the first failed write */
};

static void samples_failed(struct samples_file *sf)
{
	if (!sf->failed)
		sf->err = errno ? errno : EIO;
	sf->failed = true;
}

static void write_samples(void *arg, int rep, const size_t *pages, const double *lat_ns, size_t n)
{
	struct samples_file *sf = arg;

	if (rep < 1 || sf->failed)
		return;
	errno = 0;
	for (size_t i = 0; i < n && !sf->failed; i++)
		if (fprintf(sf->fp, "%d,%zu,%zu,%.1f\r\n", rep, i, pages[i], lat_ns[i]) < 0)
			samples_failed(sf);
	if (!sf->failed && fflush(sf->fp) == EOF)
		samples_failed(sf);
}

/* The samples file, opened after the output so a bad name leaves neither behind. */
static int open_samples(const struct run_opts *o, FILE *out, struct samples_file *sf)
{
	sf->fp = NULL;
	sf->failed = false;
	sf->err = 0;
	if (!o->samples)
		return 0;
	sf->fp = open_output_path(o->samples, o->force, NULL);
	if (!sf->fp) {
		if (out != stdout) {
			fclose(out);
			unlink(o->output);
		}
		return -1;
	}
	/* Flushed now: a rep may run in a fresh child (cb_run_rep_accounted), and a buffer would be written twice. */
	errno = 0;
	if (fputs("rep,index,page,latency_ns\r\n", sf->fp) == EOF || fflush(sf->fp) == EOF)
		samples_failed(sf);
	return 0;
}

static int close_samples(const struct run_opts *o, struct samples_file *sf)
{
	if (!sf->fp)
		return 0;
	errno = 0;
	if (fclose(sf->fp) != 0)
		samples_failed(sf);
	if (sf->failed) { /* a samples file cut short is no record: removed, not left half */
		cli_error("cannot write %s: %s (removed)", o->samples, strerror(sf->err));
		unlink(o->samples);
		return -1;
	}
	return 0;
}

/* Test aid (documented in docs/develop.md): COWBENCH_INJECT=child-kill@REP kills the child of that rep. */
static int injected_signal(long rep)
{
	const char *v = getenv("COWBENCH_INJECT");
	long at;

	if (!v || strncmp(v, "child-kill@", 11) != 0 || !cli_parse_long(v + 11, 1, 1000000, &at))
		return 0;
	return at == rep ? SIGKILL : 0;
}

/* "[rep 2/5] seq 64 MiB  0:03" on a terminal while a rep runs (cleared before its row). */
static void rep_progress(const struct run_opts *o, const struct cb_run_spec *spec, long i, size_t cap,
			 uint64_t start_ns)
{
	char size[24], el[16];

	if (o->quiet)
		return;
	cli_fmt_duration(el, sizeof(el), (double)(cb_monotonic_ns() - start_ns) / 1e9);
	if (i < 1)
		cli_progress("[warm-up %ld/%ld] %s %s  elapsed %s", i + o->warmup, o->warmup, spec->workload->name,
			     cb_fmt_bytes(size, sizeof(size), (double)spec->size), el);
	else
		cli_progress("[rep %ld/%s%zu] %s %s  elapsed %s", i, o->adaptive.target > 0 ? "<=" : "", cap,
			     spec->workload->name, cb_fmt_bytes(size, sizeof(size), (double)spec->size), el);
}

struct run_sink {
	struct cb_report *rep;
	struct cli_explain *ex;
	struct cli_closing *cl;
};

/* Record one row: explain sees it, the closing summary its timed reps, the report writes it. */
static int emit_row(void *arg, struct cb_row *row)
{
	struct run_sink *sink = arg;

	cli_explain_add(sink->ex, row);
	if (!cb_row_is_evidence(row))
		cli_closing_add(sink->cl, row);
	int err = cb_report_row(sink->rep, row);

	if (err < 0) {
		cli_error("cannot write results: %s", strerror(-err));
		return -1;
	}
	return 0;
}

/*
 * Warm-up and the timed reps, with the system as the user has it (with
 * --probes=inline, delay accounting on for them), then the evidence reps.
 */
static int run_reps(const struct run_opts *o, struct cb_run_spec *spec, struct cb_report *rep,
		    struct cli_explain *ex, struct cli_closing *cl)
{
	struct run_sink sink = { rep, ex, cl };
	uint64_t start = cb_monotonic_ns();
	bool inline_on = (spec->probes & CB_PROBES_INLINE) && cli_delayacct_on(spec);
	int worst = CB_EXIT_OK, ev;
	enum cb_stop stop = CB_STOP_NO;
	struct cli_reps reps;

	for (long i = 1 - o->warmup; i < 1; i++) {
		struct cb_row row;

		rep_progress(o, spec, i, 0, start);
		cb_run_rep_accounted(spec, 0, &row); /* warm-up: measured, not recorded */
		cli_progress_clear();
	}
	if (cli_reps_begin(&reps, &o->adaptive, o->reps, spec->workload) < 0) {
		cli_error("out of memory");
		return EXIT_INTERNAL;
	}
	for (long i = 1; stop == CB_STOP_NO; i++) {
		struct cb_row row;

		rep_progress(o, spec, i, reps.cap, start);
		spec->inject_child_signal = injected_signal(i);
		cb_run_rep_accounted(spec, (int)i, &row);
		cli_progress_clear();
		cli_reps_count(&reps, &row);
		stop = cli_reps_judge(&reps);
		if (stop != CB_STOP_NO)
			cli_reps_mark(&reps, stop, &row);
		worst = cb_exit_code_worst(worst, cb_status_exit_code(row.status));
		if (emit_row(&sink, &row) < 0) {
			cli_reps_end(&reps);
			return EXIT_RUN_FAILED;
		}
	}
	cli_reps_end(&reps);
	cli_delayacct_back(inline_on);
	ev = cli_run_evidence_reps(spec, NULL, CLI_EVIDENCE_REPS, emit_row, &sink);
	if (ev < 0)
		return EXIT_RUN_FAILED;
	return cb_exit_code_worst(worst, ev); /* 0, 1, 3 or 4: the worst row's status (cowbench/error.h) */
}

static void note_thread_defaults(const struct run_opts *o, const struct cb_workload *w)
{
	const char *given[MAX_WL_SETTINGS];

	for (int i = 0; i < o->nwl; i++)
		given[i] = o->wl[i].name;
	if (!o->quiet)
		cli_note_thread_defaults(w, given, (size_t)o->nwl, sysconf(_SC_NPROCESSORS_ONLN));
}

/*
 * --kernel=K: the run happens in a guest. cowbench matrix already boots one, carries the inputs in (replay's
 * --trace) and brings the rows back; a run is a matrix of one cell, so it is handed over whole.
 */
static int guest_kernel_arg(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--kernel") == 0 || strncmp(argv[i], "--kernel=", 9) == 0)
			return i;
	return 0;
}

static int run_in_guest(int argc, char **argv, int at)
{
	const char *k = argv[at][8] == '=' ? argv[at] + 9 : at + 1 < argc ? argv[at + 1] : "";

	if (strchr(k, ',')) {
		cli_error("cowbench run --kernel takes one kernel, not '%s': cowbench matrix --kernel=%s compares them",
			  k, k);
		return EXIT_USAGE;
	}
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (!strncmp(argv[i], "--explain", 9) || !strncmp(argv[i], "--samples", 9)) {
			cli_error("%.9s is not available with --kernel (it reads the host's own run)", argv[i]);
			return EXIT_USAGE;
		}
	return cli_dispatch("matrix", argc, argv);
}

int cmd_run(int argc, char **argv)
{
	struct run_opts o = cli_run_defaults;
	struct run_spec_ctx ctx;
	struct cb_run_spec spec;
	struct cb_report report;
	struct cli_explain *ex = NULL;
	struct cli_closing *cl = NULL;
	struct samples_file samples;
	struct cb_sample_sink sink = { write_samples, &samples };
	FILE *out;
	int n, argi, status, err;
	bool out_created;
	const struct cli_option *table = cli_run_options(&n);

	if ((argi = guest_kernel_arg(argc, argv)) > 0)
		return run_in_guest(argc, argv, argi);
	usage_opts = &o;
	argi = cli_parse_options(argc, argv, table, n, &o, run_usage);

	cli_run_spec_init(&ctx);
	if (argi < 0)
		return EXIT_USAGE;
	if (argi < argc) {
		cli_error("unexpected argument '%s' (see cowbench run --help)", argv[argi]);
		return EXIT_USAGE;
	}
	if (cli_reps_check(&o.adaptive, o.reps) < 0)
		return EXIT_USAGE;
	if (o.samples && o.output && cli_same_file(o.samples, o.output)) {
		cli_error("--samples %s is the same file as --output: give two files", o.samples);
		return EXIT_USAGE;
	}
	if (cli_run_outputs_not_inputs(&o) < 0) /* replay's --trace: never written over */
		return EXIT_USAGE;
	o.format = cli_format_resolve(o.format, o.output);
	if (cli_run_make_spec(&ctx, &o, &spec) < 0 || cli_run_apply_sysctls(&o) < 0)
		return EXIT_USAGE;
	note_thread_defaults(&o, spec.workload);
	out = open_output(&o, &out_created);
	if (!out || open_samples(&o, out, &samples) < 0)
		return EXIT_USAGE;
	spec.samples = o.samples ? &sink : NULL;
	if (o.probes & CB_PROBES_INLINE)
		cli_note("--probes=inline: delay accounting and perf count inside the timed reps, so their latencies "
			 "include that work (docs/guide.md: \"Explaining COW on a stock kernel\")");
	if (o.explain && !(ex = cli_explain_new())) {
		cli_error("out of memory");
		return EXIT_INTERNAL;
	}

	/* The closing summary is for a person at a terminal, like hyperfine's. */
	if (!o.quiet && isatty(STDOUT_FILENO) == 1)
		cl = cli_closing_new();
	cb_report_init(&report, out, o.format, o.output != NULL);
	report.columns = o.columns;
	status = run_reps(&o, &spec, &report, ex, cl);
	if ((err = cb_report_finish(&report)) < 0 && status == 0) {
		cli_error("cannot write results: %s", strerror(-err));
		status = EXIT_RUN_FAILED;
	}
	if (out != stdout && fflush(out) != 0 && status == 0) {
		cli_error("cannot write %s: %s", o.output, strerror(errno));
		status = EXIT_RUN_FAILED;
	}
	if (out != stdout && status == EXIT_RUN_FAILED) /* while the lock is still held */
		cli_output_drop_if_empty(o.output, fileno(out), out_created);
	if (out != stdout && fclose(out) != 0 && status == 0) {
		cli_error("cannot write %s: %s", o.output, strerror(errno));
		status = EXIT_RUN_FAILED;
	}
	if (!o.quiet && cli_closing_wants_reference(cl, &spec))
		cli_progress("[reference] the same writes without fork (one unrecorded rep)");
	cli_closing_reference(cl, &spec);
	cli_progress_clear();
	if (close_samples(&o, &samples) < 0 && status == 0)
		status = EXIT_RUN_FAILED;
	cli_explain_print(ex, stderr);
	cli_explain_free(ex);
	fflush(stderr);
	cli_closing_print(cl, stdout);
	cli_closing_free(cl);
	return status;
}
