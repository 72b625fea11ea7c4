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
#include <cowbench/summary.h>

#include "cli.h"

/*
 * cowbench summarize FILE...: per cell and metric the median, mean,
 * standard deviation, 95 % bootstrap interval of the mean, coefficient of
 * variation and outliers; noisy cells named below the table (on stderr
 * for CSV and JSON, whose stdout is data); with
 * --baseline NAME=VALUE, each cell's ratio to the cell that differs only
 * in NAME having VALUE.
 */

#define DEFAULT_METRICS "elapsed_ns,faults,fork_ns,slowdown"
#define BOOT_SEED CLI_BOOT_SEED /* fixed: the same input gives the same intervals */

struct sum_opts {
	const char *metrics;
	const char *baseline;     /* NAME=VALUE */
	char base_name[64], base_value[64];
	enum cb_format format;
	const char *output;
	bool force;
	bool quiet;
	int keyw; /* width of the cell column in the table */
	enum cb_center ratio_center; /* --ratio-center: mean or trimmed */
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

static bool opt_ratio_center(void *o, const char *v)
{
	return cli_parse_ratio_center(v, &SOPTS(o)->ratio_center);
}

static const struct cli_option sum_options[] = {
	{ "metric", "COL[,COL]", "numeric columns to summarise; default " DEFAULT_METRICS, .parse = opt_metric },
	{ "baseline", "NAME=VALUE", "also print each cell's ratio to the cell with NAME=VALUE (e.g. precopy=0)",
	  .parse = opt_baseline },
	{ "ratio-center", "mean|trimmed", "that ratio divides means (the default) or 10 % trimmed means", .parse = opt_ratio_center },
	{ "format", "table|csv|json", "output: a table for people (default), CSV or JSON Lines",
	  CLI_SET(CLI_STORE_FORMAT, struct sum_opts, format) },
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
	       "and metric: n, median, mean, standard deviation, 95 %% bootstrap confidence\n"
	       "interval of the mean, coefficient of variation and Tukey outliers. Rows whose\n"
	       "status is not ok are counted as failed and left out, and so are the times of\n"
	       "evidence reps (rep_kind=evidence: an instrumented machine's; their evidence\n"
	       "columns count). A cell whose CV exceeds 10 %% is reported as noisy on stderr.\n\n");
	cli_print_options(sum_options, N_SUM_OPTIONS);
}

/* A CSV number (cowbench/report.h): empty when not measured; ratio-like values keep 4 decimals. */
static void num(FILE *fp, double v, bool fixed)
{
	cb_csv_number(fp, v, fixed ? 4 : -1);
}

static void csv_header(FILE *fp)
{
	fputs("cell,metric,n,failed,median,mean,stddev,ci95_lo,ci95_hi,cv,outliers,noisy,baseline,ratio_pairs,ratio,ratio_ci95_lo,"
	      "ratio_ci95_hi,noise_cause",
	      fp);
	cb_record_end(fp);
}

static void csv_line(FILE *fp, const struct cb_summary_line *l, const char *baseline)
{
	cb_csv_write_field(fp, l->key);
	fprintf(fp, ",%s,%zu,%zu,", l->metric, l->s.n, l->failed);
	num(fp, l->s.median, false);
	fputc(',', fp);
	num(fp, l->s.mean, false);
	fputc(',', fp);
	num(fp, l->s.stddev, false);
	fputc(',', fp);
	num(fp, l->s.ci_lo, false);
	fputc(',', fp);
	num(fp, l->s.ci_hi, false);
	fputc(',', fp);
	num(fp, l->s.cv, true);
	fprintf(fp, ",%zu,%d,%s,", l->s.outliers, l->s.cv > CB_NOISY_CV, l->has_ratio ? baseline : "");
	if (l->pairs)
		fprintf(fp, "%zu", l->pairs);
	fputc(',', fp);
	if (l->has_ratio) {
		num(fp, l->ratio, true);
		fputc(',', fp);
		num(fp, l->rlo, true);
		fputc(',', fp);
		num(fp, l->rhi, true);
	} else {
		fputs(",,", fp);
	}
	fputc(',', fp);
	cb_csv_write_field(fp, cb_summary_line_noisy(l) ? l->cause : "");
	cb_record_end(fp);
}

static void json_line(FILE *fp, const struct cb_summary_line *l, const char *baseline)
{
	fputs("{\"cell\":", fp);
	cb_json_string(fp, l->key);
	fputs(",\"metric\":", fp);
	cb_json_string(fp, l->metric);
	fprintf(fp, ",\"n\":%zu,\"failed\":%zu", l->s.n, l->failed);
	cb_json_number(fp, "median", l->s.median);
	cb_json_number(fp, "mean", l->s.mean);
	cb_json_number(fp, "stddev", l->s.stddev);
	cb_json_number(fp, "ci95_lo", l->s.ci_lo);
	cb_json_number(fp, "ci95_hi", l->s.ci_hi);
	cb_json_number(fp, "cv", l->s.cv);
	fprintf(fp, ",\"outliers\":%zu,\"noisy\":%s", l->s.outliers, l->s.cv > CB_NOISY_CV ? "true" : "false");
	if (l->has_ratio) {
		fputs(",\"baseline\":", fp);
		cb_json_string(fp, baseline);
		cb_json_number(fp, "ratio", l->ratio);
		cb_json_number(fp, "ratio_ci95_lo", l->rlo);
		cb_json_number(fp, "ratio_ci95_hi", l->rhi);
		fprintf(fp, ",\"ratio_pairs\":%zu", l->pairs);
	}
	if (cb_summary_line_noisy(l)) {
		fprintf(fp, ",\"noise_explained\":%s,\"noise_cause\":", l->explained ? "true" : "false");
		cb_json_string(fp, l->cause);
	}
	fputc('}', fp);
	cb_record_end(fp);
}

static void table_header(FILE *fp, bool ratios, enum cb_center c, int keyw)
{
	fprintf(fp, "%-*s %-19s %3s %9s %9s %9s %21s %6s %4s", keyw, "cell", "metric", "n", "median", "mean", "stddev",
		"95% CI of mean", "CV%", "out");
	if (ratios)
		fprintf(fp, "  %-26s", c == CB_CENTER_TRIMMED ? "ratio of trimmed means [95% CI]" :
						       "ratio to baseline [95% CI]");
	fputc('\n', fp);
}

static void table_line(FILE *fp, const struct cb_summary_line *l, bool ratios, int keyw)
{
	char med[24], mean[24], sd[24], lo[24], hi[24], ci[56], cv[16], key[4 * CB_ROW_KEY_LEN];
	enum cb_units_style st = cb_units_style_for(fp);

	cb_fmt_metric(med, sizeof(med), l->s.median, l->metric, st);
	cb_fmt_metric(mean, sizeof(mean), l->s.mean, l->metric, st);
	cb_fmt_metric(sd, sizeof(sd), l->s.stddev, l->metric, st);
	cb_fmt_metric(lo, sizeof(lo), l->s.ci_lo, l->metric, st);
	cb_fmt_metric(hi, sizeof(hi), l->s.ci_hi, l->metric, st);

	snprintf(ci, sizeof(ci), "[%s, %s]", lo, hi);
	if (isnan(l->s.cv))
		snprintf(cv, sizeof(cv), "-");
	else
		snprintf(cv, sizeof(cv), "%.1f%s", l->s.cv * 100, l->s.cv > CB_NOISY_CV ? "!" : "");
	fprintf(fp, "%-*s %-19s %3zu %*s %*s %*s %*s %6s %4zu", keyw, cli_printable(l->key, key, sizeof(key)), l->metric,
		l->s.n, cb_pad_width(med, 9),
		med, cb_pad_width(mean, 9), mean, cb_pad_width(sd, 9), sd, cb_pad_width(ci, 21), ci, cv, l->s.outliers);
	if (ratios && l->has_ratio)
		fprintf(fp, "  %.3f [%.3f, %.3f]%s", l->ratio, l->rlo, l->rhi, l->pairs ? " paired" : "");
	if (l->failed)
		fprintf(fp, "  (%zu failed)", l->failed);
	fputc('\n', fp);
}

static void emit(FILE *fp, const struct sum_opts *o, const struct cb_summary_line *l)
{
	if (o->format == CB_FORMAT_CSV)
		csv_line(fp, l, o->baseline);
	else if (o->format == CB_FORMAT_JSON)
		json_line(fp, l, o->baseline);
	else
		table_line(fp, l, o->baseline != NULL, o->keyw);
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
	FILE *fp;
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
		if (!pr->o->quiet && pr->o->format != CB_FORMAT_TABLE) {
			char key[4 * CB_ROW_KEY_LEN];

			fprintf(stderr, "cowbench: warning: noisy cell (CV %.1f %% > %.0f %%): %s %s: %s\n",
				l->s.cv * 100, CB_NOISY_CV * 100, cli_printable(l->key, key, sizeof(key)), l->metric,
				l->cause);
		}
	}
	emit(pr->fp, pr->o, l);
	pr->ratios += l->has_ratio;
	return 0;
}

static int summarize_rows(FILE *fp, const struct cb_row *rows, size_t n, const char *metrics, int format,
			  const char *baseline, enum cb_center ratio_center, bool quiet)
{
	struct sum_opts o = { .metrics = metrics ? metrics : DEFAULT_METRICS, .format = format, .quiet = quiet,
			      .ratio_center = ratio_center };
	struct cb_row_group *g;
	size_t ng;
	struct printer pr = { .fp = fp, .o = &o };
	struct noisy_list *nl = &pr.nl;
	int err;

	if (baseline && !opt_baseline(&o, baseline))
		return -EINVAL;
	if (cb_group_rows(rows, n, &g, &ng) < 0)
		return -ENOMEM;
	o.keyw = 20;
	for (size_t i = 0; i < ng; i++)
		if ((int)strlen(g[i].key) > o.keyw)
			o.keyw = (int)strlen(g[i].key);
	if (format == CB_FORMAT_CSV)
		csv_header(fp);
	else if (format == CB_FORMAT_TABLE)
		table_header(fp, baseline != NULL, o.ratio_center, o.keyw);
	err = cb_summarize_cells(g, ng,
				 &(struct cb_summarize_opts){ .metrics = o.metrics, .base_name = baseline ? o.base_name : NULL,
							      .base_value = o.base_value, .ratio_center = o.ratio_center,
							      .seed = BOOT_SEED },
				 print_line, &pr);
	if (!err && format == CB_FORMAT_TABLE) {
		fprintf(fp, "\n%zu cells, %zu rows; %zu noisy (CV > %.0f %%)", ng, n, nl->n, CB_NOISY_CV * 100);
		if (nl->n)
			fprintf(fp, ", marked !; %zu with a stated cause, %zu without", nl->explained,
				nl->n - nl->explained);
		fputc('\n', fp);
		if (nl->n)
			fprintf(fp, "\nNoisy cells and what co-varied with their odd reps (noise columns: docs/reference.md):\n");
		for (size_t i = 0; i < nl->n; i++)
			fprintf(fp, "  %s\n", nl->text[i]);
	}
	for (size_t i = 0; i < nl->n; i++)
		free(nl->text[i]);
	free(nl->text);
	if (!err && baseline && pr.ratios == 0)
		cli_note("--baseline %s: no cell has a matching baseline cell", baseline);
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
	err = summarize_rows(out.fp, in->rows, in->nrows, o->metrics, o->format, o->baseline, o->ratio_center,
				 o->quiet);
	if (err) {
		cli_output_abort(&out);
		cli_error("summarize: %s", strerror(-err));
		return EXIT_INTERNAL;
	}
	return cli_output_commit(&out) < 0 ? EXIT_RUN_FAILED : 0;
}

int cmd_summarize(int argc, char **argv)
{
	struct sum_opts o = { .metrics = DEFAULT_METRICS, .format = CB_FORMAT_TABLE, .ratio_center = CB_CENTER_MEAN };
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
