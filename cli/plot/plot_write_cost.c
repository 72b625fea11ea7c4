#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/compare.h>
#include <cowbench/matrix.h>
#include <cowbench/results.h>
#include <cowbench/stats.h>
#include <cowbench/repstats.h>
#include <cowbench/units.h>

#include "common/outfile.h"
#include "plot_charts.h"

/*
 * The question cowbench answers, as its first plot: what does a write cost
 * after fork? Each page-order cell with fork=1 is set beside its --no-fork
 * twin (the same key with fork=0): the time per write of both (the engine's
 * centre of ns_per_page over reps, whiskers its interval: the statistic
 * drawn), and their ratio with its interval, the same numbers summarize
 * --baseline fork=0 and compare --by=fork print. Inside one boot only.
 */

#define MAX_COST_CELLS 64
#define COST_METRIC "ns_per_page"

struct cost {
	const struct cb_row_group *fork, *nofork;
	double after[3], before[3], ratio[3]; /* centre, lo, hi */
	char label[CB_ROW_KEY_LEN];
};

/* The engine's centre of g's metric in boot and its interval (lo = hi = centre for one rep). */
static void centre_ci(const struct cb_row_group *g, const char *boot, double out[3])
{
	double *v = malloc((g->n + 1) * sizeof(*v));
	size_t n = v ? cb_values_in_boot(g, COST_METRIC, boot, v) : 0;
	struct cb_estimate e;

	out[0] = out[1] = out[2] = NAN;
	if (n > 0 && cb_estimate(v, n, 0.95, &e) == 0) {
		out[0] = e.centre;
		out[1] = isnan(e.lo) ? e.centre : e.lo;
		out[2] = isnan(e.hi) ? e.centre : e.hi;
	}
	free(v);
}

/* After fork / without: the engine's ratio and interval, as summarize --baseline fork=0 and compare --by=fork print it. */
static void cost_ratio(struct cost *c, const char *boot)
{
	size_t na = c->fork->n + 1, nb = c->nofork->n + 1;
	double *a = malloc(na * sizeof(*a)), *b = malloc(nb * sizeof(*b));
	struct cb_change ch;

	c->ratio[0] = c->ratio[1] = c->ratio[2] = NAN;
	na = a ? cb_values_in_boot(c->fork, COST_METRIC, boot, a) : 0;
	nb = b ? cb_values_in_boot(c->nofork, COST_METRIC, boot, b) : 0;
	if (na && nb && cb_estimate_change(b, nb, a, na, 0.95, &ch) == 0 && ch.ratio) {
		c->ratio[0] = ch.est;
		c->ratio[1] = ch.lo;
		c->ratio[2] = ch.hi;
	}
	free(a);
	free(b);
}

static const struct cb_row_group *find_group(const struct cb_row_group *g, size_t ng, const char *key)
{
	for (size_t i = 0; i < ng; i++)
		if (strcmp(g[i].key, key) == 0)
			return &g[i];
	return NULL;
}

static bool key_has_pair(const char *k, const char *p, size_t len)
{
	while (*k) {
		size_t kl = strcspn(k, " ");

		if (kl == len && strncmp(k, p, len) == 0)
			return true;
		k += kl;
		while (*k == ' ')
			k++;
	}
	return false;
}

/* Whether the pair (p, len) is in every cost's key. */
static bool pair_everywhere(const struct cost *c, size_t n, const char *p, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (!key_has_pair(c[i].fork->key, p, len))
			return false;
	return true;
}

/* Each cell named by what sets it apart: its key without fork and without the pairs all cells share. */
static void cost_labels(struct cost *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char kept[CB_ROW_KEY_LEN] = "";
		size_t o = 0;

		for (const char *p = c[i].fork->key; *p;) {
			size_t pl = strcspn(p, " ");
			bool is_fork = pl > 5 && strncmp(p, "fork=", 5) == 0;

			if (pl && !is_fork && (n == 1 ? strncmp(p, "workload=", 9) == 0 || strncmp(p, "size=", 5) == 0
						      : !pair_everywhere(c, n, p, pl)) &&
			    o + pl + 2 < sizeof(kept))
				o += (size_t)snprintf(kept + o, sizeof(kept) - o, "%s%.*s", o ? " " : "", (int)pl, p);
			p += pl;
			while (*p == ' ')
				p++;
		}
		plot_readable(kept, c[i].label, sizeof(c[i].label));
		if (!c[i].label[0])
			snprintf(c[i].label, sizeof(c[i].label), "all");
	}
}

/* Every fork=1 page-order cell with a fork=0 twin, measured. */
static size_t find_costs(const struct cb_row_group *g, size_t ng, struct cost *c, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < ng && n < max; i++) {
		char twin[CB_ROW_KEY_LEN];
		const struct cb_row_group *b;
		const char *boot;

		if (!g[i].n || g[i].rows[0]->fork != 1 || !cb_key_replace(g[i].key, "fork", "0", twin, sizeof(twin)))
			continue;
		b = find_group(g, ng, twin);
		if (!b || !b->n || !(boot = cb_shared_boot(&g[i], b)))
			continue;
		c[n] = (struct cost){ .fork = &g[i], .nofork = b };
		centre_ci(&g[i], boot, c[n].after);
		centre_ci(b, boot, c[n].before);
		if (isnan(c[n].after[0]) || isnan(c[n].before[0]))
			continue;
		cost_ratio(&c[n], boot);
		n++;
	}
	cost_labels(c, n);
	return n;
}

/* The ratio in the one spelling every command uses (cb_ratio_text). */
static void fmt_times(char *buf, size_t len, const double r[3])
{
	if (isnan(r[0]))
		snprintf(buf, len, "ratio not measured");
	else
		cb_ratio_text(buf, len, r[0], r[1], r[2]);
}

/* "349.8 ns [334.7 ns, 4.52 us]" in report.md's units. */
static void fmt_ns3(char *buf, size_t len, const double v[3])
{
	char c[32], lo[32], hi[32];

	snprintf(buf, len, "%s [%s, %s]", cb_fmt_ns(c, sizeof(c), v[0], CB_UNITS_UTF8),
		 cb_fmt_ns(lo, sizeof(lo), v[1], CB_UNITS_UTF8), cb_fmt_ns(hi, sizeof(hi), v[2], CB_UNITS_UTF8));
}

int plot_write_cost(const char *dir, const struct cb_row_group *g, size_t ng, plot_made_fn made, void *arg)
{
	struct cost *c = malloc(MAX_COST_CELLS * sizeof(*c));
	size_t n = c ? find_costs(g, ng, c, MAX_COST_CELLS) : 0;
	struct dataset d;
	int err;

	if (n == 0 || plot_dataset_open(&d, dir, "cost") < 0) {
		free(c);
		return n == 0 ? 0 : -1;
	}
	fputs("# cell, no fork: centre lo hi, after fork: centre lo hi (ns per write), ratio lo hi, ratio text\n",
	      d.dat);
	for (size_t i = 0; i < n; i++) {
		char text[128];

		fmt_times(text, sizeof(text), c[i].ratio);
		gp_data_label(d.dat, c[i].label);
		fprintf(d.dat, "\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t\"%s\"\n", c[i].before[0],
			c[i].before[1], c[i].before[2], c[i].after[0], c[i].after[1], c[i].after[2], c[i].ratio[0],
			c[i].ratio[1], c[i].ratio[2], text);
	}
	fprintf(d.meta, "N = %zu\n", n);
	made(arg, "cost", "What a write costs after fork: each cell against the same writes without fork (time per "
	     "write, Hodges-Lehmann centre with its exact CI, and their ratio with its CI: docs/reference.md, Statistics)");
	err = plot_dataset_close(&d);
	free(c);
	return err;
}

/* report.md's cost table: each cell is text already (a value with its interval, cb_ratio_text). */
static const struct cb_field cost_fields[] = {
	PLOT_MD_COL("cell", TEXT), PLOT_MD_COL("no fork", TIME_NS), PLOT_MD_COL("after fork", TIME_NS),
	PLOT_MD_COL("after fork / no fork", RATIO),
};

void plot_write_cost_report(FILE *fp, const struct cb_row_group *g, size_t ng)
{
	struct cost *c = malloc(MAX_COST_CELLS * sizeof(*c));
	size_t n = c ? find_costs(g, ng, c, MAX_COST_CELLS) : 0;
	struct cb_out o;

	if (n == 0) {
		free(c);
		return;
	}
	fputs("## What a write costs after fork\n\n"
	      "Each cell's time per write (`ns_per_page` over ok timed reps: the Hodges-Lehmann centre with its\n"
	      "exact interval, 95 % or the most n allows) after fork and in its `fork=0` twin, and their\n"
	      "Hodges-Lehmann ratio with its exact interval, inside one boot: the numbers `summarize\n"
	      "--baseline fork=0` and `compare --by=fork` print (docs/reference.md, Statistics).\n\n",
	      fp);
	if (plot_md_open(&o, fp, cost_fields, sizeof(cost_fields) / sizeof(cost_fields[0])) == 0) {
		for (size_t i = 0; i < n; i++) {
			char text[128], before[112], after[112];

			fmt_times(text, sizeof(text), c[i].ratio);
			fmt_ns3(before, sizeof(before), c[i].before);
			fmt_ns3(after, sizeof(after), c[i].after);
			cb_out_record(&o, (struct cb_val[]){ cb_text(c[i].fork->key), cb_text(before), cb_text(after),
							     cb_text(text) });
		}
		cb_out_close(&o);
	}
	fputc('\n', fp);
	free(c);
}

/* ---- fork: fork() latency against populated size, per method ---- */

/* The engine's centre of g's column and its interval, scaled (lo = hi = centre for one rep). */
static bool group_median_ci(const struct cb_row_group *g, const char *col, double scale, double out[3])
{
	double *v = malloc((g->n + 1) * sizeof(*v));
	size_t n = v ? cb_group_values(g, col, v) : 0;
	struct cb_estimate e;

	if (n == 0 || cb_estimate(v, n, 0.95, &e) < 0) {
		free(v);
		return false;
	}
	out[0] = e.centre;
	out[1] = isnan(e.lo) ? e.centre : e.lo;
	out[2] = isnan(e.hi) ? e.centre : e.hi;
	free(v);
	for (int i = 0; i < 3; i++)
		out[i] *= scale;
	return true;
}

static bool is_fork_method(const struct cb_row_group *g, const char *method)
{
	return g->n && strcmp(g->rows[0]->workload, "fork") == 0 && (!method || strcmp(g->rows[0]->method, method) == 0);
}

/* One data block per method: size (GiB), median fork() ms, the median's CI; the key gives ms per GiB. */
static void fork_block(FILE *dat, const struct cb_row_group *g, size_t ng, const char *method, bool first)
{
	double *mpg = malloc((ng + 1) * sizeof(*mpg)), ci[3];
	size_t nmpg = 0;
	char title[96];

	for (size_t i = 0; mpg && i < ng; i++)
		if (is_fork_method(&g[i], method) && group_median_ci(&g[i], "ms_per_gib", 1.0, ci))
			mpg[nmpg++] = ci[0];
	qsort(mpg, nmpg, sizeof(*mpg), cb_cmp_double);
	snprintf(title, sizeof(title), "%s: %.3g ms/GiB (median over sizes)", method,
		 nmpg ? cb_quantile_sorted(mpg, nmpg, 0.5) : NAN);
	free(mpg);
	fputs(first ? "" : "\n\n", dat);
	gp_data_label(dat, title);
	fputs("\t\"ms\"\t\"lo\"\t\"hi\"\n", dat);
	for (size_t i = 0; i < ng; i++)
		if (is_fork_method(&g[i], method) && group_median_ci(&g[i], "fork_ns", 1e-6, ci))
			fprintf(dat, "%.6g\t%.6g\t%.6g\t%.6g\n", (double)g[i].rows[0]->size_bytes / 1073741824.0, ci[0],
				ci[1], ci[2]);
}

int plot_fork(const char *dir, const struct cb_row_group *g, size_t ng, plot_made_fn made, void *arg)
{
	const char *methods[8];
	size_t nm = 0;
	struct dataset d;

	for (size_t i = 0; i < ng; i++) {
		size_t k;
		double ci[3];

		if (!is_fork_method(&g[i], NULL) || !group_median_ci(&g[i], "fork_ns", 1.0, ci))
			continue;
		for (k = 0; k < nm && strcmp(methods[k], g[i].rows[0]->method); k++)
			;
		if (k == nm && nm < 8)
			methods[nm++] = g[i].rows[0]->method;
	}
	if (nm == 0)
		return 0;
	if (plot_dataset_open(&d, dir, "fork") < 0)
		return -1;
	for (size_t m = 0; m < nm; m++)
		fork_block(d.dat, g, ng, methods[m], m == 0);
	fprintf(d.meta, "N = %zu\n", nm);
	made(arg, "fork", "fork() latency against populated size (Hodges-Lehmann centre and its exact CI)");
	return plot_dataset_close(&d);
}
