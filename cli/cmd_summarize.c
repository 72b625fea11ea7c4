#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/cowbench.h>
#include <cowbench/compare.h>
#include <cowbench/matrix.h>
#include <cowbench/order.h>
#include <cowbench/results.h>
#include <cowbench/summarize.h>
#include <cowbench/repstats.h>

#include "common/diag.h"
#include "common/args.h"
#include "common/outfile.h"
#include "trial/inputs.h"
#include "common/commands.h"

/*
 * cowbench summarize FILE...: per cell and metric the median, mean,
 * standard deviation, the engine's centre and interval (cowbench/estimate.h),
 * coefficient of variation and outliers; noisy cells named below the table
 * (on stderr for CSV and JSON, whose stdout is data); with
 * --baseline NAME=VALUE, each cell's ratio to the cell that differs only
 * in NAME having VALUE, with compare's interval, test and verdict.
 */

#define DEFAULT_METRICS "elapsed_ns,faults,fork_ns,slowdown"

struct sum_opts {
	const char *metrics;
	const char *baseline;     /* NAME=VALUE */
	char base_name[64], base_value[64];
	enum cb_format format;
	const char *output;
	bool force;
	bool quiet;
	const char *columns; /* --columns: the table's */
};

#define SOPTS(p) ((struct sum_opts *)(p))

static bool opt_metric(void *o, const char *v)
{
	char *copy = strdup(v), *rest = copy, *m;
	bool ok = copy != NULL;

	/* every item a numeric column: none empty ("," or "a,,b" name no column), none left unchecked */
	while (ok && (m = strsep(&rest, ","))) {
		if (!*m) {
			cli_error("--metric needs column names separated by commas, not '%.200s'", v);
			ok = false;
		} else if (!cli_numeric_column("--metric", m)) {
			ok = false;
		}
	}
	free(copy);
	if (!ok)
		return false;
	SOPTS(o)->metrics = v;
	return true;
}

static bool opt_baseline(void *o, const char *v)
{
	const char *eq = strchr(v, '=');

	if (!eq || eq == v || !eq[1] || (size_t)(eq - v) >= sizeof(SOPTS(o)->base_name) ||
	    strlen(eq + 1) >= sizeof(SOPTS(o)->base_value) || strchr(eq + 1, ' ')) {
		cli_error("--baseline must be NAME=VALUE (e.g. precopy=0 or fork=0), not '%s'", v);
		return false;
	}
	snprintf(SOPTS(o)->base_name, sizeof(SOPTS(o)->base_name), "%.*s", (int)(eq - v), v);
	snprintf(SOPTS(o)->base_value, sizeof(SOPTS(o)->base_value), "%s", eq + 1);
	SOPTS(o)->baseline = v;
	return true;
}

static bool opt_columns(void *o, const char *v);

static const struct cli_option sum_options[] = {
	{ "metric", "COL[,COL]", "numeric columns to summarise; default " DEFAULT_METRICS, .parse = opt_metric },
	{ "baseline", "NAME=VALUE", "also print each cell's ratio to the cell with NAME=VALUE (e.g. precopy=0)",
	  .parse = opt_baseline },
	{ "format", "table|csv|json|markdown", "output: a table for people (default), CSV, JSON Lines or Markdown",
	  CLI_SET(CLI_STORE_FORMAT, struct sum_opts, format) },
	{ "columns", "NAME[,NAME]", "the table's columns, in this order (default: what fits the terminal)",
	  .parse = opt_columns },
	{ "output", "FILE", "write to FILE instead of standard output (an existing FILE needs --force)",
	  CLI_SET(CLI_STORE_FILE, struct sum_opts, output) },
	{ "force", NULL, "replace an existing --output FILE", CLI_SET(CLI_STORE_TRUE, struct sum_opts, force) },
	{ "quiet", NULL, "no noisy-cell warnings on stderr", CLI_SET(CLI_STORE_TRUE, struct sum_opts, quiet) },
};

#define N_SUM_OPTIONS ((int)(sizeof(sum_options) / sizeof(sum_options[0])))

static void sum_usage(void)
{
	printf("usage: cowbench summarize [OPTIONS] RESULTS.csv...\n\n"
	       "Per cell (the CSV's cell column; for rows of cowbench run, their configuration)\n"
	       "and metric: n, median, mean, standard deviation, the Hodges-Lehmann centre\n"
	       "with its exact interval (95 %%, or the most n allows: 93.75 %% at 5 reps),\n"
	       "coefficient of variation and Tukey outliers. With --baseline, each cell's\n"
	       "ratio to its baseline cell as compare computes it: Hodges-Lehmann ratio, its\n"
	       "exact interval, Mann-Whitney p adjusted over every ratio printed\n"
	       "(Benjamini-Hochberg), and the verdict: better or worse where the metric has\n"
	       "a direction (less is better: times, faults), else higher or lower, or ~\n"
	       "(docs/reference.md, Statistics). Rows whose\n"
	       "status is not ok are counted as failed and left out, and so are the times of\n"
	       "evidence reps (rep_kind=evidence: an instrumented machine's; their evidence\n"
	       "columns count). A cell whose CV exceeds 10 %% is reported as noisy on stderr.\n\n");
	cli_print_options(sum_options, N_SUM_OPTIONS);
}

/*
 * A summary line's fields (cowbench/output.h): CSV columns and JSON keys as
 * scripts read them, and the table's columns for people. The numbers are
 * the engine's (cowbench/estimate.h); a ratio's or difference's fields are
 * in JSON only where the line has one (a ratio where every value is > 0,
 * else a difference), and JSON alone says whether a noisy line's cause was
 * found and spells the ratio as every command does (ratio_text).
 */
enum sum_field {
	SF_CELL, SF_METRIC, SF_N, SF_FAILED, SF_MEDIAN, SF_MEAN, SF_STDDEV, SF_CENTRE, SF_CI_LO, SF_CI_HI, SF_CI,
	SF_CI_LEVEL, SF_CV, SF_CV_VIEW, SF_OUTLIERS, SF_NOISY, SF_BASELINE, SF_RATIO, SF_RATIO_LO, SF_RATIO_HI, SF_DIFF,
	SF_DIFF_LO, SF_DIFF_HI, SF_RATIO_VIEW, SF_CHANGE_LEVEL, SF_P, SF_P_ADJ, SF_P_VIEW, SF_VERDICT, SF_RATIO_TEXT,
	SF_REPS_NEEDED, SF_TARGET, SF_FAILED_VIEW, SF_EXPLAINED, SF_CAUSE, SF_COUNT
};

#define CSV_JSON CB_FIELD_DATA
#define RATIO_JSON (CB_FIELD_JSON | CB_FIELD_OMIT_NULL)
#define RATIO_DATA (CB_FIELD_CSV | RATIO_JSON)

static const struct cb_field sum_fields[SF_COUNT] = {
	[SF_CELL] = { "cell", "cell", CB_KIND_TEXT, CB_FIELD_ALL | CB_FIELD_LEFT, 0, -1, 20, 0 },
	[SF_METRIC] = { "metric", "metric", CB_KIND_TEXT, CB_FIELD_ALL | CB_FIELD_LEFT, 0, -1, 0, 0 },
	[SF_N] = { "n", "n", CB_KIND_COUNT, CB_FIELD_ALL, 3, -1, 3, 0 },
	[SF_FAILED] = { "failed", "failed", CB_KIND_COUNT, CSV_JSON, 0, -1, 0, 0 },
	[SF_MEDIAN] = { "median", "median", CB_KIND_NUMBER, CB_FIELD_ALL, 5, -1, 0, 0 },
	[SF_MEAN] = { "mean", "mean", CB_KIND_NUMBER, CB_FIELD_ALL, 6, -1, 0, 0 },
	[SF_STDDEV] = { "stddev", "stddev", CB_KIND_NUMBER, CB_FIELD_ALL, 6, -1, 0, 0 },
	[SF_CENTRE] = { "centre", "centre", CB_KIND_NUMBER, CB_FIELD_ALL, 0, -1, 0, 0 },
	[SF_CI_LO] = { "ci_lo", "ci_lo", CB_KIND_NUMBER, CSV_JSON, 0, -1, 0, 0 },
	[SF_CI_HI] = { "ci_hi", "ci_hi", CB_KIND_NUMBER, CSV_JSON, 0, -1, 0, 0 },
	[SF_CI] = { "ci", "CI of centre", CB_KIND_TEXT, CB_FIELD_VIEW, 1, -1, 0, 0 },
	[SF_CI_LEVEL] = { "ci_level", "CI level", CB_KIND_FRACTION, CB_FIELD_ALL, 3, 4, 0, 0 },
	[SF_CV] = { "cv", "cv", CB_KIND_FRACTION, CSV_JSON, 0, 4, 0, 0 },
	[SF_CV_VIEW] = { "cv", "CV", CB_KIND_TEXT, CB_FIELD_VIEW, 2, -1, 0, 0 },
	[SF_OUTLIERS] = { "outliers", "outliers", CB_KIND_COUNT, CB_FIELD_ALL, 6, -1, 0, 0 },
	[SF_NOISY] = { "noisy", "noisy", CB_KIND_BOOL, CSV_JSON, 0, -1, 0, 0 },
	[SF_BASELINE] = { "baseline", "baseline", CB_KIND_TEXT, RATIO_DATA, 0, -1, 0, 0 },
	[SF_RATIO] = { "ratio", "ratio", CB_KIND_RATIO, RATIO_DATA, 0, 4, 0, 0 },
	[SF_RATIO_LO] = { "ratio_ci_lo", "ratio_ci_lo", CB_KIND_RATIO, RATIO_DATA, 0, 4, 0, 0 },
	[SF_RATIO_HI] = { "ratio_ci_hi", "ratio_ci_hi", CB_KIND_RATIO, RATIO_DATA, 0, 4, 0, 0 },
	[SF_DIFF] = { "difference", "difference", CB_KIND_NUMBER, RATIO_DATA, 0, -1, 0, 0 },
	[SF_DIFF_LO] = { "difference_ci_lo", "difference_ci_lo", CB_KIND_NUMBER, RATIO_DATA, 0, -1, 0, 0 },
	[SF_DIFF_HI] = { "difference_ci_hi", "difference_ci_hi", CB_KIND_NUMBER, RATIO_DATA, 0, -1, 0, 0 },
	[SF_RATIO_VIEW] = { "ratio", "ratio to baseline [CI]", CB_KIND_TEXT, CB_FIELD_VIEW, 0, -1, 0, 0 },
	[SF_CHANGE_LEVEL] = { "change_ci_level", "ratio CI level", CB_KIND_FRACTION, RATIO_DATA | CB_FIELD_VIEW, 4, 4, 0, 0 },
	[SF_P] = { "p", "p", CB_KIND_NUMBER, RATIO_DATA, 0, -1, 0, 0 },
	[SF_P_ADJ] = { "p_adj", "p_adj", CB_KIND_NUMBER, RATIO_DATA, 0, -1, 0, 0 },
	[SF_P_VIEW] = { "p", "p (adj)", CB_KIND_TEXT, CB_FIELD_VIEW | CB_FIELD_LEFT, 2, -1, 0, 0 },
	[SF_VERDICT] = { "verdict", "verdict", CB_KIND_TEXT, RATIO_DATA | CB_FIELD_VIEW | CB_FIELD_LEFT, 0, -1, 0, 0 },
	[SF_RATIO_TEXT] = { "ratio_text", "ratio_text", CB_KIND_TEXT, RATIO_JSON, 0, -1, 0, 0 },
	[SF_REPS_NEEDED] = { "reps_needed", "reps needed", CB_KIND_COUNT, RATIO_DATA | CB_FIELD_VIEW, 3, -1, 0, 0 },
	[SF_TARGET] = { "target_ci", "--target-ci", CB_KIND_TEXT, CB_FIELD_VIEW, 2, -1, 0, 0 },
	[SF_FAILED_VIEW] = { "failed", "failed", CB_KIND_COUNT, CB_FIELD_VIEW, 4, -1, 0, 0 },
	[SF_EXPLAINED] = { "noise_explained", "noise_explained", CB_KIND_BOOL, RATIO_JSON, 0, -1, 0, 0 },
	[SF_CAUSE] = { "noise_cause", "noise_cause", CB_KIND_TEXT, CB_FIELD_CSV | RATIO_JSON, 0, -1, 0, 0 },
};

/* The texts a line's record points at, alive until the record is written. */
struct sum_texts {
	char key[4 * CB_ROW_KEY_LEN], ci[96], cv[24], ratio[96], ratio_text[96], p[40], target[32];
};

/*
 * Adaptive reps (--target-ci): whether the cell's headline metric met the
 * target, from the stop column of its last rep; false for other lines.
 */
static bool target_text(const struct cb_summary_line *l, char *buf, size_t len)
{
	const struct cb_row_group *g = l->group;
	const struct cb_workload *w;

	if (!g || !g->n || !(w = cb_workload_find(g->rows[0]->workload)) || strcmp(cb_workload_headline(w), l->metric))
		return false;
	for (size_t i = g->n; i-- > 0;) {
		const char *stop = g->rows[i]->stop;

		if (!stop[0])
			continue;
		if (!strcmp(stop, "target"))
			snprintf(buf, len, "met");
		else
			snprintf(buf, len, "not met (%s)", stop);
		return true;
	}
	return false;
}

/* A difference to the baseline (a value <= 0: no ratio) in the metric's unit: "+3 [+1, +5]". */
static void difference_text(char *buf, size_t len, const struct cb_summary_line *l, enum cb_kind unit,
			    enum cb_units_style st)
{
	struct cb_val d = cb_num(l->ratio), lo = cb_num(l->rlo), hi = cb_num(l->rhi);
	char a[24], b[24], c[24];

	cb_fmt_value(a, sizeof(a), &d, unit, st);
	cb_fmt_value(b, sizeof(b), &lo, unit, st);
	cb_fmt_value(c, sizeof(c), &hi, unit, st);
	snprintf(buf, len, isnan(l->rlo) ? "%s%s" : "%s%s [%s, %s]", l->ratio >= 0 ? "+" : "", a, b, c);
}

static void sum_record(const struct sum_opts *o, const struct cb_summary_line *l, struct cb_val v[SF_COUNT],
		       struct sum_texts *t, bool people, enum cb_units_style st)
{
	enum cb_kind unit = cb_kind_of_metric(l->metric);
	char lo[24], hi[24];
	bool noisy = cb_summary_line_noisy(l);

	for (size_t i = 0; i < SF_COUNT; i++)
		v[i] = cb_none();
	/* A CSV's text never drives the terminal: the table shows it made printable. */
	v[SF_CELL] = cb_text(people ? cli_printable(l->key, t->key, sizeof(t->key)) : l->key);
	v[SF_METRIC] = cb_text(l->metric);
	v[SF_N] = cb_num((double)l->s.n);
	v[SF_FAILED] = cb_num((double)l->failed);
	v[SF_MEDIAN] = cb_num(l->s.median);
	v[SF_MEAN] = cb_num(l->s.mean);
	v[SF_STDDEV] = cb_num(l->s.stddev);
	v[SF_CENTRE] = cb_num(l->s.centre);
	v[SF_CI_LO] = cb_num(l->s.ci_lo);
	v[SF_CI_HI] = cb_num(l->s.ci_hi);
	v[SF_CI_LEVEL] = cb_num(l->s.ci_level);
	v[SF_MEDIAN].kind = v[SF_MEAN].kind = v[SF_STDDEV].kind = v[SF_CENTRE].kind = unit;
	if (!isnan(l->s.ci_lo)) {
		cb_fmt_value(lo, sizeof(lo), &v[SF_CI_LO], unit, st);
		cb_fmt_value(hi, sizeof(hi), &v[SF_CI_HI], unit, st);
		snprintf(t->ci, sizeof(t->ci), "[%s, %s]", lo, hi);
		v[SF_CI] = cb_text(t->ci);
	}
	v[SF_CV] = cb_num(l->s.cv);
	if (!isnan(l->s.cv)) {
		snprintf(t->cv, sizeof(t->cv), "%.1f %%%s", l->s.cv * 100, l->s.cv > CB_NOISY_CV ? "!" : "");
		v[SF_CV_VIEW] = cb_text(t->cv);
	}
	v[SF_OUTLIERS] = cb_num((double)l->s.outliers);
	v[SF_NOISY] = cb_bool(l->s.cv > CB_NOISY_CV);
	if (l->has_ratio) {
		bool ratio = l->c.change.ratio;

		v[SF_BASELINE] = cb_text(o->baseline);
		v[ratio ? SF_RATIO : SF_DIFF] = cb_num(l->ratio);
		v[ratio ? SF_RATIO_LO : SF_DIFF_LO] = cb_num(l->rlo);
		v[ratio ? SF_RATIO_HI : SF_DIFF_HI] = cb_num(l->rhi);
		v[SF_CHANGE_LEVEL] = cb_num(l->c.change.level);
		v[SF_P] = cb_num(l->c.p);
		v[SF_P_ADJ] = cb_num(l->c.p_adj);
		v[SF_VERDICT] = cb_text(l->verdict);
		if (ratio) {
			/* The one spelling of a ratio (cb_ratio_text): the table's and JSON's alike. */
			cb_ratio_text(t->ratio_text, sizeof(t->ratio_text), l->ratio, l->rlo, l->rhi);
			v[SF_RATIO_TEXT] = cb_text(t->ratio_text);
			v[SF_RATIO_VIEW] = cb_text(t->ratio_text);
		} else {
			difference_text(t->ratio, sizeof(t->ratio), l, unit, st);
			v[SF_RATIO_VIEW] = cb_text(t->ratio);
		}
		snprintf(t->p, sizeof(t->p), l->c.p < 0.001 ? "<0.001" : "%.3f", l->c.p);
		snprintf(t->p + strlen(t->p), sizeof(t->p) - strlen(t->p), l->c.p_adj < 0.001 ? " (<0.001)" : " (%.3f)",
			 l->c.p_adj);
		v[SF_P_VIEW] = cb_text(t->p);
		if (l->c.reps_needed)
			v[SF_REPS_NEEDED] = cb_num((double)l->c.reps_needed);
	}
	if (target_text(l, t->target, sizeof(t->target)))
		v[SF_TARGET] = cb_text(t->target);
	if (l->failed)
		v[SF_FAILED_VIEW] = cb_num((double)l->failed);
	if (noisy) {
		v[SF_EXPLAINED] = cb_bool(l->explained);
		v[SF_CAUSE] = cb_text(l->cause);
	}
}

static bool opt_columns(void *o, const char *v)
{
	if (!cli_check_columns(sum_fields, SF_COUNT, v))
		return false;
	SOPTS(o)->columns = v;
	return true;
}

/* Table and Markdown: for people, who read the noisy cells in the closing section. */
static bool people(enum cb_format f)
{
	return f == CB_FORMAT_TABLE || f == CB_FORMAT_MARKDOWN;
}

static void emit(struct cb_out *out, const struct sum_opts *o, const struct cb_summary_line *l)
{
	struct cb_val v[SF_COUNT];
	struct sum_texts t;

	sum_record(o, l, v, &t, people(o->format), out->units);
	cb_out_record(out, v);
}

/* What the table prints under itself: each noisy line and what co-varied with its odd reps. */
struct noisy_list {
	char **text;
	size_t n, explained;
};

static void noisy_add(struct noisy_list *nl, const struct cb_summary_line *l)
{
	char **t = realloc(nl->text, (nl->n + 1) * sizeof(*t)), *s = NULL;

	if (!t)
		return;
	nl->text = t;
	char key[4 * CB_ROW_KEY_LEN];

	if (asprintf(&s, "%s %s (CV %.1f %%): %s", cli_printable(l->key, key, sizeof(key)), l->metric, l->s.cv * 100,
		     l->cause) >= 0)
		nl->text[nl->n++] = s;
	nl->explained += l->explained == 1;
}

/* Each line the library computes, printed; a noisy one also said on stderr where stdout is data. */
struct printer {
	struct cb_out *out;
	const struct sum_opts *o;
	size_t ratios;
	struct noisy_list nl;
};

static int print_line(void *arg, const struct cb_summary_line *l)
{
	struct printer *pr = arg;

	if (cb_summary_line_noisy(l)) {
		noisy_add(&pr->nl, l);
		/* The table says it in its closing section: stderr only where stdout is data. */
		if (!pr->o->quiet && !people(pr->o->format)) {
			char key[4 * CB_ROW_KEY_LEN];

			fprintf(stderr, "cowbench: warning: noisy cell (CV %.1f %% > %.0f %%): %s %s: %s\n",
				l->s.cv * 100, CB_NOISY_CV * 100, cli_printable(l->key, key, sizeof(key)), l->metric,
				l->cause);
		}
	}
	emit(pr->out, pr->o, l);
	pr->ratios += l->has_ratio;
	return 0;
}

static int summarize_rows(FILE *fp, const struct cb_row *rows, size_t n, const struct sum_opts *opts)
{
	struct sum_opts o = *opts;
	struct cb_row_group *g;
	size_t ng;
	struct cb_out out;
	struct printer pr = { .out = &out, .o = &o };
	struct noisy_list *nl = &pr.nl;
	char line[512];
	int err, width;

	if (o.baseline && !opt_baseline(&o, o.baseline))
		return -EINVAL;
	if (cb_out_open(&out, fp, o.format, sum_fields, SF_COUNT, o.columns) < 0)
		return -EINVAL;
	if (cb_group_rows(rows, n, &g, &ng) < 0)
		return -ENOMEM;
	width = out.width;
	err = cb_summarize_cells(g, ng,
				 &(struct cb_summarize_opts){ .metrics = o.metrics, .base_name = o.baseline ? o.base_name : NULL,
							      .base_value = o.base_value },
				 print_line, &pr);
	cb_out_close(&out);
	if (!err && people(o.format)) {
		int k = snprintf(line, sizeof(line), "%zu cells, %zu rows; %zu noisy (CV > %.0f %%)", ng, n, nl->n,
				 CB_NOISY_CV * 100);

		if (nl->n)
			snprintf(line + k, sizeof(line) - (size_t)k, ", marked !; %zu with a stated cause, %zu without",
				 nl->explained, nl->n - nl->explained);
		fputc('\n', fp);
		cb_print_wrapped(fp, width, 2, line);
		cb_print_wrapped(fp, width, 2,
				 "centre: Hodges-Lehmann (on logs); CI: its exact distribution-free interval, CI level its "
				 "exact coverage (95 % or more where n allows); docs/reference.md, Statistics.");
		if (o.baseline) {
			struct cb_compare_opts co = CB_COMPARE_DEFAULTS;

			snprintf(line, sizeof(line),
				 "ratio: two-sample Hodges-Lehmann (a difference where a value is <= 0); p: Mann-Whitney "
				 "U, adjusted over every ratio (Benjamini-Hochberg); better/worse (less is better) or "
				 "higher/lower (no direction): p (adj) < %g and the CI beyond +-%g %% (counts: and more "
				 "than %g apart).",
				 co.alpha, co.threshold * 100, CB_COUNT_FLOOR);
			cb_print_wrapped(fp, width, 2, line);
		}
		if (nl->n)
			cb_print_wrapped(fp, width, 2,
					 "\nNoisy cells and what co-varied with their odd reps (noise columns: docs/reference.md):");
		for (size_t i = 0; i < nl->n; i++) {
			fputs("  ", fp);
			cb_print_wrapped(fp, width ? width - 2 : 0, 4, nl->text[i]);
		}
	}
	for (size_t i = 0; i < nl->n; i++)
		free(nl->text[i]);
	free(nl->text);
	if (!err && o.baseline && pr.ratios == 0)
		cli_note("--baseline %s: no cell has a matching baseline cell", o.baseline);
	cb_row_groups_free(g, ng);
	return err;
}

/* The summary to stdout, or to --output through a temporary file renamed into place. */
static int write_summary(const struct sum_opts *o, const struct cli_inputs *in)
{
	struct cli_output out;
	int err;

	if (cli_output_begin(&out, o->output, o->force) < 0)
		return EXIT_USAGE;
	err = summarize_rows(out.fp, in->rows, in->nrows, o);
	if (err) {
		cli_output_abort(&out);
		cli_error("summarize: %s", strerror(-err));
		return EXIT_INTERNAL;
	}
	return cli_output_commit(&out) < 0 ? EXIT_RUN_FAILED : 0;
}

int cmd_summarize(int argc, char **argv)
{
	struct sum_opts o = { .metrics = DEFAULT_METRICS, .format = CB_FORMAT_TABLE };
	int argi;

	argi = cli_parse_options(argc, argv, sum_options, N_SUM_OPTIONS, &o, sum_usage);
	struct cli_inputs in;
	int err;

	if (argi < 0)
		return EXIT_USAGE;
	if (argi >= argc) {
		cli_error("summarize needs a results CSV (see cowbench summarize --help)");
		return EXIT_USAGE;
	}
	if (cli_output_not_input("--output", o.output, argv + argi, argc - argi) < 0)
		return EXIT_USAGE;
	if (cli_inputs_read(&in, argc - argi, argv + argi) < 0 || cli_inputs_check_duplicates(&in, CB_DUP_MEASUREMENT) < 0) {
		cli_inputs_free(&in);
		return EXIT_USAGE;
	}
	if (in.nrows == 0) {
		cli_error("no result rows in %s%s", in.files[0], in.nfiles > 1 ? " and the other files" : "");
		cli_inputs_free(&in);
		return EXIT_USAGE;
	}
	err = write_summary(&o, &in);
	cli_inputs_free(&in);
	return err;
}
