#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cowbench/cowbench.h>
#include <cowbench/matrix.h>
#include <cowbench/order.h>
#include <cowbench/results.h>

#include "cli.h"
#include "matrix_kernel.h"
#include "run/run_spec.h"

/*
 * cowbench matrix: enumerate every cell first, then run them one rep at a
 * time, appending (and fsyncing) each finished rep so a crash costs at
 * most the rep in flight. An axis is any `cowbench run` option: each cell
 * is a list of NAME=VALUE pairs applied through run's own option table.
 */

struct matrix_opts {
	struct cb_matrix m;
	const char *file;
	long reps, warmup;          /* -1: from the file, else the default */
	bool shuffle, dry_run, any_axis, quiet;
	uint64_t shuffle_seed;
	bool seed_given;
	unsigned shard_i, shard_n;
	const char *resume, *output;
	enum cb_format format;
	bool force;
	int out_fd;       /* the results file, opened and locked before it is read or written; -1: none */
	bool out_created; /* this run created it: removed again if nothing gets measured */
	const char *plan;           /* in a guest: run these (rep, cell) pairs in order (matrix_kernel.h) */
	struct mk_plan plan_lines;
	struct mk_collapsed collapsed;
	struct cli_reps_opts adaptive; /* --target-ci, --max-reps, --max-time */
	long cap;                      /* the most reps a cell can run: --reps, or --max-reps when adaptive */
	enum cb_order_mode order;      /* --order (cowbench/order.h) */
	bool order_given, order_seeded;
	uint64_t order_seed;
	const char *baseline;          /* --baseline NAME=VALUE (with --target-ci) */
	char base_name[64], base_value[64];
	const char *baseline_metric;   /* --baseline-metric; NULL: each cell's headline */
	enum cb_center ratio_center;   /* --ratio-center: mean (the default) or trimmed */
	bool ratio_center_given;
};

/* Matrix-level options; everything else named --NAME is an axis. */
enum { M_REPS, M_TARGET_CI, M_BASELINE, M_BASELINE_METRIC, M_RATIO_CENTER, M_MAX_REPS, M_MAX_TIME, M_WARMUP, M_ORDER, M_SHUFFLE, M_SHARD, M_RESUME, M_OUTPUT, M_FORCE,
       M_FORMAT, M_DRY_RUN, M_QUIET, M_PLAN, M_HELP, M_N };

static const struct {
	const char *name, *metavar, *help;
	bool optional;
} matrix_options[M_N] = {
	[M_REPS] = { "reps", "N", "measured repetitions per cell; default 5", false },
	[M_TARGET_CI] = { "target-ci", "PCT", "adaptive reps: each cell runs until the 95 % interval of its headline "
			  "metric's mean is within +-PCT % (--reps: the least)", false },
	[M_BASELINE] = { "baseline", "NAME=VALUE", "with --target-ci: each cell also runs until the 95 % interval of its "
			 "ratio to the cell of its comparison set with NAME=VALUE (paired by round) is within +-PCT %",
			 false },
	[M_BASELINE_METRIC] = { "baseline-metric", "COLUMN", "the column of that ratio; default: the cell's headline",
				false },
	[M_RATIO_CENTER] = { "ratio-center", "mean|trimmed", "that ratio divides means (the default) or 10 % trimmed "
			     "means, which a rep the host stalled does not move", false },
	[M_MAX_REPS] = { "max-reps", "N", "with --target-ci: a cell stops at N reps all the same; default 50", false },
	[M_MAX_TIME] = { "max-time", "DURATION", "with --target-ci: a cell stops once its reps took this long (30s)",
			 false },
	[M_WARMUP] = { "warmup", "N", "unrecorded repetitions before each cell's first; default 1", false },
	[M_ORDER] = { "order", "interleaved|sequential|shuffle[:SEED]",
		      "reps of cells that differ only in the compared axes (" CB_ORDER_AXES ") run round by round "
		      "in rotating order (interleaved, the default), in a seeded random order each round (shuffle), "
		      "or each cell's back to back (sequential)", false },
	[M_SHUFFLE] = { "shuffle", "SEED", "run the cells in a seeded random order (no SEED: from the clock, printed)",
			true },
	[M_SHARD] = { "shard", "I/N", "run only shard I of N (1 <= I <= N): a deterministic partition", false },
	[M_RESUME] = { "resume", "FILE", "append to FILE (CSV), skipping the reps already in it", false },
	[M_OUTPUT] = { "output", "FILE", "write rows to FILE (a new file) instead of standard output", false },
	[M_FORCE] = { "force", NULL, "replace an existing non-empty --output FILE", false },
	[M_FORMAT] = { "format", "csv|json|table", "row format; default a table on a terminal, csv when piped or with --output (json: JSON Lines)", false },
	[M_DRY_RUN] = { "dry-run", NULL, "print the cells and exit without measuring", false },
	[M_QUIET] = { "quiet", NULL, "no progress line on a terminal", false },
	[M_PLAN] = { "plan", "FILE", "(inside a --kernel guest) run FILE's 'REP CELL' lines in order", false },
	[M_HELP] = { "help", NULL, "show this help", false },
};

/* Axis names people reach for, mapped to run's option names. */
static const struct { const char *alias, *name; } axis_aliases[] = {
	{ "workloads", "workload" }, { "sizes", "size" }, { "writers", "writer" },
	{ "clocks", "clock" },
};

/* Options of run that are the matrix's business (its table marks them), never axes. */
static bool not_an_axis(const char *name)
{
	const struct cli_option *o = cli_run_option_find(name);

	return o && o->not_axis;
}

/* Canonical axis order: run's option table order ("fork" where "no-fork" is). */
static int axis_rank(const char *name)
{
	int n;
	const struct cli_option *t = cli_run_options(&n);

	if (mk_is_axis(name))
		return -1; /* cells read "kernel=patched workload=..." */
	if (strcmp(name, "fork") == 0)
		name = "no-fork";
	for (int i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0)
			return i;
	return n;
}

static void matrix_usage(void)
{
	int n;
	const struct cli_option *t = cli_run_options(&n);

	printf("usage: cowbench matrix [OPTIONS] [--AXIS=V1,V2,...]... [MATRIX-FILE] [OPTIONS]\n\n"
	       "Enumerate every cell of a matrix, then measure each one rep at a time, appending\n"
	       "and fsyncing every finished rep (one row each). With no axes and no file: the\n"
	       "default matrix (90 rows; measured 28 s on a 2-vCPU VM): [cow] workload=seq,random,single\n"
	       "size=16M,64M fork=1,0 precopy=0,1,2");
	for (size_t w = 0; w < cb_workload_count(); w++)
		if (cb_workload_at(w)->matrix)
			printf(";\n[%s] workload=%s %s", cb_workload_at(w)->name, cb_workload_at(w)->name,
			       cb_workload_at(w)->matrix);
	printf(" (precopy only where vm.cow_precopy exists).\n\n");
	for (int i = 0; i < M_N; i++) {
		char left[64], letter = cli_short_letter(matrix_options[i].name), prefix[8] = "";

		if (letter)
			snprintf(prefix, sizeof(prefix), "-%c, ", letter);
		snprintf(left, sizeof(left), "%s--%s%s%s%s", prefix, matrix_options[i].name,
			 matrix_options[i].metavar ? (matrix_options[i].optional ? "[=" : "=") : "",
			 matrix_options[i].metavar ? matrix_options[i].metavar : "", matrix_options[i].optional ? "]" : "");
		printf("  %-24s %s\n", left, matrix_options[i].help);
	}
	printf("\naxes (every option of cowbench run, values separated by commas):\n");
	printf("  %-24s %s\n", "--fork=1,0", "fork (1) or the --no-fork baseline (0)");
	printf("  %-24s %s\n", "--kernel=host,stock,patched",
	       "where cells run: here (host), or once-booted QEMU guests of kernel/build.sh's 6.12 (or a bzImage)");
	for (int i = 0; i < n; i++) {
		char left[64];

		if (not_an_axis(t[i].name) || strcmp(t[i].name, "no-fork") == 0)
			continue;
		snprintf(left, sizeof(left), "--%s=%s", t[i].name, t[i].metavar ? "V1,V2" : "1,0");
		printf("  %-24s %s\n", left, t[i].help);
	}
	printf("\naliases: --workloads, --sizes, --writers, --clocks; -w and -s are --workload and --size.\n"
	       "Options may also follow the matrix file. A matrix file is INI:\n"
	       "[matrix] holds reps, warmup, shuffle, order; every other [section] is a group whose\n"
	       "lines are axes (size = 16M, 64M); the cells are the union of the groups'\n"
	       "cross products. Axes given as options apply to every group of the file.\n");
}

static bool parse_count(const char *name, const char *v, long min, long *out)
{
	if (!cli_parse_long(v, min, 1000000, out)) {
		cli_error("--%s must be an integer from %ld to 1000000, not '%s'", name, min, v);
		return false;
	}
	return true;
}

static bool parse_baseline(struct matrix_opts *o, const char *v)
{
	const char *eq = strchr(v, '=');

	if (!eq || eq == v || !eq[1] || (size_t)(eq - v) >= sizeof(o->base_name) ||
	    strlen(eq + 1) >= sizeof(o->base_value) || strchr(eq + 1, ' ') || strchr(eq + 1, ',')) {
		cli_error("--baseline must be NAME=VALUE (e.g. fork=0 or precopy=0), not '%s'", v);
		return false;
	}
	snprintf(o->base_name, sizeof(o->base_name), "%.*s", (int)(eq - v), v);
	snprintf(o->base_value, sizeof(o->base_value), "%s", eq + 1);
	if (!cb_order_compared_axis(o->base_name)) {
		cli_error("--baseline pairs the reps of one round: NAME must be a compared axis (%s), not '%s'",
			  CB_ORDER_AXES, o->base_name);
		return false;
	}
	o->baseline = v;
	return true;
}

static bool set_matrix_option(struct matrix_opts *o, int which, const char *v)
{
	switch (which) {
	case M_REPS:
		return parse_count("reps", v, 1, &o->reps);
	case M_TARGET_CI:
		return cli_parse_target_ci(v, &o->adaptive.target);
	case M_BASELINE:
		return parse_baseline(o, v);
	case M_BASELINE_METRIC:
		if (!cli_numeric_column("--baseline-metric", v))
			return false;
		o->baseline_metric = v;
		return true;
	case M_RATIO_CENTER:
		o->ratio_center_given = true;
		return cli_parse_ratio_center(v, &o->ratio_center);
	case M_MAX_REPS:
		return parse_count("max-reps", v, 1, &o->adaptive.max_reps);
	case M_MAX_TIME:
		return cli_parse_max_time(v, &o->adaptive.max_ns);
	case M_WARMUP:
		return parse_count("warmup", v, 0, &o->warmup);
	case M_ORDER:
		if (cb_order_parse(v, &o->order, &o->order_seed, &o->order_seeded) < 0) {
			cli_error("--order must be interleaved, sequential, shuffle or shuffle:SEED, not '%s'", v);
			return false;
		}
		o->order_given = true;
		return true;
	case M_SHUFFLE:
		o->shuffle = true;
		if (v && !cli_parse_u64(v, &o->shuffle_seed)) {
			cli_error("--shuffle=SEED needs a non-negative integer, not '%s'", v);
			return false;
		}
		o->seed_given = v != NULL;
		return true;
	case M_SHARD:
		if (cb_shard_parse(v, &o->shard_i, &o->shard_n) < 0) {
			cli_error("--shard must be I/N with 1 <= I <= N (e.g. 2/8), not '%s'", v);
			return false;
		}
		return true;
	case M_RESUME:
	case M_OUTPUT:
		if (!*v) {
			cli_error("--%s needs a file name", matrix_options[which].name);
			return false;
		}
		*(which == M_RESUME ? &o->resume : &o->output) = v;
		return true;
	case M_FORMAT:
		if (cb_format_parse(v, &o->format) < 0) {
			cli_error("--format must be csv, json or table, not '%s'", v);
			return false;
		}
		return true;
	case M_DRY_RUN:
		o->dry_run = true;
		return true;
	case M_QUIET:
		o->quiet = true;
		return true;
	case M_FORCE:
		o->force = true;
		return true;
	case M_PLAN:
		o->plan = v;
		return true;
	default:
		matrix_usage();
		exit(0);
	}
}

/* Flags of run become 1/0 axes; "--no-fork" alone is fork=0. */
static bool add_axis(struct matrix_opts *o, const char *name, const char *values)
{
	char why[256];
	int err;

	o->any_axis = true;
	if (!values && strcmp(name, "no-fork") == 0)
		name = "fork", values = "0";
	if (!values)
		values = "1";
	err = cb_matrix_set_axis(&o->m, "", name, values, why, sizeof(why));
	if (err == -ENOMEM)
		cli_error("out of memory");
	else if (err)
		cli_error("%s", why);
	return err == 0;
}

static int find_matrix_option(const char *name)
{
	for (int i = 0; i < M_N; i++)
		if (strcmp(matrix_options[i].name, name) == 0)
			return i;
	return -1;
}

/*
 * The command line goes through the one parser (cli_parse_options) with a
 * table built here: the matrix's own options, then every option of run
 * that can be an axis (values separated by commas), fork, the kernel axis
 * and the aliases. Options of run that are the matrix's business get an
 * entry that says so instead of "unknown option".
 */
#define MAX_MATRIX_TABLE 256

static bool opt_matrix(void *o, const char *v)
{
	return set_matrix_option(o, find_matrix_option(cli_option_name()), v);
}

static bool opt_axis(void *o, const char *v)
{
	return add_axis(o, cli_option_name(), v);
}

static bool opt_not_an_axis(void *o, const char *v)
{
	(void)o;
	(void)v;
	cli_error("--%s is an option of cowbench run, not a matrix axis (see cowbench matrix --help)",
		  cli_option_name());
	return false;
}

static void table_add(struct cli_option *t, int *n, struct cli_option e)
{
	if (*n == MAX_MATRIX_TABLE) {
		fprintf(stderr, "cowbench: internal error: more than %d matrix options\n", MAX_MATRIX_TABLE);
		exit(EXIT_INTERNAL);
	}
	t[(*n)++] = e;
}

/* An axis entry: a value list, or for a flag of run an optional one ("--hugetlb" alone is 1). */
static struct cli_option axis_entry(const char *name, bool takes_value)
{
	return (struct cli_option){ .name = name, .metavar = takes_value ? "V1,V2" : "[1|0]", .parse = opt_axis };
}

static int matrix_table(struct cli_option *t)
{
	int n = 0, nrun;
	const struct cli_option *run = cli_run_options(&nrun);

	for (int i = 0; i < M_N; i++)
		if (i != M_HELP)
			table_add(t, &n, (struct cli_option){ .name = matrix_options[i].name,
							      .metavar = !matrix_options[i].metavar ? NULL
									 : matrix_options[i].optional ? "[SEED]"
									 : matrix_options[i].metavar,
							      .parse = opt_matrix });
	for (int i = 0; i < nrun; i++) {
		if (find_matrix_option(run[i].name) >= 0)
			continue;
		if (not_an_axis(run[i].name))
			table_add(t, &n, (struct cli_option){ .name = run[i].name, .metavar = "[V]",
							      .parse = opt_not_an_axis, .hidden = true });
		else
			table_add(t, &n, axis_entry(run[i].name, run[i].metavar && !CLI_OPTIONAL_VALUE(&run[i])));
	}
	table_add(t, &n, axis_entry("fork", true));
	table_add(t, &n, axis_entry(MK_AXIS, true));
	for (size_t k = 0; k < sizeof(axis_aliases) / sizeof(axis_aliases[0]); k++)
		table_add(t, &n, axis_entry(axis_aliases[k].alias, true));
	return n;
}

/*
 * "--shuffle 5" (documented before the parser was getopt's) takes 5 as its
 * seed: joined into "--shuffle=5" here, as an optional value has no
 * separate form in getopt_long.
 */
static void join_shuffle_seed(int *argc, char **argv)
{
	static char joined[64];

	for (int i = 1; i + 1 < *argc && strcmp(argv[i], "--") != 0; i++) {
		const char *seed = argv[i + 1];

		if (strcmp(argv[i], "--shuffle") != 0 || !*seed || strspn(seed, "0123456789") != strlen(seed) ||
		    strlen(seed) > 40)
			continue;
		snprintf(joined, sizeof(joined), "--shuffle=%s", seed);
		argv[i] = joined;
		memmove(argv + i + 1, argv + i + 2, (size_t)(*argc - i - 1) * sizeof(*argv)); /* with the NULL */
		(*argc)--;
		return;
	}
}

/* Options and the matrix file in any order ("matrix FILE --shard=1/8 --output part-1.csv"). */
static int parse_args(int argc, char **argv, struct matrix_opts *o)
{
	static struct cli_option table[MAX_MATRIX_TABLE];
	int n = matrix_table(table), argi;

	join_shuffle_seed(&argc, argv);
	argi = cli_parse_options(argc, argv, table, n, o, matrix_usage);

	if (argi < 0)
		return -1;
	if (argc - argi > 1) {
		cli_error("unexpected argument '%s' (one matrix file at most)", argv[argi + 1]);
		return -1;
	}
	o->file = argi < argc ? argv[argi] : NULL;
	return argc;
}

static int rename_aliases(struct cb_matrix *m)
{
	char why[256];

	for (size_t k = 0; k < sizeof(axis_aliases) / sizeof(axis_aliases[0]); k++) {
		int err = cb_matrix_rename_axis(m, axis_aliases[k].alias, axis_aliases[k].name, why, sizeof(why));

		if (err) {
			cli_error("%s", err == -ENOMEM ? "out of memory" : why);
			return -1;
		}
	}
	return 0;
}

/* Aliases, names, collapsed axes, canonical order: a matrix every cell of which is a run. */
static int resolve_axes(struct matrix_opts *o)
{
	if (rename_aliases(&o->m) < 0)
		return -1;
	for (size_t g = 0; g < o->m.ngroups; g++) {
		for (size_t a = 0; a < o->m.groups[g].naxes; a++) {
			const char *name = o->m.groups[g].axes[a].name;

			if (strcmp(name, "fork") != 0 && !mk_is_axis(name) && (!cli_run_option_find(name) || not_an_axis(name))) {
				cli_error("matrix axis '%s'%s%s%s is not an option of cowbench run (see cowbench matrix --help)",
					  name, *o->m.groups[g].name ? " in [" : "", o->m.groups[g].name,
					  *o->m.groups[g].name ? "]" : "");
				return -1;
			}
		}
	}
	/* A plan's keys are the host's: their order is already canonical, and kept. */
	if (!o->plan)
		cb_matrix_sort_axes(&o->m, axis_rank);
	return 0;
}

/* A workload's own group of the default matrix, from its .matrix axes ("size=64M snapshot=fork,memcpy"). */
static int set_workload_group(struct matrix_opts *o, const struct cb_workload *w, char *why, size_t len)
{
	char axes[256];
	char *save = NULL;
	int err = cb_matrix_set_axis(&o->m, w->name, "workload", w->name, why, len);

	snprintf(axes, sizeof(axes), "%s", w->matrix);
	for (char *pair = strtok_r(axes, " ", &save); pair && !err; pair = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(pair, '=');

		if (!eq) {
			snprintf(why, len, "workload %s: matrix axis '%s' has no '='", w->name, pair);
			return CB_EFORMAT;
		}
		*eq = '\0';
		err = cb_matrix_set_axis(&o->m, w->name, pair, eq + 1, why, len);
	}
	return err;
}

static int set_default_matrix(struct matrix_opts *o)
{
	char why[256];
	int err;

	/* COW cost, then each workload's own group (fork latency, snapshot methods): 28 s here. */
	err = cb_matrix_set_axis(&o->m, "cow", "workload", "seq,random,single", why, sizeof(why));
	if (!err)
		err = cb_matrix_set_axis(&o->m, "cow", "size", "16M,64M", why, sizeof(why));
	if (!err)
		err = cb_matrix_set_axis(&o->m, "cow", "fork", "1,0", why, sizeof(why));
	if (!err)
		err = cb_matrix_set_axis(&o->m, "cow", "precopy", "0,1,2", why, sizeof(why));
	for (size_t w = 0; !err && w < cb_workload_count(); w++)
		if (cb_workload_at(w)->matrix)
			err = set_workload_group(o, cb_workload_at(w), why, sizeof(why));
	if (err) {
		cli_error("%s", err == -ENOMEM ? "out of memory" : why);
		return -1;
	}
	return 0;
}

/* An axis's values joined by commas again (any length: a long axis is never cut). */
static char *join_values(const struct cb_axis *ax)
{
	size_t len = 1, off = 0;
	char *out;

	for (size_t v = 0; v < ax->nvalues; v++)
		len += strlen(ax->values[v]) + 1;
	out = malloc(len);
	if (!out)
		return NULL;
	out[0] = '\0';
	for (size_t v = 0; v < ax->nvalues; v++)
		off += (size_t)snprintf(out + off, len - off, "%s%s", v ? "," : "", ax->values[v]);
	return out;
}

/* A file's groups get every axis given as an option (it overrides the file's). */
static int load_file(struct matrix_opts *o)
{
	struct cb_matrix file;
	char why[256];
	int err;

	cb_matrix_init(&file);
	err = cb_matrix_load(&file, o->file, why, sizeof(why));
	if (!err && (rename_aliases(&file) < 0 || rename_aliases(&o->m) < 0)) {
		cb_matrix_free(&file);
		return -1;
	}
	if (err) {
		cli_error("%s", why);
		cb_matrix_free(&file);
		return -1;
	}
	for (size_t g = 0; g < o->m.ngroups; g++) {
		for (size_t a = 0; a < o->m.groups[g].naxes; a++) {
			struct cb_axis *ax = &o->m.groups[g].axes[a];
			char *values = join_values(ax);

			if (!values) {
				cli_error("out of memory");
				cb_matrix_free(&file);
				return -1;
			}
			for (size_t fg = 0; fg < file.ngroups; fg++)
				if (cb_matrix_set_axis(&file, file.groups[fg].name, ax->name, values, why, sizeof(why))) {
					cli_error("--%s: %s", ax->name, why);
					cb_matrix_free(&file);
					free(values);
					return -1;
				}
			free(values);
		}
	}
	if (o->reps < 0)
		o->reps = file.reps;
	if (o->warmup < 0)
		o->warmup = file.warmup;
	if (!o->order_given && file.order >= 0) {
		o->order = (enum cb_order_mode)file.order;
		o->order_seeded = file.order_seeded;
		o->order_seed = file.order_seed;
	}
	if (!o->shuffle && file.shuffle) {
		o->shuffle = o->seed_given = true;
		o->shuffle_seed = file.shuffle_seed;
	}
	cb_matrix_free(&o->m);
	o->m = file;
	return 0;
}

/* ---- the plan: cells, their options, and what a resumed file already holds ---- */

struct plan {
	struct cb_cells cells;
	struct run_opts **opts;     /* per cell */
	struct cb_run_spec *spec;   /* per cell */
	unsigned char *done;        /* per cell x rep (cap of them): the rep is already in the resumed file */
	struct cli_reps *reps;      /* per cell: its reps so far and the rule that stops them */
	unsigned char *stopped;     /* per cell: the resumed file holds the row that stopped it */
	bool *ev_done;              /* per cell x evidence rep (CLI_EVIDENCE_REPS): the same */
	struct run_spec_ctx ctx;        /* what making the cells' specs reads once */
	size_t todo_reps;           /* measured reps still to run */
	size_t resumed;             /* reps the resumed file already held */
	int64_t last_round;         /* the highest round id the resumed file holds (0: none) */
	size_t *partner;            /* per cell: its --baseline cell (SIZE_MAX: none, or it is one) */
};

static void free_plan(struct plan *p)
{
	for (size_t i = 0; p->opts && i < p->cells.n; i++)
		cli_run_opts_free(p->opts[i]);
	free(p->opts);
	free(p->spec);
	free(p->done);
	for (size_t i = 0; p->reps && i < p->cells.n; i++)
		cli_reps_end(&p->reps[i]);
	free(p->reps);
	free(p->stopped);
	free(p->ev_done);
	free(p->partner);
	cb_cells_free(&p->cells);
}

/* Apply a cell's pairs as run options and check them; -1 after printing why. */
static int cell_options(const struct cb_cell *c, struct run_opts *ro)
{
	for (size_t i = 0; i < c->npairs; i++) {
		const char *name = c->names[i], *v = c->values[i];
		bool on = !strcmp(v, "1") || !strcmp(v, "on") || !strcmp(v, "yes") || !strcmp(v, "true");
		bool off = !strcmp(v, "0") || !strcmp(v, "off") || !strcmp(v, "no") || !strcmp(v, "false");
		const struct cli_option *opt;

		if (mk_is_axis(name))
			continue; /* where the cell runs, not how */
		if (strcmp(name, "fork") == 0) {
			if (!on && !off) {
				cli_error("axis fork takes 1 or 0, not '%s'", v);
				return -1;
			}
			opt = cli_run_option_find("no-fork");
			if (off && !cli_option_apply(opt, ro, NULL))
				return -1;
			continue;
		}
		opt = cli_run_option_find(name);
		if (!opt->metavar) {
			if (!on && !off) {
				cli_error("axis %s is a flag: its values are 1 and 0, not '%s'", name, v);
				return -1;
			}
			if (on && !cli_option_apply(opt, ro, NULL))
				return -1;
			continue;
		}
		if (!cli_option_apply(opt, ro, v))
			return -1;
	}
	return 0;
}

/* A shard takes whole comparison sets when they interleave (their rounds pair reps), else cells. */
static int shard_cells(const struct matrix_opts *o, struct cb_cells *cells)
{
	size_t *set_of;

	if (o->order == CB_ORDER_SEQUENTIAL) {
		cb_cells_shard(cells, o->shard_i, o->shard_n);
		return 0;
	}
	set_of = calloc(cells->n + 1, sizeof(*set_of));
	if (!set_of || cb_order_sets(cells, NULL, set_of) < 0) {
		free(set_of);
		cli_error("out of memory");
		return -1;
	}
	cb_cells_shard_by(cells, set_of, o->shard_i, o->shard_n);
	free(set_of);
	return 0;
}

static int build_plan(struct matrix_opts *o, struct plan *p)
{
	char why[256];
	int err = cli_canonical_axes(&o->m);

	if (err == 0)
		err = cb_matrix_cells(&o->m, &p->cells, why, sizeof(why));
	if (err) {
		cli_error("%s", err == -ENOMEM ? "out of memory" : why);
		return -1;
	}
	/* Pre-copy exists only on a kernel with the patch: elsewhere its axes collapse (rows leave precopy empty). */
	if (!o->plan) {
		mk_collapse(&p->cells, &o->collapsed);
		for (size_t i = 0; i < o->collapsed.n; i++)
			cli_note("%s", o->collapsed.line[i]);
		if (mk_check_values(&p->cells) < 0)
			return -1;
	}
	if (o->shard_n && shard_cells(o, &p->cells) < 0)
		return -1;
	if (o->shuffle)
		cb_cells_shuffle(&p->cells, o->shuffle_seed);
	p->opts = calloc(p->cells.n ? p->cells.n : 1, sizeof(*p->opts));
	p->spec = calloc(p->cells.n ? p->cells.n : 1, sizeof(*p->spec));
	p->done = calloc(p->cells.n * (size_t)o->cap + 1, 1);
	p->reps = calloc(p->cells.n ? p->cells.n : 1, sizeof(*p->reps));
	p->stopped = calloc(p->cells.n + 1, 1);
	p->ev_done = calloc(p->cells.n * CLI_EVIDENCE_REPS + 1, sizeof(*p->ev_done));
	if (!p->opts || !p->spec || !p->done || !p->reps || !p->stopped || !p->ev_done) {
		cli_error("out of memory");
		return -1;
	}
	/* Every cell is checked before anything runs: bad input measures nothing. */
	for (size_t i = 0; i < p->cells.n; i++) {
		p->opts[i] = cli_run_opts_new();
		if (!p->opts[i]) {
			cli_error("out of memory");
			return -1;
		}
		if (cell_options(&p->cells.cell[i], p->opts[i]) < 0 ||
		    cli_run_make_spec(&p->ctx, p->opts[i], &p->spec[i]) < 0)
			return -1; /* the option's own message names the value */
		if (cli_reps_begin(&p->reps[i], &o->adaptive, o->reps, p->spec[i].workload) < 0) {
			cli_error("out of memory");
			return -1;
		}
	}
	return 0;
}

/*
 * --resume: read FILE, cut off a row a crash left half-written, and mark
 * the reps it holds as done. A missing file is a fresh start.
 */
static int load_resume(const struct matrix_opts *o, struct plan *p)
{
	struct cb_results res;
	char why[512];
	size_t seen = 0, foreign = 0, rerun = 0, total = p->cells.n * (size_t)o->cap; /* adaptive: at most */
	int err;

	if (access(o->resume, F_OK) != 0 || (o->out_created && !o->dry_run))
		return 0;
	err = cb_results_read(o->resume, &res, why, sizeof(why));
	if (err) {
		cli_error("%s", why);
		return -1;
	}
	if (!res.empty && !res.same_columns) {
		cli_error("%s has other columns than this cowbench writes: resume it with the cowbench that began it",
			  o->resume);
		cb_results_free(&res);
		return -1;
	}
	if (res.torn && !o->dry_run) {
		if (ftruncate(o->out_fd, res.torn_offset) < 0) {
			cli_error("cannot drop the half-written last row of %s: %s", o->resume, strerror(errno));
			cb_results_free(&res);
			return -1;
		}
		cli_note("dropped the half-written last row of %s (a run cut short)", o->resume);
	}
	for (size_t r = 0; r < res.n; r++) {
		long c;
		bool ev = cb_row_is_evidence(&res.rows[r]);

		cli_canonical_cell(res.rows[r].cell, sizeof(res.rows[r].cell)); /* a file of -s 4096K resumes -s 4M */
		c = cb_cells_find(&p->cells, res.rows[r].cell);

		/* Timed and evidence reps are numbered apart: each kind from 1. */
		if (c < 0 || res.rows[r].rep < 1 || res.rows[r].rep > (ev ? CLI_EVIDENCE_REPS : o->cap) ||
		    (ev && !cb_run_wants_evidence(&p->spec[c]))) {
			foreign++;
			continue;
		}
		if (cb_row_guest_failed(&res.rows[r])) {
			rerun++; /* the guest never ran it: its row stays as the record, the rep runs again */
			continue;
		}
		if (ev) {
			p->ev_done[(size_t)c * CLI_EVIDENCE_REPS + (size_t)(res.rows[r].rep - 1)] = true;
		} else {
			p->done[(size_t)c * (size_t)o->cap + (size_t)(res.rows[r].rep - 1)] = 1;
			/* Reps already there count toward the cell's interval; a row that stopped it ends it. */
			cli_reps_count(&p->reps[c], &res.rows[r]);
			p->stopped[c] |= res.rows[r].stop[0] != '\0';
			if (res.rows[r].round != CB_NA && res.rows[r].round > p->last_round && !mk_cell_in_guest(&p->cells.cell[c]))
				p->last_round = res.rows[r].round; /* the next rounds number on from here */
		}
		seen++;
	}
	if (foreign)
		cli_note("%s: %zu rows belong to no cell of this matrix (or shard); kept as they are", o->resume, foreign);
	if (rerun)
		cli_note("%s: %zu rows record reps a guest never ran (error:guest:*): kept, and those reps run again",
			 o->resume, rerun);
	p->resumed = seen;
	for (size_t c = 0; c < p->cells.n; c++)
		total += cb_run_wants_evidence(&p->spec[c]) ? CLI_EVIDENCE_REPS : 0;
	cli_note("--resume %s: %zu of %zu reps already there, skipped; %zu to run", o->resume, seen, total,
		 total > seen ? total - seen : 0);
	cb_results_free(&res);
	return 0;
}

/* Reps cell c may still run (adaptive: at most this many). */
static size_t cell_todo(const struct plan *p, size_t c, long reps)
{
	size_t n = 0;

	if (p->stopped[c])
		return 0;
	for (long r = 0; r < reps; r++)
		n += !p->done[c * (size_t)reps + (size_t)r];
	return n;
}

/* Evidence reps the cell still needs (none when its probes can add nothing inside the fault path). */
static size_t cell_evidence_todo(const struct plan *p, size_t c)
{
	size_t n = 0;

	if (!cb_run_wants_evidence(&p->spec[c]))
		return 0;
	for (size_t r = 0; r < CLI_EVIDENCE_REPS; r++)
		n += !p->ev_done[c * CLI_EVIDENCE_REPS + r];
	return n;
}

/* The comparison sets of the cells that run on the host (guest cells: CB_ORDER_NO_SET); -ENOMEM. */
static long host_sets(const struct plan *p, size_t *set_of)
{
	bool *host = calloc(p->cells.n + 1, sizeof(*host));
	long sets;

	if (!host)
		return -ENOMEM;
	for (size_t c = 0; c < p->cells.n; c++)
		host[c] = !mk_cell_in_guest(&p->cells.cell[c]);
	sets = cb_order_sets(&p->cells, host, set_of);
	free(host);
	return sets;
}

/* The host's comparison sets that --order interleaves. */
static void print_host_sets(const struct matrix_opts *o, const struct plan *p)
{
	size_t *set_of = calloc(p->cells.n + 1, sizeof(*set_of));
	long sets = set_of ? host_sets(p, set_of) : -ENOMEM;

	if (sets > 0)
		mk_print_sets(&p->cells, set_of, (size_t)sets, o->order, o->order_seed, stdout);
	free(set_of);
}

/*
 * --baseline NAME=VALUE: each host cell's partner is the member of its
 * comparison set with NAME=VALUE. Both record the ratio metric by round,
 * and neither stops on the target until the ratio is as tight (judge()).
 */
static int pair_baselines(const struct matrix_opts *o, struct plan *p)
{
	size_t *set_of, bases = 0;
	int rc = -1;

	if (!o->baseline)
		return 0;
	set_of = calloc(p->cells.n + 1, sizeof(*set_of));
	p->partner = malloc((p->cells.n + 1) * sizeof(*p->partner));
	if (!set_of || !p->partner || host_sets(p, set_of) < 0) {
		cli_error("out of memory");
		goto out;
	}
	for (size_t c = 0; c < p->cells.n; c++) {
		const char *v = cb_cell_value(&p->cells.cell[c], o->base_name);
		char bkey[CB_CELL_KEY_LEN];
		long b;

		p->partner[c] = SIZE_MAX;
		if (set_of[c] == CB_ORDER_NO_SET || !v)
			continue;
		if (strcmp(v, o->base_value) == 0) {
			bases++;
		} else if (cb_key_replace(p->cells.cell[c].key, o->base_name, o->base_value, bkey, sizeof(bkey)) &&
			   (b = cb_cells_find(&p->cells, bkey)) >= 0 && set_of[b] == set_of[c]) {
			p->partner[c] = (size_t)b;
		}
	}
	if (!bases) {
		cli_error("--baseline %s: no cell of this matrix has %s=%s", o->baseline, o->base_name, o->base_value);
		goto out;
	}
	for (size_t c = 0; c < p->cells.n; c++)
		if (p->partner[c] != SIZE_MAX)
			for (size_t k = 0; k < 2; k++) { /* the cell and its baseline, in the same column */
				size_t at = k ? p->partner[c] : c;

				p->reps[at].ratio_metric = o->baseline_metric ? o->baseline_metric :
										cb_workload_headline(p->spec[c].workload);
			}
	rc = 0;
out:
	free(set_of);
	return rc;
}

static void print_plan(const struct matrix_opts *o, const struct plan *p)
{
	size_t todo = 0, ev = 0;

	for (size_t i = 0; i < p->cells.n; i++) {
		todo += cell_todo(p, i, o->cap);
		ev += cell_evidence_todo(p, i);
	}
	if (o->adaptive.target > 0)
		printf("# %zu cells x %ld to %ld reps until +-%g %% (+%ld warm-up each)", p->cells.n, o->reps, o->cap,
		       o->adaptive.target * 100, o->warmup);
	if (o->baseline)
		printf(", with each cell's %s ratio (%s) to its %s cell",
		       o->baseline_metric ? o->baseline_metric : "headline", cb_center_name(o->ratio_center), o->baseline);
	else
		printf("# %zu cells x %ld reps (+%ld warm-up each)", p->cells.n, o->reps, o->warmup);
	if (o->shard_n)
		printf(", shard %u/%u", o->shard_i, o->shard_n);
	if (o->shuffle)
		printf(", shuffled (seed %" PRIu64 ")", o->shuffle_seed);
	printf(", order %s", cb_order_name(o->order));
	if (o->order == CB_ORDER_SHUFFLE)
		printf(":%" PRIu64, o->order_seed);
	printf("; %s%zu reps to run, %zu evidence reps (probes that can add work inside the fault path)\n",
	       o->adaptive.target > 0 ? "at most " : "", todo, ev);
	for (size_t i = 0; i < p->cells.n; i++) {
		size_t t = cell_todo(p, i, o->cap);

		printf("%zu\t%s", p->cells.cell[i].index + 1, p->cells.cell[i].key);
		if (p->stopped[i])
			printf("\t(%zu reps done, stopped)", p->reps[i].reps);
		else if (t < (size_t)o->cap)
			printf("\t(%zu of %ld reps done)", (size_t)o->cap - t, o->cap);
		putchar('\n');
	}
	cli_flush_stdout();
	print_host_sets(o, p);
	mk_print_boots(&(struct mk_run){ .cells = &p->cells, .spec = p->spec, .done = p->done, .reps = o->reps,
					 .warmup = o->warmup, .order = o->order, .seed = o->order_seed },
		       &o->collapsed, stdout);
}

/* ---- running ---- */

/*
 * On Ctrl-C (or SIGTERM/SIGHUP): "N of M reps done; continue with: ..." The
 * note is prepared after every row, so the signal handler only writes it.
 */
static int saved_argc;
static char **saved_argv;
static char resume_cmd[4096];
static char note_buf[2][4608];
static int note_cur;

/* Append one argument, in single quotes when the shell would read it otherwise. */
static void append_arg(char *buf, size_t len, const char *a)
{
	size_t o = strlen(buf);

	if (*a && strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./=:,+-@%") == strlen(a)) {
		snprintf(buf + o, len - o, " %s", a);
		return;
	}
	snprintf(buf + o, len - o, " '");
	for (; *a; a++) {
		o = strlen(buf);
		snprintf(buf + o, len - o, *a == '\'' ? "'\\''" : "%c", *a);
	}
	o = strlen(buf);
	snprintf(buf + o, len - o, "'");
}

static void interrupt_note_update(size_t done, size_t total)
{
	char *b = note_buf[note_cur ^ 1];
	const char *clear = cli_progress_enabled() ? "\r\033[K" : "";

	if (resume_cmd[0] == '\0')
		return;
	if (strstr(resume_cmd, " --resume "))
		snprintf(b, sizeof(note_buf[0]), "%scowbench: interrupted: %zu of %zu reps done; continue with:\n  %s\n", clear, done,
			 total, resume_cmd);
	else
		snprintf(b, sizeof(note_buf[0]),
			 "%scowbench: interrupted: %zu of %zu reps done (rows went to standard output; give --output FILE "
			 "to be able to resume)\n",
			 clear, done, total);
	note_cur ^= 1;
	cli_set_interrupt_note(b);
}

static void interrupt_note_init(const struct matrix_opts *o, size_t done, size_t total)
{
	const char *file = o->resume ? o->resume : o->output;

	snprintf(resume_cmd, sizeof(resume_cmd), "cowbench matrix");
	for (int i = 1; i < saved_argc; i++) {
		const char *a = saved_argv[i];

		if (!strcmp(a, "--output") || !strcmp(a, "-o") || !strcmp(a, "--resume")) {
			i++; /* and its value */
			continue;
		}
		if (!strncmp(a, "--output=", 9) || !strncmp(a, "--resume=", 9) || !strncmp(a, "-o", 2))
			continue;
		append_arg(resume_cmd, sizeof(resume_cmd), a);
	}
	if (o->order == CB_ORDER_SHUFFLE) { /* the seed drawn from the clock, so the rest runs in the same rounds */
		char seeded[48];

		snprintf(seeded, sizeof(seeded), "--order=shuffle:%" PRIu64, o->order_seed);
		append_arg(resume_cmd, sizeof(resume_cmd), seeded);
	}
	if (file) {
		append_arg(resume_cmd, sizeof(resume_cmd), "--resume");
		append_arg(resume_cmd, sizeof(resume_cmd), file);
	}
	cli_restore_sysctls_at_exit(); /* hooks the signals that print the note */
	interrupt_note_update(done, total);
}


struct progress {
	bool on;
	uint64_t start_ns;
	size_t done, total, ncells;
};

/* Whether axis NAME has the same value in every cell (then a label need not repeat it). */
static bool axis_constant(const struct plan *p, const char *name, const char *value)
{
	for (size_t i = 0; i < p->cells.n; i++) {
		const struct cb_cell *c = &p->cells.cell[i];
		bool same = false;

		for (size_t k = 0; k < c->npairs; k++)
			same = same || (!strcmp(c->names[k], name) && !strcmp(c->values[k], value));
		if (!same)
			return false;
	}
	return true;
}

/* The cell's pairs whose axis varies across the plan: what tells this cell from the others. */
static void varying_label(const struct plan *p, size_t c, char *buf, size_t len)
{
	const struct cb_cell *cell = &p->cells.cell[c];

	buf[0] = '\0';
	for (size_t k = 0; k < cell->npairs; k++)
		if (!axis_constant(p, cell->names[k], cell->values[k]))
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s=%s", buf[0] ? " " : "", cell->names[k],
				 cell->values[k]);
	if (!buf[0])
		snprintf(buf, len, "%s", cell->key);
}

static void show_progress(const struct progress *pr, const struct plan *p, size_t c, size_t cell_no)
{
	double el = (double)(cb_monotonic_ns() - pr->start_ns) / 1e9;
	char e[48], eta[48] = "?", label[CB_CELL_KEY_LEN];

	if (!pr->on)
		return;
	cli_fmt_duration(e, sizeof(e), el);
	if (pr->done > 0)
		cli_fmt_duration(eta, sizeof(eta), el / (double)pr->done * (double)(pr->total - pr->done));
	varying_label(p, c, label, sizeof(label));
	cli_progress("[cell %zu/%zu, rep %zu/%zu] elapsed %s  ETA %s  %s", cell_no, pr->ncells, pr->done + 1, pr->total,
		     e, eta, label);
}

struct cell_sink {
	const struct cb_cell *cell;
	struct cb_report *rep;
	struct progress *pr;
	size_t resumed; /* reps the resumed file already held */
};

/* One finished rep: tagged with its cell, written and synced. */
static int emit_cell_row(void *arg, struct cb_row *row)
{
	struct cell_sink *k = arg;

	snprintf(row->cell, sizeof(row->cell), "%s", k->cell->key);
	cli_progress_clear(); /* the row starts on a clean line */
	if (cb_report_row(k->rep, row) < 0) {
		cli_error("cannot write results: %s", strerror(errno));
		return -1;
	}
	k->pr->done++;
	interrupt_note_update(k->pr->done + k->resumed, k->pr->total + k->resumed);
	return 0;
}

/*
 * The host's cells, in the order --order gives (cowbench/order.h). A cell's
 * sysctls are set before its reps whenever another cell ran in between,
 * delay accounting is on for its warm-up and timed reps where its probes
 * run inline, its warm-up comes before its first rep; every row is written
 * (and synced) as it completes. When a comparison set (sequential: a cell)
 * has run its timed reps, its cells' evidence reps follow.
 */
struct host_run {
	const struct matrix_opts *o;
	struct plan *p;
	struct cell_sink sink;
	size_t cur;              /* the cell whose sysctls are set (SIZE_MAX: none) */
	bool acct_switched;      /* delay accounting switched on for cur's inline probes */
	unsigned char *started;  /* per cell: warmed up, its --max-time clock running */
	unsigned char *halted;   /* per cell: --target-ci or a bound stopped it */
	unsigned char *ev_ran;   /* per cell: its evidence reps ran */
	size_t *left;            /* per cell: timed reps it may still run */
	size_t *block_cells, nblock; /* the cells the current block ran, in order */
	int64_t round_next, round_step; /* round ids: shard I of N numbers I, I + N, ... */
	int worst;
};

/* Make c the cell the system is set for: its sysctls, and (inline) delay accounting on. */
static int select_cell(struct host_run *h, size_t c, bool timed)
{
	const struct cb_run_spec *spec = &h->p->spec[c];

	if (h->cur != c) {
		cli_delayacct_back(h->acct_switched);
		h->acct_switched = false;
		if (cli_run_apply_sysctls(h->p->opts[c]) < 0)
			return -1;
		h->cur = c;
		h->acct_switched = timed && (spec->probes & CB_PROBES_INLINE) && cli_delayacct_on(spec);
	}
	return 0;
}

/* Whether a cell that takes b as its --baseline may still run reps (and needs b's beside them). */
static bool pairs_pending(const struct host_run *h, size_t b)
{
	for (size_t c = 0; h->p->partner && c < h->p->cells.n; c++)
		if (h->p->partner[c] == b && !h->halted[c] && h->left[c] > 0)
			return true;
	return false;
}

/*
 * Why cell c stops now, if it does. With --baseline the target also asks
 * that the cell's paired ratio to its baseline is as tight, and a baseline
 * does not stop on the target while a cell paired with it still runs:
 * until then only a bound stops them.
 */
static enum cb_stop judge(const struct host_run *h, size_t c)
{
	const struct cli_reps *reps = &h->p->reps[c];
	enum cb_stop s = cli_reps_judge(reps);
	size_t pairs, b;

	if (s != CB_STOP_TARGET || !h->p->partner)
		return s;
	b = h->p->partner[c];
	if ((b != SIZE_MAX && !cli_reps_ratio_met(reps, &h->p->reps[b], h->o->ratio_center, h->o->adaptive.target, &pairs)) ||
	    pairs_pending(h, c))
		return cli_reps_judge_bounds(reps);
	return s;
}

/* Before a cell's first rep: its warm-up, its --max-time clock, and what a resumed file already settles. */
static void begin_cell(struct host_run *h, size_t c)
{
	struct cli_reps *reps = &h->p->reps[c];

	h->started[c] = 1;
	for (long i = 0; i < h->o->warmup; i++) {
		struct cb_row row;

		show_progress(h->sink.pr, h->p, c, c + 1);
		cb_run_rep_accounted(&h->p->spec[c], 0, &row);
	}
	reps->start_ns = cb_monotonic_ns(); /* --max-time: this run's time on the cell */
	if (h->o->adaptive.target > 0 && reps->reps && judge(h, c) != CB_STOP_NO) {
		cli_note("%s: the %zu reps already there meet --target-ci or its bounds; nothing to add",
			 h->p->cells.cell[c].key, reps->reps);
		h->halted[c] = 1;
		h->sink.pr->total -= h->left[c]; /* a cell that stopped frees the rest of its bound */
		h->left[c] = 0;
	}
}

static int emit_row_of(struct host_run *h, size_t c, struct cb_row *row)
{
	h->sink.cell = &h->p->cells.cell[c];
	return emit_cell_row(&h->sink, row);
}

static int timed_rep(struct host_run *h, size_t c, long r, int64_t round)
{
	struct cli_reps *reps = &h->p->reps[c];
	enum cb_stop stop;
	struct cb_row row;

	if (select_cell(h, c, true) < 0)
		return -1;
	if (!h->started[c])
		begin_cell(h, c);
	if (h->halted[c])
		return 0;
	show_progress(h->sink.pr, h->p, c, c + 1);
	cb_run_rep_accounted(&h->p->spec[c], (int)r, &row);
	row.round = round;
	cli_reps_count(reps, &row);
	stop = judge(h, c);
	if (stop != CB_STOP_NO)
		cli_reps_mark(reps, stop, &row);
	h->worst = cb_exit_code_worst(h->worst, cb_status_exit_code(row.status));
	if (emit_row_of(h, c, &row) < 0)
		return -1;
	h->left[c]--;
	if (stop != CB_STOP_NO) { /* it drops out of the later rounds; the set goes on while a member does */
		h->halted[c] = 1;
		h->sink.pr->total -= h->left[c];
		h->left[c] = 0;
	}
	return 0;
}

static int evidence_reps(struct host_run *h, size_t c)
{
	int ev;

	h->ev_ran[c] = 1;
	if (!cell_evidence_todo(h->p, c))
		return 0;
	if (select_cell(h, c, true) < 0)
		return -1;
	if (!h->started[c])
		begin_cell(h, c);
	cli_delayacct_back(h->acct_switched); /* the evidence reps switch it themselves */
	h->acct_switched = false;
	show_progress(h->sink.pr, h->p, c, c + 1);
	h->sink.cell = &h->p->cells.cell[c];
	ev = cli_run_evidence_reps(&h->p->spec[c], &h->p->ev_done[c * CLI_EVIDENCE_REPS], CLI_EVIDENCE_REPS,
				   emit_cell_row, &h->sink);
	if (ev < 0)
		return -1;
	h->worst = cb_exit_code_worst(h->worst, ev);
	return 0;
}

/* The end of a block: the evidence reps of the cells it ran. */
static int end_block(struct host_run *h)
{
	for (size_t i = 0; i < h->nblock; i++)
		if (evidence_reps(h, h->block_cells[i]) < 0)
			return -1;
	h->nblock = 0;
	return 0;
}

/* The (cell, rep) steps of the host's cells; *sets gets the number of comparison sets. */
static int host_steps(const struct matrix_opts *o, const struct plan *p, struct cb_order_step **steps, size_t *n,
		      size_t *set_of, long *sets)
{
	unsigned char *done = malloc(p->cells.n * (size_t)o->cap + 1);
	int err = -ENOMEM;

	if (done) {
		for (size_t c = 0; c < p->cells.n; c++)
			for (long r = 0; r < o->cap; r++) /* a cell the resumed file shows stopped runs no more */
				done[c * (size_t)o->cap + (size_t)r] = p->stopped[c] || p->done[c * (size_t)o->cap + (size_t)r];
		*sets = host_sets(p, set_of);
		err = *sets < 0 ? (int)*sets :
				  cb_order_plan(set_of, p->cells.n, o->cap, done, o->order, o->order_seed, steps, n);
	}
	free(done);
	if (err)
		cli_error("out of memory");
	return err ? -1 : 0;
}

static void host_run_free(struct host_run *h)
{
	free(h->started);
	free(h->halted);
	free(h->ev_ran);
	free(h->left);
	free(h->block_cells);
}

static int host_run_init(struct host_run *h, const struct matrix_opts *o, struct plan *p, struct cb_report *rep,
			 struct progress *pr)
{
	size_t n = p->cells.n + 1;

	memset(h, 0, sizeof(*h));
	h->o = o;
	h->p = p;
	h->sink = (struct cell_sink){ NULL, rep, pr, p->resumed };
	h->cur = SIZE_MAX;
	h->round_step = o->shard_n ? o->shard_n : 1;
	h->round_next = p->last_round ? p->last_round + h->round_step : (o->shard_n ? o->shard_i : 1);
	h->started = calloc(n, 1);
	h->halted = calloc(n, 1);
	h->ev_ran = calloc(n, 1);
	h->left = calloc(n, sizeof(*h->left));
	h->block_cells = calloc(n, sizeof(*h->block_cells));
	if (!h->started || !h->halted || !h->ev_ran || !h->left || !h->block_cells) {
		cli_error("out of memory");
		return -1;
	}
	for (size_t c = 0; c < p->cells.n; c++)
		h->left[c] = cell_todo(p, c, o->cap);
	return 0;
}

/* Run the steps; a round gets its id when its first rep runs (a round of stopped cells gets none). */
static int run_steps(struct host_run *h, const struct cb_order_step *st, size_t n)
{
	int64_t round = CB_NA;

	for (size_t i = 0; i < n; i++) {
		size_t c = st[i].cell;
		bool new_round = i == 0 || st[i].block != st[i - 1].block || st[i].round != st[i - 1].round;

		if (new_round)
			round = CB_NA;
		if (i > 0 && st[i].block != st[i - 1].block && end_block(h) < 0)
			return -1;
		if (h->halted[c])
			continue;
		if (h->nblock == 0 || h->block_cells[h->nblock - 1] != c) {
			bool seen = false;

			for (size_t k = 0; k < h->nblock && !seen; k++)
				seen = h->block_cells[k] == c;
			if (!seen)
				h->block_cells[h->nblock++] = c;
		}
		if (st[i].round > 0 && round == CB_NA) {
			round = h->round_next;
			h->round_next += h->round_step;
		}
		if (timed_rep(h, c, st[i].rep, st[i].round > 0 ? round : CB_NA) < 0)
			return -1;
	}
	return end_block(h);
}

/* The host's part of the plan: its timed reps in --order, then evidence reps no block ran. 0..exit code, -1. */
static int run_host(const struct matrix_opts *o, struct plan *p, struct cb_report *rep, struct progress *pr)
{
	struct cb_order_step *steps = NULL;
	size_t n = 0, *set_of = calloc(p->cells.n + 1, sizeof(*set_of));
	struct host_run h;
	long sets;
	int rc = -1;

	if (!set_of) {
		cli_error("out of memory");
		return -1;
	}
	if (host_run_init(&h, o, p, rep, pr) == 0 && host_steps(o, p, &steps, &n, set_of, &sets) == 0 &&
	    run_steps(&h, steps, n) == 0) {
		rc = 0;
		for (size_t c = 0; c < p->cells.n && rc == 0; c++)
			if (set_of[c] != CB_ORDER_NO_SET && !h.ev_ran[c])
				rc = evidence_reps(&h, c);
	}
	cli_delayacct_back(h.acct_switched);
	host_run_free(&h);
	free(steps);
	free(set_of);
	return rc < 0 ? -1 : h.worst;
}

/*
 * In a guest (--plan): the host's order, which interleaves the cells it
 * compares rep by rep. A cell's sysctls are set before each of its reps
 * (its neighbours set theirs), its warm-up before its first.
 */
static int run_ordered(const struct matrix_opts *o, struct plan *p, struct cb_report *rep)
{
	unsigned char *warm = calloc(p->cells.n + 1, 1);
	int failed = 0;

	if (!warm) {
		cli_error("out of memory");
		return -1;
	}
	for (size_t i = 0; i < o->plan_lines.n && failed >= 0; i++) {
		long c = cb_cells_find(&p->cells, o->plan_lines.keys[i]);
		struct cb_row row;

		if (c < 0 || cli_run_apply_sysctls(p->opts[c]) < 0) {
			failed = -1;
			break;
		}
		for (long w = 0; !warm[c] && w < o->warmup; w++)
			cb_run_rep(&p->spec[c], 0, &row);
		warm[c] = 1;
		if (cb_run_rep(&p->spec[c], (int)o->plan_lines.reps[i], &row) != 0)
			failed = 1;
		row.round = o->plan_lines.rounds[i] > 0 ? o->plan_lines.rounds[i] : CB_NA;
		snprintf(row.cell, sizeof(row.cell), "%s", p->cells.cell[c].key);
		if (cb_report_row(rep, &row) < 0) {
			cli_error("cannot write results: %s", strerror(errno));
			failed = -1;
		}
	}
	free(warm);
	return failed;
}

/* The results file, opened and locked (cli_output_open_locked) before --resume reads it. */
static int lock_results(struct matrix_opts *o)
{
	const char *path = o->resume ? o->resume : o->output;

	o->out_fd = -1;
	if (!path || o->dry_run)
		return 0;
	o->out_fd = cli_output_open_locked(path, o->resume != NULL, o->force, ", or --resume it to continue",
					   &o->out_created);
	return o->out_fd < 0 ? -1 : 0;
}

static FILE *open_results(struct matrix_opts *o, bool *append)
{
	struct stat st;
	FILE *fp;

	*append = false;
	if (o->out_fd < 0)
		return stdout;
	if (fstat(o->out_fd, &st) < 0 || lseek(o->out_fd, 0, SEEK_END) < 0 || !(fp = fdopen(o->out_fd, "a"))) {
		cli_error("cannot write %s: %s", o->resume ? o->resume : o->output, strerror(errno));
		return NULL;
	}
	*append = st.st_size > 0;
	o->out_fd = -1; /* the FILE owns it now */
	return fp;
}

/* A guest's row written: the interrupt note counts it as the host's rows are counted. */
struct guest_count {
	struct progress *pr;
	size_t resumed;
};

static void guest_row_done(void *arg)
{
	struct guest_count *gc = arg;

	gc->pr->done++;
	interrupt_note_update(gc->pr->done + gc->resumed, gc->pr->total + gc->resumed);
}

static int run_plan(struct matrix_opts *o, struct plan *p)
{
	struct progress pr = { .on = cli_progress_enabled() && !o->quiet && !o->plan, .start_ns = cb_monotonic_ns(), .ncells = p->cells.n };
	struct cb_report rep;
	bool append;
	int status = 0;
	FILE *out;

	out = open_results(o, &append);
	if (!out)
		return EXIT_USAGE;
	for (size_t i = 0; i < p->cells.n; i++)
		pr.total += cell_todo(p, i, o->cap) + cell_evidence_todo(p, i);
	interrupt_note_init(o, p->resumed, pr.total + p->resumed);
	/* Rows up to 4 KiB reach the file in one write(): a kill leaves whole rows or one torn last row. */
	setvbuf(out, NULL, _IOFBF, 1 << 16);
	cb_report_init(&rep, out, o->format, o->resume || o->output);
	rep.started = append; /* the resumed file has its header */
	if (!o->plan)
		status = run_host(o, p, &rep, &pr);
	if (o->plan && status >= 0) {
		status = run_ordered(o, p, &rep);
	} else if (status >= 0) { /* then each guest kernel's cells, in one boot each */
		struct mk_run g = { .cells = &p->cells, .spec = p->spec, .done = p->done, .reps = o->reps,
				    .order = o->order, .seed = o->order_seed,
				    .warmup = o->warmup, .report = &rep, .progress = pr.on, .row_done = guest_row_done };
		struct guest_count gc = { &pr, p->resumed };
		int rc;

		g.row_arg = &gc;
		cli_progress_clear();
		rc = mk_run_guests(&g);
		status = rc < 0 ? -1 : rc > 0 ? 1 : status;
	}
	cli_progress_clear();
	if (cb_report_finish(&rep) < 0 && status >= 0) {
		cli_error("cannot write results: %s", strerror(errno));
		status = -1;
	}
	if (out != stdout && fclose(out) != 0 && status >= 0) {
		cli_error("cannot write results: %s", strerror(errno));
		status = -1;
	}
	if (out != stdout && status < 0)
		cli_output_drop_if_empty(o->resume ? o->resume : o->output, o->out_created);
	if (status >= 0 && !o->quiet && !o->plan)
		cli_note_rows_onward(o->resume ? o->resume : o->output, rep.rows);
	return status < 0 ? EXIT_RUN_FAILED : status; /* the worst row's code (cowbench/error.h) */
}

static int check_combination(struct matrix_opts *o)
{
	if (o->resume && o->output && strcmp(o->resume, o->output) != 0) {
		cli_error("--resume FILE writes to FILE: drop --output or give the same file");
		return -1;
	}
	if (cli_output_not_input(o->resume ? "--resume" : "--output", o->resume ? o->resume : o->output,
				 (char *[]){ (char *)o->file, (char *)o->plan }, 2) < 0)
		return -1;
	if (o->resume && o->format != CB_FORMAT_CSV) {
		cli_error("--resume needs CSV (--format=csv): only CSV files are read back");
		return -1;
	}
	if (o->reps < 0)
		o->reps = 5;
	if (o->warmup < 0)
		o->warmup = 1;
	if (cli_reps_check(&o->adaptive, o->reps) < 0)
		return -1;
	if (o->baseline && o->adaptive.target <= 0) {
		cli_error("--baseline decides when a cell stops: give --target-ci too");
		return -1;
	}
	if ((o->baseline_metric || o->ratio_center_given) && !o->baseline) {
		cli_error("--baseline-metric and --ratio-center shape the --baseline ratio: give --baseline too");
		return -1;
	}
	if (o->baseline && o->order == CB_ORDER_SEQUENTIAL) {
		cli_error("--baseline pairs the reps of one round: use --order=interleaved or shuffle, not sequential");
		return -1;
	}
	o->cap = o->adaptive.target > 0 ? o->adaptive.max_reps : o->reps;
	if (o->order == CB_ORDER_SHUFFLE && !o->order_seeded) {
		o->order_seed = cb_monotonic_ns() ^ ((uint64_t)getpid() << 20);
		o->order_seeded = true;
		cli_note("--order=shuffle seed %" PRIu64 " (give --order=shuffle:%" PRIu64 " to repeat this order)",
			 o->order_seed, o->order_seed);
	}
	if (o->shuffle && !o->seed_given) {
		o->shuffle_seed = cb_monotonic_ns() ^ (uint64_t)getpid();
		cli_note("--shuffle seed %" PRIu64 " (give --shuffle=%" PRIu64 " to repeat this order)", o->shuffle_seed,
			 o->shuffle_seed);
	}
	return 0;
}

/*
 * Adaptive reps decide after each rep; a guest boot runs a plan fixed
 * before it starts (matrix_kernel.h): the two do not mix yet.
 */
static int adaptive_on_host_only(const struct matrix_opts *o, const struct plan *p)
{
	for (size_t i = 0; o->adaptive.target > 0 && i < p->cells.n; i++)
		if (mk_cell_in_guest(&p->cells.cell[i])) {
			cli_error("--target-ci runs on the host only: a --kernel guest runs a fixed plan of reps (use --reps)");
			return -1;
		}
	return 0;
}

static int load_plan(struct matrix_opts *o)
{
	if (mk_plan_load(o->plan, &o->m, &o->plan_lines) < 0)
		return -1;
	o->any_axis = true;
	o->reps = 1;
	for (size_t i = 0; i < o->plan_lines.n; i++)
		o->reps = o->plan_lines.reps[i] > o->reps ? o->plan_lines.reps[i] : o->reps;
	return 0;
}

int cmd_matrix(int argc, char **argv)
{
	struct matrix_opts o = { .reps = -1, .warmup = -1, .format = CLI_FORMAT_AUTO, .out_fd = -1,
				.ratio_center = CB_CENTER_MEAN };
	struct plan p;
	int argi, status = EXIT_USAGE;

	memset(&p, 0, sizeof(p));
	cli_run_spec_init(&p.ctx);
	cb_matrix_init(&o.m);
	saved_argc = argc;
	saved_argv = malloc(((size_t)argc + 1) * sizeof(*argv)); /* as typed: the parser moves the operands */
	if (!saved_argv) {
		cli_error("out of memory");
		goto out;
	}
	memcpy(saved_argv, argv, ((size_t)argc + 1) * sizeof(*argv));
	argi = parse_args(argc, argv, &o);
	if (argi < 0)
		goto out;
	if (o.plan && (o.file || o.any_axis || o.resume || o.shuffle || o.shard_n || o.order_given)) {
		cli_error("--plan is the whole matrix: no axes, file, --resume, --shuffle, --order or --shard with it");
		goto out;
	}
	if (o.plan && load_plan(&o) < 0)
		goto out;
	/* A --plan guest writes to a serial port, a terminal the host reads as CSV. */
	o.format = o.plan && o.format == CLI_FORMAT_AUTO ? CB_FORMAT_CSV :
		   cli_format_resolve(o.format, o.output ? o.output : o.resume);
	if ((o.file && load_file(&o) < 0) || (!o.file && !o.any_axis && set_default_matrix(&o) < 0) ||
	    check_combination(&o) < 0 || resolve_axes(&o) < 0 || build_plan(&o, &p) < 0)
		goto out;
	if (adaptive_on_host_only(&o, &p) < 0 || pair_baselines(&o, &p) < 0 || lock_results(&o) < 0 ||
	    (o.resume && load_resume(&o, &p) < 0))
		goto out;
	if (o.dry_run) {
		print_plan(&o, &p);
		status = 0;
		goto out;
	}
	status = run_plan(&o, &p);
out:
	if (o.out_fd >= 0) /* nothing was measured: a file this run created goes again */
		cli_output_discard(o.resume ? o.resume : o.output, o.out_fd, o.out_created);
	mk_plan_free(&o.plan_lines);
	free_plan(&p);
	cb_matrix_free(&o.m);
	free(saved_argv);
	saved_argv = NULL;
	return status;
}
