#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cowbench/cowbench.h>
#include <cowbench/matrix.h>
#include <cowbench/results.h>
#include <cowbench/repstats.h>

#include <dirent.h>

#include "common/diag.h"
#include "common/args.h"
#include "common/outfile.h"
#include "common/paths.h"
#include "trial/inputs.h"
#include "common/commands.h"
#include "plot_charts.h"

/*
 * cowbench plot RESULTS.csv... --out DIR: the CSV alone in, plots and a
 * report out. This file turns rows into small data files (DIR/data/NAME.dat
 * plus NAME.gp with titles and counts); gnuplot/plot.sh runs the gnuplot
 * script of each one into PNG and SVG; DIR/report.md ties them together.
 * A plot whose rows are absent (no fork workload, no snapshot) is skipped.
 * Everything is written into a private folder inside DIR and renamed into
 * place when whole, so gnuplot reads only files this run wrote (never a
 * planted DIR/data/NAME.gp, nor an earlier run's data) and no file in DIR
 * is written through: a link, FIFO or device there is refused before
 * anything runs.
 */

extern char **environ;


#define MAX_SAMPLES 8

struct plot_opts {
	const char *out;
	const char *samples[MAX_SAMPLES]; /* --samples files of cowbench run, for index_N */
	int nsamples;
	bool quiet, force;
};

static bool opt_out(void *o, const char *v)
{
	if (!*v) {
		cli_error("--out needs a directory");
		return false;
	}
	((struct plot_opts *)o)->out = v;
	return true;
}

static bool opt_samples(void *o, const char *v)
{
	struct plot_opts *po = o;

	if (!*v) {
		cli_error("--samples needs a file name");
		return false;
	}
	if (po->nsamples == MAX_SAMPLES) {
		cli_error("at most %d --samples files", MAX_SAMPLES);
		return false;
	}
	po->samples[po->nsamples++] = v;
	return true;
}

static const struct cli_option plot_options[] = {
	{ "out", "DIR", "write DIR/*.png, DIR/*.svg, DIR/data/ and DIR/report.md (created)", opt_out, .letter = 'o' },
	{ "samples", "FILE", "a --samples file of cowbench run: plot latency against write index "
	  "(repeatable)", .parse = opt_samples },
	{ "quiet", NULL, "do not say on stderr what was written", CLI_SET(CLI_STORE_TRUE, struct plot_opts, quiet) },
	{ "force", NULL, "replace the plots of an earlier run in DIR (its report.md)",
	  CLI_SET(CLI_STORE_TRUE, struct plot_opts, force) },
};

#define N_PLOT_OPTIONS ((int)(sizeof(plot_options) / sizeof(plot_options[0])))

static void plot_usage(void)
{
	printf("usage: cowbench plot RESULTS.csv... --out DIR\n\n"
	       "Render, from the CSV alone, with gnuplot: first what a write costs after fork (each cell\n"
	       "against its --no-fork twin, centres and their ratio with intervals), then first-write latency\n"
	       "distributions per workload, the pre-copy trade-off, latency against write index (--samples\n"
	       "files), runtime and faults by pre-copy mode, fork latency against size, snapshot slowdown by\n"
	       "method and the time-per-fault breakdown, as PNG and SVG, plus DIR/report.md. Plots whose rows\n"
	       "are absent are skipped. Prints the files it wrote, one a line. Its gnuplot scripts: the source\n"
	       "tree's cli/plot/gnuplot/ from a build, else share/cowbench/plot ($COWBENCH_PLOT_DIR overrides).\n\n");
	cli_print_options(plot_options, N_PLOT_OPTIONS);
}

/* ---- small helpers ---- */

static double median_of(double *v, size_t n)
{
	struct cb_summary s;

	return n && cb_summarize(v, n, &s) == 0 ? s.median : NAN;
}

/* Median of a column over a group's ok rows (NAN when not measured). */
static double group_median(const struct cb_row_group *g, const char *col)
{
	double *v = malloc((g->n ? g->n : 1) * sizeof(*v)), m;

	if (!v)
		return NAN;
	m = median_of(v, cb_group_values(g, col, v));
	free(v);
	return m;
}

/* The engine's centre and interval of a column, scaled; lo/hi fall back to the centre (no whisker) for one rep. */
static bool group_mean_ci(const struct cb_row_group *g, const char *col, double scale, double out[3])
{
	double *v = malloc((g->n ? g->n : 1) * sizeof(*v));
	struct cb_summary s;
	size_t n;

	if (!v)
		return false;
	n = cb_group_values(g, col, v);
	if (n == 0 || cb_summarize(v, n, &s) < 0) {
		free(v);
		return false;
	}
	free(v);
	out[0] = s.centre * scale;
	out[1] = (isnan(s.ci_lo) ? s.centre : s.ci_lo) * scale;
	out[2] = (isnan(s.ci_hi) ? s.centre : s.ci_hi) * scale;
	return true;
}

struct plots {
	const char *dir;
	struct cb_row_group *g;
	size_t ng;
	char made[48][64]; /* names of the plots written, for the report */
	char caption[48][200];
	size_t nmade;
};

static void made(struct plots *p, const char *name, const char *caption)
{
	if (p->nmade < sizeof(p->made) / sizeof(p->made[0])) {
		snprintf(p->made[p->nmade], sizeof(p->made[0]), "%s", name);
		snprintf(p->caption[p->nmade++], sizeof(p->caption[0]), "%s", caption);
	}
}

static void made_cb(void *arg, const char *name, const char *caption)
{
	made(arg, name, caption);
}

static const struct {
	const char *col;
	double frac;
} cdf_points[] = {
	{ "lat_min_ns", 0.0 }, { "lat_p50_ns", 0.5 }, { "lat_p90_ns", 0.9 },
	{ "lat_p99_ns", 0.99 }, { "lat_p999_ns", 0.999 }, { "lat_max_ns", 1.0 },
};

static bool plot_name_ok(const char *name)
{
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'))
			return false;
	return *name != '\0';
}

static int plot_cdf_workload(struct plots *p, const char *wl)
{
	struct dataset s;
	struct plot_keyset ks = { .n = 0 };
	char name[64], label[CB_ROW_KEY_LEN], caption[200];
	int blocks = 0;

	snprintf(name, sizeof(name), "cdf_%s", wl);
	if (!plot_name_ok(name)) { /* a file name and a gnuplot argument: an identifier only */
		uint32_t h = 2166136261u;

		for (const char *c = wl; *c; c++)
			h = (h ^ (unsigned char)*c) * 16777619u;
		snprintf(name, sizeof(name), "cdf_%08x", h);
	}
	for (size_t i = 0; i < p->ng; i++)
		if (strcmp(plot_group_workload(&p->g[i]), wl) == 0 && !isnan(group_median(&p->g[i], "lat_p50_ns")))
			plot_keyset_add(&ks, p->g[i].key);
	if (ks.n == 0)
		return 0;
	if (plot_dataset_open(&s, p->dir, name) < 0)
		return -1;
	for (size_t i = 0; i < p->ng; i++) {
		const struct cb_row_group *g = &p->g[i];

		if (strcmp(plot_group_workload(g), wl) != 0 || isnan(group_median(g, "lat_p50_ns")))
			continue;
		plot_label_of(&ks, g->key, false, label, sizeof(label));
		fprintf(s.dat, "%s", blocks ? "\n\n" : "");
		gp_data_label(s.dat, label);
		fputs("\t\"fraction\"\n", s.dat);
		for (size_t k = 0; k < sizeof(cdf_points) / sizeof(cdf_points[0]); k++)
			fprintf(s.dat, "%.1f\t%.3f\n", group_median(g, cdf_points[k].col), cdf_points[k].frac);
		blocks++;
	}
	if (blocks == 0) {
		plot_dataset_discard(&s);
		return 0;
	}
	fprintf(s.meta, "N = %d\nworkload = ", blocks);
	plot_gp_string(s.meta, wl);
	fputc('\n', s.meta);
	plot_meta_context(s.meta, &ks);
	snprintf(caption, sizeof(caption), "First-write latency CDF of workload %s (from per-rep percentiles)", wl);
	made(p, name, caption);
	return plot_dataset_close(&s);
}

static int plot_cdfs(struct plots *p)
{
	for (size_t i = 0; i < p->ng; i++) {
		const char *wl = plot_group_workload(&p->g[i]);
		bool seen = false;

		for (size_t j = 0; j < i; j++)
			seen = seen || strcmp(plot_group_workload(&p->g[j]), wl) == 0;
		/* Where rows carry lat_hist, dist_WL draws every write instead of six percentiles. */
		if (*wl && !seen && !plot_dist_covers(p->g, p->ng, wl) && plot_cdf_workload(p, wl) < 0)
			return -1;
	}
	return 0;
}

/* ---- 2. runtime and faults by pre-copy mode, with CI whiskers ---- */

static void precopy_mode(const struct cb_row_group *g, char *buf, size_t len)
{
	if (g->n && g->rows[0]->precopy != CB_NA)
		snprintf(buf, len, "precopy=%lld", (long long)g->rows[0]->precopy);
	else
		snprintf(buf, len, "stock-kernel");
}

/* A cluster of the precopy plot: a cell less its pre-copy mode and fork. */
static const char *const precopy_fork[] = { "precopy", "fork", NULL };

static int plot_precopy(struct plots *p)
{
	char modes[8][32], clusters[64][CB_ROW_KEY_LEN], mode[32], label[CB_ROW_KEY_LEN];
	size_t nm = 0, nc = 0;
	struct dataset s;
	struct plot_keyset ks = { .n = 0 };

	/* Modes and clusters (cells of the page-order workloads with a fork, pre-copy aside). */
	for (size_t i = 0; i < p->ng; i++) {
		const struct cb_row_group *g = &p->g[i];
		size_t k;

		if (!g->n || !g->rows[0]->fork || isnan(group_median(g, "lat_p50_ns")))
			continue;
		precopy_mode(g, mode, sizeof(mode));
		for (k = 0; k < nm && strcmp(modes[k], mode); k++)
			;
		if (k == nm && nm < 8)
			snprintf(modes[nm++], sizeof(modes[0]), "%s", mode);
		plot_key_strip(g->key, precopy_fork, label, sizeof(label));
		for (k = 0; k < nc && strcmp(clusters[k], label); k++)
			;
		if (k == nc && nc < 64)
			snprintf(clusters[nc++], sizeof(clusters[0]), "%s", label);
	}
	if (nc == 0)
		return 0;
	if (nm == 1) { /* one series (a stock kernel): the bars would compare nothing */
		fprintf(stderr, "cowbench: note: precopy plot skipped: the rows have one pre-copy mode (%s)\n",
			strcmp(modes[0], "stock-kernel") == 0 ? "a stock kernel" : modes[0]);
		return 0;
	}
	for (size_t c = 0; c < nc; c++)
		plot_keyset_add(&ks, clusters[c]);
	if (plot_dataset_open(&s, p->dir, "precopy") < 0)
		return -1;
	fprintf(s.dat, "# cluster, then per mode: runtime centre lo hi (ms), faults centre lo hi\n");
	for (size_t c = 0; c < nc; c++) {
		plot_label_of(&ks, clusters[c], false, label, sizeof(label));
		gp_data_label(s.dat, label);
		for (size_t m = 0; m < nm; m++) {
			double rt[3] = { NAN, NAN, NAN }, ft[3] = { NAN, NAN, NAN };

			for (size_t i = 0; i < p->ng; i++) {
				const struct cb_row_group *g = &p->g[i];

				if (!g->n || !g->rows[0]->fork)
					continue;
				precopy_mode(g, mode, sizeof(mode));
				plot_key_strip(g->key, precopy_fork, label, sizeof(label));
				if (strcmp(mode, modes[m]) || strcmp(label, clusters[c]))
					continue;
				group_mean_ci(g, "elapsed_ns", 1e-6, rt);
				group_mean_ci(g, "faults", 1.0, ft);
			}
			fprintf(s.dat, "\t%g\t%g\t%g\t%g\t%g\t%g", rt[0], rt[1], rt[2], ft[0], ft[1], ft[2]);
		}
		fputc('\n', s.dat);
	}
	fprintf(s.meta, "N = %zu\nmodes = \"", nm);
	for (size_t m = 0; m < nm; m++)
		fprintf(s.meta, "%s%s", m ? " " : "", modes[m]);
	fprintf(s.meta, "\"\nstock = %d\n", nm == 1 && strcmp(modes[0], "stock-kernel") == 0);
	plot_meta_context(s.meta, &ks);
	made(p, "precopy", "Runtime and fault count by pre-copy mode (Hodges-Lehmann centre, exact CI whiskers)");
	return plot_dataset_close(&s);
}

/* ---- 4. snapshot slowdown by method ---- */

static int plot_snapshot(struct plots *p)
{
	struct dataset s;
	size_t n = 0;
	char label[CB_ROW_KEY_LEN];

	struct plot_keyset ks = { .n = 0 };

	for (size_t i = 0; i < p->ng; i++)
		if (!strcmp(plot_group_workload(&p->g[i]), "snapshot") && !isnan(group_median(&p->g[i], "slowdown"))) {
			plot_keyset_add(&ks, p->g[i].key);
			n++;
		}
	if (n == 0)
		return 0;
	if (plot_dataset_open(&s, p->dir, "snapshot") < 0)
		return -1;
	fputs("# cell, slowdown centre lo hi\n", s.dat);
	for (size_t i = 0; i < p->ng; i++) {
		const struct cb_row_group *g = &p->g[i];
		double ci[3];

		if (strcmp(plot_group_workload(g), "snapshot") || !group_mean_ci(g, "slowdown", 1.0, ci))
			continue;
		plot_label_of(&ks, g->key, false, label, sizeof(label));
		gp_data_label(s.dat, label);
		fprintf(s.dat, "\t%g\t%g\t%g\n", ci[0], ci[1], ci[2]);
	}
	fprintf(s.meta, "N = %zu\n", n);
	plot_meta_context(s.meta, &ks);
	made(p, "snapshot", "Writer slowdown while a snapshot is taken, by method (Hodges-Lehmann centre, exact CI)");
	return plot_dataset_close(&s);
}

/* ---- 5. time per COW fault: the copy itself, the rest of the kernel copy path, the rest ---- */

/* Median over a group's ok rows of num/den per row (both measured, den > 0). */
static double group_median_ratio(const struct cb_row_group *g, size_t num_off, size_t den_off)
{
	double *v = malloc((g->n ? g->n : 1) * sizeof(*v)), m;
	size_t n = 0;

	if (!v)
		return NAN;
	for (size_t i = 0; i < g->n; i++) {
		const char *r = (const char *)g->rows[i];
		int64_t num, den;

		memcpy(&num, r + num_off, sizeof(num));
		memcpy(&den, r + den_off, sizeof(den));
		if (!strcmp(g->rows[i]->status, "ok") && num != CB_NA && den != CB_NA && den > 0)
			v[n++] = (double)num / (double)den;
	}
	m = median_of(v, n);
	free(v);
	return m;
}

/* Kernel copies per write: about 1 where every write faulted (no pre-copy, no reuse). */
static double copies_per_write(const struct cb_row_group *g)
{
	double copies = group_median(g, "wpcopy_count"), touched = group_median(g, "touched");

	if (isnan(copies))
		copies = group_median(g, "cow_faults");
	if (isnan(copies))
		copies = group_median(g, "faults"); /* no kernel count: the writer's minor faults */
	return touched > 0 ? copies / touched : NAN;
}

/*
 * Means within each rep (the kernel's copy-path clocks give only sums),
 * the median of those over reps. A cell whose copy path exceeds the write
 * containing it is marked, never clamped; cells where most writes did not
 * fault (pre-copy, no fork) are left out and counted.
 */
static int plot_breakdown(struct plots *p)
{
	struct dataset s;
	size_t n = 0, skipped = 0, inconsistent = 0;
	bool kernel = false, own_copy = false, missing = false;
	struct plot_keyset ks = { .n = 0 };
	char label[CB_ROW_KEY_LEN];

	for (size_t i = 0; i < p->ng; i++) {
		const struct cb_row_group *g = &p->g[i];

		if (!g->n || g->rows[0]->fork != 1 || isnan(group_median(g, "lat_mean_ns")))
			continue;
		if (!(copies_per_write(g) >= 0.95)) {
			skipped++;
			continue;
		}
		n++;
		plot_keyset_add(&ks, g->key);
		kernel = kernel || !isnan(group_median(g, "kernel_copy_ns_mean"));
		own_copy = own_copy || !isnan(group_median_ratio(g, offsetof(struct cb_row, cow_copy_ns),
								 offsetof(struct cb_row, cow_faults)));
	}
	if (n == 0)
		return 0;
	if (plot_dataset_open(&s, p->dir, "breakdown") < 0)
		return -1;
	fputs("# cell, the copy itself, rest of the kernel copy path, rest of the write (ns; rep means, median over reps)\n",
	      s.dat);
	for (size_t i = 0; i < p->ng; i++) {
		const struct cb_row_group *g = &p->g[i];
		double write = group_median(g, "lat_mean_ns"), path = group_median(g, "kernel_copy_ns_mean");
		double copy = group_median_ratio(g, offsetof(struct cb_row, cow_copy_ns), offsetof(struct cb_row, cow_faults));
		bool bad;

		if (!g->n || g->rows[0]->fork != 1 || isnan(write) || !(copies_per_write(g) >= 0.95))
			continue;
		if (isnan(copy))
			copy = group_median(g, "memcpy_ns"); /* estimate: the same copy in user space */
		if (isnan(copy))
			copy = 0;
		plot_label_of(&ks, g->key, false, label, sizeof(label));
		bad = (!isnan(path) && (path > write || copy > path)) || copy > write;
		if (bad) {
			snprintf(label + strlen(label), sizeof(label) - strlen(label), " !");
			inconsistent++;
		} else if (kernel && isnan(path)) { /* this cell's kernel share is unknown, not zero */
			snprintf(label + strlen(label), sizeof(label) - strlen(label), " *");
			missing = true;
		}
		gp_data_label(s.dat, label);
		if (bad) /* no bar made up: the parts disagree, so only the whole write is drawn */
			fprintf(s.dat, "\t0\t0\t%.1f\n", write);
		else if (isnan(path))
			fprintf(s.dat, "\t%.1f\t0\t%.1f\n", copy, write - copy);
		else
			fprintf(s.dat, "\t%.1f\t%.1f\t%.1f\n", copy, path - copy, write - path);
	}
	fprintf(s.meta, "N = %zu\nkernel = %d\nmissing = %d\nown_copy = %d\nskipped = %zu\ninconsistent = %zu\n", n,
		kernel, missing, own_copy, skipped, inconsistent);
	plot_meta_context(s.meta, &ks);
	made(p, "breakdown",
	     kernel ? "Time per COW fault: the copy itself, the rest of the kernel copy path, the rest of the write "
		      "(rep means, median over reps)"
		    : "Time per COW fault: a page copy vs. everything else (no kernel copy-path data here; rep means, "
		      "median over reps)");
	return plot_dataset_close(&s);
}

/* ---- the report ---- */

/* Provenance: what was measured where, a name and its value a row (the column headers empty). */
static const struct cb_field provenance_fields[] = { PLOT_MD_COL("", TEXT), PLOT_MD_COL("", TEXT) };

/* A referred-to text cell (CB_COL_REF: NULL when empty) as text. */
static const char *text_of(const char *s)
{
	return s ? s : "";
}

static void report_provenance(FILE *fp, const struct cb_row *rows, size_t n)
{
	const char *first = text_of(rows[0].timestamp), *last = first;
	char version[64], measured[64], nrows[24];
	struct cb_out o;

	for (size_t i = 1; i < n; i++) {
		if (strcmp(text_of(rows[i].timestamp), first) < 0)
			first = text_of(rows[i].timestamp);
		if (strcmp(text_of(rows[i].timestamp), last) > 0)
			last = text_of(rows[i].timestamp);
	}
	snprintf(version, sizeof(version), "%s (%s)", rows[0].version, text_of(rows[0].git_revision));
	snprintf(measured, sizeof(measured), "%s to %s (UTC)", first, last);
	snprintf(nrows, sizeof(nrows), "%zu", n);
	const char *pv[][2] = {
		{ "host", text_of(rows[0].host) },
		{ "kernel", rows[0].kernel },
		{ "CPU", rows[0].cpu_model },
		{ "cowbench", version },
		{ "THP mode", text_of(rows[0].thp_mode) },
		{ "clock", rows[0].clock },
		{ "measured", measured },
		{ "pre-copy", rows[0].precopy == CB_NA ? "not available (stock kernel): the precopy axis collapsed"
						       : "see the cells" },
		{ "rows", nrows },
	};

	/* every cell from the rows is data: the writer escapes it, never Markdown or HTML of its own */
	if (plot_md_open(&o, fp, provenance_fields, 2) == 0) {
		for (size_t i = 0; i < sizeof(pv) / sizeof(pv[0]); i++)
			cb_out_record(&o, (struct cb_val[]){ cb_text(pv[i][0]), cb_text(pv[i][1]) });
		cb_out_close(&o);
	}
	fputc('\n', fp);
}

/* report.md is UTF-8: times in scaled units (cowbench/units.h), ratios with an x. */
static const char *report_value(char *buf, size_t len, double v, bool is_time)
{
	if (is_time)
		return cb_fmt_ns(buf, len, v, CB_UNITS_UTF8);
	snprintf(buf, len, "%.4gx", v);
	return buf;
}

/* The summary: times as times (the writer scales them), slowdown a factor of four digits. */
static const struct cb_field summary_fields[] = {
	PLOT_MD_COL("cell", TEXT), PLOT_MD_COL("metric", TEXT), PLOT_MD_COL("n", COUNT),
	PLOT_MD_COL("median", TIME_NS), PLOT_MD_COL("mean", TIME_NS), PLOT_MD_COL("centre", TIME_NS),
	PLOT_MD_COL("CI of the centre (level)", TEXT), PLOT_MD_COL("CV", FRACTION), PLOT_MD_COL("outliers", COUNT),
};

/* A centre of metric m: a time in the writer's units, or slowdown's factor as text (in buf). */
static struct cb_val report_centre(char *buf, size_t len, double v, bool is_time)
{
	return is_time ? cb_num(v) : cb_text(report_value(buf, len, v, false));
}

static void report_table(FILE *fp, const struct plots *p)
{
	const char *metric[] = { "elapsed_ns", "fork_ns", "slowdown" };
	struct cb_out o;

	if (plot_md_open(&o, fp, summary_fields, sizeof(summary_fields) / sizeof(summary_fields[0])) < 0)
		return;
	for (size_t i = 0; i < p->ng; i++) {
		for (size_t m = 0; m < 3; m++) {
			double *v = malloc((p->g[i].n ? p->g[i].n : 1) * sizeof(*v));
			struct cb_summary s;
			size_t nv = v ? cb_group_values(&p->g[i], metric[m], v) : 0;
			char med[24], mean[24], ctr[24], lo[24], hi[24], ci[96], cv[32];

			if (nv && cb_summarize(v, nv, &s) == 0) {
				if (!isnan(s.ci_lo)) {
					snprintf(ci, sizeof(ci), "%s to %s (%.4g %%)", report_value(lo, sizeof(lo), s.ci_lo, m < 2),
						 report_value(hi, sizeof(hi), s.ci_hi, m < 2), s.ci_level * 100);
					snprintf(cv, sizeof(cv), "%.1f %%%s", s.cv * 100, s.cv > CB_NOISY_CV ? " (noisy)" : "");
				}
				cb_out_record(&o, (struct cb_val[]){
					cb_text(p->g[i].key), cb_text(metric[m]), cb_num((double)s.n),
					report_centre(med, sizeof(med), s.median, m < 2),
					report_centre(mean, sizeof(mean), s.mean, m < 2),
					report_centre(ctr, sizeof(ctr), s.centre, m < 2),
					isnan(s.ci_lo) ? cb_none() : cb_text(ci), isnan(s.ci_lo) ? cb_none() : cb_text(cv),
					cb_num((double)s.outliers) });
			}
			free(v);
		}
	}
	cb_out_close(&o);
}

static int write_report(const struct plots *p, const struct cb_row *rows, size_t n, char **files, int nfiles)
{
	char path[4096];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/report.md", p->dir);
	fp = fopen(path, "we");
	if (!fp) {
		cli_error("cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	fputs("# cowbench report\n\nGenerated by `cowbench plot` from ", fp);
	for (int f = 0; f < nfiles; f++)
		fprintf(fp, "%s%s", f ? ", " : "", cli_md(files[f]));
	fputs(" alone.\n\n", fp);
	plot_write_cost_report(fp, p->g, p->ng);
	fputs("## Provenance\n\n", fp);
	report_provenance(fp, rows, n);
	fputs("## Summary\n\nPer cell: repetitions with status ok, median, mean, the Hodges-Lehmann centre with its\n"
	      "exact interval and that interval's level (95 % or the most n allows: 93.75 % at 5 reps), coefficient\n"
	      "of variation (noisy above 10 %) and Tukey outliers (docs/reference.md, Statistics).\n"
	      "`cowbench summarize` prints the same for any column.\n\n",
	      fp);
	report_table(fp, p);
	fputc('\n', fp);
	plot_tradeoff_report(fp, p->g, p->ng);
	fputs("## Plots\n\n", fp);
	for (size_t i = 0; i < p->nmade; i++)
		fprintf(fp, "### %s\n\n![%s](%s.png)\n\n[SVG](%s.svg) · data: `data/%s.dat`\n\n", cli_md(p->caption[i]),
			cli_md(p->caption[i]), p->made[i], p->made[i], p->made[i]);
	if (fclose(fp) != 0) {
		cli_error("cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* The files written, one per line on stdout: each plot's PNG and SVG, then the report. */
static void list_written(const struct plots *p)
{
	for (size_t i = 0; i < p->nmade; i++)
		printf("%s/%s.png\n%s/%s.svg\n", p->dir, p->made[i], p->dir, p->made[i]);
	printf("%s/report.md\n", p->dir);
	fflush(stdout);
}

/* ---- gnuplot ---- */

/* cli/plot/gnuplot/ in the source tree, share/cowbench/plot installed; $COWBENCH_PLOT_DIR overrides. */
static const char *scripts_dir(void)
{
	return cli_find_dir("COWBENCH_PLOT_DIR", COWBENCH_PLOT_SOURCE_DIR, "plot.sh", COWBENCH_PLOT_INSTALL_DIR);
}

/* gnuplot/plot.sh DIR NAME...: only the plots this run made, from the files it wrote */
static int run_wrapper(const struct plots *p)
{
	char script[4096];
	char *argv[3 + sizeof(p->made) / sizeof(p->made[0]) + 1] = { "sh", script, (char *)p->dir };
	pid_t pid;
	int ws, err;

	for (size_t i = 0; i < p->nmade; i++)
		argv[3 + i] = (char *)p->made[i];
	snprintf(script, sizeof(script), "%s/plot.sh", scripts_dir());
	if (!cb_path_exists(script)) {
		cli_error("cannot find the gnuplot scripts (%s); set COWBENCH_PLOT_DIR", script);
		return -1;
	}
	err = posix_spawnp(&pid, "sh", NULL, NULL, argv, environ);
	if (err) {
		cli_error("cannot run %s: %s", script, strerror(err));
		return -1;
	}
	if (cb_wait_status(pid, &ws) < 0 || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
		cli_error("%s failed (see its messages above)", script);
		return -1;
	}
	return 0;
}

static bool have_gnuplot(void)
{
	char *argv[] = { "gnuplot", "--version", NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int ws, err;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	err = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	return err == 0 && cb_wait_status(pid, &ws) == 0 && WIFEXITED(ws) && WEXITSTATUS(ws) == 0;
}

/* The folders make_dirs made, when the run failed (they hold nothing of it then). */
static void remove_dirs(const char *dir, const bool created[2])
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/data", dir);
	if (created[1])
		rmdir(path);
	if (created[0])
		rmdir(dir);
}

/* DIR and DIR/data; created[] says which of the two this run made (removed again if it fails). */
static int make_dirs(const char *dir, bool created[2])
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/data", dir);
	created[0] = mkdir(dir, 0755) == 0;
	if (!created[0] && errno != EEXIST) {
		cli_error("cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	created[1] = mkdir(path, 0755) == 0;
	if (!created[1] && errno != EEXIST) {
		cli_error("cannot create %s: %s", path, strerror(errno));
		if (created[0])
			rmdir(dir);
		return -1;
	}
	return 0;
}

/* Whether NAME is one plot writes into the folder (in data/ when DATA). */
static bool plot_file_name(const char *name, bool data)
{
	const char *dot = strrchr(name, '.');

	if (data)
		return dot && (!strcmp(dot, ".dat") || !strcmp(dot, ".gp"));
	return !strcmp(name, "report.md") || (dot && (!strcmp(dot, ".png") || !strcmp(dot, ".svg")));
}

/*
 * Before anything runs (exit 2): DIR a folder (or nothing yet) under no /dev or /proc, DIR/data a
 * real folder, no file plot writes there anything but a regular file, and an earlier run's
 * report.md replaced only with --force.
 */
static int check_out_dir(const char *dir, bool force)
{
	char path[4096];
	struct stat st;
	DIR *d;
	struct dirent *e;

	if (cli_output_path_check("--out", dir) < 0)
		return -1;
	if (strlen(dir) > 3000) {
		cli_error("--out %.60s...: name too long", dir);
		return -1;
	}
	if (stat(dir, &st) != 0)
		return 0; /* made by make_dirs (which says why it cannot) */
	if (!S_ISDIR(st.st_mode)) {
		cli_error("--out %s: not a directory", dir);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/data", dir);
	if (lstat(path, &st) == 0 && !S_ISDIR(st.st_mode)) {
		cli_error("--out %s: %s is not a directory (a link is not followed)", dir, path);
		return -1;
	}
	for (int data = 0; data < 2; data++) {
		snprintf(path, sizeof(path), "%s%s", dir, data ? "/data" : "");
		if (!(d = opendir(path)))
			continue;
		while ((e = readdir(d))) {
			char file[4400];

			if (!plot_file_name(e->d_name, data))
				continue;
			snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
			if (lstat(file, &st) == 0 && !S_ISREG(st.st_mode)) {
				cli_error("--out %s: %s is not a regular file: refusing to replace it", dir, file);
				closedir(d);
				return -1;
			}
			if (!data && !strcmp(e->d_name, "report.md") && st.st_size > 0 && !force) {
				cli_error("--out %s holds an earlier plot (report.md): give --force to replace it", dir);
				closedir(d);
				return -1;
			}
		}
		closedir(d);
	}
	return 0;
}

/* The private folder this run writes into: DIR/.cowbench-plot.XXXXXX and its data/ (0 or -1 after why). */
static int make_stage(const char *dir, char *stage, size_t len)
{
	char data[4200];

	snprintf(stage, len, "%s/.cowbench-plot.XXXXXX", dir);
	if (!mkdtemp(stage)) {
		cli_error("cannot create a folder in %s: %s", dir, strerror(errno));
		stage[0] = '\0';
		return -1;
	}
	snprintf(data, sizeof(data), "%s/data", stage);
	if (mkdir(data, 0700) != 0) {
		cli_error("cannot create %s: %s", data, strerror(errno));
		rmdir(stage);
		stage[0] = '\0';
		return -1;
	}
	return 0;
}

/* The private folder and everything in it (only this run's files are there). */
static void remove_stage(const char *stage)
{
	char path[4400];

	for (int data = 1; data >= 0 && stage[0]; data--) {
		DIR *d;
		struct dirent *e;

		snprintf(path, sizeof(path), "%s%s", stage, data ? "/data" : "");
		if ((d = opendir(path))) {
			while ((e = readdir(d))) {
				char file[4700];

				snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
				if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
					unlink(file);
			}
			closedir(d);
		}
		rmdir(path);
	}
}

/* One file of the stage renamed into DIR, never over anything but a regular file. */
static int install(const char *stage, const char *dir, const char *sub, const char *name, const char *ext)
{
	char from[4600], to[4600];
	struct stat st;

	snprintf(from, sizeof(from), "%s%s/%s%s", stage, sub, name, ext);
	snprintf(to, sizeof(to), "%s%s/%s%s", dir, sub, name, ext);
	if (lstat(to, &st) == 0 && !S_ISREG(st.st_mode)) {
		cli_error("%s is not a regular file: refusing to replace it", to);
		return -1;
	}
	if (rename(from, to) != 0) {
		cli_error("cannot write %s: %s", to, strerror(errno));
		return -1;
	}
	return 0;
}

/* Every file of this run into DIR: data first, then the plots, the report last. */
static int install_all(const struct plots *p, const char *dir)
{
	for (size_t i = 0; i < p->nmade; i++)
		if (install(p->dir, dir, "/data", p->made[i], ".dat") < 0 ||
		    install(p->dir, dir, "/data", p->made[i], ".gp") < 0 ||
		    install(p->dir, dir, "", p->made[i], ".png") < 0 || install(p->dir, dir, "", p->made[i], ".svg") < 0)
			return -1;
	return install(p->dir, dir, "", "report", ".md");
}

int cmd_plot(int argc, char **argv)
{
	struct plot_opts o = { 0 };
	int argi;
	struct plots p = { 0 };
	struct cli_inputs in = { 0 };
	int status = EXIT_USAGE;
	bool created[2] = { false, false };
	char stage[4200] = "";
	static char dir[4096];

	argi = cli_parse_options(argc, argv, plot_options, N_PLOT_OPTIONS, &o, plot_usage);
	if (argi < 0)
		return EXIT_USAGE;
	if (argi >= argc || !o.out) {
		cli_error("plot needs a results CSV and --out DIR (see cowbench plot --help)");
		return EXIT_USAGE;
	}
	if (cli_plot_dir_not_input(o.out, argv + argi, argc - argi) < 0 ||
	    cli_plot_dir_not_input(o.out, (char **)o.samples, o.nsamples) < 0 || check_out_dir(o.out, o.force) < 0)
		goto out;
	if (cli_inputs_read(&in, argc - argi, argv + argi) < 0)
		goto out;
	if (in.nrows == 0) {
		cli_error("no result rows to plot in %s", argv[argi]);
		goto out;
	}
	for (int i = 0; i < o.nsamples; i++)
		if (plot_samples_check(o.samples[i]) < 0)
			goto out;
	if (!have_gnuplot()) {
		cli_error("gnuplot is not installed (apt-get install gnuplot-nox, or tests/install-deps.sh)");
		goto out;
	}
	if (make_dirs(o.out, created) < 0)
		goto out;
	{
		/* "plots/" names the folder "plots": the paths printed are plots/cost.png, not plots//cost.png */
		size_t n = strlen(o.out);

		while (n > 1 && o.out[n - 1] == '/')
			n--;
		snprintf(dir, sizeof(dir), "%.*s", (int)n, o.out);
	}
	if (make_stage(dir, stage, sizeof(stage)) < 0) {
		remove_dirs(o.out, created);
		goto out;
	}
	p.dir = stage;
	if (cb_group_rows(in.rows, in.nrows, &p.g, &p.ng) < 0) {
		cli_error("out of memory");
		remove_stage(stage);
		remove_dirs(o.out, created);
		goto out;
	}
	status = EXIT_RUN_FAILED;
	if (plot_write_cost(p.dir, p.g, p.ng, made_cb, &p) < 0 || plot_cdfs(&p) < 0 || plot_precopy(&p) < 0 ||
	    plot_fork(p.dir, p.g, p.ng, made_cb, &p) < 0 || plot_snapshot(&p) < 0 ||
	    plot_breakdown(&p) < 0 || plot_dists(p.dir, p.g, p.ng, made_cb, &p) < 0 ||
	    plot_index(p.dir, o.samples, o.nsamples, made_cb, &p) < 0 ||
	    plot_tradeoff(p.dir, p.g, p.ng, made_cb, &p) < 0 || run_wrapper(&p) < 0 ||
	    write_report(&p, in.rows, in.nrows, argv + argi, argc - argi) < 0 || install_all(&p, o.out) < 0) {
		remove_stage(stage);
		remove_dirs(o.out, created);
		goto out;
	}
	remove_stage(stage);
	p.dir = dir;
	list_written(&p);
	status = 0;
out:
	cb_row_groups_free(p.g, p.ng);
	cli_inputs_free(&in);
	return status;
}
