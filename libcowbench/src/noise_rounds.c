/*
 * Why is a cell noisy (noise_explain.c), the causes read from whole rows
 * rather than from the odd reps: a quotient whose spread sits in one of
 * its parts, and cells that rose and fell with it in the same rounds; and
 * the rank correlation both files test with.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/noise.h>
#include <cowbench/results.h>
#include <cowbench/repstats.h>

#include "noise_int.h"

/*
 * The cell's reps were slow in the rounds where a cell that ran beside it
 * (the same round of an interleaved matrix, in the same boot) was slow too:
 * its metric, or that cell's same metric or elapsed_ns, rank-correlate over
 * at least SAME_ROUNDS_MIN pairs with rho >= SAME_ROUNDS_MIN_RHO and a
 * one-sided p < SAME_ROUNDS_MAX_P, Bonferroni-corrected over the tests made.
 */
#define SAME_ROUNDS_MIN 20
#define SAME_ROUNDS_MIN_RHO 0.3
#define SAME_ROUNDS_MAX_P 0.001


/* Average ranks (ties share their mean rank). */
static void ranks(const double *v, size_t n, double *r)
{
	for (size_t i = 0; i < n; i++) {
		double less = 0, same = 0;

		for (size_t j = 0; j < n; j++) {
			less += v[j] < v[i];
			same += v[j] == v[i];
		}
		r[i] = less + (same + 1) / 2;
	}
}

/* Spearman's rho of a and b (NAN when either is constant). */
double cb_spearman(const double *a, const double *b, size_t n)
{
	double *ra = malloc(2 * n * sizeof(*ra)), *rb = ra ? ra + n : NULL, sab = 0, saa = 0, sbb = 0, m;

	if (!ra)
		return NAN;
	ranks(a, n, ra);
	ranks(b, n, rb);
	m = ((double)n + 1) / 2;
	for (size_t i = 0; i < n; i++) {
		sab += (ra[i] - m) * (rb[i] - m);
		saa += (ra[i] - m) * (ra[i] - m);
		sbb += (rb[i] - m) * (rb[i] - m);
	}
	free(ra);
	return saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : NAN;
}

/* Metrics that divide one column of a rep by another: their spread may sit in either part. */
static const struct {
	const char *metric, *num, *den;
	const char *num_what, *den_what;
} quotients[] = {
	{ "slowdown", "writer_ns", "baseline_ns", "the writers' time beside the snapshot",
	  "the same writers' time without a snapshot, timed first in each rep" },
};

/* The coefficient of variation of column over g's rows; NAN when a row lacks it. */
static double column_cv(const struct cb_row_group *g, const char *column)
{
	double sum = 0, sq = 0, v, n = 0;

	for (size_t i = 0; i < g->n; i++) {
		if (!cb_row_number(g->rows[i], column, &v))
			return NAN;
		sum += v;
		sq += v * v;
		n++;
	}
	if (n < 2 || sum == 0)
		return NAN;
	return sqrt(fmax(0, (sq - sum * sum / n) / (n - 1))) / fabs(sum / n);
}

/*
 * A quotient whose spread comes from one of its parts: it rank-correlates
 * with that part (|rho| as correlation() asks) and the part varies more
 * than the other. Says which part, so the noise is placed inside the rep.
 */
bool cb_noise_quotient_part(const struct cb_row_group *g, const char *metric, char *buf, size_t len)
{
	size_t n = g->n;
	double *y = malloc(2 * (n + 1) * sizeof(*y)), *x = y ? y + n + 1 : NULL;
	bool found = false;

	for (size_t q = 0; y && q < sizeof(quotients) / sizeof(quotients[0]) && n >= 6; q++) {
		double cv_num, cv_den, rho;
		const char *part;
		size_t m = 0;
		bool den;

		if (strcmp(metric, quotients[q].metric) != 0)
			continue;
		cv_num = column_cv(g, quotients[q].num);
		cv_den = column_cv(g, quotients[q].den);
		if (isnan(cv_num) || isnan(cv_den))
			continue;
		den = cv_den > cv_num;
		part = den ? quotients[q].den : quotients[q].num;
		for (size_t i = 0; i < n; i++)
			if (cb_row_number(g->rows[i], metric, &y[m]) && cb_row_number(g->rows[i], part, &x[m]))
				m++;
		rho = m >= 6 ? cb_spearman(y, x, m) : NAN;
		if (isnan(rho) || fabs(rho) < MIN_RHO || fabs(rho) < RHO_Z / sqrt((double)m - 1))
			continue;
		snprintf(buf, len, "%s is %s / %s, and it %s as %s rose (Spearman rho %.2f over %zu reps; its CV %.0f %% "
			 "against %.0f %%): the spread is in %s, %s", metric, quotients[q].num, quotients[q].den,
			 rho > 0 ? "rose" : "fell", part, rho, m, (den ? cv_den : cv_num) * 100,
			 (den ? cv_num : cv_den) * 100, part, den ? quotients[q].den_what : quotients[q].num_what);
		found = true;
	}
	free(y);
	return found;
}

struct round_link {
	const char *peer, *column;
	double rho, p;
	size_t pairs;
};

/* The one-sided p of a rank correlation rho over n pairs (normal approximation). */
static double rho_p(double rho, size_t n)
{
	return 0.5 * erfc(rho * sqrt((double)n - 1) / sqrt(2.0));
}

/* The first and last round g's rows ran in; false when none carries one. */
static bool round_range(const struct cb_row_group *g, int64_t *lo, int64_t *hi)
{
	*lo = INT64_MAX;
	*hi = INT64_MIN;
	for (size_t i = 0; i < g->n; i++)
		if (g->rows[i]->round != CB_NA) {
			*lo = g->rows[i]->round < *lo ? g->rows[i]->round : *lo;
			*hi = g->rows[i]->round > *hi ? g->rows[i]->round : *hi;
		}
	return *lo <= *hi;
}

/* Whether a and b may have run in the same rounds (their round ranges overlap): a cheap test before pairing. */
static bool rounds_overlap(const struct cb_row_group *a, const struct cb_row_group *b)
{
	int64_t alo, ahi, blo, bhi;

	return round_range(a, &alo, &ahi) && round_range(b, &blo, &bhi) && alo <= bhi && blo <= ahi;
}

/* Test g's metric against a peer's column over the rounds both ran in; keep the strongest link in best. */
static void test_peer(const struct cb_row_group *g, const struct cb_row_group *peer, const char *metric,
		      const char *column, double *x, double *y, size_t *tests, struct round_link *best)
{
	const char *boot = rounds_overlap(g, peer) ? cb_shared_boot(g, peer) : NULL;
	size_t m = boot ? cb_round_pairs(g, metric, peer, column, boot, x, y) : 0;
	double rho;

	if (m < SAME_ROUNDS_MIN)
		return;
	(*tests)++;
	rho = cb_spearman(x, y, m);
	if (isnan(rho) || rho < SAME_ROUNDS_MIN_RHO || (best->peer && rho_p(rho, m) >= best->p))
		return;
	*best = (struct round_link){ .peer = peer->key, .column = column, .rho = rho, .p = rho_p(rho, m), .pairs = m };
}

/*
 * The cells that ran in the same rounds as g rose and fell with it: the
 * machine moved the round, not the cell alone. Tests g's metric against
 * each peer's same metric and its elapsed_ns.
 */
int cb_noise_same_rounds(const struct cb_row_group *g, const struct cb_row_group *peers, size_t npeers,
		       const char *metric, char *buf, size_t len)
{
	struct round_link best = { 0 };
	double *x = malloc((g->n + 1) * 2 * sizeof(*x)), *y = x ? x + g->n + 1 : NULL;
	size_t tests = 0;

	if (!x)
		return -ENOMEM;
	for (size_t k = 0; k < npeers && g->n >= SAME_ROUNDS_MIN; k++) {
		if (&peers[k] == g)
			continue;
		test_peer(g, &peers[k], metric, metric, x, y, &tests, &best);
		if (strcmp(metric, "elapsed_ns") != 0)
			test_peer(g, &peers[k], metric, "elapsed_ns", x, y, &tests, &best);
	}
	free(x);
	if (!best.peer || best.p * (double)tests >= SAME_ROUNDS_MAX_P)
		return 0;
	snprintf(buf, len, "it rose and fell with the %s of %s in the same rounds (Spearman rho %.2f over %zu "
		 "rounds, p %.2g, Bonferroni over %zu test%s): part of it is the machine's, shared by a round's "
		 "cells", best.column, best.peer, best.rho, best.pairs, best.p * (double)tests, tests,
		 tests == 1 ? "" : "s");
	return 1;
}
