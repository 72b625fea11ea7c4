/*
 * The writers of cowbench compare: a table for people, CSV and JSON Lines,
 * fed the same lines. Every compared line carries its change and the
 * change's interval, also when it is noise; the table's footer states the
 * rule that turned them into better, worse and ~.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "compare_int.h"

/* ---- the numbers and texts every format writes ---- */

/* What a line compares, from where to where (free text: quoted/escaped on output). */
static const char *const text_names[] = { "by", "old", "new", "cell" };

#define N_TEXTS (sizeof(text_names) / sizeof(text_names[0]))

static void line_texts(const struct cmp_opts *o, const struct line *l, const char *t[N_TEXTS])
{
	t[0] = o->by;
	t[1] = l->old->label;
	t[2] = l->new_->label;
	t[3] = l->cell;
}

/* The numbers of a compared line, in CSV column order (NAN: not defined). */
static const char *const number_names[] = {
	"old_centre", "old_ci_lo", "old_ci_hi", "new_centre", "new_ci_lo", "new_ci_hi", "change_pct", "change_ci_lo_pct",
	"change_ci_hi_pct", "ratio", "ratio_ci_lo", "ratio_ci_hi", "difference", "difference_ci_lo", "difference_ci_hi",
	"change_ci_level", "p",
};

#define N_NUMBERS (sizeof(number_names) / sizeof(number_names[0]))

static void line_numbers(const struct line *l, double v[N_NUMBERS])
{
	bool r = l->c.change.ratio;
	const double all[N_NUMBERS] = { l->c.old_center, l->c.old_lo, l->c.old_hi, l->c.new_center, l->c.new_lo,
					l->c.new_hi, l->change, l->change_lo, l->change_hi, l->c.ratio, l->c.ratio_lo,
					l->c.ratio_hi, r ? NAN : l->c.change.est, r ? NAN : l->c.change.lo,
					r ? NAN : l->c.change.hi, l->c.change.level, l->c.p };

	memcpy(v, all, sizeof(all));
}

static const char *const basis_names[] = {
	[CB_REPS_NONE] = "", [CB_REPS_TEST_MIN] = "test-minimum", [CB_REPS_SPREAD] = "spread",
};

/* ---- CSV ---- */

static void csv_num(FILE *fp, double v)
{
	fputc(',', fp);
	cb_csv_number(fp, v, -1);
}

static void csv_header(FILE *fp)
{
	fputs("by,old,new,cell,metric,present,n_old,n_new,failed_old,failed_new", fp);
	for (size_t i = 0; i < N_NUMBERS; i++)
		fprintf(fp, ",%s", number_names[i]);
	fputs(",exact,significant,verdict,count,above_floor,p_adj,beyond_threshold,reps_needed,reps_basis,conditions", fp);
	cb_record_end(fp);
}

static const char *const present_names[] = { "both", "old", "new" };

static void csv_line(FILE *fp, const struct cmp_opts *o, const struct line *l)
{
	double v[N_NUMBERS];
	const char *t[N_TEXTS];

	line_texts(o, l, t);
	for (size_t i = 0; i < N_TEXTS; i++) {
		if (i)
			fputc(',', fp);
		cb_csv_write_field(fp, t[i]);
	}
	fprintf(fp, ",%s,%s", l->metric ? l->metric : "", present_names[l->present]);
	if (!l->metric) {
		fprintf(fp, ",,,%zu,%zu", l->failed_old, l->failed_new);
		for (size_t i = 0; i < N_NUMBERS + 2; i++)
			fputc(',', fp);
		fprintf(fp, ",%s,,,,,,,", l->verdict);
		cb_csv_write_field(fp, l->conditions);
		cb_record_end(fp);
		return;
	}
	fprintf(fp, ",%zu,%zu,%zu,%zu", l->c.n_old, l->c.n_new, l->failed_old, l->failed_new);
	line_numbers(l, v);
	for (size_t i = 0; i < N_NUMBERS; i++)
		csv_num(fp, v[i]);
	fprintf(fp, ",%d,%d,%s,%d,%d", l->c.exact, l->c.significant, l->verdict, l->c.count, l->c.above_floor);
	csv_num(fp, l->c.p_adj);
	fprintf(fp, ",%d,", l->c.beyond_threshold);
	if (l->c.reps_needed)
		fprintf(fp, "%zu", l->c.reps_needed);
	fprintf(fp, ",%s,", basis_names[l->c.reps_basis]);
	cb_csv_write_field(fp, l->conditions);
	cb_record_end(fp);
}

/* ---- JSON Lines ---- */

static void json_line(FILE *fp, const struct cmp_opts *o, const struct line *l)
{
	double v[N_NUMBERS];
	const char *t[N_TEXTS];

	line_texts(o, l, t);
	for (size_t i = 0; i < N_TEXTS; i++) {
		fprintf(fp, "%s\"%s\":", i ? "," : "{", text_names[i]);
		cb_json_string(fp, t[i]);
	}
	fprintf(fp, ",\"present\":\"%s\",\"verdict\":\"%s\",\"failed_old\":%zu,\"failed_new\":%zu",
		present_names[l->present], l->verdict, l->failed_old, l->failed_new);
	if (l->metric) {
		fprintf(fp, ",\"metric\":\"%s\",\"n_old\":%zu,\"n_new\":%zu", l->metric, l->c.n_old, l->c.n_new);
		line_numbers(l, v);
		for (size_t i = 0; i < N_NUMBERS; i++)
			cb_json_number(fp, number_names[i], v[i]);
		fprintf(fp, ",\"exact\":%s,\"significant\":%s,\"count\":%s,\"above_floor\":%s", l->c.exact ? "true" : "false",
			l->c.significant ? "true" : "false", l->c.count ? "true" : "false",
			l->c.above_floor ? "true" : "false");
		if (l->c.change.ratio) {
			char text[96];

			cb_ratio_text(text, sizeof(text), l->c.ratio, l->c.ratio_lo, l->c.ratio_hi);
			fputs(",\"ratio_text\":", fp);
			cb_json_string(fp, text);
		}
		cb_json_number(fp, "p_adj", l->c.p_adj);
		fprintf(fp, ",\"beyond_threshold\":%s", l->c.beyond_threshold ? "true" : "false");
		if (l->c.reps_needed)
			fprintf(fp, ",\"reps_needed\":%zu,\"reps_basis\":\"%s\"", l->c.reps_needed,
				basis_names[l->c.reps_basis]);
		else
			fputs(",\"reps_needed\":null,\"reps_basis\":null", fp);
	}
	if (l->conditions[0]) {
		fputs(",\"conditions\":", fp);
		cb_json_string(fp, l->conditions);
	}
	fputc('}', fp);
	cb_record_end(fp);
}

/* ---- the table ---- */

/* "10.8 ms [10.7 ms, 10.8 ms]": the metric's unit (cowbench/units.h) */
static void center_text(char *buf, size_t len, const char *metric, double c, double lo, double hi)
{
	char a[24], b[24], d[24];

	cb_fmt_metric(a, sizeof(a), c, metric, CB_UNITS_ASCII);
	cb_fmt_metric(b, sizeof(b), lo, metric, CB_UNITS_ASCII);
	cb_fmt_metric(d, sizeof(d), hi, metric, CB_UNITS_ASCII);
	snprintf(buf, len, "%s [%s, %s]", a, b, d);
}

/*
 * The change with its interval, also when it is noise: in percent while
 * the ratio is below 2 (a drop is at most -100 %), as a factor from 2 on
 * in the one spelling every command uses ("141x [120x, 160x]",
 * cb_ratio_text), where +14000 % would be hard to read. A difference
 * (a value <= 0) in the metric's unit.
 */
static void change_text(char *buf, size_t len, const struct line *l)
{
	const struct cb_compare *c = &l->c;

	if (!c->change.ratio) {
		char d[24], lo[24], hi[24];

		cb_fmt_metric(d, sizeof(d), c->change.est, l->metric, CB_UNITS_ASCII);
		cb_fmt_metric(lo, sizeof(lo), c->change.lo, l->metric, CB_UNITS_ASCII);
		cb_fmt_metric(hi, sizeof(hi), c->change.hi, l->metric, CB_UNITS_ASCII);
		snprintf(buf, len, isnan(c->change.lo) ? "%s%s" : "%s%s [%s, %s]", c->change.est >= 0 ? "+" : "", d, lo,
			 hi);
	} else if (c->ratio < 2)
		snprintf(buf, len, isnan(c->ratio_lo) ? "%+.1f%%" : "%+.1f%% [%+.1f%%, %+.1f%%]", l->change, l->change_lo,
			 l->change_hi);
	else
		cb_ratio_text(buf, len, c->ratio, c->ratio_lo, c->ratio_hi);
}

/* "p=0.062 (0.31)": the test's p and, in brackets, the p adjusted over the set. */
static void p_text(char *buf, size_t len, const struct cb_compare *c)
{
	char raw[16], adj[16];

	snprintf(raw, sizeof(raw), c->p < 0.001 ? "<0.001" : "%.3f", c->p);
	snprintf(adj, sizeof(adj), c->p_adj < 0.001 ? "<0.001" : "%.3f", c->p_adj);
	snprintf(buf, len, "%s (%s)", raw, adj);
}

/* Why a '~' is '~' where more reps or a smaller threshold would say more. */
static void undecided_note(FILE *fp, const struct cmp_opts *o, const struct line *l)
{
	const struct cb_compare *c = &l->c;
	size_t have = c->n_old < c->n_new ? c->n_old : c->n_new;

	if (c->reps_basis == CB_REPS_TEST_MIN)
		fprintf(fp, " needs >= %zu reps (%zu values a side cannot give p < %g: the test's minimum)", c->reps_needed,
			have, o->alpha);
	else if (c->reps_basis == CB_REPS_SPREAD)
		fprintf(fp, " needs >= %zu reps (from the spread, for the interval to clear +-%g %%)", c->reps_needed,
			o->threshold * 100);
	else if (c->count && !c->above_floor && c->p_adj < o->alpha)
		fprintf(fp, " (a count %g apart or less: layout, not a change)", CB_COUNT_FLOOR);
	else if (c->p_adj < o->alpha && !c->beyond_threshold)
		fprintf(fp, " (the interval reaches into +-%g %%)", o->threshold * 100);
}

static void table_line(FILE *fp, const struct cmp_opts *o, const struct line *l, int keyw)
{
	char oldc[80], newc[80], change[64], p[48], n[24], cell[4 * CB_ROW_KEY_LEN];

	cli_printable(l->cell, cell, sizeof(cell)); /* a CSV's text never drives the terminal */
	if (!l->metric) {
		fprintf(fp, "%-*s %s\n", keyw, cell,
			l->present == BOTH ? "(no metric measured on both sides)" :
			l->present == OLD_ONLY ? "only in old" : "only in new");
		return;
	}
	center_text(oldc, sizeof(oldc), l->metric, l->c.old_center, l->c.old_lo, l->c.old_hi);
	center_text(newc, sizeof(newc), l->metric, l->c.new_center, l->c.new_lo, l->c.new_hi);
	change_text(change, sizeof(change), l);
	p_text(p, sizeof(p), &l->c);
	snprintf(n, sizeof(n), "%zu+%zu", l->c.n_old, l->c.n_new);
	fprintf(fp, "%-*s %-14s %26s %26s %-28s %-16s %-9s %s", keyw, cell, l->metric, oldc, newc, change, p, n,
		l->verdict);
	if (!strcmp(l->verdict, "~"))
		undecided_note(fp, o, l);
	if (l->failed_old || l->failed_new)
		fprintf(fp, " (%zu+%zu failed)", l->failed_old, l->failed_new);
	if (l->conditions[0])
		fprintf(fp, " [conditions differ: %s]", l->conditions);
	fputc('\n', fp);
}

static const char *correction_text(enum cb_p_adjust m)
{
	return m == CB_ADJUST_BH ? "Benjamini-Hochberg" : m == CB_ADJUST_HOLM ? "Holm" : "no correction";
}

/* The counts, then the rule in two lines (what --threshold, --correction and --alpha set). */
static void table_footer(FILE *fp, const struct cmp_opts *o, const struct lines *ls, const size_t count[5])
{
	fprintf(fp, "\n%zu better, %zu worse, %zu changed, %zu ~; cells on one side only: %zu\n", count[0], count[1],
		count[2], count[3], count[4]);
	fprintf(fp, "better/worse: p adjusted (%s over %zu comparisons) < %g, the change's interval beyond "
		    "+-%g%% and, for counts, more than %g apart; '~' otherwise.\n",
		correction_text(o->correction), ls->compared, o->alpha, o->threshold * 100, CB_COUNT_FLOOR);
	fputs("centre, change: Hodges-Lehmann with exact intervals (95 % or more; 93.75 % for a centre of 5 reps); "
	      "p: Mann-Whitney U, p (adj) in brackets. docs/reference.md, Statistics.\n", fp);
}

static void table_out(FILE *fp, const struct cmp_opts *o, const struct lines *ls)
{
	static const char *const counted[] = { "better", "worse", "changed", "~" };
	int keyw = 20;
	size_t count[5] = { 0 };
	const struct side *cur = NULL;

	for (size_t i = 0; i < ls->n; i++)
		if ((int)strlen(ls->l[i].cell) > keyw)
			keyw = (int)strlen(ls->l[i].cell);
	for (size_t i = 0; i < ls->n; i++) {
		const struct line *l = &ls->l[i];

		if (l->new_ != cur) {
			cur = l->new_;
			fprintf(fp, "%sold: %s\nnew: %s\n", i ? "\n" : "", l->old->label, l->new_->label);
			fprintf(fp, "%-*s %-14s %26s %26s %-28s %-16s %-9s %s\n", keyw, "cell", "metric",
				"old centre [CI]", "new centre [CI]", "change [CI]", "p (adj)", "n",
				"verdict");
		}
		table_line(fp, o, l, keyw);
		for (size_t k = 0; k < 4; k++)
			count[k] += strcmp(l->verdict, counted[k]) == 0;
		count[4] += l->present != BOTH;
	}
	table_footer(fp, o, ls, count);
}

/* ---- all formats ---- */

static bool exceeds(const struct cmp_opts *o, const struct line *l)
{
	return o->fail_above >= 0 && l->metric && strcmp(l->verdict, "worse") == 0 &&
	       (isnan(l->change) || l->change > o->fail_above);
}

size_t cmp_print_lines(FILE *fp, const struct cmp_opts *o, const struct lines *ls)
{
	size_t regressions = 0;

	if (o->format == CB_FORMAT_TABLE)
		table_out(fp, o, ls);
	else if (o->format == CB_FORMAT_CSV)
		csv_header(fp);
	for (size_t i = 0; i < ls->n; i++) {
		if (o->format == CB_FORMAT_CSV)
			csv_line(fp, o, &ls->l[i]);
		else if (o->format == CB_FORMAT_JSON)
			json_line(fp, o, &ls->l[i]);
		if (exceeds(o, &ls->l[i]))
			regressions++;
	}
	return regressions;
}

void cmp_report_regressions(const struct cmp_opts *o, const struct lines *ls)
{
	char cell[4 * CB_ROW_KEY_LEN];

	for (size_t i = 0; i < ls->n; i++) {
		const struct line *l = &ls->l[i];

		if (exceeds(o, l) && isnan(l->change)) /* the old median is 0: no percentage of it */
			cli_error("regression beyond --fail-above=%g%%: %s %s from 0 to %g (no percentage of 0), p=%.3g "
				  "(adj %.3g) (%s -> %s)",
				  o->fail_above, cli_printable(l->cell, cell, sizeof(cell)), l->metric, l->c.new_center,
				  l->c.p, l->c.p_adj, l->old->label, l->new_->label);
		else if (exceeds(o, l))
			cli_error("regression beyond --fail-above=%g%%: %s %s %+.1f%% [%+.1f%%, %+.1f%%], p=%.3g (adj %.3g) "
				  "(%s -> %s)",
				  o->fail_above, cli_printable(l->cell, cell, sizeof(cell)), l->metric, l->change, l->change_lo, l->change_hi, l->c.p,
				  l->c.p_adj, l->old->label, l->new_->label);
	}
}
