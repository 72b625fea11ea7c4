/*
 * The statistics engine (cowbench/estimate.h): Hodges-Lehmann estimates
 * with exact rank-distribution intervals, the Mann-Whitney U test, the
 * p-value adjustment over a set, and the plan of how many reps would
 * decide. Every interval cowbench prints comes from here.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/estimate.h>
#include <cowbench/output.h>
#include <cowbench/report.h>
#include <cowbench/stats.h>

/*
 * Walsh averages grow as n^2 / 2 and pairwise differences as n_old * n_new:
 * beyond these, a side is thinned to evenly spaced order statistics of
 * itself first (an interval of fewer values is wider, never narrower).
 */
#define WALSH_MAX_N 2000
#define PAIRS_MAX_SIDE 1500
#define WSR_EXACT_MAX 60 /* values up to which the signed-rank distribution is exact (2^n in a double) */

/* ---- the rank distributions ---- */

/* Standard normal cdf and quantile (bisection on erfc: ample precision). */
static double phi(double z)
{
	return 0.5 * erfc(-z / M_SQRT2);
}

static double z_quantile(double p)
{
	double lo = -40, hi = 40;

	for (int i = 0; i < 200; i++) {
		double mid = (lo + hi) / 2;

		if (phi(mid) < p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/*
 * A rank statistic's null distribution, cdf(j) = P(stat <= j) for j in
 * 0..max: a table where it is exact, else the normal approximation with
 * continuity correction, computed when asked (a table of n^2 / 2 values
 * would be most of what a big sample costs in memory).
 */
struct rank_dist {
	double *cdf;      /* exact table, or NULL: normal */
	double mean, sd;  /* the normal's */
	size_t max;
};

static double dist_at(const struct rank_dist *d, size_t k)
{
	return d->cdf ? d->cdf[k] : phi(((double)k + 0.5 - d->mean) / d->sd);
}

/*
 * The signed-rank statistic W+ of n values (max = n(n+1)/2): exact counts
 * of the rank subsets up to WSR_EXACT_MAX, the normal approximation beyond.
 */
static int wsr_dist(size_t n, struct rank_dist *d)
{
	size_t len = n * (n + 1) / 2 + 1;
	double *f, run = 0, total = ldexp(1, (int)(n < 1000 ? n : 1000));

	*d = (struct rank_dist){ .max = len - 1 };
	if (n > WSR_EXACT_MAX) {
		d->mean = (double)n * ((double)n + 1) / 4;
		d->sd = sqrt(d->mean * (2 * (double)n + 1) / 6);
		return 0;
	}
	f = calloc(len, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f[0] = 1;
	for (size_t r = 1; r <= n; r++)
		for (size_t k = len; k-- > r;)
			f[k] += f[k - r];
	for (size_t k = 0; k < len; k++) {
		run += f[k];
		f[k] = run / total;
	}
	d->cdf = f;
	return 0;
}

/* pmf counts of U for sizes m <= n without ties (f(m', n', k) = f(m'-1, n', k-n') + f(m', n'-1, k)), unnormalised. */
static double *mwu_counts(size_t m, size_t n)
{
	size_t len = m * n + 1;
	double *f = calloc((m + 1) * len, sizeof(*f)), *out;

	if (!f)
		return NULL;
	for (size_t i = 0; i <= m; i++)
		f[i * len] = 1; /* n' = 0: U is 0 */
	for (size_t nn = 1; nn <= n; nn++)
		for (size_t i = 1; i <= m; i++) {
			double *cur = f + i * len, *prev = f + (i - 1) * len;

			for (size_t k = i * nn + 1; k-- > nn;)
				cur[k] += prev[k - nn];
		}
	out = malloc(len * sizeof(*out));
	if (out)
		memcpy(out, f + m * len, len * sizeof(*out));
	free(f);
	return out;
}

/* U for sizes m and n, j in 0..m*n: exact up to CB_MWU_EXACT_MAX, else normal with continuity correction. */
static int mwu_dist(size_t m, size_t n, struct rank_dist *d)
{
	size_t len = m * n + 1;
	double *f, total = 0, run = 0;

	*d = (struct rank_dist){ .max = len - 1 };
	if (m * n > CB_MWU_EXACT_MAX) {
		d->mean = (double)m * (double)n / 2;
		d->sd = sqrt(d->mean * ((double)(m + n) + 1) / 6);
		return 0;
	}
	f = mwu_counts(m < n ? m : n, m < n ? n : m);
	if (!f)
		return -ENOMEM;
	for (size_t k = 0; k < len; k++)
		total += f[k];
	for (size_t k = 0; k < len; k++) {
		run += f[k];
		f[k] = run / total;
	}
	d->cdf = f;
	return 0;
}

/*
 * The 1-based order statistic k of the interval [X_(k), X_(N+1-k)] whose
 * coverage is 1 - 2 P(stat <= k-1): the largest k (the narrowest interval)
 * still at level >= conf, or k = 1 (the widest) when even that is below.
 */
static size_t choose_k(const struct rank_dist *d, double conf, double *level)
{
	size_t k = 1;

	while (k + 1 <= (d->max + 1) / 2 && 1 - 2 * dist_at(d, k) >= conf - 1e-12)
		k++;
	*level = 1 - 2 * dist_at(d, k - 1);
	return k;
}

/* ---- helpers ---- */

static bool all_positive(const double *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!(v[i] > 0))
			return false;
	return true;
}

/* v (logs when log_scale), sorted, thinned to at most cap evenly spaced order statistics; *m gets the count. */
static double *prepared(const double *v, size_t n, bool log_scale, size_t cap, size_t *m)
{
	double *s = malloc(n * sizeof(*s));

	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++)
		s[i] = log_scale ? log(v[i]) : v[i];
	qsort(s, n, sizeof(*s), cb_cmp_double);
	*m = n;
	if (n > cap) {
		for (size_t i = 0; i < cap; i++)
			s[i] = s[(size_t)((double)i * (double)(n - 1) / (double)(cap - 1) + 0.5)];
		*m = cap;
	}
	return s;
}

/* Sample variance times (n - 1) of s[0..n). */
static double sum_squares(const double *s, size_t n)
{
	double mean = 0, ss = 0;

	for (size_t i = 0; i < n; i++)
		mean += s[i] / (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (s[i] - mean) * (s[i] - mean);
	return ss;
}

/* ---- order statistics of pairwise values, never all in memory ---- */

/*
 * The Walsh averages (x[i] + x[j]) / 2, i <= j, of a sorted sample, or the
 * differences y[c] - x[i] of two: rows r and columns c of a matrix whose
 * values never decrease along a row or down a column (rounding is
 * monotonic), so one pass counts the values below any v. Its order
 * statistics are found by selection in O(rows) memory: 2000 values are
 * 2 million Walsh averages, 16 MB that a table never needs.
 */
struct grid {
	const double *x, *y; /* y NULL: Walsh averages of x */
	size_t rows, cols;
};

static double grid_at(const struct grid *g, size_t r, size_t c)
{
	/* Rows run down x for the differences, so that values grow with r. */
	return g->y ? g->y[c] - g->x[g->rows - 1 - r] : (g->x[r] + g->x[c]) / 2;
}

static size_t grid_count(const struct grid *g)
{
	return g->y ? g->rows * g->cols : g->rows * (g->rows + 1) / 2;
}

/*
 * cut[r]: the first column of row r, within [lo[r], hi[r]], whose value is
 * >= v (or > v with or_equal); returns how many values lie before the
 * cuts. The cut never moves right from one row to the next.
 */
static size_t grid_cut(const struct grid *g, double v, bool or_equal, const size_t *lo, const size_t *hi,
		       size_t *cut)
{
	size_t c = g->cols, n = 0;

	for (size_t r = 0; r < g->rows; r++) {
		while (c > 0 && (or_equal ? grid_at(g, r, c - 1) > v : grid_at(g, r, c - 1) >= v))
			c--;
		cut[r] = c < lo[r] ? lo[r] : c > hi[r] ? hi[r] : c;
		n += cut[r] - lo[r];
	}
	return n;
}

enum { GRID_GATHER = 8192 }; /* candidates few enough to sort */

/*
 * The k-th smallest value (1-based) of the grid: a random candidate splits
 * the candidates into below, equal and above it, and the side holding the
 * k-th is kept, until few enough are left to sort. The value is one of the
 * grid's own, computed as a table of them would hold it.
 */
static int grid_select(const struct grid *g, size_t k, double *out)
{
	size_t *lo = malloc(g->rows * sizeof(*lo)), *hi = malloc(g->rows * sizeof(*hi));
	size_t *lt = malloc(g->rows * sizeof(*lt)), *le = malloc(g->rows * sizeof(*le));
	uint64_t seed = 0x9e3779b97f4a7c15u; /* fixed: the same steps every run (the value does not depend on them) */
	size_t below = 0;
	double *buf = NULL;
	int err = -ENOMEM;

	if (!lo || !hi || !lt || !le)
		goto out;
	for (size_t r = 0; r < g->rows; r++) {
		lo[r] = g->y ? 0 : r;
		hi[r] = g->cols;
	}
	for (;;) {
		size_t left = 0, pick, n_lt, n_le;
		double pivot = 0;

		for (size_t r = 0; r < g->rows; r++)
			left += hi[r] - lo[r];
		if (left <= GRID_GATHER) {
			size_t n = 0;

			buf = malloc((left ? left : 1) * sizeof(*buf));
			if (!buf)
				goto out;
			for (size_t r = 0; r < g->rows; r++)
				for (size_t c = lo[r]; c < hi[r]; c++)
					buf[n++] = grid_at(g, r, c);
			qsort(buf, n, sizeof(*buf), cb_cmp_double);
			*out = buf[k - below - 1];
			err = 0;
			goto out;
		}
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		pick = (size_t)(seed % left);
		for (size_t r = 0; r < g->rows; r++) {
			if (pick < hi[r] - lo[r]) {
				pivot = grid_at(g, r, lo[r] + pick);
				break;
			}
			pick -= hi[r] - lo[r];
		}
		n_lt = grid_cut(g, pivot, false, lo, hi, lt);
		n_le = grid_cut(g, pivot, true, lo, hi, le);
		if (k - below <= n_lt) {
			memcpy(hi, lt, g->rows * sizeof(*hi));
		} else if (k - below <= n_le) {
			*out = pivot;
			err = 0;
			goto out;
		} else {
			below += n_le;
			memcpy(lo, le, g->rows * sizeof(*lo));
		}
	}
out:
	free(lo);
	free(hi);
	free(lt);
	free(le);
	free(buf);
	return err;
}

/*
 * The grid's median (the middle value, or the mean of the middle two, of all
 * its values in order) and, with k > 0, its k-th smallest and k-th largest.
 */
static int grid_stats(const struct grid *g, size_t k, double *median, double *lo, double *hi)
{
	size_t n = grid_count(g);
	double a, b;
	int err = grid_select(g, n / 2 + 1, &b);

	if (!err && n % 2 == 0 && (err = grid_select(g, n / 2, &a)) == 0)
		b = (a + b) / 2;
	if (!err)
		*median = b;
	if (!err && k > 0)
		err = grid_select(g, k, lo);
	if (!err && k > 0)
		err = grid_select(g, n + 1 - k, hi);
	return err;
}

/* ---- one sample ---- */

int cb_estimate(const double *v, size_t n, double conf, struct cb_estimate *out)
{
	struct rank_dist dist = { 0 };
	struct grid g;
	size_t m, k = 0;
	double *s;
	int err = 0;

	if (n == 0 || !(conf > 0 && conf < 1))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->n = n;
	out->log_scale = all_positive(v, n);
	out->lo = out->hi = out->level = NAN;
	s = prepared(v, n, out->log_scale, WALSH_MAX_N, &m);
	if (!s)
		return -ENOMEM;
	g = (struct grid){ .x = s, .rows = m, .cols = m };
	if (m >= 2 && (err = wsr_dist(m, &dist)) == 0)
		k = choose_k(&dist, conf, &out->level);
	if (!err)
		err = grid_stats(&g, k, &out->centre, &out->lo, &out->hi);
	if (out->log_scale) {
		out->centre = exp(out->centre);
		out->lo = exp(out->lo);
		out->hi = exp(out->hi);
	}
	free(s);
	free(dist.cdf);
	return err;
}

/* ---- Mann-Whitney U ---- */

struct ranked {
	double v;
	int from_a;
};

static int cmp_ranked(const void *a, const void *b)
{
	return cb_cmp_double(&((const struct ranked *)a)->v, &((const struct ranked *)b)->v);
}

/* Rank sum of a (mid-ranks for ties) and the tie term sum(t^3 - t) over tied groups. */
static int rank_sum(const double *a, size_t na, const double *b, size_t nb, double *ra, double *ties)
{
	size_t n = na + nb;
	struct ranked *r = malloc(n * sizeof(*r));

	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < na; i++)
		r[i] = (struct ranked){ a[i], 1 };
	for (size_t i = 0; i < nb; i++)
		r[na + i] = (struct ranked){ b[i], 0 };
	qsort(r, n, sizeof(*r), cmp_ranked);
	*ra = 0;
	*ties = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		double mid, t;

		while (j < n && r[j].v == r[i].v)
			j++;
		mid = ((double)i + 1 + (double)j) / 2; /* mean of ranks i+1 .. j */
		t = (double)(j - i);
		*ties += t * t * t - t;
		for (size_t k = i; k < j; k++)
			*ra += r[k].from_a ? mid : 0;
		i = j;
	}
	free(r);
	return 0;
}

double cb_mwu_min_p(size_t na, size_t nb)
{
	double lchoose = lgamma((double)(na + nb) + 1) - lgamma((double)na + 1) - lgamma((double)nb + 1);

	return fmin(1.0, 2 * exp(-lchoose));
}

size_t cb_test_min_n(double alpha)
{
	for (size_t n = 1; n < 64; n++)
		if (cb_mwu_min_p(n, n) < alpha)
			return n;
	return 0;
}

int cb_mann_whitney(const double *a, size_t na, const double *b, size_t nb, struct cb_mwu *out)
{
	double ra, ties, mn = (double)na * (double)nb, n = (double)(na + nb), var, z;
	int err;

	if (na == 0 || nb == 0)
		return -EINVAL;
	err = rank_sum(a, na, b, nb, &ra, &ties);
	if (err)
		return err;
	out->u = ra - (double)na * ((double)na + 1) / 2;
	out->exact = ties == 0 && mn <= CB_MWU_EXACT_MAX;
	if (out->exact) {
		struct rank_dist d;
		double lo, hi;

		if (mwu_dist(na, nb, &d) < 0)
			return -ENOMEM;
		/* The distribution is symmetric: P(U >= u) = P(U <= max - u). */
		lo = dist_at(&d, (size_t)(out->u + 0.5));
		hi = dist_at(&d, (size_t)((double)d.max - out->u + 0.5));
		out->p = fmin(1.0, 2 * fmin(lo, hi));
		free(d.cdf);
		return 0;
	}
	var = mn / 12 * ((n + 1) - ties / (n * (n - 1)));
	if (var <= 0) {
		out->p = 1; /* every value equal: no evidence of a difference */
		return 0;
	}
	z = fmax(0, fabs(out->u - mn / 2) - 0.5) / sqrt(var);
	out->p = fmin(1.0, erfc(z / M_SQRT2));
	return 0;
}

/* ---- two samples ---- */

int cb_estimate_change(const double *old, size_t n_old, const double *new_, size_t n_new, double conf,
		       struct cb_change *out)
{
	struct rank_dist dist = { 0 };
	double *a, *b;
	size_t ma, mb, k = 0;
	struct cb_mwu t;
	int err;

	if (n_old == 0 || n_new == 0 || !(conf > 0 && conf < 1))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->n_old = n_old;
	out->n_new = n_new;
	out->ratio = all_positive(old, n_old) && all_positive(new_, n_new);
	out->lo = out->hi = out->level = out->spread = NAN;
	err = cb_mann_whitney(old, n_old, new_, n_new, &t);
	if (err)
		return err;
	out->p = t.p;
	out->exact = t.exact;
	a = prepared(old, n_old, out->ratio, PAIRS_MAX_SIDE, &ma);
	b = prepared(new_, n_new, out->ratio, PAIRS_MAX_SIDE, &mb);
	err = a && b ? 0 : -ENOMEM;
	if (!err && ma + mb > 2 && (err = mwu_dist(ma, mb, &dist)) == 0)
		k = choose_k(&dist, conf, &out->level);
	if (!err) /* the differences new - old, every pair */
		err = grid_stats(&(struct grid){ .x = a, .y = b, .rows = ma, .cols = mb }, k, &out->est, &out->lo,
				 &out->hi);
	if (err)
		goto out;
	if (ma + mb > 2)
		out->spread = sqrt((sum_squares(a, ma) + sum_squares(b, mb)) / (double)(ma + mb - 2));
	if (out->ratio) {
		out->est = exp(out->est);
		out->lo = exp(out->lo);
		out->hi = exp(out->hi);
	}
out:
	free(a);
	free(b);
	free(dist.cdf);
	return err;
}

size_t cb_n_to_decide(const struct cb_change *c, double threshold, double floor, double conf)
{
	double room, z = z_quantile(1 - (1 - conf) / 2), n;

	if (c->ratio)
		room = c->est > 1 ? log(c->est) - log1p(threshold) :
				    (threshold < 1 ? log1p(-threshold) : -INFINITY) - log(c->est);
	else
		room = fabs(c->est) - floor;
	if (!(room > 0) || !(c->spread > 0) || !isfinite(c->spread))
		return 0;
	/* Half-width of a shift estimate with n a side: z s sqrt(2/n), over the efficiency 3/pi. */
	n = ceil(2 * (M_PI / 3) * z * z * c->spread * c->spread / (room * room));
	if (n > 1e9)
		return 0;
	return n < 2 ? 2 : (size_t)n;
}

size_t cb_reps_needed(double cv, double half_width, double conf)
{
	double z, n;

	if (!isfinite(cv) || !isfinite(half_width) || cv < 0 || half_width <= 0 || !(conf > 0 && conf < 1))
		return 0;
	z = z_quantile(1 - (1 - conf) / 2);
	n = ceil(z * z * cv * cv / (half_width * half_width) - 1e-9);
	if (n > 1e9)
		return 0;
	return n < 2 ? 2 : (size_t)n;
}

/* ---- p-value adjustment ---- */

const char *cb_p_adjust_name(enum cb_p_adjust m)
{
	return m == CB_ADJUST_HOLM ? "holm" : m == CB_ADJUST_NONE ? "none" : "bh";
}

int cb_p_adjust_parse(const char *text, enum cb_p_adjust *out)
{
	static const enum cb_p_adjust all[] = { CB_ADJUST_BH, CB_ADJUST_HOLM, CB_ADJUST_NONE };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (strcmp(text, cb_p_adjust_name(all[i])) == 0) {
			*out = all[i];
			return 0;
		}
	return -EINVAL;
}

struct ranked_p {
	double p;
	size_t at;
};

static int cmp_p(const void *a, const void *b)
{
	double x = ((const struct ranked_p *)a)->p, y = ((const struct ranked_p *)b)->p;

	return (x > y) - (x < y);
}

/*
 * Over the m p-values sorted ascending: BH's adjusted p of rank i is
 * min over j >= i of p_(j) m / j (a step-up: cumulative minimum from the
 * top); Holm's is max over j <= i of p_(j) (m - j + 1) (a step-down).
 */
static void adjust_sorted(struct ranked_p *r, size_t m, enum cb_p_adjust method)
{
	if (method == CB_ADJUST_BH) {
		double run = 1;

		for (size_t i = m; i-- > 0;) {
			double v = r[i].p * (double)m / (double)(i + 1);

			run = v < run ? v : run;
			r[i].p = run;
		}
	} else if (method == CB_ADJUST_HOLM) {
		double run = 0;

		for (size_t i = 0; i < m; i++) {
			double v = fmin(1, r[i].p * (double)(m - i));

			run = v > run ? v : run;
			r[i].p = run;
		}
	}
}

int cb_p_adjust(const double *p, size_t n, enum cb_p_adjust method, double *adj)
{
	struct ranked_p *r;
	size_t m = 0;

	if (method != CB_ADJUST_BH && method != CB_ADJUST_HOLM && method != CB_ADJUST_NONE)
		return -EINVAL;
	r = malloc((n ? n : 1) * sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (!isnan(p[i]))
			r[m++] = (struct ranked_p){ p[i], i };
	qsort(r, m, sizeof(*r), cmp_p);
	adjust_sorted(r, m, method);
	for (size_t i = 0; i < n; i++)
		if (isnan(p[i]))
			adj[i] = NAN;
	for (size_t i = 0; i < m; i++)
		adj[r[i].at] = r[i].p;
	free(r);
	return 0;
}

/* ---- what the numbers are ---- */

bool cb_metric_is_count(const char *column)
{
	const struct cb_column *c = cb_column_find(column);

	return c && c->type == CB_COL_INT && !(c->flags & (CB_COL_TIMED | CB_COL_IDENTITY | CB_COL_IDENTITY_LEGACY));
}

/* "141x", "2.43x", "0.344x": three digits, no exponent below a million. */
void cb_ratio_text(char *buf, size_t len, double r, double lo, double hi)
{
	char a[32], b[32], c[32];

	/* Each factor as the output layer's ratio cells print it (cb_fmt_ratio: three significant digits). */
	cb_fmt_ratio(a, sizeof(a), r);
	cb_fmt_ratio(b, sizeof(b), lo);
	cb_fmt_ratio(c, sizeof(c), hi);
	if (!isfinite(lo) || !isfinite(hi))
		snprintf(buf, len, "%s", a);
	else if (!strcmp(b, a) && !strcmp(c, a))
		snprintf(buf, len, "%s", a); /* every value gave that one ratio: no interval to show */
	else
		snprintf(buf, len, "%s [%s, %s]", a, b, c);
}
