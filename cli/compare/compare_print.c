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

#include "common/diag.h"
#include "compare_int.h"

/* ---- the fields every format writes (cowbench/output.h) ---- */

/*
 * A compared line's fields: CSV columns and JSON keys as scripts read them
 * (JSON has present, verdict and the failed counts early, CSV in its own
 * order: those have one field each), then the table's columns for people.
 * A line without a metric (a cell on one side only) leaves the metric's
 * keys out of JSON.
 */
enum cmp_field {
	CF_BY, CF_OLD, CF_NEW, CF_CELL, CF_PRESENT_J, CF_VERDICT_J, CF_FAILED_OLD_J, CF_FAILED_NEW_J, CF_METRIC,
	CF_PRESENT, CF_N_OLD, CF_N_NEW, CF_FAILED_OLD, CF_FAILED_NEW,
	/* the numbers, in this order (cmp_record's num[]) */
	CF_OLD_CENTRE, CF_OLD_LO, CF_OLD_HI, CF_NEW_CENTRE, CF_NEW_LO, CF_NEW_HI, CF_CHANGE, CF_CHANGE_LO, CF_CHANGE_HI,
	CF_RATIO, CF_RATIO_LO, CF_RATIO_HI, CF_DIFF, CF_DIFF_LO, CF_DIFF_HI, CF_CHANGE_LEVEL, CF_P,
	CF_EXACT, CF_SIGNIFICANT, CF_VERDICT, CF_COUNT_METRIC, CF_ABOVE_FLOOR, CF_RATIO_TEXT, CF_P_ADJ, CF_BEYOND,
	CF_REPS_NEEDED, CF_REPS_BASIS, CF_CONDITIONS,
	/* the table's */
	CF_OLD_VIEW, CF_NEW_VIEW, CF_CHANGE_VIEW, CF_P_VIEW, CF_N_VIEW, CF_VERDICT_VIEW, CF_NOTE, CF_COUNT
};

#define D CB_FIELD_DATA
#define MJ (CB_FIELD_CSV | CB_FIELD_JSON | CB_FIELD_OMIT_NULL) /* the metric's: left out of JSON without one */
#define V (CB_FIELD_VIEW)
#define L (CB_FIELD_VIEW | CB_FIELD_LEFT)

const struct cb_field cmp_fields[CF_COUNT] = {
	[CF_BY] = { "by", "by", CB_KIND_TEXT, D, 0, -1, 0, 0 },
	[CF_OLD] = { "old", "old", CB_KIND_TEXT, D, 0, -1, 0, 0 },
	[CF_NEW] = { "new", "new", CB_KIND_TEXT, D, 0, -1, 0, 0 },
	[CF_CELL] = { "cell", "cell", CB_KIND_TEXT, D | L, 0, -1, 20, 0 },
	[CF_PRESENT_J] = { "present", "present", CB_KIND_TEXT, CB_FIELD_JSON, 0, -1, 0, 0 },
	[CF_VERDICT_J] = { "verdict", "verdict", CB_KIND_TEXT, CB_FIELD_JSON, 0, -1, 0, 0 },
	[CF_FAILED_OLD_J] = { "failed_old", "failed_old", CB_KIND_COUNT, CB_FIELD_JSON, 0, -1, 0, 0 },
	[CF_FAILED_NEW_J] = { "failed_new", "failed_new", CB_KIND_COUNT, CB_FIELD_JSON, 0, -1, 0, 0 },
	[CF_METRIC] = { "metric", "metric", CB_KIND_TEXT, MJ | L, 0, -1, 0, 0 },
	[CF_PRESENT] = { "present", "present", CB_KIND_TEXT, CB_FIELD_CSV, 0, -1, 0, 0 },
	[CF_N_OLD] = { "n_old", "n_old", CB_KIND_COUNT, MJ, 0, -1, 0, 0 },
	[CF_N_NEW] = { "n_new", "n_new", CB_KIND_COUNT, MJ, 0, -1, 0, 0 },
	[CF_FAILED_OLD] = { "failed_old", "failed_old", CB_KIND_COUNT, CB_FIELD_CSV, 0, -1, 0, 0 },
	[CF_FAILED_NEW] = { "failed_new", "failed_new", CB_KIND_COUNT, CB_FIELD_CSV, 0, -1, 0, 0 },
	[CF_OLD_CENTRE] = { "old_centre", "old_centre", CB_KIND_NUMBER, MJ, 0, -1, 0, 0 },
	[CF_OLD_LO] = { "old_ci_lo", "old_ci_lo", CB_KIND_NUMBER, MJ, 0, -1, 0, 0 },
	[CF_OLD_HI] = { "old_ci_hi", "old_ci_hi", CB_KIND_NUMBER, MJ, 0, -1, 0, 0 },
	[CF_NEW_CENTRE] = { "new_centre", "new_centre", CB_KIND_NUMBER, MJ, 0, -1, 0, 0 },
	[CF_NEW_LO] = { "new_ci_lo", "new_ci_lo", CB_KIND_NUMBER, MJ, 0, -1, 0, 0 },
	[CF_NEW_HI] = { "new_ci_hi", "new_ci_hi", CB_KIND_NUMBER, MJ, 0, -1, 0, 0 },
	[CF_CHANGE] = { "change_pct", "change_pct", CB_KIND_PERCENT, MJ, 0, -1, 0, 0 },
	[CF_CHANGE_LO] = { "change_ci_lo_pct", "change_ci_lo_pct", CB_KIND_PERCENT, MJ, 0, -1, 0, 0 },
	[CF_CHANGE_HI] = { "change_ci_hi_pct", "change_ci_hi_pct", CB_KIND_PERCENT, MJ, 0, -1, 0, 0 },
	[CF_RATIO] = { "ratio", "ratio", CB_KIND_RATIO, MJ, 0, -1, 0, 0 },
	[CF_RATIO_LO] = { "ratio_ci_lo", "ratio_ci_lo", CB_KIND_RATIO, MJ, 0, -1, 0, 0 },
	[CF_RATIO_HI] = { "ratio_ci_hi", "ratio_ci_hi", CB_KIND_RATIO, MJ, 0, -1, 0, 0 },
	[CF_DIFF] = { "difference", "difference", CB_KIND_NUMBER, MJ, 0, -1, 0, 0 },
	[CF_DIFF_LO] = { "difference_ci_lo", "difference_ci_lo", CB_KIND_NUMBER, MJ, 0, -1, 0, 0 },
	[CF_DIFF_HI] = { "difference_ci_hi", "difference_ci_hi", CB_KIND_NUMBER, MJ, 0, -1, 0, 0 },
	[CF_CHANGE_LEVEL] = { "change_ci_level", "change_ci_level", CB_KIND_FRACTION, MJ, 0, -1, 0, 0 },
	[CF_P] = { "p", "p", CB_KIND_NUMBER, MJ, 0, -1, 0, 0 },
	[CF_EXACT] = { "exact", "exact", CB_KIND_BOOL, MJ, 0, -1, 0, 0 },
	[CF_SIGNIFICANT] = { "significant", "significant", CB_KIND_BOOL, MJ, 0, -1, 0, 0 },
	[CF_VERDICT] = { "verdict", "verdict", CB_KIND_TEXT, CB_FIELD_CSV, 0, -1, 0, 0 },
	[CF_COUNT_METRIC] = { "count", "count", CB_KIND_BOOL, MJ, 0, -1, 0, 0 },
	[CF_ABOVE_FLOOR] = { "above_floor", "above_floor", CB_KIND_BOOL, MJ, 0, -1, 0, 0 },
	[CF_RATIO_TEXT] = { "ratio_text", "ratio_text", CB_KIND_TEXT, CB_FIELD_JSON | CB_FIELD_OMIT_NULL, 0, -1, 0, 0 },
	[CF_P_ADJ] = { "p_adj", "p_adj", CB_KIND_NUMBER, MJ, 0, -1, 0, 0 },
	[CF_BEYOND] = { "beyond_threshold", "beyond_threshold", CB_KIND_BOOL, MJ, 0, -1, 0, 0 },
	[CF_REPS_NEEDED] = { "reps_needed", "reps_needed", CB_KIND_COUNT, MJ, 0, -1, 0, 0 },
	[CF_REPS_BASIS] = { "reps_basis", "reps_basis", CB_KIND_TEXT, MJ, 0, -1, 0, 0 },
	/* how the two sides' recorded conditions differ; JSON: only where they do */
	[CF_CONDITIONS] = { "conditions", "conditions", CB_KIND_TEXT, MJ, 0, -1, 0, 0 },
	[CF_OLD_VIEW] = { "old_centre", "old centre [CI]", CB_KIND_TEXT, V, 3, -1, 0, 0 },
	[CF_NEW_VIEW] = { "new_centre", "new centre [CI]", CB_KIND_TEXT, V, 2, -1, 0, 0 },
	[CF_CHANGE_VIEW] = { "change", "change [CI]", CB_KIND_TEXT, V, 0, -1, 0, 0 },
	[CF_P_VIEW] = { "p", "p (adj)", CB_KIND_TEXT, L, 1, -1, 0, 0 },
	[CF_N_VIEW] = { "n", "n", CB_KIND_TEXT, L, 4, -1, 0, 0 },
	[CF_VERDICT_VIEW] = { "verdict", "verdict", CB_KIND_TEXT, L, 0, -1, 0, 0 },
	[CF_NOTE] = { "note", "", CB_KIND_TEXT, L, 0, -1, 1, 0 },
};

const size_t cmp_nfields = CF_COUNT;

static const char *const basis_names[] = {
	[CB_REPS_NONE] = "", [CB_REPS_TEST_MIN] = "test-minimum", [CB_REPS_SPREAD] = "spread",
};

static const char *const present_names[] = { "both", "old", "new" };

/* ---- the table ---- */

/* "10.8 ms [10.7 ms, 10.8 ms]": the metric's unit (cowbench/units.h) */
static void center_text(char *buf, size_t len, const char *metric, double c, double lo, double hi,
			enum cb_units_style st)
{
	char a[24], b[24], d[24];

	cb_fmt_metric(a, sizeof(a), c, metric, st);
	cb_fmt_metric(b, sizeof(b), lo, metric, st);
	cb_fmt_metric(d, sizeof(d), hi, metric, st);
	snprintf(buf, len, "%s [%s, %s]", a, b, d);
}

/*
 * The change with its interval, also when it is noise: in percent while
 * the ratio is below 2 (a drop is at most -100 %), as a factor from 2 on
 * in the one spelling every command uses ("141x [120x, 160x]",
 * cb_ratio_text), where +14000 % would be hard to read. A difference
 * (a value <= 0) in the metric's unit.
 */
static void change_text(char *buf, size_t len, const struct line *l, enum cb_units_style st)
{
	const struct cb_compare *c = &l->c;

	if (!c->change.ratio) {
		char d[24], lo[24], hi[24];

		cb_fmt_metric(d, sizeof(d), c->change.est, l->metric, st);
		cb_fmt_metric(lo, sizeof(lo), c->change.lo, l->metric, st);
		cb_fmt_metric(hi, sizeof(hi), c->change.hi, l->metric, st);
		snprintf(buf, len, isnan(c->change.lo) ? "%s%s" : "%s%s [%s, %s]", c->change.est >= 0 ? "+" : "", d, lo,
			 hi);
	} else if (c->ratio < 2)
		snprintf(buf, len, isnan(c->ratio_lo) ? "%+.1f %%" : "%+.1f %% [%+.1f %%, %+.1f %%]", l->change, l->change_lo,
			 l->change_hi);
	else
		cb_ratio_text(buf, len, c->ratio, c->ratio_lo, c->ratio_hi);
}

/* "0.062 (0.31)": the test's p and, in brackets, the p adjusted over the set. */
static void p_text(char *buf, size_t len, const struct cb_compare *c)
{
	char raw[16], adj[16];

	snprintf(raw, sizeof(raw), c->p < 0.001 ? "<0.001" : "%.3f", c->p);
	snprintf(adj, sizeof(adj), c->p_adj < 0.001 ? "<0.001" : "%.3f", c->p_adj);
	snprintf(buf, len, "%s (%s)", raw, adj);
}

/* Why a '~' is '~' where more reps or a smaller threshold would say more. */
static void undecided_note(char *buf, size_t len, const struct cmp_opts *o, const struct line *l)
{
	const struct cb_compare *c = &l->c;
	size_t have = c->n_old < c->n_new ? c->n_old : c->n_new;

	buf[0] = '\0';
	if (c->reps_basis == CB_REPS_TEST_MIN)
		snprintf(buf, len, "needs >= %zu reps (%zu values a side cannot give p < %g: the test's minimum)",
			 c->reps_needed, have, o->alpha);
	else if (c->reps_basis == CB_REPS_SPREAD)
		snprintf(buf, len, "needs >= %zu reps (from the spread, for the interval to clear +-%g %%)", c->reps_needed,
			 o->threshold * 100);
	else if (c->count && !c->above_floor && c->p_adj < o->alpha)
		snprintf(buf, len, "(a count %g apart or less: layout, not a change)", CB_COUNT_FLOOR);
	else if (c->p_adj < o->alpha && !c->beyond_threshold)
		snprintf(buf, len, "(the interval reaches into +-%g %%)", o->threshold * 100);
}

/*
 * The table's note beside the verdict: why a '~' is '~', failed reps, and
 * where the two files were not measured alike (load, steal, CPU, kernel).
 */
static void note_text(char *buf, size_t len, const struct cmp_opts *o, const struct line *l)
{
	size_t n;

	buf[0] = '\0';
	if (l->metric && !strcmp(l->verdict, "~"))
		undecided_note(buf, len, o, l);
	n = strlen(buf);
	if (l->failed_old || l->failed_new)
		n += (size_t)snprintf(buf + n, len - n, "%s(%zu+%zu failed)", n ? " " : "", l->failed_old, l->failed_new);
	if (l->conditions[0] && n < len)
		snprintf(buf + n, len - n, "%s[conditions differ: %s]", n ? " " : "", l->conditions);
}

/* The texts a line's record points at, alive until it is written. */
struct cmp_texts {
	char cell[4 * CB_ROW_KEY_LEN], oldc[80], newc[80], change[80], ratio_text[96], p[48], n[24], verdict[24];
	char note[480];
};

static void cmp_record(const struct cmp_opts *o, const struct line *l, struct cb_val v[CF_COUNT], struct cmp_texts *t,
		       bool people, enum cb_units_style st)
{
	enum cb_kind unit = l->metric ? cb_kind_of_metric(l->metric) : CB_KIND_NUMBER;
	bool r = l->c.change.ratio;
	const double num[] = { l->c.old_center, l->c.old_lo, l->c.old_hi, l->c.new_center, l->c.new_lo, l->c.new_hi,
			       l->change, l->change_lo, l->change_hi, l->c.ratio, l->c.ratio_lo, l->c.ratio_hi,
			       r ? NAN : l->c.change.est, r ? NAN : l->c.change.lo, r ? NAN : l->c.change.hi,
			       l->c.change.level, l->c.p };
	size_t k;

	for (size_t i = 0; i < CF_COUNT; i++)
		v[i] = cb_none();
	t->note[0] = '\0';
	v[CF_BY] = cb_text(o->by);
	v[CF_OLD] = cb_text(l->old->label);
	v[CF_NEW] = cb_text(l->new_->label);
	/* A CSV's text never drives the terminal: the table shows it made printable. */
	v[CF_CELL] = cb_text(people ? cli_printable(l->cell, t->cell, sizeof(t->cell)) : l->cell);
	v[CF_PRESENT] = v[CF_PRESENT_J] = cb_text(present_names[l->present]);
	v[CF_VERDICT] = v[CF_VERDICT_J] = cb_text(l->verdict);
	v[CF_FAILED_OLD] = v[CF_FAILED_OLD_J] = cb_num((double)l->failed_old);
	v[CF_FAILED_NEW] = v[CF_FAILED_NEW_J] = cb_num((double)l->failed_new);
	snprintf(t->verdict, sizeof(t->verdict), "%s",
		 l->metric ? l->verdict : l->present == BOTH ? "(no metric measured on both sides)" :
		 l->present == OLD_ONLY ? "only in old" : "only in new");
	v[CF_VERDICT_VIEW] = cb_text(t->verdict);
	if (l->conditions[0])
		v[CF_CONDITIONS] = cb_text(l->conditions);
	if (people) {
		note_text(t->note, sizeof(t->note), o, l);
		if (t->note[0])
			v[CF_NOTE] = cb_text(t->note);
	}
	if (!l->metric)
		return;
	v[CF_METRIC] = cb_text(l->metric);
	v[CF_N_OLD] = cb_num((double)l->c.n_old);
	v[CF_N_NEW] = cb_num((double)l->c.n_new);
	for (k = 0; k < sizeof(num) / sizeof(num[0]); k++) {
		v[CF_OLD_CENTRE + k] = cb_num(num[k]);
		if (k < 6 || (k >= (size_t)(CF_DIFF - CF_OLD_CENTRE) && k <= (size_t)(CF_DIFF_HI - CF_OLD_CENTRE)))
			v[CF_OLD_CENTRE + k].kind = unit;
	}
	v[CF_EXACT] = cb_bool(l->c.exact);
	v[CF_SIGNIFICANT] = cb_bool(l->c.significant);
	v[CF_COUNT_METRIC] = cb_bool(l->c.count);
	v[CF_ABOVE_FLOOR] = cb_bool(l->c.above_floor);
	if (r) {
		/* The one spelling of a ratio (cb_ratio_text), as summarize, plot and the reports write it. */
		cb_ratio_text(t->ratio_text, sizeof(t->ratio_text), l->c.ratio, l->c.ratio_lo, l->c.ratio_hi);
		v[CF_RATIO_TEXT] = cb_text(t->ratio_text);
	}
	v[CF_P_ADJ] = cb_num(l->c.p_adj);
	v[CF_BEYOND] = cb_bool(l->c.beyond_threshold);
	if (l->c.reps_needed) {
		v[CF_REPS_NEEDED] = cb_num((double)l->c.reps_needed);
		v[CF_REPS_BASIS] = cb_text(basis_names[l->c.reps_basis]);
	} else if (o->format == CB_FORMAT_CSV) {
		v[CF_REPS_BASIS] = cb_text(basis_names[l->c.reps_basis]);
	} else {
		/* JSON: null, not left out, while the line has a metric */
		v[CF_REPS_NEEDED] = (struct cb_val){ .type = CB_VAL_RAW, .text = "null" };
		v[CF_REPS_BASIS] = v[CF_REPS_NEEDED];
	}
	if (!people)
		return;
	center_text(t->oldc, sizeof(t->oldc), l->metric, l->c.old_center, l->c.old_lo, l->c.old_hi, st);
	center_text(t->newc, sizeof(t->newc), l->metric, l->c.new_center, l->c.new_lo, l->c.new_hi, st);
	change_text(t->change, sizeof(t->change), l, st);
	p_text(t->p, sizeof(t->p), &l->c);
	snprintf(t->n, sizeof(t->n), "%zu+%zu", l->c.n_old, l->c.n_new);
	v[CF_OLD_VIEW] = cb_text(t->oldc);
	v[CF_NEW_VIEW] = cb_text(t->newc);
	v[CF_CHANGE_VIEW] = cb_text(t->change);
	v[CF_P_VIEW] = cb_text(t->p);
	v[CF_N_VIEW] = cb_text(t->n);
}

static const char *correction_text(enum cb_p_adjust m)
{
	return m == CB_ADJUST_BH ? "Benjamini-Hochberg" : m == CB_ADJUST_HOLM ? "Holm" : "no correction";
}

/* The counts, then the rule in two lines (what --threshold, --correction and --alpha set). */
static void table_footer(FILE *fp, int width, const struct cmp_opts *o, const struct lines *ls, const size_t count[5])
{
	char line[512];

	snprintf(line, sizeof(line), "%zu better, %zu worse, %zu changed, %zu ~; cells on one side only: %zu", count[0],
		 count[1], count[2], count[3], count[4]);
	fputc('\n', fp);
	cb_print_wrapped(fp, width, 2, line);
	snprintf(line, sizeof(line),
		 "better/worse: p adjusted (%s over %zu comparisons) < %g, the change's interval beyond +-%g %% and, "
		 "for counts, more than %g apart; '~' otherwise.",
		 correction_text(o->correction), ls->compared, o->alpha, o->threshold * 100, CB_COUNT_FLOOR);
	cb_print_wrapped(fp, width, 2, line);
	cb_print_wrapped(fp, width, 2,
			 "centre, change: Hodges-Lehmann with exact intervals (95 % or more; 93.75 % for a centre of 5 "
			 "reps); p: Mann-Whitney U, p (adj) in brackets. docs/reference.md, Statistics.");
}

/* ---- all formats ---- */

static bool exceeds(const struct cmp_opts *o, const struct line *l)
{
	return o->fail_above >= 0 && l->metric && strcmp(l->verdict, "worse") == 0 &&
	       (isnan(l->change) || l->change > o->fail_above);
}

size_t cmp_print_lines(FILE *fp, const struct cmp_opts *o, const struct lines *ls)
{
	static const char *const counted[] = { "better", "worse", "changed", "~" };
	bool people = o->format == CB_FORMAT_TABLE || o->format == CB_FORMAT_MARKDOWN;
	size_t regressions = 0, count[5] = { 0 };
	const struct side *cur = NULL;
	struct cb_out out;
	struct cb_val v[CF_COUNT];
	struct cmp_texts t;
	char line[2 * CB_ROW_KEY_LEN + 160];

	if (cb_out_open(&out, fp, o->format, cmp_fields, CF_COUNT, o->columns) < 0)
		return 0; /* --columns was checked when parsed */
	for (size_t i = 0; i < ls->n; i++) {
		const struct line *l = &ls->l[i];

		if (people && l->new_ != cur) {
			/* Each pair of sides its own block, named above it. */
			cb_out_block_end(&out);
			cur = l->new_;
			if (i)
				fputc('\n', fp);
			snprintf(line, sizeof(line), "old: %s", l->old->label);
			cb_print_wrapped(fp, out.width, 5, line);
			snprintf(line, sizeof(line), "new: %s", l->new_->label);
			cb_print_wrapped(fp, out.width, 5, line);
			out.printed = false;
		}
		cmp_record(o, l, v, &t, people, out.units);
		cb_out_record(&out, v);
		for (size_t k = 0; k < 4; k++)
			count[k] += strcmp(l->verdict, counted[k]) == 0;
		count[4] += l->present != BOTH;
		if (exceeds(o, l))
			regressions++;
	}
	cb_out_close(&out);
	if (people)
		table_footer(fp, out.width, o, ls, count);
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
