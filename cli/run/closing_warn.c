/*
 * Warnings under the closing summary, where hyperfine would warn: a value
 * within a few timer reads of the timer's own cost, an interval wider than
 * +-10 %, reps outside Tukey's fences. One line each, the likely cause
 * (cb_noise_explain, as summarize finds it) on the line it explains.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/compare.h>
#include <cowbench/noise.h>
#include <cowbench/results.h>
#include <cowbench/repstats.h>
#include <cowbench/units.h>

#include "run_cmd.h"

static void fmt_value(char *buf, size_t len, double v, bool time, enum cb_units_style st)
{
	if (time)
		cb_fmt_ns(buf, len, v, st);
	else
		snprintf(buf, len, "%.3g", v);
}

bool cli_at_timer_floor(double v_ns, double timer_ns)
{
	return timer_ns > 0 && v_ns < CLI_TIMER_FLOOR_READS * timer_ns;
}

/* Why the reps spread, as summarize would say it: "" when nothing co-varied. */
static void cause_of(const struct cli_noise_input *in, char *buf, size_t len)
{
	const struct cb_row **ptrs = malloc((in->n + 1) * sizeof(*ptrs));
	struct cb_row_group g;

	buf[0] = '\0';
	if (!ptrs)
		return;
	memset(&g, 0, sizeof(g));
	for (size_t i = 0; i < in->n; i++)
		ptrs[i] = &in->rows[i];
	g.rows = ptrs;
	g.n = in->n;
	if (cb_noise_explain(&g, NULL, 0, in->column, buf, len) != 1)
		buf[0] = '\0';
	free(ptrs);
}

static void warn_line(FILE *fp, enum cb_units_style st, const char *text, const char *cause)
{
	fprintf(fp, "  %s %s%s%s\n", st == CB_UNITS_UTF8 ? "\342\232\240" : "warning:", text, cause[0] ? ": " : "",
		cause);
}

void cli_noise_warnings(const struct cli_noise_input *in, FILE *fp, enum cb_units_style st)
{
	double *v = malloc((in->n + 1) * sizeof(*v));
	struct cb_summary s;
	char cause[256], text[320], a[24], b[24];
	size_t n = 0;
	bool cause_used = false;

	if (!v)
		return;
	for (size_t i = 0; i < in->n; i++)
		if (cb_row_number(&in->rows[i], in->column, &v[n]))
			n++;
	if (n == 0 || cb_summarize(v, n, &s) < 0) {
		free(v);
		return;
	}
	cause_of(in, cause, sizeof(cause));
	if (in->time && cli_at_timer_floor(s.median, in->timer_ns)) {
		snprintf(text, sizeof(text), "%s %s is within %d reads of the timer's own cost (%s a read): it is mostly timer",
			 in->what, cb_fmt_ns(a, sizeof(a), s.median, st), CLI_TIMER_FLOOR_READS,
			 cb_fmt_ns(b, sizeof(b), in->timer_ns, st));
		warn_line(fp, st, text, "");
	}
	if (s.outliers > 0) {
		fmt_value(a, sizeof(a), s.median, in->time, st);
		snprintf(text, sizeof(text), "%zu of %zu reps of %s %s outside Tukey's fences (median %s)", s.outliers, n,
			 in->what, s.outliers == 1 ? "lies" : "lie", a);
		warn_line(fp, st, text, cause);
		cause_used = true;
	}
	if (n >= 2 && s.centre != 0 && isfinite(s.ci_lo)) {
		/* The engine's interval of the centre (its larger side), at the level n allows. */
		double half = fmax(s.ci_hi - s.centre, s.centre - s.ci_lo) / fabs(s.centre);

		if (half > CLI_WIDE_INTERVAL) {
			size_t need = cb_reps_needed(s.cv, CLI_WIDE_INTERVAL, 0.95);

			snprintf(text, sizeof(text), "the %.4g %% interval of the centre %s is %s%.1f %% over %zu reps (about %zu "
				 "would give %s%.0f %%)",
				 s.ci_level * 100, in->what, st == CB_UNITS_UTF8 ? "\302\261" : "+-", half * 100, n, need,
				 st == CB_UNITS_UTF8 ? "\302\261" : "+-", CLI_WIDE_INTERVAL * 100);
			warn_line(fp, st, text, cause_used ? "" : cause);
		}
	}
	free(v);
}
