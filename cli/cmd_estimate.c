#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/compare.h>
#include <cowbench/error.h>
#include <cowbench/estimate.h>
#include <cowbench/report.h>
#include <cowbench/units.h>

#include "cli.h"

/*
 * cowbench estimate [FILE]: the statistics engine for numbers that are not
 * result rows (a Redis save's pause, a kernel bench's time): a CSV of
 * set,group,value (or group,value) in, per group the centre and interval,
 * and with --baseline=GROUP each other group of a set against that set's
 * baseline group, judged over the whole output as summarize and compare
 * judge theirs. The scripts under analysis/ and kernel/ call this instead
 * of computing an interval themselves.
 */

struct est_opts {
	const char *baseline;
	double alpha, threshold;
	enum cb_format format;
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

static const struct cli_option est_options[] = {
	{ "baseline", "GROUP", "also each group against the set's GROUP: ratio (or difference), interval, p, verdict",
	  .parse = opt_baseline },
	{ "format", "table|csv|json", "output: a table for people (default), CSV or JSON Lines",
	  CLI_SET(CLI_STORE_FORMAT, struct est_opts, format) },
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
	for (size_t i = 0; i < gs->n; i++)
		if (!strcmp(gs->g[i].set, set) && !strcmp(gs->g[i].name, name))
			return &gs->g[i];
	if (gs->n == gs->cap) {
		size_t cap = gs->cap ? 2 * gs->cap : 16;
		struct group *ng = realloc(gs->g, cap * sizeof(*ng));

		if (!ng)
			return NULL;
		gs->g = ng;
		gs->cap = cap;
	}
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
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 16;
		double *nv = realloc(g->v, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		g->v = nv;
		g->cap = cap;
	}
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

static void print_json(FILE *fp, const struct groups *gs)
{
	for (size_t i = 0; i < gs->n; i++) {
		const struct group *g = &gs->g[i];

		fputs("{\"set\":", fp);
		cb_json_string(fp, g->set);
		fputs(",\"group\":", fp);
		cb_json_string(fp, g->name);
		fprintf(fp, ",\"n\":%zu", g->e.n);
		cb_json_number(fp, "centre", g->e.centre);
		cb_json_number(fp, "ci_lo", g->e.lo);
		cb_json_number(fp, "ci_hi", g->e.hi);
		cb_json_number(fp, "ci_level", g->e.level);
		if (g->has_change) {
			const struct cb_change *c = &g->c.change;
			const char *k = c->ratio ? "ratio" : "difference";
			char name[32], text[96];

			cb_json_number(fp, k, c->est);
			snprintf(name, sizeof(name), "%s_ci_lo", k);
			cb_json_number(fp, name, c->lo);
			snprintf(name, sizeof(name), "%s_ci_hi", k);
			cb_json_number(fp, name, c->hi);
			cb_json_number(fp, "change_ci_level", c->level);
			cb_json_number(fp, "p", g->c.p);
			cb_json_number(fp, "p_adj", g->c.p_adj);
			fprintf(fp, ",\"verdict\":\"%s\"", g->verdict);
			if (c->ratio) {
				cb_ratio_text(text, sizeof(text), c->est, c->lo, c->hi);
				fputs(",\"ratio_text\":", fp);
				cb_json_string(fp, text);
			}
			if (g->c.reps_needed)
				fprintf(fp, ",\"reps_needed\":%zu", g->c.reps_needed);
		}
		fputc('}', fp);
		cb_record_end(fp);
	}
}

static void print_csv(FILE *fp, const struct groups *gs)
{
	fputs("set,group,n,centre,ci_lo,ci_hi,ci_level,ratio,ratio_ci_lo,ratio_ci_hi,difference,difference_ci_lo,"
	      "difference_ci_hi,change_ci_level,p,p_adj,verdict",
	      fp);
	cb_record_end(fp);
	for (size_t i = 0; i < gs->n; i++) {
		const struct group *g = &gs->g[i];
		const struct cb_change *c = &g->c.change;
		const double nums[] = { g->e.centre, g->e.lo, g->e.hi, g->e.level };

		cb_csv_write_field(fp, g->set);
		fputc(',', fp);
		cb_csv_write_field(fp, g->name);
		fprintf(fp, ",%zu", g->e.n);
		for (size_t k = 0; k < sizeof(nums) / sizeof(nums[0]); k++) {
			fputc(',', fp);
			cb_csv_number(fp, nums[k], -1);
		}
		for (int diff = 0; diff <= 1; diff++) {
			bool here = g->has_change && c->ratio == !diff;

			fputc(',', fp);
			cb_csv_number(fp, here ? c->est : NAN, -1);
			fputc(',', fp);
			cb_csv_number(fp, here ? c->lo : NAN, -1);
			fputc(',', fp);
			cb_csv_number(fp, here ? c->hi : NAN, -1);
		}
		fputc(',', fp);
		cb_csv_number(fp, g->has_change ? c->level : NAN, -1);
		fputc(',', fp);
		cb_csv_number(fp, g->has_change ? g->c.p : NAN, -1);
		fputc(',', fp);
		cb_csv_number(fp, g->has_change ? g->c.p_adj : NAN, -1);
		fprintf(fp, ",%s", g->verdict);
		cb_record_end(fp);
	}
}

static void print_table(FILE *fp, const struct groups *gs)
{
	fprintf(fp, "%-16s %-16s %5s %12s %27s %6s  %s\n", "set", "group", "n", "centre", "CI of centre", "CI%",
		"against the baseline [CI] p (adj) verdict");
	for (size_t i = 0; i < gs->n; i++) {
		const struct group *g = &gs->g[i];
		char set[64], name[64], ci[64];

		snprintf(ci, sizeof(ci), isnan(g->e.lo) ? "-" : "[%.6g, %.6g]", g->e.lo, g->e.hi);
		fprintf(fp, "%-16s %-16s %5zu %12.6g %27s %6.2f", cli_printable(g->set, set, sizeof(set)),
			cli_printable(g->name, name, sizeof(name)), g->e.n, g->e.centre, ci,
			isnan(g->e.level) ? 0 : g->e.level * 100);
		if (g->has_change) {
			const struct cb_change *c = &g->c.change;
			char text[96];

			if (c->ratio)
				cb_ratio_text(text, sizeof(text), c->est, c->lo, c->hi);
			else
				snprintf(text, sizeof(text), isnan(c->lo) ? "%+.6g" : "%+.6g [%.6g, %.6g]", c->est, c->lo,
					 c->hi);
			fprintf(fp, "  %s p %.3g (%.3g) %s", text, g->c.p, g->c.p_adj, g->verdict);
		}
		fputc('\n', fp);
	}
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
		if (o.format == CB_FORMAT_JSON)
			print_json(out.fp, &gs);
		else if (o.format == CB_FORMAT_CSV)
			print_csv(out.fp, &gs);
		else
			print_table(out.fp, &gs);
		status = cli_output_commit(&out) < 0 ? EXIT_RUN_FAILED : 0;
	}
	free_groups(&gs);
	return status;
}
