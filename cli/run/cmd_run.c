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
#include <cowbench/order.h>
#include <cowbench/units.h>

#include "common/diag.h"
#include "common/args.h"
#include "common/guard.h"
#include "common/outfile.h"
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

/* What the repetition loop reports back (cowbench/reploop.h): progress, and rows for the report. */
struct run_sink {
	const struct run_opts *o;
	size_t cap;
	uint64_t start_ns;
	struct cb_report *rep;
	struct cli_explain *ex;
	struct cli_closing *cl;
};

static void journal(void *arg)
{
	(void)arg;
	cli_restore_sysctls_at_exit(); /* also on SIGINT/SIGTERM/SIGHUP in the middle of the reps */
}

static void rep_begins(void *arg, size_t c, enum cb_loop_rep kind, long rep, struct cb_run_spec *spec)
{
	struct run_sink *sink = arg;

	(void)c;
	if (kind == CB_LOOP_EVIDENCE)
		return;
	spec->inject_child_signal = kind == CB_LOOP_TIMED ? injected_signal(rep) : 0;
	rep_progress(sink->o, spec, rep, sink->cap, sink->start_ns);
}

/* Record one row: explain sees it, the closing summary its timed reps, the report writes it. */
static int emit_row(void *arg, size_t c, struct cb_row *row)
{
	struct run_sink *sink = arg;
	int err;

	(void)c;
	cli_progress_clear();
	cli_explain_add(sink->ex, row);
	if (!cb_row_is_evidence(row))
		cli_closing_add(sink->cl, row);
	err = cb_report_row(sink->rep, row);
	if (err < 0) {
		cli_error("cannot write results: %s", strerror(-err));
		return -1;
	}
	return 0;
}

/*
 * A run is a matrix of one cell: its warm-up, timed and evidence reps run
 * in the repetition loop (cowbench/reploop.h), in sequential order, with
 * the sysctls the options ask for already set (cli_run_apply_sysctls).
 */
static int run_reps(const struct run_opts *o, struct cb_run_spec *spec, struct cb_report *rep,
		    struct cli_explain *ex, struct cli_closing *cl)
{
	struct run_sink sink = { o, 0, cb_monotonic_ns(), rep, ex, cl };
	struct cb_order_step *steps = NULL;
	struct cb_reps reps;
	size_t set_of = 0, n = 0;
	int rc;

	if (cb_reps_begin(&reps, &o->adaptive, o->reps, spec->workload) < 0 ||
	    cb_order_plan(&set_of, 1, (long)reps.cap, NULL, CB_ORDER_SEQUENTIAL, 0, &steps, &n) < 0) {
		cb_reps_end(&reps);
		cli_error("out of memory");
		return EXIT_INTERNAL;
	}
	sink.cap = reps.cap;
	rc = cb_reploop_run(&(struct cb_reploop){
		.ncells = 1, .spec = spec, .reps = &reps, .set_of = &set_of, .steps = steps, .nsteps = n,
		.warmup = o->warmup, .round_first = 1, .round_step = 1,
		.hooks = { .journal = journal, .rep_begins = rep_begins, .emit = emit_row, .arg = &sink },
	});
	cb_reps_end(&reps);
	free(steps);
	if (rc == -ENOMEM)
		cli_error("out of memory");
	return rc < 0 ? EXIT_RUN_FAILED : rc; /* 0, 1, 3 or 4: the worst row's status (cowbench/error.h) */
}

static void note_thread_defaults(const struct run_opts *o, const struct cb_workload *w)
{
	const char *given[MAX_WL_SETTINGS];

	for (int i = 0; i < o->nwl; i++)
		given[i] = o->wl[i].name;
	if (!o->quiet)
		cli_note_thread_defaults(w, given, (size_t)o->nwl, sysconf(_SC_NPROCESSORS_ONLN));
}

/* run's own entries beside its table (cli_run_parse): where the run happens; no matrix cell varies them. */
static const struct cli_option guest_options[] = {
	{ "kernel", "K", "run in a QEMU guest of K (cli_run_print_options shows it)",
	  CLI_SET(CLI_STORE_FILE, struct run_opts, kernel), .hidden = true },
	{ "build", NULL, "with --kernel: build K and install QEMU's packages if missing",
	  CLI_SET(CLI_STORE_TRUE, struct run_opts, build), .hidden = true },
};

int cmd_run(int argc, char **argv)
{
	struct run_opts o = cli_run_defaults;
	struct run_given given;
	struct run_guest guest = { 0 };
	struct run_spec_ctx ctx;
	struct cb_run_spec spec;
	struct cb_report report;
	struct cli_explain *ex = NULL;
	struct cli_closing *cl = NULL;
	struct samples_file samples;
	struct cb_sample_sink sink = { write_samples, &samples };
	FILE *out;
	int argi, status, err;
	bool out_created;

	usage_opts = &o;
	argi = cli_run_parse(argc, argv, guest_options, 2, &o, &given, run_usage);

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
	if (o.kernel && strcmp(o.kernel, "host") == 0)
		o.kernel = NULL; /* here, as without --kernel */
	if (o.kernel && run_guest_plan(&o, &given, &guest) < 0) {
		run_guest_free(&guest);
		return EXIT_USAGE;
	}
	/* A guest sets the sysctls its cell asks for itself; here they are set for the run. */
	if (cli_run_make_spec(&ctx, &o, &spec) < 0 || (!o.kernel && cli_run_apply_sysctls(&o) < 0)) {
		run_guest_free(&guest);
		return EXIT_USAGE;
	}
	if (!o.kernel)
		note_thread_defaults(&o, spec.workload);
	out = open_output(&o, &out_created);
	if (!out || open_samples(&o, out, &samples) < 0) {
		run_guest_free(&guest);
		return EXIT_USAGE;
	}
	if (o.kernel) /* rows up to 4 KiB reach the file in one write(): a kill leaves whole rows or one torn last row */
		setvbuf(out, NULL, _IOFBF, 1 << 16);
	spec.samples = o.samples ? &sink : NULL;
	if (o.probes & CB_PROBES_INLINE)
		cli_note("--probes=inline: delay accounting and perf count inside the timed reps, so their latencies "
			 "include that work (docs/guide.md: \"Explaining COW on a stock kernel\")");
	if (o.explain && !(ex = cli_explain_new())) {
		cli_error("out of memory");
		return EXIT_INTERNAL;
	}

	/* The closing summary is for a person at a terminal, like hyperfine's (of reps run here). */
	if (!o.quiet && !o.kernel && isatty(STDOUT_FILENO) == 1)
		cl = cli_closing_new();
	cb_report_init(&report, out, o.format, o.output != NULL);
	report.columns = o.columns;
	status = o.kernel ? run_guest_reps(&o, &guest, &spec, &report) : run_reps(&o, &spec, &report, ex, cl);
	run_guest_free(&guest);
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
	if (o.kernel && status != EXIT_RUN_FAILED && !o.quiet)
		cli_note_rows_onward(o.output, report.rows);
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
