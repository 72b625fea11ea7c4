/* cowbench matrix's arguments: its own options, the axes, the default matrix and the matrix file. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cowbench/results.h>

#include "common/diag.h"
#include "common/args.h"
#include "common/outfile.h"
#include "trial/reps.h"
#include "matrix_cmd.h"

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

#define MOPTS(p) ((struct matrix_opts *)(p))

static bool opt_reps(void *o, const char *v) { return cli_run_parse_count("reps", v, 1, &MOPTS(o)->reps); }
static bool opt_warmup(void *o, const char *v) { return cli_run_parse_count("warmup", v, 0, &MOPTS(o)->warmup); }
static bool opt_max_reps(void *o, const char *v) { return cli_run_parse_count("max-reps", v, 1, &MOPTS(o)->adaptive.max_reps); }
static bool opt_target_ci(void *o, const char *v) { return cli_parse_target_ci(v, &MOPTS(o)->adaptive.target); }
static bool opt_max_time(void *o, const char *v) { return cli_parse_max_time(v, &MOPTS(o)->adaptive.max_ns); }
static bool opt_baseline(void *o, const char *v) { return parse_baseline(o, v); }

static bool opt_baseline_metric(void *o, const char *v)
{
	if (!cli_numeric_column("--baseline-metric", v))
		return false;
	MOPTS(o)->baseline_metric = v;
	return true;
}

static bool opt_order(void *o, const char *v)
{
	struct matrix_opts *m = o;

	if (cb_order_parse(v, &m->order, &m->order_seed, &m->order_seeded) < 0) {
		cli_error("--order must be interleaved, interleaved-all, sequential, shuffle or shuffle:SEED, not '%s'", v);
		return false;
	}
	m->order_given = true;
	return true;
}

static bool opt_shuffle(void *o, const char *v)
{
	struct matrix_opts *m = o;

	m->shuffle = true;
	if (v && !cli_parse_u64(v, &m->shuffle_seed)) {
		cli_error("--shuffle=SEED needs a non-negative integer, not '%s'", v);
		return false;
	}
	m->seed_given = v != NULL;
	return true;
}

static bool opt_shard(void *o, const char *v)
{
	if (cb_shard_parse(v, &MOPTS(o)->shard_i, &MOPTS(o)->shard_n) < 0) {
		cli_error("--shard must be I/N with 1 <= I <= N (e.g. 2/8), not '%s'", v);
		return false;
	}
	return true;
}

static bool opt_plan(void *o, const char *v)
{
	MOPTS(o)->plan = v;
	return true;
}

#define M_SET(how, field) CLI_SET(how, struct matrix_opts, field)

static bool opt_columns(void *o, const char *v)
{
	if (!cli_row_columns(v))
		return false;
	MOPTS(o)->columns = v;
	return true;
}

/* Matrix-level options, in the one shape of every command's; everything else named --NAME is an axis. */
static const struct cli_option matrix_options[] = {
	{ "reps", "N", "measured repetitions per cell; default 5", .parse = opt_reps },
	{ "target-ci", "PCT", "adaptive reps: each cell runs until the 95 % interval of its headline "
	  "metric's centre is within +-PCT % (--reps: the least)", .parse = opt_target_ci },
	{ "baseline", "NAME=VALUE", "with --target-ci: each cell also runs until the 95 % interval of its "
	  "ratio to the cell of its comparison set with NAME=VALUE (rounds both ran) is within +-PCT %",
	  .parse = opt_baseline },
	{ "baseline-metric", "COLUMN", "the column of that ratio; default: the cell's headline",
	  .parse = opt_baseline_metric },
	{ "max-reps", "N", "with --target-ci: a cell stops at N reps all the same; default 50", .parse = opt_max_reps },
	{ "max-time", "DURATION", "with --target-ci: a cell stops once its reps took this long (30s)",
	  .parse = opt_max_time },
	{ "warmup", "N", "unrecorded repetitions before each cell's first; default 1", .parse = opt_warmup },
	{ "order", "interleaved|interleaved-all|sequential|shuffle[:SEED]",
	  "reps of cells that differ only in the compared axes (" CB_ORDER_AXES ") run round by round "
	  "in rotating order (interleaved, the default), in a seeded random order each round (shuffle), "
	  "or each cell's back to back (sequential); interleaved-all puts every cell (of a boot) in each "
	  "round", .parse = opt_order },
	{ "shuffle", "[SEED]", "run the cells in a seeded random order (no SEED: from the clock, printed)",
	  .parse = opt_shuffle },
	{ "shard", "I/N", "run only shard I of N (1 <= I <= N): a deterministic partition", .parse = opt_shard },
	{ "resume", "FILE", "append to FILE (CSV), skipping the reps already in it", M_SET(CLI_STORE_FILE, resume) },
	{ "output", "FILE", "write rows to FILE (a new file) instead of standard output",
	  M_SET(CLI_STORE_FILE, output) },
	{ "force", NULL, "replace an existing non-empty --output FILE", M_SET(CLI_STORE_TRUE, force) },
	{ "format", "csv|json|table|markdown", "row format; default a table on a terminal, csv when piped or with --output "
	  "(json: JSON Lines)", CLI_SET(CLI_STORE_ROW_FORMAT, struct matrix_opts, format) },
	{ "columns", "NAME[,NAME]", "the table's columns, in this order (default: what the rows have and the terminal fits)",
	  .parse = opt_columns },
	{ "dry-run", NULL, "print the cells and exit without measuring", M_SET(CLI_STORE_TRUE, dry_run) },
	{ "build", NULL, "--kernel=stock/patched: build a kernel not yet cached and apt-get install QEMU if missing "
	  "(without it: ask on a terminal, else exit 2 naming the command)", M_SET(CLI_STORE_TRUE, build) },
	{ "quiet", NULL, "no progress line on a terminal", M_SET(CLI_STORE_TRUE, quiet) },
	{ "plan", "FILE", "(inside a --kernel guest) run FILE's 'REP CELL' lines in order", .parse = opt_plan },
};

#define M_N ((int)(sizeof(matrix_options) / sizeof(matrix_options[0])))

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
	cli_print_options(matrix_options, M_N);
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

/*
 * The command line goes through the one parser (cli_parse_options) with a
 * table built here: the matrix's own options, then every option of run
 * that can be an axis (values separated by commas), fork, the kernel axis
 * and the aliases. Options of run that are the matrix's business get an
 * entry that says so instead of "unknown option".
 */
#define MAX_MATRIX_TABLE 256

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

static bool is_matrix_option(const char *name)
{
	for (int i = 0; i < M_N; i++)
		if (strcmp(matrix_options[i].name, name) == 0)
			return true;
	return false;
}

static int matrix_table(struct cli_option *t)
{
	int n = 0, nrun;
	const struct cli_option *run = cli_run_options(&nrun);

	for (int i = 0; i < M_N; i++)
		table_add(t, &n, matrix_options[i]);
	for (int i = 0; i < nrun; i++) {
		if (is_matrix_option(run[i].name))
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
int matrix_parse_args(int argc, char **argv, struct matrix_opts *o)
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
int matrix_resolve_axes(struct matrix_opts *o)
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
		cb_matrix_sort_axes(&o->m, cli_run_axis_rank);
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

int matrix_set_default(struct matrix_opts *o)
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
int matrix_load_file(struct matrix_opts *o)
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

int matrix_check_combination(struct matrix_opts *o)
{
	if (o->resume && o->output && strcmp(o->resume, o->output) != 0) {
		cli_error("--resume FILE writes to FILE: drop --output or give the same file");
		return -1;
	}
	if (cli_output_not_input(o->resume ? "--resume" : "--output", o->resume ? o->resume : o->output,
				 (char *[]){ (char *)o->file, (char *)o->plan }, 2) < 0)
		return -1;
	/* The files the cells read (replay's --trace=FILE in any group) are inputs too. */
	for (size_t g = 0; g < o->m.ngroups; g++)
		for (size_t a = 0; a < o->m.groups[g].naxes; a++) {
			const struct cb_axis *ax = &o->m.groups[g].axes[a];

			if (!cli_run_option_is_input(ax->name))
				continue;
			if (cli_output_not_input(o->resume ? "--resume" : "--output", o->resume ? o->resume : o->output,
						 ax->values, (int)ax->nvalues) < 0)
				return -1;
		}
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
	if (o->baseline_metric && !o->baseline) {
		cli_error("--baseline-metric shapes the --baseline ratio: give --baseline too");
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

int matrix_load_plan(struct matrix_opts *o)
{
	if (mk_plan_load(o->plan, &o->m, &o->plan_lines) < 0)
		return -1;
	o->any_axis = true;
	o->reps = 1;
	for (size_t i = 0; i < o->plan_lines.n; i++)
		o->reps = o->plan_lines.reps[i] > o->reps ? o->plan_lines.reps[i] : o->reps;
	return 0;
}

