#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cowbench/cowbench.h>
#include <cowbench/results.h>

#include "common/diag.h"
#include "common/outfile.h"
#include "common/paths.h"
#include "plot_charts.h"

/*
 * Plots of what a write costs beyond six percentiles: every write's
 * distribution (from the rows' lat_hist), latency along the write order
 * (from --samples files), and what pre-copy trades for fewer faults. Like
 * the rest of cowbench plot, data reaches gnuplot only as data files:
 * DIR/data/NAME.dat holds labels as quoted, sanitised strings that scripts
 * read with columnheader() or stringcolumn(); DIR/data/NAME.gp holds only
 * numbers written here.
 */


/* A row's lat_hist, where statistics may use it: an evidence rep's latencies are left out (cb_row_counts). */
static bool has_hist(const struct cb_row *row)
{
	return row->lat_hist && row->lat_hist[0] && cb_row_counts(row, cb_column_find("lat_hist"));
}

/* Every write of the group's ok timed reps in one histogram; how many reps had one. */
static size_t group_hist(const struct cb_row_group *g, struct cb_hist *h)
{
	struct cb_hist *one = malloc(sizeof(*one));
	size_t used = 0;

	cb_hist_reset(h);
	for (size_t i = 0; one && i < g->n; i++)
		if (has_hist(g->rows[i]) && cb_hist_parse(g->rows[i]->lat_hist, one) == 0) {
			cb_hist_merge(h, one);
			used++;
		}
	free(one);
	return used;
}

bool plot_dist_covers(const struct cb_row_group *g, size_t ng, const char *workload)
{
	for (size_t i = 0; i < ng; i++)
		for (size_t r = 0; r < g[i].n; r++)
			if (strcmp(g[i].rows[r]->workload, workload) == 0 && has_hist(g[i].rows[r]))
				return true;
	return false;
}

/* ---- dist_WL: CDF and tail of every write ---- */

struct cdf_out {
	FILE *fp;
	uint64_t total;
};

static bool write_cdf_point(void *arg, uint64_t lo, uint64_t hi, uint64_t count, uint64_t cum)
{
	struct cdf_out *o = arg;
	double frac = (double)cum / (double)o->total, tail = 1.0 - frac;

	(void)lo;
	(void)count;
	/* P(X <= hi) and P(X > hi); the tail's last point is 0, which a log axis cannot show. */
	if (tail > 0)
		fprintf(o->fp, "%llu\t%.8f\t%.3e\n", (unsigned long long)hi, frac, tail);
	else
		fprintf(o->fp, "%llu\t%.8f\tnan\n", (unsigned long long)hi, frac);
	return true;
}

static int plot_dist_workload(const char *dir, const struct cb_row_group *g, size_t ng, const char *wl,
			      struct cb_hist *h, plot_made_fn made, void *arg)
{
	static const char *const drop[] = { "workload", NULL };
	char name[64], label[CB_ROW_KEY_LEN], stripped[CB_ROW_KEY_LEN], caption[200];
	struct dataset d;
	int blocks = 0;
	uint64_t fewest = UINT64_MAX;

	snprintf(name, sizeof(name), "dist_%s", wl);
	if (plot_dataset_open(&d, dir, name) < 0)
		return -1;
	for (size_t i = 0; i < ng; i++) {
		struct cdf_out o = { d.dat, 0 };

		if (strcmp(plot_group_workload(&g[i]), wl) != 0 || group_hist(&g[i], h) == 0)
			continue;
		plot_key_strip(g[i].key, drop, stripped, sizeof(stripped));
		plot_readable(stripped, label, sizeof(label));
		fputs(blocks ? "\n\n" : "", d.dat);
		gp_data_label(d.dat, label[0] ? label : wl);
		fputs("\t\"ns\"\t\"tail\"\n", d.dat);
		o.total = h->total;
		cb_hist_foreach(h, write_cdf_point, &o);
		fewest = h->total < fewest ? h->total : fewest;
		blocks++;
	}
	if (blocks == 0) {
		plot_dataset_discard(&d);
		return 0;
	}
	/* The tail can say nothing below 1/writes: the axis stops there (and at 1e-4). */
	fprintf(d.meta, "N = %d\ntailmin = %g\n", blocks, fewest >= 10000 ? 1e-4 : 1.0 / (double)fewest);
	snprintf(caption, sizeof(caption),
		 "Every first write of workload %s: CDF and tail (1 - CDF, log) per cell, all reps pooled (lat_hist)", wl);
	made(arg, name, caption);
	return plot_dataset_close(&d);
}

int plot_dists(const char *dir, const struct cb_row_group *g, size_t ng, plot_made_fn made, void *arg)
{
	struct cb_hist *h = malloc(sizeof(*h));
	int err = h ? 0 : -1;

	for (size_t i = 0; !err && i < ng; i++) {
		const char *wl = plot_group_workload(&g[i]);
		bool seen = false;

		for (size_t j = 0; j < i; j++)
			seen = seen || strcmp(plot_group_workload(&g[j]), wl) == 0;
		/* Only registered names become file names: the CSV is data, not a path. */
		if (!seen && cb_workload_find(wl) && plot_dist_covers(g, ng, wl))
			err = plot_dist_workload(dir, g, ng, wl, h, made, arg);
	}
	if (!h)
		cli_error("out of memory");
	free(h);
	return err;
}

/* ---- index_N: latency along the write order, from --samples ---- */

static const char *const samples_header[] = { "rep", "index", "page", "latency_ns" };

static bool parse_ulong(const char *s, unsigned long long *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return !errno && !*end;
}

static bool parse_latency(const char *s, double *out)
{
	char *end;

	if (!*s)
		return false;
	errno = 0;
	*out = strtod(s, &end);
	return !errno && !*end && isfinite(*out) && *out >= 0;
}

/* One sample line: 0, or -1 with why[] filled. */
static int sample_parse(const struct cb_csv_record *rec, unsigned long long *rep, unsigned long long *index,
			double *lat, char *why, size_t len)
{
	unsigned long long page;

	if (rec->nfields != 4 || !rec->terminated) {
		snprintf(why, len, "%zu fields where rep,index,page,latency_ns are 4", rec->nfields);
		return -1;
	}
	if (!parse_ulong(rec->field[0], rep) || !parse_ulong(rec->field[1], index) ||
	    !parse_ulong(rec->field[2], &page) || !parse_latency(rec->field[3], lat)) {
		snprintf(why, len, "'%.20s,%.20s,%.20s,%.20s' is not rep,index,page,latency_ns", rec->field[0],
			 rec->field[1], rec->field[2], rec->field[3]);
		return -1;
	}
	return 0;
}

/* Read path's samples, handing each to fn (NULL: only check). -1 after one line on stderr. */
static int samples_read(const char *path, void (*fn)(void *, unsigned long long, unsigned long long, double),
			void *arg)
{
	struct cb_csv_record rec = { 0 };
	FILE *fp = cli_fopen_input(path);
	char why[200];
	long line = 1;
	int rc, err = 0;

	if (!fp) {
		cli_error("cannot read %s: %s", path, errno == EINVAL ? "not a regular file" : strerror(errno));
		return -1;
	}
	rc = cb_csv_read_record(fp, &rec);
	if (rc != 1 || rec.nfields != 4) {
		err = -1;
	} else {
		for (size_t i = 0; i < 4; i++)
			err |= strcmp(rec.field[i], samples_header[i]) ? -1 : 0;
	}
	if (err)
		cli_error("%s: not a cowbench --samples file (want the header rep,index,page,latency_ns)", path);
	while (!err && (rc = cb_csv_read_record(fp, &rec)) == 1) {
		unsigned long long rep, index;
		double lat;

		line++;
		err = sample_parse(&rec, &rep, &index, &lat, why, sizeof(why));
		if (err)
			cli_error("%s: line %ld: %s", path, line, why);
		else if (fn)
			fn(arg, rep, index, lat);
	}
	if (!err && rc < 0) {
		cli_error("%s: line %ld: malformed CSV", path, line + 1);
		err = -1;
	}
	if (!err && line == 1) {
		cli_error("%s: no samples", path);
		err = -1;
	}
	cb_csv_record_free(&rec);
	fclose(fp);
	return err;
}

int plot_samples_check(const char *path)
{
	return samples_read(path, NULL, NULL);
}

/* The reps of a --samples file, in order of first appearance (at most MAX_INDEX_REPS). */
#define MAX_INDEX_REPS 32

struct rep_set {
	unsigned long long rep[MAX_INDEX_REPS];
	int n;
};

static void collect_rep(void *arg, unsigned long long rep, unsigned long long index, double lat)
{
	struct rep_set *rs = arg;

	(void)index;
	(void)lat;
	for (int i = 0; i < rs->n; i++)
		if (rs->rep[i] == rep)
			return;
	if (rs->n < MAX_INDEX_REPS)
		rs->rep[rs->n++] = rep;
}

struct rep_writer {
	FILE *fp;
	unsigned long long rep;
};

static void write_sample(void *arg, unsigned long long rep, unsigned long long index, double lat)
{
	struct rep_writer *w = arg;

	if (rep == w->rep)
		fprintf(w->fp, "%llu\t%.1f\n", index, lat);
}

/* One data block per rep, titled "rep N": the key then has one entry per colour. */
static int write_index_blocks(FILE *dat, const char *path, const struct rep_set *rs)
{
	for (int r = 0; r < rs->n; r++) {
		struct rep_writer w = { dat, rs->rep[r] };

		fprintf(dat, "%s\"rep %llu\"\t\"latency\"\n", r ? "\n\n" : "", rs->rep[r]);
		if (samples_read(path, write_sample, &w) < 0)
			return -1;
	}
	return 0;
}

int plot_index(const char *dir, const char *const *samples, int n, plot_made_fn made, void *arg)
{
	for (int i = 0; i < n; i++) {
		char name[32], caption[200];
		struct rep_set rs = { .n = 0 };
		struct dataset d;

		snprintf(name, sizeof(name), "index_%d", i + 1);
		if (samples_read(samples[i], collect_rep, &rs) < 0 || plot_dataset_open(&d, dir, name) < 0)
			return -1;
		if (write_index_blocks(d.dat, samples[i], &rs) < 0) {
			plot_dataset_discard(&d);
			return -1;
		}
		fprintf(d.meta, "N = %d\n", rs.n);
		snprintf(caption, sizeof(caption), "Latency of every first write against its place in the write order "
			 "(--samples file %d, one colour per rep%s)", i + 1, rs.n == MAX_INDEX_REPS ? ", the first 32 reps" : "");
		made(arg, name, caption);
		if (plot_dataset_close(&d) < 0)
			return -1;
	}
	return 0;
}

/* ---- tradeoff: what each pre-copy mode saves and what it costs ---- */

struct trade {
	const struct cb_row_group *mode, *off;
	long long precopy, depth;
	double faults_off, faults_on, saved_pct, touched, wasted, extra_mib, p99[3], runtime[3];
};

static double group_median(const struct cb_row_group *g, const char *col)
{
	double *v = malloc((g->n ? g->n : 1) * sizeof(*v)), m = NAN;
	struct cb_summary s;
	size_t n = v ? cb_group_values(g, col, v) : 0;

	if (n && cb_summarize(v, n, &s) == 0)
		m = s.median;
	free(v);
	return m;
}

/* The engine's ratio of col, mode over off, with its interval (NAN when not measured or not a ratio). */
static void group_ratio(const struct cb_row_group *on, const struct cb_row_group *off, const char *col, double out[3])
{
	double *a = malloc((on->n + 1) * sizeof(*a)), *b = malloc((off->n + 1) * sizeof(*b));
	size_t na = a ? cb_group_values(on, col, a) : 0, nb = b ? cb_group_values(off, col, b) : 0;
	struct cb_change c;

	out[0] = out[1] = out[2] = NAN;
	if (na && nb && cb_estimate_change(b, nb, a, na, 0.95, &c) == 0 && c.ratio) {
		out[0] = c.est;
		out[1] = c.lo;
		out[2] = c.hi;
	}
	free(a);
	free(b);
}

/* The cell's identity without its pre-copy settings: a mode and its "off" share it. */
static void base_key(const struct cb_row_group *g, char *out, size_t len)
{
	static const char *const drop[] = { "precopy", "precopy_depth", "precopy-depth", NULL };

	plot_key_strip(g->key, drop, out, len);
}

static bool page_order_fork(const struct cb_row_group *g)
{
	return g->n && g->rows[0]->fork == 1 && g->rows[0]->precopy != CB_NA;
}

/* Pairs (mode on, mode off) of the same cell; returns how many (at most max). */
static size_t find_trades(const struct cb_row_group *g, size_t ng, struct trade *t, size_t max)
{
	char a[CB_ROW_KEY_LEN], b[CB_ROW_KEY_LEN];
	size_t n = 0;

	for (size_t i = 0; i < ng && n < max; i++) {
		if (!page_order_fork(&g[i]) || g[i].rows[0]->precopy == 0)
			continue;
		base_key(&g[i], a, sizeof(a));
		for (size_t j = 0; j < ng; j++) {
			if (!page_order_fork(&g[j]) || g[j].rows[0]->precopy != 0)
				continue;
			base_key(&g[j], b, sizeof(b));
			if (strcmp(a, b) == 0) {
				t[n] = (struct trade){ .mode = &g[i], .off = &g[j], .precopy = g[i].rows[0]->precopy,
						       .depth = g[i].rows[0]->precopy_depth };
				n++;
				break;
			}
		}
	}
	return n;
}

static void trade_measure(struct trade *t)
{
	t->faults_off = group_median(t->off, "faults");
	t->faults_on = group_median(t->mode, "faults");
	t->saved_pct = t->faults_off > 0 ? 100.0 * (t->faults_off - t->faults_on) / t->faults_off : NAN;
	t->touched = group_median(t->mode, "touched");
	t->wasted = group_median(t->mode, "precopy_wasted");
	t->extra_mib = (group_median(t->mode, "anon_growth_kb") - group_median(t->off, "anon_growth_kb")) / 1024.0;
	group_ratio(t->mode, t->off, "lat_p99_ns", t->p99);
	group_ratio(t->mode, t->off, "elapsed_ns", t->runtime);
}

static void mode_name(const struct trade *t, char *buf, size_t len)
{
	if (t->precopy == 2)
		snprintf(buf, len, "adaptive");
	else if (t->depth != CB_NA)
		snprintf(buf, len, "depth %lld", t->depth);
	else
		snprintf(buf, len, "precopy=%lld", t->precopy);
}

#define MAX_TRADES 128

/* The index (1, 2, ...) of a trade's mode among the modes seen so far; names[] collects them. */
static int mode_index(const struct trade *t, char names[][32], int *nmodes)
{
	char mode[32];

	mode_name(t, mode, sizeof(mode));
	for (int m = 0; m < *nmodes; m++)
		if (strcmp(names[m], mode) == 0)
			return m + 1;
	if (*nmodes == 8)
		return 8;
	snprintf(names[*nmodes], 32, "%s", mode);
	return ++*nmodes;
}

/*
 * One row per cell and mode (a dot plot: every label on its own line, so
 * none can overlap), four panels side by side: faults saved, copies wasted,
 * extra memory, p99. Colour and the key: the mode.
 */
int plot_tradeoff(const char *dir, const struct cb_row_group *g, size_t ng, plot_made_fn made, void *arg)
{
	struct trade *t = malloc(MAX_TRADES * sizeof(*t));
	size_t n = t ? find_trades(g, ng, t, MAX_TRADES) : 0;
	char stripped[CB_ROW_KEY_LEN], label[CB_ROW_KEY_LEN], mode[32], names[8][32];
	static const char *const drop[] = { "precopy", "precopy_depth", "precopy-depth", "fork", "seed", NULL };
	struct dataset d;
	int err, nmodes = 0;

	if (n == 0 || plot_dataset_open(&d, dir, "tradeoff") < 0) {
		free(t);
		return n == 0 ? 0 : -1;
	}
	fputs("# cell and mode, faults saved %, wasted % of touched, extra MiB, p99 ratio, lo, hi, precopy mode, "
	      "mode index\n", d.dat);
	for (size_t i = 0; i < n; i++) {
		trade_measure(&t[i]);
		plot_key_strip(t[i].mode->key, drop, stripped, sizeof(stripped));
		plot_readable(stripped, label, sizeof(label));
		mode_name(&t[i], mode, sizeof(mode));
		snprintf(label + strlen(label), sizeof(label) - strlen(label), " %s", mode);
		gp_data_label(d.dat, label);
		fprintf(d.dat, "\t%.2f\t%.2f\t%.3f\t%.4g\t%.4g\t%.4g\t%lld\t%d\n", t[i].saved_pct,
			t[i].touched > 0 ? 100.0 * t[i].wasted / t[i].touched : NAN, t[i].extra_mib, t[i].p99[0],
			t[i].p99[1], t[i].p99[2], t[i].precopy, mode_index(&t[i], names, &nmodes));
	}
	/* Mode names are made here from numbers ("depth 1", "adaptive"), never read from the CSV. */
	fprintf(d.meta, "N = %zu\nM = %d\n", n, nmodes);
	for (int m = 0; m < nmodes; m++)
		fprintf(d.meta, "mode%d = '%s'\n", m + 1, names[m]);
	made(arg, "tradeoff", "Pre-copy trade-off per cell and mode against pre-copy off: faults saved, pages "
	     "copied for nothing, extra memory and p99 (Hodges-Lehmann ratio, exact CI)");
	err = plot_dataset_close(&d);
	free(t);
	return err;
}

static void fmt_ratio(const double r[3], char *buf, size_t len)
{
	if (isnan(r[0]))
		snprintf(buf, len, "-");
	else if (isnan(r[1]))
		snprintf(buf, len, "%.2fx", r[0]);
	else
		snprintf(buf, len, "%.2fx (%.2f to %.2f)", r[0], r[1], r[2]);
}

/* report.md's trade-off table: numbers as counts, the rest text as the study's reports spell it. */
static const struct cb_field trade_fields[] = {
	PLOT_MD_COL("cell", TEXT), PLOT_MD_COL("mode", TEXT), PLOT_MD_COL("faults off → on", COUNT),
	PLOT_MD_COL("faults saved", PERCENT), PLOT_MD_COL("touched", COUNT), PLOT_MD_COL("copies wasted", COUNT),
	PLOT_MD_COL("extra memory", BYTES), PLOT_MD_COL("p99 on/off", RATIO), PLOT_MD_COL("runtime on/off", RATIO),
};

void plot_tradeoff_report(FILE *fp, const struct cb_row_group *g, size_t ng)
{
	struct trade *t = malloc(MAX_TRADES * sizeof(*t));
	size_t n = t ? find_trades(g, ng, t, MAX_TRADES) : 0;
	char mode[32], p99[64], rt[64], faults[64], saved[32], extra[32];
	struct cb_out o;

	if (n == 0) {
		free(t);
		return;
	}
	fputs("## Pre-copy: what it saves and what it costs\n\n"
	      "Each cell with pre-copy on against the same cell with pre-copy off (`precopy=0`), medians over\n"
	      "ok reps: the writer's page faults (`faults`), pages copied ahead and never written\n"
	      "(`precopy_wasted`), the writer's extra private memory (`anon_growth_kb`, on minus off) and the\n"
	      "Hodges-Lehmann ratio of p99 first-write latency and of runtime, with exact intervals.\n"
	      "Faults saved can be negative (more faults than without pre-copy): it is a difference, not a share.\n\n",
	      fp);
	if (plot_md_open(&o, fp, trade_fields, sizeof(trade_fields) / sizeof(trade_fields[0])) == 0) {
		for (size_t i = 0; i < n; i++) {
			trade_measure(&t[i]);
			mode_name(&t[i], mode, sizeof(mode));
			fmt_ratio(t[i].p99, p99, sizeof(p99));
			fmt_ratio(t[i].runtime, rt, sizeof(rt));
			snprintf(faults, sizeof(faults), "%.0f → %.0f", t[i].faults_off, t[i].faults_on);
			snprintf(saved, sizeof(saved), "%.1f %%", t[i].saved_pct);
			snprintf(extra, sizeof(extra), "%+.2f MiB", t[i].extra_mib);
			cb_out_record(&o, (struct cb_val[]){
				cb_text(t[i].mode->key), cb_text(mode), cb_text(faults), cb_text(saved), cb_num(t[i].touched),
				isnan(t[i].wasted) ? cb_text("- (needs root)") : cb_num(t[i].wasted),
				isnan(t[i].extra_mib) ? cb_none() : cb_text(extra), cb_text(p99), cb_text(rt) });
		}
		cb_out_close(&o);
	}
	fputc('\n', fp);
	free(t);
}
