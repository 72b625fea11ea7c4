#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libgen.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cowbench/cowbench.h>
#include <cowbench/units.h>

#include "cli.h"

#define MAX_WL_SETTINGS 32

struct run_opts {
	const char *workload;
	const char *size_text;
	long reps, warmup, cpu;
	enum cb_writer writer;
	enum cb_break brk;           /* --break: how COW breaks (fault or populate) */
	bool no_fork, thp;
	uint64_t seed;
	enum cb_clock_kind clock;
	const char *output;
	const char *samples;         /* --samples=FILE: every first write as CSV */
	bool force; /* --force: replace a non-empty --output */
	enum cb_format format;
	long precopy, precopy_depth; /* -1: leave the sysctl alone */
	struct cb_wl_params params;  /* the region: page type, NUMA placement */
	bool workload_given, writer_given, seed_given, break_given; /* refused where the workload cannot honour them */
	/* The workload's own options as given, applied to its table once the workload is known. */
	struct { const char *name, *value; } wl[MAX_WL_SETTINGS];
	int nwl;
	bool explain;                /* --explain: a summary for people on stderr */
	bool quiet;                  /* --quiet: no progress, no closing summary */
	unsigned probes;             /* --probes (cowbench/evidence.h); 0: the default set */
	struct cli_reps_opts adaptive; /* --target-ci, --max-reps, --max-time */
};

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

static bool opt_size(void *o, const char *v)
{
	OPTS(o)->size_text = v; /* checked once the page size is known */
	return true;
}

static bool opt_count(const char *name, const char *v, long min, long *out)
{
	if (!cli_parse_long(v, min, 1000000, out)) {
		cli_error("--%s must be an integer from %ld to 1000000, not '%s'", name, min, v);
		return false;
	}
	return true;
}

static bool opt_reps(void *o, const char *v) { return opt_count("reps", v, 1, &OPTS(o)->reps); }
static bool opt_warmup(void *o, const char *v) { return opt_count("warmup", v, 0, &OPTS(o)->warmup); }

static bool opt_target_ci(void *o, const char *v) { return cli_parse_target_ci(v, &OPTS(o)->adaptive.target); }
static bool opt_max_reps(void *o, const char *v) { return opt_count("max-reps", v, 1, &OPTS(o)->adaptive.max_reps); }
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

static bool opt_no_fork(void *o, const char *v)
{
	(void)v;
	OPTS(o)->no_fork = true;
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

static bool opt_hugetlb(void *o, const char *v)
{
	(void)v;
	OPTS(o)->params.hugetlb = true;
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

static bool opt_output(void *o, const char *v)
{
	if (!*v) {
		cli_error("--output needs a file name");
		return false;
	}
	OPTS(o)->output = v;
	return true;
}

static bool opt_samples(void *o, const char *v)
{
	if (!*v) {
		cli_error("--samples needs a file name");
		return false;
	}
	OPTS(o)->samples = v;
	return true;
}

static bool opt_force(void *o, const char *v)
{
	(void)v;
	OPTS(o)->force = true;
	return true;
}

static bool opt_format(void *o, const char *v)
{
	if (cb_format_parse(v, &OPTS(o)->format) < 0) {
		cli_error("--format must be csv, json or table, not '%s'", v);
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
	if (!cli_parse_long(v, 1, 64, &OPTS(o)->precopy_depth)) {
		cli_error("--precopy-depth must be an integer from 1 to 64, not '%s'", v);
		return false;
	}
	return true;
}

static bool opt_explain(void *o, const char *v)
{
	(void)v;
	OPTS(o)->explain = true;
	return true;
}

static bool opt_quiet(void *o, const char *v)
{
	(void)v;
	OPTS(o)->quiet = true;
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
	{ "size", "SIZE", "region size: bytes or K/M/G/T (binary); default 64M", .parse = opt_size },
	{ "reps", "N", "measured repetitions, one row each; default 5", .parse = opt_reps },
	{ "warmup", "N", "unrecorded repetitions before them; default 1", .parse = opt_warmup },
	{ "target-ci", "PCT", "adaptive reps: run until the 95 % interval of the headline metric's mean is within "
	  "+-PCT %; --reps becomes the least", .parse = opt_target_ci },
	{ "max-reps", "N", "with --target-ci: stop at N reps all the same; default 50", .parse = opt_max_reps },
	{ "max-time", "DURATION", "with --target-ci: stop once the reps took this long (30s, 2m)", .parse = opt_max_time },
	{ "writer", "child|parent", "which side writes after the fork; default child", .parse = opt_writer },
	{ "no-fork", NULL, "baseline: the same writes on already-private pages", .parse = opt_no_fork },
	{ "break", "fault|populate", "page-order workloads: how the written pages stop being shared: fault (default, "
	  "each first write traps) or populate (one MADV_POPULATE_WRITE over the region inside the timed loop, "
	  "then the writes)", .parse = opt_break },
	{ "thp", "[never|madvise|always]", "THP advice: never (default), madvise (= --thp) or always (no advice)",
	  .parse = opt_thp },
	{ "hugetlb", NULL, "back the region with 2 MiB hugetlb pages (--size a multiple of 2M)", .parse = opt_hugetlb },
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
	  .parse = opt_output },
	{ "force", NULL, "replace an existing non-empty --output FILE", .parse = opt_force },
	{ "format", "csv|json|table", "row format; default a table on a terminal, csv when piped or with --output (json: JSON Lines)", .parse = opt_format },
	{ "samples", "FILE", "also write every first write to FILE as CSV: rep,index,page,latency_ns "
	  "(page-order workloads)", .parse = opt_samples },
	{ "explain", NULL, "after the rows, say on stderr how many pages were copied or reused and where "
	  "the time per fault went (taskstats, pagemap, smaps, perf)", .parse = opt_explain },
	{ "quiet", NULL, "no progress line and no closing summary on a terminal", .parse = opt_quiet },
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

static const struct run_opts *usage_opts; /* what --help was given with (--workload=NAME --help) */

static void run_usage(void)
{
	const struct cb_workload *w = usage_opts ? cb_workload_find(usage_opts->workload) : NULL;

	printf("usage: cowbench run [OPTIONS]\n\n"
	       "Map a region, populate it, fork, and time every first write of one side.\n\n");
	cli_print_options(generic_options, N_GENERIC);
	printf("  %-24s %s\n", "--kernel=K", "run in a QEMU guest of K (stock, patched or a bzImage), as cowbench matrix "
	       "--kernel=K does: a run is a matrix of one cell (--explain and --samples stay on the host)");
	if (w && usage_opts->workload_given) {
		print_workload_options(w);
		return;
	}
	for (size_t i = 0; i < cb_workload_count(); i++)
		print_workload_options(cb_workload_at(i));
}

/* MemAvailable read once per process: a 90,000-cell matrix plan must not read meminfo 90,000 times. */
static int mem_available_once(uint64_t *avail)
{
	static uint64_t cached;
	static int err = 1;

	if (err > 0)
		err = cb_mem_available(&cached);
	*avail = cached;
	return err;
}

/* Under a cgroup memory limit MemAvailable says nothing: the OOM killer acts at the limit. */
static int check_cgroup_limit(const struct run_opts *o, uint64_t need)
{
	static char where[4096];
	static uint64_t room;
	static int known; /* read once: a matrix checks every cell against the same limit */

	if (!known)
		known = cb_cgroup_mem_headroom(&room, where, sizeof(where)) < 0 ? -1 : 1;
	if (known < 0 || room == UINT64_MAX || need <= room)
		return 0;
	cli_error("--size=%s needs %" PRIu64 " MiB%s but the cgroup memory limit leaves %" PRIu64 " MiB (%s)",
		  o->size_text, need >> 20, o->no_fork ? "" : " (region plus its COW copies)", room >> 20, where);
	return -1;
}

/* Size: parse, round up to pages (saying so), and check it fits in MemAvailable and the cgroup. */
static int resolve_size(const struct run_opts *o, size_t page_size, uint64_t *size)
{
	uint64_t bytes, avail, need;
	int err = cb_size_parse(o->size_text, &bytes);

	if (err == -ERANGE) {
		cli_error("--size=%s is too large", o->size_text);
		return -1;
	}
	if (err == -EDOM) {
		cli_error("--size must be larger than zero");
		return -1;
	}
	if (err < 0) {
		cli_error("--size=%s is not a size (bytes, or a number with K, M, G or T)", o->size_text);
		return -1;
	}
	if (cb_size_round_pages(bytes, page_size, size) < 0) {
		cli_error("--size=%s is too large", o->size_text);
		return -1;
	}
	if (*size != bytes)
		cli_note("--size=%s rounded up to %" PRIu64 " bytes (%" PRIu64 " pages of %zu)",
			 o->size_text, *size, *size / page_size, page_size);
	/* With a fork every written page gets a copy: the run needs the region twice. */
	need = o->no_fork ? *size : (*size > UINT64_MAX / 2 ? UINT64_MAX : *size * 2);
	if (check_cgroup_limit(o, need) < 0)
		return -1;
	if (mem_available_once(&avail) < 0)
		return 0; /* no meminfo (unusual container): let mmap decide */
	if (need > avail) {
		cli_error("--size=%s needs %" PRIu64 " MiB%s but MemAvailable is %" PRIu64 " MiB",
			  o->size_text, need >> 20, o->no_fork ? "" : " (region plus its COW copies)",
			  avail >> 20);
		return -1;
	}
	return 0;
}

/* PATH with its directory resolved ("./x.csv" and "x.csv" agree); the text itself when that fails. */
static void canonical_path(const char *path, char *out, size_t len)
{
	char dir[PATH_MAX], base[PATH_MAX], real[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", path);
	snprintf(base, sizeof(base), "%s", path);
	if (realpath(dirname(dir), real))
		snprintf(out, len, "%s/%s", real, basename(base));
	else
		snprintf(out, len, "%s", path);
}

/* Whether two output names are one file: the same inode, or the same resolved path. */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	char ca[2 * PATH_MAX + 2], cb[2 * PATH_MAX + 2];

	if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	canonical_path(a, ca, sizeof(ca));
	canonical_path(b, cb, sizeof(cb));
	return strcmp(ca, cb) == 0;
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
	else if (o->samples && o->output && same_file(o->samples, o->output))
		snprintf(why, len, "--samples and --output name the same file");
	else if (o->seed_given && !(w->flags & CB_WL_USES_SEED))
		snprintf(why, len, "--seed: workload %s does not randomise", w->name);
	else
		return 0;
	return -EINVAL;
}

/* The spec of o at size bytes, the workload's options applied and every check run. */
static int build_spec(const struct run_opts *o, uint64_t size, size_t page_size, struct cb_run_spec *spec,
		      char *why, size_t len)
{
	const struct cb_workload *w = cb_workload_find(o->workload);
	int err = refuse_unhonoured(o, w, why, len);

	*spec = (struct cb_run_spec){
		.size = size, .page_size = page_size, .writer = o->writer, .fork = !o->no_fork, .brk = o->brk,
		.thp = o->thp,
		.cpu = (int)o->cpu, .seed = o->seed, .params = o->params, .probes = o->probes,
	};
	cb_run_spec_set_workload(spec, w);
	for (int i = 0; !err && i < o->nwl; i++)
		err = cb_run_spec_set_option(spec, o->wl[i].name, o->wl[i].value, why, len);
	return err ? err : cb_run_spec_check(spec, why, len);
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

static const struct run_opts run_defaults = {
	.workload = "seq", .size_text = "64M", .reps = 5, .warmup = 1, .cpu = CLI_PIN_AUTO,
	.writer = CB_WRITER_CHILD, .seed = 1, .clock = CB_CLOCK_AUTO, .format = CLI_FORMAT_AUTO,
	.precopy = -1, .precopy_depth = -1,
};

/*
 * Without --size, a workload's own default size (snapshot: the seed's 1 GiB
 * array) when it passes the workload's check here (memory), else 64M.
 */
static const char *default_size(const struct run_opts *o, size_t page_size)
{
	const struct cb_workload *w = cb_workload_find(o->workload);
	struct cb_run_spec trial;
	uint64_t size;
	char why[256];

	if (o->size_text != run_defaults.size_text || !w->default_size)
		return o->size_text;
	if (cb_size_parse(w->default_size, &size) < 0 ||
	    build_spec(o, size, page_size, &trial, why, sizeof(why)) != -ENOMEM)
		return w->default_size; /* fits, or fails for another reason the real check reports */
	cli_note("%s: --size defaults to %s here, not %s (%s)", w->name, o->size_text, w->default_size, why);
	return o->size_text;
}

/*
 * --pin=auto: the CPU that was quietest over 100 ms, chosen once per
 * process (a matrix's cells share it); no pinning where there is one CPU.
 * Self-driven workloads place their own threads and ignore it.
 */
static void resolve_pin(struct cb_run_spec *spec)
{
	static int chosen = -3; /* -3: not yet */

	if (spec->cpu != CLI_PIN_AUTO)
		return;
	spec->cpu = -1;
	if (!spec->workload->page_order)
		return;
	if (chosen == -3)
		chosen = cb_quiet_cpu(100);
	spec->cpu = chosen;
	spec->cpu_auto = chosen >= 0;
}

/*
 * Checked options -> spec. clocks[] is indexed by the requested clock kind
 * and caches calibrated clocks (ticks_per_ns 0: not yet), so a matrix
 * calibrates once. -1 after printing why.
 */
static int make_spec(const struct run_opts *o, struct cb_clock *clocks, struct cb_run_spec *spec)
{
	size_t page_size = (size_t)sysconf(_SC_PAGESIZE);
	struct cb_clock *clk = &clocks[o->clock];
	struct run_opts sized = *o;
	uint64_t size;
	char why[256];

	sized.size_text = default_size(o, page_size);
	if (resolve_size(&sized, page_size, &size) < 0)
		return -1;
	if (build_spec(o, size, page_size, spec, why, sizeof(why)) < 0) {
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
	resolve_pin(spec);
	return 0;
}

static int apply_sysctls(const struct run_opts *o)
{
	if (o->params.hugetlb)
		cli_restore_sysctls_at_exit(); /* the workloads may raise vm.nr_hugepages */
	if (cli_apply_sysctl("--precopy", CB_PRECOPY_SYSCTL, o->precopy) < 0 ||
	    cli_apply_sysctl("--precopy-depth", CB_PRECOPY_DEPTH_SYSCTL, o->precopy_depth) < 0)
		return -1;
	return 0;
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
	return cmd_matrix(argc, argv);
}

int cmd_run(int argc, char **argv)
{
	struct run_opts o = run_defaults;
	struct cb_clock clocks[CLI_NCLOCKS];
	struct cb_run_spec spec;
	struct cb_report report;
	struct cli_explain *ex = NULL;
	struct cli_closing *cl = NULL;
	struct samples_file samples;
	struct cb_sample_sink sink = { write_samples, &samples };
	FILE *out;
	int n, argi, status, err;
	bool out_created;
	const struct cli_option *table = run_table(&n);

	if ((argi = guest_kernel_arg(argc, argv)) > 0)
		return run_in_guest(argc, argv, argi);
	usage_opts = &o;
	argi = cli_parse_options(argc, argv, table, n, &o, run_usage);

	memset(clocks, 0, sizeof(clocks));
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
	o.format = cli_format_resolve(o.format, o.output);
	if (make_spec(&o, clocks, &spec) < 0 || apply_sysctls(&o) < 0)
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
	status = run_reps(&o, &spec, &report, ex, cl);
	if ((err = cb_report_finish(&report)) < 0 && status == 0) {
		cli_error("cannot write results: %s", strerror(-err));
		status = EXIT_RUN_FAILED;
	}
	if (out != stdout && fclose(out) != 0 && status == 0) {
		cli_error("cannot write %s: %s", o.output, strerror(errno));
		status = EXIT_RUN_FAILED;
	}
	if (out != stdout && status == EXIT_RUN_FAILED)
		cli_output_drop_if_empty(o.output, out_created);
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

/* cowbench matrix drives the same options, one NAME=VALUE at a time (cli.h). */
const struct cli_option *cli_run_options(int *n)
{
	return run_table(n);
}

struct run_opts *cli_run_opts_new(void)
{
	struct run_opts *o = malloc(sizeof(*o));

	if (o)
		*o = run_defaults;
	return o;
}

void cli_run_opts_free(struct run_opts *o)
{
	free(o);
}

int cli_run_make_spec(const struct run_opts *o, struct cb_clock *clocks, struct cb_run_spec *spec)
{
	return make_spec(o, clocks, spec);
}

int cli_run_apply_sysctls(const struct run_opts *o)
{
	return apply_sysctls(o);
}
