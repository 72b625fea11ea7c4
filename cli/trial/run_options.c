/*
 * cowbench run's options and the spec they make, for run and matrix alike:
 * the option table (generic options, then every workload's own), the
 * checks of a size against memory, and the spec itself. What the checks
 * read from the machine is read once per struct run_spec_ctx.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cowbench/cowbench.h>
#include <cowbench/units.h>

#include "common/diag.h"
#include "common/args.h"
#include "common/guard.h"
#include "common/outfile.h"
#include "run_options.h"

#define OPTS(p) ((struct run_opts *)(p))

static bool opt_workload(void *o, const char *v)
{
	if (!cb_workload_find(v)) {
		const char *names[64];
		char hint[96] = "";
		size_t n = 0;

		for (size_t i = 0; i < cb_workload_count() && n < 64; i++)
			names[n++] = cb_workload_at(i)->name;
		cli_error("unknown workload '%s'%s (workloads: %s)", v, cli_hint(v, names, n, hint, sizeof(hint)),
			  cb_workload_names());
		return false;
	}
	OPTS(o)->workload = v;
	OPTS(o)->workload_given = true;
	return true;
}

/* A size in bytes from the moment it is read; rounding to pages waits for the page size (resolve_size). */
static bool opt_size(void *o, const char *v)
{
	int err = cb_size_parse(v, &OPTS(o)->size);

	if (err == -ERANGE)
		cli_error("--size=%s is too large", v);
	else if (err == -EDOM)
		cli_error("--size must be larger than zero");
	else if (err < 0)
		cli_error("--size=%s is not a size (bytes, or a number with K, M, G or T)", v);
	OPTS(o)->size_text = v;
	OPTS(o)->size_given = true;
	return err == 0;
}

bool cli_run_parse_count(const char *name, const char *v, long min, long *out)
{
	if (!cli_parse_long(v, min, 1000000, out)) {
		cli_error("--%s must be an integer from %ld to 1000000, not '%s'", name, min, v);
		return false;
	}
	return true;
}

static bool opt_reps(void *o, const char *v) { return cli_run_parse_count("reps", v, 1, &OPTS(o)->reps); }
static bool opt_warmup(void *o, const char *v) { return cli_run_parse_count("warmup", v, 0, &OPTS(o)->warmup); }

static bool opt_columns(void *o, const char *v)
{
	if (!cli_row_columns(v))
		return false;
	OPTS(o)->columns = v;
	return true;
}

static bool opt_target_ci(void *o, const char *v) { return cli_parse_target_ci(v, &OPTS(o)->adaptive.target); }
static bool opt_max_reps(void *o, const char *v) { return cli_run_parse_count("max-reps", v, 1, &OPTS(o)->adaptive.max_reps); }
static bool opt_max_time(void *o, const char *v) { return cli_parse_max_time(v, &OPTS(o)->adaptive.max_ns); }

static bool opt_writer(void *o, const char *v)
{
	if (cb_writer_parse(v, &OPTS(o)->writer) < 0) {
		char hint[64];

		cli_error("--writer must be child or parent, not '%s'%s", v,
			  cli_hint(v, (const char *const[]){ "child", "parent" }, 2, hint, sizeof(hint)));
		return false;
	}
	OPTS(o)->writer_given = true;
	return true;
}

static bool opt_break(void *o, const char *v)
{
	if (cb_break_parse(v, &OPTS(o)->brk) < 0) {
		cli_error("--break must be fault or populate, not '%s'", v);
		return false;
	}
	OPTS(o)->break_given = true;
	return true;
}

/* "--thp" alone keeps its old meaning, "allowed": MADV_HUGEPAGE. */
static bool opt_thp(void *o, const char *v)
{
	if (!v) {
		OPTS(o)->params.thp = CB_THP_MADVISE;
	} else if (cb_thp_advice_parse(v, &OPTS(o)->params.thp) < 0) {
		char hint[64];

		cli_error("--thp must be never, madvise or always, not '%s'%s", v,
			  cli_hint(v, (const char *const[]){ "never", "madvise", "always" }, 3, hint, sizeof(hint)));
		return false;
	}
	OPTS(o)->thp = OPTS(o)->params.thp != CB_THP_NEVER;
	return true;
}

static bool opt_nodes(const char *name, const char *v, uint64_t *out)
{
	int n = cb_numa_node_count(), err = cb_nodes_parse(v, out);

	if (err == -ERANGE && n == 1)
		cli_error("--%s=%s: node out of range (this machine has 1 node: 0)", name, v);
	else if (err == -ERANGE)
		cli_error("--%s=%s: node out of range (this machine has %d nodes: 0-%d)", name, v, n, n - 1);
	else if (err)
		cli_error("--%s must be a node list such as 0, 0,1 or 0-3, not '%s'", name, v);
	return err == 0;
}

static bool opt_membind(void *o, const char *v) { return opt_nodes("membind", v, &OPTS(o)->params.membind); }

static bool opt_interleave(void *o, const char *v)
{
	return opt_nodes("interleave", v, &OPTS(o)->params.interleave);
}

static bool opt_cpunodebind(void *o, const char *v)
{
	return opt_nodes("cpunodebind", v, &OPTS(o)->params.cpunodebind);
}

static bool opt_child_membind(void *o, const char *v)
{
	return opt_nodes("child-membind", v, &OPTS(o)->params.child_membind);
}

static bool opt_child_cpunodebind(void *o, const char *v)
{
	return opt_nodes("child-cpunodebind", v, &OPTS(o)->params.child_cpunodebind);
}

static bool opt_cpu(void *o, const char *v)
{
	long cpu;

	if (!cli_parse_long(v, 0, 65535, &cpu) || cb_cpu_allowed((int)cpu) != 1) {
		cli_error("--cpu=%s is not a CPU this process may run on", v);
		return false;
	}
	OPTS(o)->cpu = cpu;
	return true;
}

/* --pin=auto (the default): the quietest allowed CPU; none: let the scheduler place the writer. */
static bool opt_pin(void *o, const char *v)
{
	if (strcmp(v, "auto") == 0) {
		OPTS(o)->cpu = CLI_PIN_AUTO;
		return true;
	}
	if (strcmp(v, "none") == 0) {
		OPTS(o)->cpu = -1;
		return true;
	}
	if (!cli_parse_long(v, 0, 65535, &OPTS(o)->cpu) || cb_cpu_allowed((int)OPTS(o)->cpu) != 1) {
		cli_error("--pin must be auto, none or a CPU this process may run on, not '%s'", v);
		return false;
	}
	return true;
}

static bool opt_seed(void *o, const char *v)
{
	if (!cli_parse_u64(v, &OPTS(o)->seed)) {
		cli_error("--seed must be a non-negative integer, not '%s'", v);
		return false;
	}
	OPTS(o)->seed_given = true;
	return true;
}

static bool opt_clock(void *o, const char *v)
{
	if (cb_clock_parse(v, &OPTS(o)->clock) < 0) {
		char hint[64];

		cli_error("--clock must be tsc, monotonic or auto, not '%s'%s", v,
			  cli_hint(v, (const char *const[]){ "tsc", "monotonic", "auto" }, 3, hint, sizeof(hint)));
		return false;
	}
	return true;
}

static bool opt_precopy(void *o, const char *v)
{
	if (!cli_parse_long(v, 0, 2, &OPTS(o)->precopy)) {
		cli_error("--precopy must be 0 (off), 1 (fixed depth) or 2 (adaptive), not '%s'", v);
		return false;
	}
	return true;
}

static bool opt_precopy_depth(void *o, const char *v)
{
	if (!cli_parse_long(v, 1, 16, &OPTS(o)->precopy_depth)) {
		cli_error("--precopy-depth must be an integer from 1 to 16, not '%s'", v);
		return false;
	}
	return true;
}

static bool opt_probes(void *o, const char *v)
{
	if (cb_probes_parse(v, &OPTS(o)->probes) < 0) {
		cli_error("--probes must be none or a list of taskstats,pagemap,smaps,perf,all,default,inline, not '%s'",
			  v);
		return false;
	}
	return true;
}

/* A workload option (any workload's table): kept as text until the workload is known. */
static bool opt_workload_option(void *o, const char *v)
{
	struct run_opts *ro = OPTS(o);
	const char *name = cli_option_name();

	for (int i = 0; i < ro->nwl; i++)
		if (strcmp(ro->wl[i].name, name) == 0) {
			ro->wl[i].value = v; /* the last one given wins, as for every option */
			return true;
		}
	if (ro->nwl == MAX_WL_SETTINGS) {
		cli_error("too many workload options (at most %d)", MAX_WL_SETTINGS);
		return false;
	}
	ro->wl[ro->nwl].name = name;
	ro->wl[ro->nwl++].value = v;
	return true;
}

static const struct cli_option generic_options[] = {
	{ "workload", "NAME", "workload to run (cowbench list); default seq", .parse = opt_workload },
	{ "size", "SIZE", "region size: bytes or K/M/G/T (binary); default 64M (replay: its trace's mappings)", .parse = opt_size },
	{ "reps", "N", "measured repetitions, one row each; default 5", .parse = opt_reps, .not_axis = true },
	{ "warmup", "N", "unrecorded repetitions before them; default 1", .parse = opt_warmup, .not_axis = true },
	{ "target-ci", "PCT", "adaptive reps: run until the 95 % interval of the headline metric's mean is within "
	  "+-PCT %; --reps becomes the least", .parse = opt_target_ci, .not_axis = true },
	{ "max-reps", "N", "with --target-ci: stop at N reps all the same; default 50", .parse = opt_max_reps,
	  .not_axis = true },
	{ "max-time", "DURATION", "with --target-ci: stop once the reps took this long (30s, 2m)",
	  .parse = opt_max_time, .not_axis = true },
	{ "writer", "child|parent", "which side writes after the fork; default child", .parse = opt_writer },
	{ "no-fork", NULL, "baseline: the same writes on already-private pages",
	  CLI_SET(CLI_STORE_TRUE, struct run_opts, no_fork) },
	{ "prefault", NULL, "before each rep, write and free twice the region's size of fresh memory: on a VM whose host "
	  "backs memory lazily (cowbench info: first touch) the copies then land on touched frames, as on bare metal",
	  CLI_SET(CLI_STORE_TRUE, struct run_opts, prefault), .not_axis = true },
	{ "break", "fault|populate", "page-order workloads: how the written pages stop being shared: fault (default, "
	  "each first write traps) or populate (one MADV_POPULATE_WRITE over the region inside the timed loop, "
	  "then the writes; replay: one per run of written pages of each recorded mapping)", .parse = opt_break },
	{ "thp", "[never|madvise|always]", "THP advice: never (default), madvise (= --thp) or always (no advice)",
	  .parse = opt_thp },
	{ "hugetlb", NULL, "back the region with 2 MiB hugetlb pages (--size a multiple of 2M)",
	  CLI_SET(CLI_STORE_TRUE, struct run_opts, params.hugetlb) },
	{ "membind", "NODES", "allocate the region on these NUMA nodes", .parse = opt_membind },
	{ "interleave", "NODES", "interleave the region over these nodes", .parse = opt_interleave },
	{ "cpunodebind", "NODES", "self-driven workloads: run every process and thread on these nodes",
	  .parse = opt_cpunodebind },
	{ "child-membind", "NODES", "self-driven workloads: child processes re-bind the region, so their "
	  "COW copies land here", .parse = opt_child_membind },
	{ "child-cpunodebind", "NODES", "self-driven workloads: run the child processes on these nodes",
	  .parse = opt_child_cpunodebind },
	{ "cpu", "N", "pin the writer to CPU N (= --pin=N)", .parse = opt_cpu },
	{ "pin", "auto|none|N", "page-order workloads: pin the writer to the quietest CPU (auto, the default where "
	  "there are several), to none, or to CPU N", .parse = opt_pin },
	{ "seed", "S", "seed of randomised page orders; default 1", .parse = opt_seed },
	{ "clock", "tsc|monotonic|auto", "time source; default auto (TSC when invariant)", .parse = opt_clock },
	{ "output", "FILE", "write rows to FILE instead of standard output (an existing FILE needs --force)",
	  CLI_SET(CLI_STORE_FILE, struct run_opts, output), .not_axis = true },
	{ "force", NULL, "replace an existing non-empty --output FILE", CLI_SET(CLI_STORE_TRUE, struct run_opts, force),
	  .not_axis = true },
	{ "format", "csv|json|table|markdown", "row format; default a table on a terminal, csv when piped or with --output "
	  "(json: JSON Lines)", CLI_SET(CLI_STORE_ROW_FORMAT, struct run_opts, format), .not_axis = true },
	{ "columns", "NAME[,NAME]", "the table's columns, in this order (default: what the rows have and the terminal fits)",
	  .parse = opt_columns, .not_axis = true },
	{ "samples", "FILE", "also write every first write to FILE as CSV: rep,index,page,latency_ns "
	  "(page-order workloads)", CLI_SET(CLI_STORE_FILE, struct run_opts, samples),
	  .not_axis = true /* one file per run */ },
	{ "explain", NULL, "after the rows, say on stderr how many pages were copied or reused and where "
	  "the time per fault went (taskstats, pagemap, smaps, perf)", CLI_SET(CLI_STORE_TRUE, struct run_opts, explain),
	  .not_axis = true /* a report, not a setting */ },
	{ "quiet", NULL, "no progress line and no closing summary on a terminal",
	  CLI_SET(CLI_STORE_TRUE, struct run_opts, quiet), .not_axis = true },
	{ "probes", "LIST", "evidence read around the loop: taskstats,pagemap,smaps,perf, all, default (all but "
	  "perf) or none; those that add work inside the fault path run in an evidence rep after the timed "
	  "ones; inline: all in the timed reps (they then pay for it)", .parse = opt_probes },
	{ "precopy", "0|1|2", "set vm.cow_precopy for the run (cowbench kernel, root)", .parse = opt_precopy },
	{ "precopy-depth", "N", "set vm.cow_precopy_depth for the run (cowbench kernel, root)",
	  .parse = opt_precopy_depth },
};

#define N_GENERIC ((int)(sizeof(generic_options) / sizeof(generic_options[0])))
#define MAX_RUN_OPTIONS (N_GENERIC + 64)

/*
 * run's table: the generic options, then every workload's own options
 * (from the workloads' tables, once per name), so getopt, the matrix axes
 * and completion know them all; which workload takes which is checked
 * once the workload is known.
 */
static struct cli_option run_options[MAX_RUN_OPTIONS];
static char run_metavars[MAX_RUN_OPTIONS][96];
static int n_run_options;

static bool table_has(const char *name)
{
	for (int i = 0; i < n_run_options; i++)
		if (strcmp(run_options[i].name, name) == 0)
			return true;
	return false;
}

static void add_workload_option(const struct cb_workload *w, const struct cb_option *wo)
{
	const char *mv;

	for (int i = 0; i < N_GENERIC; i++)
		if (strcmp(generic_options[i].name, wo->name) == 0) {
			fprintf(stderr, "cowbench: internal error: workload %s's --%s is a run option\n", w->name,
				wo->name);
			exit(EXIT_INTERNAL);
		}
	if (table_has(wo->name))
		return; /* several workloads may share a name; each parses it with its own table */
	if (n_run_options == MAX_RUN_OPTIONS) {
		fprintf(stderr, "cowbench: internal error: more than %d run options\n", MAX_RUN_OPTIONS);
		exit(EXIT_INTERNAL);
	}
	mv = cb_option_metavar(wo, run_metavars[n_run_options], sizeof(run_metavars[0]));
	/* A flag takes an optional 0/1 so a matrix can turn it off as well as on. */
	run_options[n_run_options++] = (struct cli_option){
		.name = wo->name, .metavar = mv ? mv : "[0|1]", .help = wo->help, .parse = opt_workload_option,
	};
}

static const struct cli_option *run_table(int *n)
{
	if (n_run_options == 0) {
		memcpy(run_options, generic_options, sizeof(generic_options));
		n_run_options = N_GENERIC;
		for (size_t w = 0; w < cb_workload_count(); w++)
			for (size_t i = 0; i < cb_option_count(cb_workload_at(w)); i++)
				add_workload_option(cb_workload_at(w), &cb_workload_at(w)->options[i]);
	}
	*n = n_run_options;
	return run_options;
}

/* ---- the options as given: the pairs of run --kernel's one cell ---- */

static struct run_given *given_rec;
static const struct cli_option *given_table;
static int given_n, given_axes; /* the first given_axes entries of given_table can be axes */

static bool record_given(void *o, const char *v)
{
	const char *name = cli_option_name();
	const struct cli_option *orig = NULL;
	int at = 0;

	for (int i = 0; i < given_n && !orig; i++)
		if (strcmp(given_table[i].name, name) == 0) {
			orig = &given_table[i];
			at = i;
		}
	if (at < given_axes && !orig->not_axis) {
		const char *axis = strcmp(name, "no-fork") == 0 ? "fork" : name;
		const char *value = strcmp(name, "no-fork") == 0 ? "0" : v ? v : "1";
		int k = 0;

		while (k < given_rec->n && strcmp(given_rec->pair[k].name, axis) != 0)
			k++;
		if (k == CLI_RUN_MAX_GIVEN) {
			cli_error("too many options (at most %d)", CLI_RUN_MAX_GIVEN);
			return false;
		}
		given_rec->pair[k].name = axis; /* the last one given wins, as for every option */
		given_rec->pair[k].value = value;
		given_rec->n += k == given_rec->n;
	}
	return cli_option_apply(orig, o, v);
}

int cli_run_parse(int argc, char **argv, const struct cli_option *extra, int nextra, struct run_opts *o,
		  struct run_given *given, void (*usage)(void))
{
	static struct cli_option table[MAX_RUN_OPTIONS + 8], wrapped[MAX_RUN_OPTIONS + 8];
	int n;
	const struct cli_option *t = run_table(&n);

	if (nextra > 8) {
		fprintf(stderr, "cowbench: internal error: more than 8 extra run options\n");
		exit(EXIT_INTERNAL);
	}
	memcpy(table, t, (size_t)n * sizeof(*t));
	memcpy(table + n, extra, (size_t)nextra * sizeof(*extra));
	for (int i = 0; i < n + nextra; i++) {
		wrapped[i] = table[i];
		wrapped[i].parse = record_given;
		wrapped[i].store = CLI_STORE_CALL;
	}
	given->n = 0;
	given_rec = given;
	given_table = table;
	given_n = n + nextra;
	given_axes = n;
	return cli_parse_options(argc, argv, wrapped, n + nextra, o, usage);
}

int cli_run_axis_rank(const char *name)
{
	int n;
	const struct cli_option *t = run_table(&n);

	if (strcmp(name, "kernel") == 0)
		return -1; /* cells read "kernel=patched workload=..." */
	if (strcmp(name, "fork") == 0)
		name = "no-fork";
	for (int i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0)
			return i;
	return n;
}

/* One workload's options, as --help shows them: the table's help with range and default. */
static void print_workload_options(const struct cb_workload *w)
{
	char left[128], help[256], mv[96];

	if (!cb_option_count(w)) {
		printf("\nWorkload %s has no options of its own.\n", w->name);
		return;
	}
	printf("\nOptions of workload %s:\n", w->name);
	for (size_t i = 0; i < cb_option_count(w); i++) {
		const struct cb_option *o = &w->options[i];
		const char *m = cb_option_metavar(o, mv, sizeof(mv));

		snprintf(left, sizeof(left), "--%s%s%s", o->name, m ? "=" : "", m ? m : "");
		cb_option_help(o, help, sizeof(help));
		printf("  %-24s %s\n", left, help);
	}
}

void cli_run_print_options(const struct run_opts *o)
{
	const struct cb_workload *w = o ? cb_workload_find(o->workload) : NULL;

	cli_print_options(generic_options, N_GENERIC);
	printf("  %-24s %s\n", "--kernel=K", "run in a QEMU guest of K (stock, patched or a bzImage), as cowbench matrix "
	       "--kernel=K does: a run is a matrix of one cell (--build as for matrix; --explain, --samples and "
	       "--prefault stay on the host)");
	if (w && o->workload_given) {
		print_workload_options(w);
		return;
	}
	for (size_t i = 0; i < cb_workload_count(); i++)
		print_workload_options(cb_workload_at(i));
}

void cli_run_spec_init(struct run_spec_ctx *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
}

/* MemAvailable, read once per context. */
static int mem_available(struct run_spec_ctx *ctx, uint64_t *avail)
{
	if (!ctx->mem_read) {
		ctx->mem_err = cb_mem_available(&ctx->mem_avail);
		ctx->mem_read = true;
	}
	*avail = ctx->mem_avail;
	return ctx->mem_err;
}

/* The size a spec is made at: bytes, and how a message quotes it (the option as typed, or the default chosen). */
struct run_size {
	uint64_t bytes;
	const char *text;
	char buf[32];
};

/* Under a cgroup memory limit MemAvailable says nothing: the OOM killer acts at the limit. */
static int check_cgroup_limit(struct run_spec_ctx *ctx, const struct run_opts *o, const struct run_size *sz,
			      uint64_t need)
{
	if (!ctx->cgroup_read) {
		ctx->cgroup_err = cb_cgroup_mem_headroom(&ctx->cgroup_room, ctx->cgroup_where, sizeof(ctx->cgroup_where));
		ctx->cgroup_read = true;
	}
	if (ctx->cgroup_err < 0 || ctx->cgroup_room == UINT64_MAX || need <= ctx->cgroup_room)
		return 0;
	cli_error("--size=%s needs %" PRIu64 " MiB%s but the cgroup memory limit leaves %" PRIu64 " MiB (%s)",
		  sz->text, need >> 20, o->no_fork ? "" : " (region plus its COW copies)", ctx->cgroup_room >> 20,
		  ctx->cgroup_where);
	return -1;
}

/* Size: round up to pages (saying so), and check it fits in MemAvailable and the cgroup. */
static int resolve_size(struct run_spec_ctx *ctx, const struct run_opts *o, const struct run_size *sz,
			size_t page_size, uint64_t *size)
{
	uint64_t avail, need;

	if (sz->bytes == 0) { /* a workload's input of less than 1K */
		cli_error("--size must be larger than zero");
		return -1;
	}
	if (cb_size_round_pages(sz->bytes, page_size, size) < 0) {
		cli_error("--size=%s is too large", sz->text);
		return -1;
	}
	if (*size != sz->bytes)
		cli_note("--size=%s rounded up to %" PRIu64 " bytes (%" PRIu64 " pages of %zu)",
			 sz->text, *size, *size / page_size, page_size);
	/* With a fork every written page gets a copy: the run needs the region twice. */
	need = o->no_fork ? *size : (*size > UINT64_MAX / 2 ? UINT64_MAX : *size * 2);
	if (check_cgroup_limit(ctx, o, sz, need) < 0)
		return -1;
	if (mem_available(ctx, &avail) < 0)
		return 0; /* no meminfo (unusual container): let mmap decide */
	if (need > avail) {
		cli_error("--size=%s needs %" PRIu64 " MiB%s but MemAvailable is %" PRIu64 " MiB",
			  sz->text, need >> 20, o->no_fork ? "" : " (region plus its COW copies)",
			  avail >> 20);
		return -1;
	}
	return 0;
}

/* Generic options a workload cannot honour are refused, never ignored. */
static int refuse_unhonoured(const struct run_opts *o, const struct cb_workload *w, char *why, size_t len)
{
	const struct cb_wl_params *p = &o->params;

	if (w->run && (o->writer_given || o->no_fork || o->break_given))
		snprintf(why, len, "--writer, --no-fork and --break are for page-order workloads; %s makes its own "
			 "processes", w->name);
	else if (w->page_order && (p->cpunodebind || p->child_membind || p->child_cpunodebind))
		snprintf(why, len, "--cpunodebind, --child-membind and --child-cpunodebind are for self-driven "
			 "workloads; use --cpu to place %s's writer", w->name);
	else if (o->samples && !w->page_order)
		snprintf(why, len, "--samples: workload %s has no per-page writes to record", w->name);
	else if (o->samples && o->output && cli_same_file(o->samples, o->output))
		snprintf(why, len, "--samples and --output name the same file");
	else if (o->seed_given && !(w->flags & CB_WL_USES_SEED))
		snprintf(why, len, "--seed: workload %s does not randomise", w->name);
	else
		return 0;
	return -EINVAL;
}

/* The spec of o, the workload's options applied; its size and the workload's own check come after. */
static int build_spec(const struct run_opts *o, size_t page_size, struct cb_run_spec *spec, char *why, size_t len)
{
	const struct cb_workload *w = cb_workload_find(o->workload);
	int err = refuse_unhonoured(o, w, why, len);

	*spec = (struct cb_run_spec){
		.page_size = page_size, .writer = o->writer, .fork = !o->no_fork, .brk = o->brk, .prefault = o->prefault,
		.thp = o->thp,
		.cpu = (int)o->cpu, .seed = o->seed, .params = o->params, .probes = o->probes,
	};
	cb_run_spec_set_workload(spec, w);
	for (int i = 0; !err && i < o->nwl; i++)
		err = cb_run_spec_set_option(spec, o->wl[i].name, o->wl[i].value, why, len);
	return err;
}

const struct run_opts cli_run_defaults = {
	.workload = "seq", .size = 64ull << 20, .reps = 5, .warmup = 1, .cpu = CLI_PIN_AUTO,
	.writer = CB_WRITER_CHILD, .seed = 1, .clock = CB_CLOCK_AUTO, .format = CLI_FORMAT_AUTO,
	.precopy = -1, .precopy_depth = -1,
};

/*
 * The size: --size when given; else the size the workload's input needs
 * (replay: the trace's mappings, in whole KiB); else the workload's own
 * default size (snapshot: the seed's 1 GiB array) when it passes the
 * workload's check here (memory); else 64M. spec is o's, built (built:
 * without error); an input that cannot be read leaves 64M, and the
 * spec's check reports why.
 */
static void choose_size(const struct run_opts *o, struct cb_run_spec *spec, bool built, struct run_size *sz)
{
	const struct cb_workload *w = spec->workload;
	uint64_t size;
	char why[256];

	sz->bytes = o->size;
	sz->text = o->size_text; /* as typed */
	if (!o->size_given) {
		cb_size_format(o->size, sz->buf, sizeof(sz->buf));
		sz->text = sz->buf;
	}
	if (o->size_given || !built)
		return;
	if (w->input_size) {
		if (w->input_size(spec, &size, why, sizeof(why)) == 0 && size) {
			snprintf(sz->buf, sizeof(sz->buf), "%" PRIu64 "K", size >> 10);
			sz->bytes = size >> 10 << 10;
			sz->text = sz->buf;
		}
		return;
	}
	if (!w->default_size || cb_size_parse(w->default_size, &size) < 0)
		return;
	spec->size = size;
	if (cb_run_spec_check(spec, why, sizeof(why)) != -ENOMEM) {
		sz->bytes = size; /* fits, or fails for another reason the real check reports */
		sz->text = w->default_size;
		return;
	}
	cli_note("%s: --size defaults to %s here, not %s (%s)", w->name, sz->text, w->default_size, why);
}

/*
 * --pin=auto: the CPU that was quietest over 100 ms, chosen once per
 * context (a matrix's cells share it); no pinning where there is one CPU.
 * Self-driven workloads place their own threads and ignore it.
 */
static void resolve_pin(struct run_spec_ctx *ctx, struct cb_run_spec *spec)
{
	if (spec->cpu != CLI_PIN_AUTO)
		return;
	spec->cpu = -1;
	if (!spec->workload->page_order)
		return;
	if (!ctx->pin_chosen) {
		ctx->pin = cb_quiet_cpu(100);
		ctx->pin_chosen = true;
	}
	spec->cpu = ctx->pin;
	spec->cpu_auto = ctx->pin >= 0;
}

/*
 * Checked options -> spec, with the context's calibrated clock of the
 * requested kind (calibrated here the first time), so a matrix calibrates
 * once. -1 after printing why.
 */
int cli_run_make_spec(struct run_spec_ctx *ctx, const struct run_opts *o, struct cb_run_spec *spec)
{
	size_t page_size = (size_t)sysconf(_SC_PAGESIZE);
	struct cb_clock *clk = &ctx->clocks[o->clock];
	struct run_size sz;
	char why[256];
	int err = build_spec(o, page_size, spec, why, sizeof(why));

	/* Built once; what is wrong with the size is said before what is wrong with the rest. */
	choose_size(o, spec, err == 0, &sz);
	if (resolve_size(ctx, o, &sz, page_size, &spec->size) < 0)
		return -1;
	if (err == 0)
		err = cb_run_spec_check(spec, why, sizeof(why));
	if (err < 0) {
		cli_error("%s", why);
		return -1;
	}
	if (clk->ticks_per_ns == 0) {
		if (cb_clock_init(clk, o->clock) < 0) {
			clk->ticks_per_ns = 0;
			cli_error("--clock=%s is not usable here (no TSC with rdtscp); use --clock=monotonic",
				  cb_clock_name(o->clock));
			return -1;
		}
		if (o->clock == CB_CLOCK_TSC && !clk->tsc_invariant)
			cli_note("the TSC is not invariant here (no constant_tsc/nonstop_tsc): times may drift");
	}
	spec->clock = clk;
	resolve_pin(ctx, spec);
	return 0;
}

int cli_run_apply_sysctls(const struct run_opts *o)
{
	if (o->params.hugetlb)
		cli_restore_sysctls_at_exit(); /* the workloads may raise vm.nr_hugepages */
	if (cli_apply_sysctl("--precopy", CB_PRECOPY_SYSCTL, o->precopy) < 0 ||
	    cli_apply_sysctl("--precopy-depth", CB_PRECOPY_DEPTH_SYSCTL, o->precopy_depth) < 0)
		return -1;
	return 0;
}

const struct cli_option *cli_run_options(int *n)
{
	return run_table(n);
}

const struct cli_option *cli_run_option_find(const char *name)
{
	int n;
	const struct cli_option *t = run_table(&n);

	for (int i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0)
			return &t[i];
	return NULL;
}

bool cli_run_option_is_input(const char *name)
{
	for (size_t i = 0; i < cb_workload_count(); i++) {
		const struct cb_option *opt = cb_workload_at(i)->options;

		for (; opt && opt->name; opt++)
			if (opt->type == CB_OPT_PATH && strcmp(opt->name, name) == 0)
				return true;
	}
	return false;
}

int cli_run_outputs_not_inputs(const struct run_opts *o)
{
	for (int i = 0; i < o->nwl; i++) {
		char *in[] = { (char *)o->wl[i].value };

		if (!cli_run_option_is_input(o->wl[i].name))
			continue;
		if (cli_output_not_input("--output", o->output, in, 1) < 0 ||
		    cli_output_not_input("--samples", o->samples, in, 1) < 0)
			return -1;
	}
	return 0;
}

struct run_opts *cli_run_opts_new(void)
{
	struct run_opts *o = malloc(sizeof(*o));

	if (o)
		*o = cli_run_defaults;
	return o;
}

void cli_run_opts_free(struct run_opts *o)
{
	free(o);
}
