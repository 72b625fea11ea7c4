#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cowbench/cowbench.h>

#include "cli.h"

struct run_opts {
	const char *workload;
	const char *size_text;
	long reps, warmup, cpu;
	enum cb_writer writer;
	bool no_fork, thp;
	uint64_t seed;
	enum cb_clock_kind clock;
	const char *output;
	bool force; /* --force: replace a non-empty --output */
	enum cb_format format;
	long precopy, precopy_depth; /* -1: leave the sysctl alone */
	struct cb_wl_params params;  /* self-driven workloads and region options */
	bool explain;                /* --explain: a summary for people on stderr */
	unsigned probes;             /* --probes (cowbench/evidence.h); 0: the default set */
};

#define OPTS(p) ((struct run_opts *)(p))

static bool opt_workload(void *o, const char *v)
{
	if (!cb_workload_find(v)) {
		cli_error("unknown workload '%s' (workloads: %s)", v, cb_workload_names());
		return false;
	}
	OPTS(o)->workload = v;
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

static bool opt_writer(void *o, const char *v)
{
	if (cb_writer_parse(v, &OPTS(o)->writer) < 0) {
		cli_error("--writer must be child or parent, not '%s'", v);
		return false;
	}
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
		cli_error("--thp must be never, madvise or always, not '%s'", v);
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

static bool opt_unsigned(const char *name, const char *v, long max, unsigned *out)
{
	long n;

	if (!cli_parse_long(v, 1, max, &n)) {
		cli_error("--%s must be an integer from 1 to %ld, not '%s'", name, max, v);
		return false;
	}
	*out = (unsigned)n;
	return true;
}

static bool opt_threads(void *o, const char *v)
{
	return opt_unsigned("threads", v, 1024, &OPTS(o)->params.threads);
}

static bool opt_checkpointers(void *o, const char *v)
{
	return opt_unsigned("checkpointers", v, 1024, &OPTS(o)->params.checkpointers);
}

static bool opt_children(void *o, const char *v)
{
	return opt_unsigned("children", v, 1024, &OPTS(o)->params.children);
}

static bool opt_bytes(const char *name, const char *v, uint64_t *out)
{
	if (cb_size_parse(v, out) < 0) {
		cli_error("--%s=%s is not a size above zero (bytes, or a number with K, M, G or T)", name, v);
		return false;
	}
	return true;
}

static bool opt_batch(void *o, const char *v) { return opt_bytes("batch", v, &OPTS(o)->params.batch); }
static bool opt_dontfork(void *o, const char *v) { return opt_bytes("dontfork", v, &OPTS(o)->params.dontfork); }

static bool opt_wipeonfork(void *o, const char *v)
{
	return opt_bytes("wipeonfork", v, &OPTS(o)->params.wipeonfork);
}

static bool opt_snapshot(void *o, const char *v)
{
	if (cb_snapshot_method_parse(v, &OPTS(o)->params.snapshot) < 0) {
		cli_error("--snapshot must be fork, fork-wait, uffd-wp, memcpy or none, not '%s'", v);
		return false;
	}
	return true;
}

static bool opt_method(void *o, const char *v)
{
	if (cb_fork_method_parse(v, &OPTS(o)->params.fork_method) < 0) {
		cli_error("--method must be fork, vfork, posix_spawn or clone-vm, not '%s'", v);
		return false;
	}
	return true;
}

static bool opt_share(void *o, const char *v)
{
	if (cb_multi_share_parse(v, &OPTS(o)->params.share) < 0) {
		cli_error("--share must be split or all, not '%s'", v);
		return false;
	}
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

static bool opt_seed(void *o, const char *v)
{
	if (!cli_parse_u64(v, &OPTS(o)->seed)) {
		cli_error("--seed must be a non-negative integer, not '%s'", v);
		return false;
	}
	return true;
}

static bool opt_clock(void *o, const char *v)
{
	if (cb_clock_parse(v, &OPTS(o)->clock) < 0) {
		cli_error("--clock must be tsc, monotonic or auto, not '%s'", v);
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
	if (!cli_parse_long(v, 1, 512, &OPTS(o)->precopy_depth)) {
		cli_error("--precopy-depth must be an integer from 1 to 512, not '%s'", v);
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

static bool opt_probes(void *o, const char *v)
{
	if (cb_probes_parse(v, &OPTS(o)->probes) < 0) {
		cli_error("--probes must be all, none, default or a list of taskstats,pagemap,smaps,perf, not '%s'", v);
		return false;
	}
	return true;
}

static const struct cli_option run_options[] = {
	{ "workload", "NAME", "workload to run (cowbench list); default seq", opt_workload },
	{ "size", "SIZE", "region size: bytes or K/M/G/T (binary); default 64M", opt_size },
	{ "reps", "N", "measured repetitions, one row each; default 5", opt_reps },
	{ "warmup", "N", "unrecorded repetitions before them; default 1", opt_warmup },
	{ "writer", "child|parent", "which side writes after the fork; default child", opt_writer },
	{ "no-fork", NULL, "baseline: the same writes on already-private pages", opt_no_fork },
	{ "thp", "[never|madvise|always]", "THP advice: never (default), madvise (= --thp) or always (no advice)",
	  opt_thp },
	{ "hugetlb", NULL, "snapshot/fork/multi: back the region with 2 MiB hugetlb pages", opt_hugetlb },
	{ "threads", "W", "snapshot: writer threads; default 28", opt_threads },
	{ "checkpointers", "C", "snapshot: copier threads; default 4", opt_checkpointers },
	{ "batch", "SIZE", "snapshot: bytes per copy batch, a multiple of the page size; default 2M",
	  opt_batch },
	{ "snapshot", "fork|fork-wait|uffd-wp|memcpy|none", "snapshot: how the checkpoint is taken; default fork",
	  opt_snapshot },
	{ "method", "fork|vfork|posix_spawn|clone-vm", "fork: how the child is made; default fork",
	  opt_method },
	{ "children", "N", "multi: children forked from the parent; default 2", opt_children },
	{ "share", "split|all", "multi: each child writes its share of the pages, or all; default split",
	  opt_share },
	{ "dontfork", "SIZE", "fork: mark the region's first SIZE bytes MADV_DONTFORK", opt_dontfork },
	{ "wipeonfork", "SIZE", "fork: mark the next SIZE bytes MADV_WIPEONFORK", opt_wipeonfork },
	{ "membind", "NODES", "snapshot/fork/multi: allocate the region on these NUMA nodes", opt_membind },
	{ "interleave", "NODES", "snapshot/fork/multi: interleave the region over these nodes",
	  opt_interleave },
	{ "cpunodebind", "NODES", "snapshot/fork/multi: run parent, children and threads on these nodes",
	  opt_cpunodebind },
	{ "child-membind", "NODES", "multi: children re-bind the region, so their COW copies land here",
	  opt_child_membind },
	{ "child-cpunodebind", "NODES", "snapshot/multi: run the children on these nodes", opt_child_cpunodebind },
	{ "cpu", "N", "pin the writer to CPU N", opt_cpu },
	{ "seed", "S", "seed of randomised page orders; default 1", opt_seed },
	{ "clock", "tsc|monotonic|auto", "time source; default auto (TSC when invariant)", opt_clock },
	{ "output", "FILE", "write rows to FILE instead of standard output (an existing FILE needs --force)",
	  opt_output },
	{ "force", NULL, "replace an existing non-empty --output FILE", opt_force },
	{ "format", "csv|json|table", "row format; default csv (JSON Lines for json)", opt_format },
	{ "explain", NULL, "after the rows, say on stderr how many pages were copied or reused and where "
	  "the time per fault went (taskstats, pagemap, smaps, perf)", opt_explain },
	{ "probes", "LIST", "evidence read around the loop: taskstats,pagemap,smaps,perf, all or none; "
	  "default all but perf (it adds a little to each fault)", opt_probes },
	{ "precopy", "0|1|2", "set vm.cow_precopy for the run (cowbench kernel, root)", opt_precopy },
	{ "precopy-depth", "N", "set vm.cow_precopy_depth for the run (cowbench kernel, root)",
	  opt_precopy_depth },
};

#define N_RUN_OPTIONS ((int)(sizeof(run_options) / sizeof(run_options[0])))

static void run_usage(void)
{
	printf("usage: cowbench run [OPTIONS]\n\n"
	       "Map a region, populate it, fork, and time every first write of one side.\n\n");
	cli_print_options(run_options, N_RUN_OPTIONS);
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

/* The self-driven workloads' parameters, checked against the size before anything runs. */
static int check_workload(const struct run_opts *o, uint64_t size, size_t page_size)
{
	const struct cb_workload *w = cb_workload_find(o->workload);
	struct cb_run_spec spec = {
		.workload = w, .size = size, .page_size = page_size, .params = o->params,
	};
	char why[160];

	if (!w->run)
		return 0;
	if (cb_wl_params_check(&o->params, size, page_size, why, sizeof(why)) < 0 ||
	    (w->check && w->check(&spec, why, sizeof(why)) < 0)) {
		cli_error("%s", why);
		return -1;
	}
	return 0;
}

/* Open (and lock) the output only after every check passed, so bad input leaves no file behind. */
static FILE *open_output(const struct run_opts *o)
{
	bool created;
	int fd;
	FILE *fp;

	if (!o->output)
		return stdout;
	fd = cli_output_open_locked(o->output, false, o->force, NULL, &created);
	if (fd < 0)
		return NULL;
	fp = fdopen(fd, "w");
	if (!fp) {
		cli_error("cannot write %s: %s", o->output, strerror(errno));
		cli_output_discard(o->output, fd, created);
	}
	return fp;
}

/* Test aid (documented in README): COWBENCH_INJECT=child-kill@REP kills the child of that rep. */
static int injected_signal(long rep)
{
	const char *v = getenv("COWBENCH_INJECT");
	long at;

	if (!v || strncmp(v, "child-kill@", 11) != 0 || !cli_parse_long(v + 11, 1, 1000000, &at))
		return 0;
	return at == rep ? SIGKILL : 0;
}

static int run_reps(const struct run_opts *o, struct cb_run_spec *spec, struct cb_report *rep,
		    struct cli_explain *ex)
{
	int failed = 0;

	for (long i = 1 - o->warmup; i <= o->reps; i++) {
		struct cb_row row;
		int err;

		spec->inject_child_signal = i >= 1 ? injected_signal(i) : 0;
		err = cb_run_rep(spec, (int)(i >= 1 ? i : 0), &row);
		if (i < 1)
			continue; /* warm-up: measured, not recorded */
		if (err)
			failed = 1;
		cli_explain_add(ex, &row);
		if (cb_report_row(rep, &row) < 0) {
			cli_error("cannot write results: %s", strerror(errno));
			return EXIT_RUN_FAILED;
		}
	}
	return failed ? EXIT_RUN_FAILED : 0;
}

static const struct run_opts run_defaults = {
	.workload = "seq", .size_text = "64M", .reps = 5, .warmup = 1, .cpu = -1,
	.writer = CB_WRITER_CHILD, .seed = 1, .clock = CB_CLOCK_AUTO, .format = CB_FORMAT_CSV,
	.precopy = -1, .precopy_depth = -1,
	/* The seed's snapshot (cb_wl_params_default); the enums' zero values are the defaults. */
	.params = { .threads = 28, .checkpointers = 4, .batch = 2u << 20, .children = 2 },
};

/*
 * snapshot without --size runs the seed's 1 GiB array when the array, its
 * checkpoint and the COW copies fit in MemAvailable, else the usual default.
 */
static const char *default_size(const struct run_opts *o)
{
	uint64_t avail;

	if (o->size_text != run_defaults.size_text || strcmp(o->workload, "snapshot") != 0)
		return o->size_text;
	if (cb_mem_available(&avail) == 0 && avail >= (3ull << 30) + (512ull << 20))
		return "1G";
	cli_note("snapshot: MemAvailable is below 3.5 GiB, so --size defaults to %s, not the seed's 1G",
		 o->size_text);
	return o->size_text;
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
	uint64_t size;

	struct run_opts sized = *o;

	sized.size_text = default_size(o);
	if (resolve_size(&sized, page_size, &size) < 0 || check_workload(o, size, page_size) < 0)
		return -1;
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
	*spec = (struct cb_run_spec){
		.workload = cb_workload_find(o->workload), .size = size, .page_size = page_size,
		.writer = o->writer, .fork = !o->no_fork, .thp = o->thp, .cpu = (int)o->cpu,
		.seed = o->seed, .clock = clk, .params = o->params, .probes = o->probes,
	};
	return 0;
}

static bool probe_on(unsigned probes, enum cb_probe p)
{
	return ((probes ? probes : CB_PROBES_DEFAULT) & (1u << p)) != 0;
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

int cmd_run(int argc, char **argv)
{
	struct run_opts o = run_defaults;
	struct cb_clock clocks[CLI_NCLOCKS];
	struct cb_run_spec spec;
	struct cb_report report;
	struct cli_explain *ex = NULL;
	FILE *out;
	int argi = cli_parse_options(argc, argv, run_options, N_RUN_OPTIONS, &o, run_usage), status;

	memset(clocks, 0, sizeof(clocks));
	if (argi < 0)
		return EXIT_USAGE;
	if (argi < argc) {
		cli_error("unexpected argument '%s' (see cowbench run --help)", argv[argi]);
		return EXIT_USAGE;
	}
	if (make_spec(&o, clocks, &spec) < 0 || apply_sysctls(&o) < 0)
		return EXIT_USAGE;
	out = open_output(&o);
	if (!out)
		return EXIT_USAGE;
	/*
	 * Delay accounting on for the run (the fork-and-touch workloads read it; it costs the
	 * others' faults a little for nothing); a parent writer must be a process born after that.
	 */
	if (spec.workload->page_order && probe_on(o.probes, CB_PROBE_TASKSTATS) && cli_evidence_prepare() == 1 &&
	    o.writer == CB_WRITER_PARENT && (status = cli_fork_tied()) >= 0)
		return status;
	if (o.explain && !(ex = cli_explain_new())) {
		cli_error("out of memory");
		return EXIT_INTERNAL;
	}

	cb_report_init(&report, out, o.format, o.output != NULL);
	status = run_reps(&o, &spec, &report, ex);
	if (cb_report_finish(&report) < 0 && status == 0) {
		cli_error("cannot write results: %s", strerror(errno));
		status = EXIT_RUN_FAILED;
	}
	if (out != stdout && fclose(out) != 0 && status == 0) {
		cli_error("cannot write %s: %s", o.output, strerror(errno));
		status = EXIT_RUN_FAILED;
	}
	cli_explain_print(ex, stderr);
	cli_explain_free(ex);
	return status;
}

/* cowbench matrix drives the same options, one NAME=VALUE at a time (cli.h). */
const struct cli_option *cli_run_options(int *n)
{
	*n = N_RUN_OPTIONS;
	return run_options;
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
