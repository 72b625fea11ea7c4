#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/array.h>
#include <cowbench/compare.h>
#include <cowbench/error.h>
#include <cowbench/estimate.h>
#include <cowbench/output.h>
#include <cowbench/report.h>
#include <cowbench/units.h>

#include "common/diag.h"
#include "common/args.h"
#include "common/outfile.h"
#include "common/commands.h"

/*
 * cowbench estimate [FILE]: the statistics engine for numbers that are not
 * result rows (a Redis save's pause, a kernel bench's time): a CSV of
 * set,group,value (or group,value) in, per group the centre and interval,
 * and with --baseline=GROUP each other group of a set against that set's
 * baseline group, judged over the whole output as summarize and compare
 * judge theirs. The study's scripts under analysis/ call this instead of
 * computing an interval themselves.
 */

struct est_opts {
	const char *baseline;
	double alpha, threshold;
	enum cb_format format;
	const char *columns; /* --columns: the table's */
	const char *output;
	bool force;
};

#define EOPTS(p) ((struct est_opts *)(p))

struct group {
	char *set, *name;
	double *v;
	size_t n, cap;
	struct cb_estimate e;
	bool has_change;
	struct cb_compare c;
	const char *verdict;
};

struct groups {
	struct group *g;
	size_t n, cap;
};

static bool opt_baseline(void *o, const char *v)
{
	if (!*v || strchr(v, ',') || strchr(v, '\n')) {
		cli_error("--baseline must name a group, not '%s'", v);
		return false;
	}
	EOPTS(o)->baseline = v;
	return true;
}

static bool opt_columns(void *o, const char *v);

static const struct cli_option est_options[] = {
	{ "baseline", "GROUP", "also each group against the set's GROUP: ratio (or difference), interval, p, verdict",
	  .parse = opt_baseline },
	{ "format", "table|csv|json|markdown", "output: a table for people (default), CSV, JSON Lines or Markdown",
	  CLI_SET(CLI_STORE_FORMAT, struct est_opts, format) },
	{ "columns", "NAME[,NAME]", "the table's columns, in this order (default: what fits the terminal)",
	  .parse = opt_columns },
	{ "output", "FILE", "write to FILE instead of standard output (an existing FILE needs --force)",
	  CLI_SET(CLI_STORE_FILE, struct est_opts, output) },
	{ "force", NULL, "replace an existing --output FILE", CLI_SET(CLI_STORE_TRUE, struct est_opts, force) },
};

#define N_EST_OPTIONS ((int)(sizeof(est_options) / sizeof(est_options[0])))

static void est_usage(void)
{
	printf("usage: cowbench estimate [OPTIONS] [VALUES.csv | -]\n\n"
	       "The statistics every cowbench command prints, for any numbers: reads a CSV\n"
	       "with a header of group,value or set,group,value (standard input without a\n"
	       "file) and prints per group n, the Hodges-Lehmann centre and its exact interval\n"
	       "with that interval's level; with --baseline=GROUP, each other group of a set\n"
	       "against the set's GROUP: the Hodges-Lehmann ratio (a difference where a value\n"
	       "is <= 0) with its exact interval, the Mann-Whitney p adjusted over every\n"
	       "comparison printed (Benjamini-Hochberg) and higher, lower or ~ (p (adj) < 0.05\n"
	       "and the interval beyond +-5 %%). docs/reference.md, section Statistics.\n\n");
	cli_print_options(est_options, N_EST_OPTIONS);
}

static struct group *find_or_add(struct groups *gs, const char *set, const char *name)
{
	struct group *ng;

	for (size_t i = 0; i < gs->n; i++)
		if (!strcmp(gs->g[i].set, set) && !strcmp(gs->g[i].name, name))
			return &gs->g[i];
	if (!(ng = cb_array_room(gs->g, &gs->cap, gs->n, sizeof(*ng), 16)))
		return NULL;
	gs->g = ng;
	gs->g[gs->n] = (struct group){ .set = strdup(set), .name = strdup(name) };
	if (!gs->g[gs->n].set || !gs->g[gs->n].name) {
		free(gs->g[gs->n].set);
		free(gs->g[gs->n].name);
		return NULL;
	}
	return &gs->g[gs->n++];
}

static int add_value(struct group *g, double v)
{
	double *nv = cb_array_room(g->v, &g->cap, g->n, sizeof(*nv), 16);

	if (!nv)
		return -ENOMEM;
	g->v = nv;
	g->v[g->n++] = v;
	return 0;
}

static void free_groups(struct groups *gs)
{
	for (size_t i = 0; i < gs->n; i++) {
		free(gs->g[i].set);
		free(gs->g[i].name);
		free(gs->g[i].v);
	}
	free(gs->g);
}

/* Read every record; -1 after one line on stderr. */
static int read_values(FILE *fp, const char *path, struct groups *gs)
{
	struct cb_csv_record rec = { 0 };
	size_t line = 1, ncols = 0;
	int rc, err = 0;

	rc = cb_csv_read_record(fp, &rec);
	if (rc == 1 && rec.nfields == 2 && !strcmp(rec.field[0], "group") && !strcmp(rec.field[1], "value"))
		ncols = 2;
	else if (rc == 1 && rec.nfields == 3 && !strcmp(rec.field[0], "set") && !strcmp(rec.field[1], "group") &&
		 !strcmp(rec.field[2], "value"))
		ncols = 3;
	if (!ncols) {
		cli_error("%s: the first line must be the header group,value or set,group,value", path);
		cb_csv_record_free(&rec);
		return -1;
	}
	while (!err && (rc = cb_csv_read_record(fp, &rec)) == 1) {
		const char *text = rec.field[ncols - 1];
		char *end;
		struct group *g;
		double v;

		line++;
		if (rec.nfields != ncols) {
			cli_error("%s:%zu: %zu fields, the header has %zu", path, line, rec.nfields, ncols);
			err = -1;
			break;
		}
		errno = 0;
		v = strtod(text, &end);
		if (end == text || *end || errno || !isfinite(v)) {
			char shown[64];

			cli_error("%s:%zu: the value must be a finite number, not '%s'", path, line,
				  cli_printable(text, shown, sizeof(shown)));
			err = -1;
			break;
		}
		g = find_or_add(gs, ncols == 3 ? rec.field[0] : "", rec.field[ncols - 2]);
		if (!g || add_value(g, v) < 0) {
			cli_error("out of memory");
			err = -1;
		}
	}
	if (!err && rc != 0) {
		cli_error("%s: %s", path, rc == CB_EFORMAT ? "a malformed CSV record" : strerror(-rc));
		err = -1;
	}
	cb_csv_record_free(&rec);
	if (!err && gs->n == 0) {
		cli_error("%s: no values", path);
		err = -1;
	}
	return err;
}

static const struct group *baseline_of(const struct groups *gs, const struct group *g, const char *name)
{
	for (size_t i = 0; i < gs->n; i++)
		if (!strcmp(gs->g[i].set, g->set) && !strcmp(gs->g[i].name, name))
			return &gs->g[i];
	return NULL;
}

/* Every group's estimate and, against its set's baseline, its change; then the verdicts as one set. */
static int estimate_all(const struct est_opts *o, struct groups *gs)
{
	struct cb_compare_opts co = CB_COMPARE_DEFAULTS;
	struct cb_compare **set = malloc((gs->n + 1) * sizeof(*set));
	size_t k = 0;
	int err = set ? 0 : -ENOMEM;

	for (size_t i = 0; i < gs->n && !err; i++) {
		struct group *g = &gs->g[i];
		const struct group *b = o->baseline ? baseline_of(gs, g, o->baseline) : NULL;

		g->verdict = "";
		err = cb_estimate(g->v, g->n, co.conf, &g->e);
		if (!err && b && b != g) {
			err = cb_compare_samples(b->v, b->n, g->v, g->n, false, &co, &g->c);
			g->has_change = !err;
			if (!err)
				set[k++] = &g->c;
		}
	}
	if (!err)
		err = cb_compare_decide(set, k, CB_ADJUST_BH, &co);
	for (size_t i = 0; i < gs->n && !err; i++) {
		struct group *g = &gs->g[i];

		if (g->has_change)
			g->verdict = !g->c.significant ? "~" :
				     (g->c.change.ratio ? g->c.change.est > 1 : g->c.change.est > 0) ? "higher" : "lower";
	}
	free(set);
	return err;
}

/*
 * A group's fields (cowbench/output.h): the CSV columns and JSON keys the
 * scripts read, then the table's columns. A change's
 * fields are in JSON only for a group compared with its baseline, as a
 * ratio where every value is > 0, else as a difference.
 */
enum est_field {
	EF_SET, EF_GROUP, EF_N, EF_CENTRE, EF_CI_LO, EF_CI_HI, EF_CI, EF_CI_LEVEL, EF_RATIO, EF_RATIO_LO, EF_RATIO_HI,
	EF_DIFF, EF_DIFF_LO, EF_DIFF_HI, EF_CHANGE, EF_CHANGE_LEVEL, EF_P, EF_P_ADJ, EF_P_VIEW, EF_VERDICT,
	EF_RATIO_TEXT, EF_REPS_NEEDED, EF_COUNT
};

#define CHANGE_JSON (CB_FIELD_JSON | CB_FIELD_OMIT_NULL)
#define CHANGE_DATA (CB_FIELD_CSV | CHANGE_JSON)

static const struct cb_field est_fields[EF_COUNT] = {
	[EF_SET] = { "set", "set", CB_KIND_TEXT, CB_FIELD_ALL | CB_FIELD_LEFT, 0, -1, 0, 0 },
	[EF_GROUP] = { "group", "group", CB_KIND_TEXT, CB_FIELD_ALL | CB_FIELD_LEFT, 0, -1, 0, 0 },
	[EF_N] = { "n", "n", CB_KIND_COUNT, CB_FIELD_ALL, 3, -1, 3, 0 },
	[EF_CENTRE] = { "centre", "centre", CB_KIND_NUMBER, CB_FIELD_ALL, 0, -1, 0, 0 },
	[EF_CI_LO] = { "ci_lo", "ci_lo", CB_KIND_NUMBER, CB_FIELD_DATA, 0, -1, 0, 0 },
	[EF_CI_HI] = { "ci_hi", "ci_hi", CB_KIND_NUMBER, CB_FIELD_DATA, 0, -1, 0, 0 },
	[EF_CI] = { "ci", "CI of centre", CB_KIND_TEXT, CB_FIELD_VIEW, 1, -1, 0, 0 },
	[EF_CI_LEVEL] = { "ci_level", "CI level", CB_KIND_FRACTION, CB_FIELD_ALL, 2, -1, 0, 0 },
	[EF_RATIO] = { "ratio", "ratio", CB_KIND_RATIO, CHANGE_DATA, 0, -1, 0, 0 },
	[EF_RATIO_LO] = { "ratio_ci_lo", "ratio_ci_lo", CB_KIND_RATIO, CHANGE_DATA, 0, -1, 0, 0 },
	[EF_RATIO_HI] = { "ratio_ci_hi", "ratio_ci_hi", CB_KIND_RATIO, CHANGE_DATA, 0, -1, 0, 0 },
	[EF_DIFF] = { "difference", "difference", CB_KIND_NUMBER, CHANGE_DATA, 0, -1, 0, 0 },
	[EF_DIFF_LO] = { "difference_ci_lo", "difference_ci_lo", CB_KIND_NUMBER, CHANGE_DATA, 0, -1, 0, 0 },
	[EF_DIFF_HI] = { "difference_ci_hi", "difference_ci_hi", CB_KIND_NUMBER, CHANGE_DATA, 0, -1, 0, 0 },
	[EF_CHANGE] = { "change", "against the baseline [CI]", CB_KIND_TEXT, CB_FIELD_VIEW, 0, -1, 0, 0 },
	[EF_CHANGE_LEVEL] = { "change_ci_level", "change CI level", CB_KIND_FRACTION, CHANGE_DATA | CB_FIELD_VIEW, 4, -1,
			      0, 0 },
	[EF_P] = { "p", "p", CB_KIND_NUMBER, CHANGE_DATA, 0, -1, 0, 0 },
	[EF_P_ADJ] = { "p_adj", "p_adj", CB_KIND_NUMBER, CHANGE_DATA, 0, -1, 0, 0 },
	[EF_P_VIEW] = { "p", "p (adj)", CB_KIND_TEXT, CB_FIELD_VIEW | CB_FIELD_LEFT, 2, -1, 0, 0 },
	[EF_VERDICT] = { "verdict", "verdict", CB_KIND_TEXT, CHANGE_DATA | CB_FIELD_VIEW | CB_FIELD_LEFT, 0, -1, 0, 0 },
	[EF_RATIO_TEXT] = { "ratio_text", "ratio_text", CB_KIND_TEXT, CHANGE_JSON, 0, -1, 0, 0 },
	[EF_REPS_NEEDED] = { "reps_needed", "reps needed", CB_KIND_COUNT, CHANGE_JSON | CB_FIELD_VIEW, 3, -1, 0, 0 },
};

static bool opt_columns(void *o, const char *v)
{
	if (!cli_check_columns(est_fields, EF_COUNT, v))
		return false;
	EOPTS(o)->columns = v;
	return true;
}

/* The texts a group's record points at, alive until it is written. */
struct est_texts {
	char set[64], name[64], ci[64], change[96], ratio_text[96], p[40];
};

static void est_record(const struct group *g, struct cb_val v[EF_COUNT], struct est_texts *t, bool people,
		       enum cb_units_style st)
{
	const struct cb_change *c = &g->c.change;
	char a[32], b[32];

	for (size_t i = 0; i < EF_COUNT; i++)
		v[i] = cb_none();
	/* A CSV's text never drives the terminal: the table shows it made printable. */
	v[EF_SET] = cb_text(people ? cli_printable(g->set, t->set, sizeof(t->set)) : g->set);
	v[EF_GROUP] = cb_text(people ? cli_printable(g->name, t->name, sizeof(t->name)) : g->name);
	v[EF_N] = cb_num((double)g->e.n);
	v[EF_CENTRE] = cb_num(g->e.centre);
	v[EF_CI_LO] = cb_num(g->e.lo);
	v[EF_CI_HI] = cb_num(g->e.hi);
	v[EF_CI_LEVEL] = cb_num(g->e.level);
	if (!isnan(g->e.lo)) {
		snprintf(t->ci, sizeof(t->ci), "[%s, %s]", cb_fmt_value(a, sizeof(a), &v[EF_CI_LO], CB_KIND_NUMBER, st),
			 cb_fmt_value(b, sizeof(b), &v[EF_CI_HI], CB_KIND_NUMBER, st));
		v[EF_CI] = cb_text(t->ci);
	}
	if (!g->has_change)
		return;
	v[c->ratio ? EF_RATIO : EF_DIFF] = cb_num(c->est);
	v[c->ratio ? EF_RATIO_LO : EF_DIFF_LO] = cb_num(c->lo);
	v[c->ratio ? EF_RATIO_HI : EF_DIFF_HI] = cb_num(c->hi);
	v[EF_CHANGE_LEVEL] = cb_num(c->level);
	v[EF_P] = cb_num(g->c.p);
	v[EF_P_ADJ] = cb_num(g->c.p_adj);
	v[EF_VERDICT] = cb_text(g->verdict);
	if (c->ratio) {
		/* The one spelling of a ratio (cb_ratio_text), as every command prints it. */
		cb_ratio_text(t->ratio_text, sizeof(t->ratio_text), c->est, c->lo, c->hi);
		v[EF_RATIO_TEXT] = cb_text(t->ratio_text);
		v[EF_CHANGE] = cb_text(t->ratio_text);
	} else {
		struct cb_val lo = cb_num(c->lo), hi = cb_num(c->hi);

		snprintf(t->change, sizeof(t->change), isnan(c->lo) ? "%+.6g" : "%+.6g [%s, %s]", c->est,
			 cb_fmt_value(a, sizeof(a), &lo, CB_KIND_NUMBER, st), cb_fmt_value(b, sizeof(b), &hi, CB_KIND_NUMBER, st));
		v[EF_CHANGE] = cb_text(t->change);
	}
	snprintf(t->p, sizeof(t->p), "%.3g (%.3g)", g->c.p, g->c.p_adj);
	v[EF_P_VIEW] = cb_text(t->p);
	if (g->c.reps_needed)
		v[EF_REPS_NEEDED] = cb_num((double)g->c.reps_needed);
}

/* Every group through the output layer: one writer per format, the table fitted to the terminal. */
static int print_groups(FILE *fp, const struct est_opts *o, const struct groups *gs)
{
	bool people = o->format == CB_FORMAT_TABLE || o->format == CB_FORMAT_MARKDOWN;
	struct cb_out out;
	struct cb_val v[EF_COUNT];
	struct est_texts t;
	int err;

	if (cb_out_open(&out, fp, o->format, est_fields, EF_COUNT, o->columns) < 0)
		return -EINVAL; /* --columns was checked when parsed */
	for (size_t i = 0; i < gs->n; i++) {
		est_record(&gs->g[i], v, &t, people, out.units);
		if ((err = cb_out_record(&out, v)) < 0) {
			cb_out_close(&out);
			return err;
		}
	}
	return cb_out_close(&out);
}

int cmd_estimate(int argc, char **argv)
{
	struct est_opts o = { .format = CB_FORMAT_TABLE };
	struct groups gs = { 0 };
	struct cli_output out;
	const char *path;
	FILE *in;
	int argi, status = EXIT_USAGE, err;

	argi = cli_parse_options(argc, argv, est_options, N_EST_OPTIONS, &o, est_usage);
	if (argi < 0)
		return EXIT_USAGE;
	if (argc - argi > 1) {
		cli_error("estimate reads one CSV (or standard input), not %d files", argc - argi);
		return EXIT_USAGE;
	}
	path = argi < argc ? argv[argi] : "-";
	if (cli_output_not_input("--output", o.output, argv + argi, argc - argi) < 0)
		return EXIT_USAGE;
	in = strcmp(path, "-") ? fopen(path, "r") : stdin;
	if (!in) {
		cli_error("%s: %s", path, strerror(errno));
		return EXIT_USAGE;
	}
	err = read_values(in, path, &gs);
	if (in != stdin)
		fclose(in);
	if (!err && o.baseline) {
		bool found = false;

		for (size_t i = 0; i < gs.n && !found; i++)
			found = !strcmp(gs.g[i].name, o.baseline);
		if (!found) {
			cli_error("--baseline=%s: no group of that name", o.baseline);
			err = -1;
		}
	}
	if (!err && (err = estimate_all(&o, &gs)) != 0) {
		cli_error("estimate: %s", strerror(-err));
		status = EXIT_INTERNAL;
	} else if (!err && cli_output_begin(&out, o.output, o.force) == 0) {
		if (print_groups(out.fp, &o, &gs) < 0) {
			cli_output_abort(&out);
			cli_error("estimate: cannot write the output");
			status = EXIT_INTERNAL;
		} else {
			status = cli_output_commit(&out) < 0 ? EXIT_RUN_FAILED : 0;
		}
	}
	free_groups(&gs);
	return status;
}
