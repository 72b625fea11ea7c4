#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/compare.h>
#include <cowbench/summary.h>

#include <cowbench/stats.h>

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

/*
 * Null distribution of U for sizes m <= n without ties: f[m'][k] counts the
 * orderings of m' a's and n' b's with U = k, built up over n' with
 * f(m', n', k) = f(m'-1, n', k - n') + f(m', n'-1, k) (the largest value is
 * an a, above all n' b's, or a b). Returns P(U <= u) and P(U >= u).
 */
static int mwu_exact_tails(size_t m, size_t n, double u, double *lower, double *upper)
{
	size_t len = m * n + 1;
	double *f = calloc((m + 1) * len, sizeof(*f)), total = 0, lo = 0, hi = 0;

	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i <= m; i++)
		f[i * len] = 1; /* n' = 0: U is 0 */
	for (size_t nn = 1; nn <= n; nn++)
		for (size_t i = 1; i <= m; i++) {
			double *cur = f + i * len, *prev = f + (i - 1) * len;

			for (size_t k = i * nn + 1; k-- > nn;)
				cur[k] += prev[k - nn];
		}
	for (size_t k = 0; k < len; k++) {
		double c = f[m * len + k];

		total += c;
		if ((double)k <= u + 1e-9)
			lo += c;
		if ((double)k >= u - 1e-9)
			hi += c;
	}
	*lower = lo / total;
	*upper = hi / total;
	free(f);
	return 0;
}

double cb_mwu_min_p(size_t na, size_t nb)
{
	double lchoose = lgamma((double)(na + nb) + 1) - lgamma((double)na + 1) - lgamma((double)nb + 1);

	return fmin(1.0, 2 * exp(-lchoose));
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
		double lo, hi;

		/* The distribution of U is symmetric in the roles of a and b. */
		err = mwu_exact_tails(na < nb ? na : nb, na < nb ? nb : na, out->u, &lo, &hi);
		if (err)
			return err;
		out->p = fmin(1.0, 2 * fmin(lo, hi));
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

/* ---- Wilcoxon signed-rank ---- */

double cb_wsr_min_p(size_t n)
{
	return fmin(1.0, 2 * pow(0.5, (double)n));
}

/*
 * Null distribution of W+ over n ranks 1..n without ties: f[k] counts the
 * subsets of the ranks that sum to k (each rank positive or not, 2^n in all).
 * Returns P(W+ <= w) and P(W+ >= w).
 */
static int wsr_exact_tails(size_t n, double w, double *lower, double *upper)
{
	size_t len = n * (n + 1) / 2 + 1;
	double *f = calloc(len, sizeof(*f)), total = 0, lo = 0, hi = 0;

	if (!f)
		return -ENOMEM;
	f[0] = 1;
	for (size_t r = 1; r <= n; r++)
		for (size_t k = len; k-- > r;)
			f[k] += f[k - r];
	for (size_t k = 0; k < len; k++) {
		total += f[k];
		lo += (double)k <= w + 1e-9 ? f[k] : 0;
		hi += (double)k >= w - 1e-9 ? f[k] : 0;
	}
	*lower = lo / total;
	*upper = hi / total;
	free(f);
	return 0;
}

int cb_wilcoxon_signed_rank(const double *a, const double *b, size_t n, struct cb_wsr *out)
{
	double *d, ties = 0, mean, var, z;
	size_t m = 0;

	if (n == 0)
		return -EINVAL;
	d = malloc(n * sizeof(*d));
	if (!d)
		return -ENOMEM;
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++)
		if (b[i] != a[i])
			d[m++] = b[i] - a[i];
	out->n = m;
	out->p = 1; /* no non-zero difference: no evidence of one */
	/* Rank |d| with mid-ranks; the signs ride along. */
	for (size_t i = 0; i < m; i++) {
		double less = 0, same = 0;

		for (size_t j = 0; j < m; j++) {
			less += fabs(d[j]) < fabs(d[i]);
			same += fabs(d[j]) == fabs(d[i]);
		}
		out->w_plus += d[i] > 0 ? less + (same + 1) / 2 : 0;
		ties += (same * same * same - same) / same; /* each tied group adds t^3 - t once */
	}
	free(d);
	if (m == 0)
		return 0;
	out->exact = ties == 0 && m <= CB_WSR_EXACT_MAX;
	if (out->exact) {
		double lo, hi;
		int err = wsr_exact_tails(m, out->w_plus, &lo, &hi);

		if (err)
			return err;
		out->p = fmin(1.0, 2 * fmin(lo, hi));
		return 0;
	}
	mean = (double)m * ((double)m + 1) / 4;
	var = (double)m * ((double)m + 1) * (2 * (double)m + 1) / 24 - ties / 48;
	if (var <= 0)
		return 0;
	z = fmax(0, fabs(out->w_plus - mean) - 0.5) / sqrt(var);
	out->p = fmin(1.0, erfc(z / M_SQRT2));
	return 0;
}

/* ---- centres and bootstrap intervals ---- */

static double median_sorted(const double *s, size_t n)
{
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static double mean_of(const double *v, size_t n)
{
	double sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += v[i];
	return sum / (double)n;
}

/* The median or the trimmed mean of a sorted sample. */
static double sorted_center(const double *s, size_t n, enum cb_center c)
{
	size_t k = (size_t)(CB_TRIM_SHARE * (double)n);

	if (c == CB_CENTER_TRIMMED)
		return mean_of(s + k, n - 2 * k);
	return median_sorted(s, n);
}

const char *cb_center_name(enum cb_center c)
{
	return c == CB_CENTER_MEAN ? "mean" : c == CB_CENTER_TRIMMED ? "trimmed" : "median";
}

int cb_center_parse(const char *text, enum cb_center *out)
{
	static const enum cb_center all[] = { CB_CENTER_MEAN, CB_CENTER_MEDIAN, CB_CENTER_TRIMMED };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (strcmp(text, cb_center_name(all[i])) == 0) {
			*out = all[i];
			return 0;
		}
	return -EINVAL;
}

/* The centre of v[0..n), which is scratch: sorted in place for the median and the trimmed mean. */
static double center_in_place(double *v, size_t n, enum cb_center c)
{
	if (c == CB_CENTER_MEAN)
		return mean_of(v, n);
	qsort(v, n, sizeof(*v), cb_cmp_double);
	return sorted_center(v, n, c);
}

/* The centre of v, using tmp[0..n) as scratch for the median and the trimmed mean. */
static double center_scratch(const double *v, size_t n, enum cb_center c, double *tmp)
{
	if (c == CB_CENTER_MEAN)
		return mean_of(v, n);
	memcpy(tmp, v, n * sizeof(*tmp));
	return center_in_place(tmp, n, c);
}

double cb_center_of(const double *v, size_t n, enum cb_center c)
{
	double *tmp, r;

	if (n == 0)
		return NAN;
	if (c == CB_CENTER_MEAN)
		return mean_of(v, n);
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return NAN;
	r = center_scratch(v, n, c, tmp);
	free(tmp);
	return r;
}

/* The centre of one resample (drawn into tmp) of v. */
static double resampled_center(const double *v, size_t n, enum cb_center c, uint64_t *st, double *tmp)
{
	if (c == CB_CENTER_MEAN) {
		double sum = 0;

		for (size_t i = 0; i < n; i++)
			sum += v[cb_splitmix64(st) % n];
		return sum / (double)n;
	}
	for (size_t i = 0; i < n; i++)
		tmp[i] = v[cb_splitmix64(st) % n];
	return center_in_place(tmp, n, c);
}

/* Linear interpolation between closest ranks (R type 7) of a sorted sample. */
double cb_quantile_sorted(const double *s, size_t n, double p)
{
	double h = p * (double)(n - 1);
	size_t lo = (size_t)floor(h);

	if (lo + 1 >= n)
		return s[n - 1];
	return s[lo] + (h - (double)lo) * (s[lo + 1] - s[lo]);
}

static void percentile_interval(double *stat, size_t k, double conf, double *lo, double *hi)
{
	qsort(stat, k, sizeof(*stat), cb_cmp_double);
	*lo = cb_quantile_sorted(stat, k, (1 - conf) / 2);
	*hi = cb_quantile_sorted(stat, k, 1 - (1 - conf) / 2);
}

int cb_boot_center_ci(const double *v, size_t n, enum cb_center c, double conf, size_t resamples, uint64_t seed,
		      double *lo, double *hi)
{
	double *boot, *tmp;
	uint64_t st = seed;

	if (n == 0 || resamples == 0)
		return -EINVAL;
	*lo = *hi = NAN;
	if (n < 2)
		return 0;
	boot = malloc(resamples * sizeof(*boot));
	tmp = malloc(n * sizeof(*tmp));
	if (!boot || !tmp) {
		free(boot);
		free(tmp);
		return -ENOMEM;
	}
	for (size_t b = 0; b < resamples; b++)
		boot[b] = resampled_center(v, n, c, &st, tmp);
	percentile_interval(boot, resamples, conf, lo, hi);
	free(boot);
	free(tmp);
	return 0;
}

int cb_boot_ratio_ci(const double *num, size_t nn, const double *den, size_t nd, enum cb_center c, double conf,
		     size_t resamples, uint64_t seed, double *ratio, double *lo, double *hi)
{
	double *boot, *tmp, cd;
	uint64_t st = seed;
	size_t k = 0;

	if (nn == 0 || nd == 0 || resamples == 0)
		return -EINVAL;
	cd = cb_center_of(den, nd, c);
	if (cd == 0 || isnan(cd))
		return -EINVAL;
	*ratio = cb_center_of(num, nn, c) / cd;
	*lo = *hi = NAN;
	if (nn < 2 && nd < 2)
		return 0;
	boot = malloc(resamples * sizeof(*boot));
	tmp = malloc((nn > nd ? nn : nd) * sizeof(*tmp));
	if (!boot || !tmp) {
		free(boot);
		free(tmp);
		return -ENOMEM;
	}
	for (size_t i = 0; i < resamples; i++) {
		double a = resampled_center(num, nn, c, &st, tmp), b = resampled_center(den, nd, c, &st, tmp);

		if (b != 0)
			boot[k++] = a / b;
	}
	if (k > 0)
		percentile_interval(boot, k, conf, lo, hi);
	free(boot);
	free(tmp);
	return 0;
}

int cb_boot_ratio_ci_paired(const double *num, const double *den, size_t n, enum cb_center c, double conf,
			    size_t resamples, uint64_t seed, double *ratio, double *lo, double *hi)
{
	double *boot, *ta, *tb, cd;
	uint64_t st = seed;
	size_t k = 0;

	if (n == 0 || resamples == 0)
		return -EINVAL;
	cd = cb_center_of(den, n, c);
	if (cd == 0 || isnan(cd))
		return -EINVAL;
	*ratio = cb_center_of(num, n, c) / cd;
	*lo = *hi = NAN;
	if (n < 2)
		return 0;
	boot = malloc(resamples * sizeof(*boot));
	ta = malloc(n * sizeof(*ta));
	tb = malloc(n * sizeof(*tb));
	if (!boot || !ta || !tb) {
		free(boot);
		free(ta);
		free(tb);
		return -ENOMEM;
	}
	for (size_t i = 0; i < resamples; i++) {
		double b;

		for (size_t j = 0; j < n; j++) { /* whole pairs: what drifted in a round drifted for both */
			size_t at = (size_t)(cb_splitmix64(&st) % n);

			ta[j] = num[at];
			tb[j] = den[at];
		}
		b = center_in_place(tb, n, c); /* ta and tb are this resample's own copies */
		if (b != 0)
			boot[k++] = center_in_place(ta, n, c) / b;
	}
	if (k > 0)
		percentile_interval(boot, k, conf, lo, hi);
	free(boot);
	free(ta);
	free(tb);
	return 0;
}

/* ---- Student's t ---- */

/* Continued fraction of the regularised incomplete beta function (modified Lentz). */
static double beta_cf(double a, double b, double x)
{
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;

	d = 1 / (fabs(d) < DBL_MIN ? DBL_MIN : d);
	h = d;
	for (int m = 1; m <= 300; m++) {
		double m2 = 2.0 * m, num = m * (b - m) * x / ((a + m2 - 1) * (a + m2)), del;

		d = 1 + num * d;
		c = 1 + num / c;
		d = 1 / (fabs(d) < DBL_MIN ? DBL_MIN : d);
		c = fabs(c) < DBL_MIN ? DBL_MIN : c;
		h *= d * c;
		num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
		d = 1 + num * d;
		c = 1 + num / c;
		d = 1 / (fabs(d) < DBL_MIN ? DBL_MIN : d);
		c = fabs(c) < DBL_MIN ? DBL_MIN : c;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < 1e-14)
			break;
	}
	return h;
}

/* I_x(a, b), the regularised incomplete beta function. */
static double inc_beta(double a, double b, double x)
{
	double front;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	if (x < (a + 1) / (a + b + 2))
		return front * beta_cf(a, b, x) / a;
	return 1 - front * beta_cf(b, a, 1 - x) / b;
}

/* P(T <= t) for t >= 0. */
static double t_cdf_upper_half(double t, double df)
{
	return 1 - 0.5 * inc_beta(df / 2, 0.5, df / (df + t * t));
}

double cb_t_quantile(double p, double df)
{
	double lo = 0, hi = 1, q = p < 0.5 ? 1 - p : p;

	if (!(p > 0 && p < 1) || !(df >= 1))
		return NAN;
	while (t_cdf_upper_half(hi, df) < q && hi < 1e300)
		hi *= 2;
	for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
		double mid = (lo + hi) / 2;

		if (t_cdf_upper_half(mid, df) < q)
			lo = mid;
		else
			hi = mid;
	}
	return p < 0.5 ? -(lo + hi) / 2 : (lo + hi) / 2;
}

static double stddev_of(const double *v, size_t n, double mean)
{
	double ss = 0;

	for (size_t i = 0; i < n; i++)
		ss += (v[i] - mean) * (v[i] - mean);
	return sqrt(ss / (double)(n - 1));
}

int cb_t_mean_ci(const double *v, size_t n, double conf, double *mean, double *lo, double *hi)
{
	double half;

	if (n == 0 || !(conf > 0 && conf < 1))
		return -EINVAL;
	*mean = mean_of(v, n);
	*lo = *hi = NAN;
	if (n < 2)
		return 0;
	half = cb_t_quantile(1 - (1 - conf) / 2, (double)(n - 1)) * stddev_of(v, n, *mean) / sqrt((double)n);
	*lo = *mean - half;
	*hi = *mean + half;
	return 0;
}

/* Standard normal quantile by bisection on erfc: the precision here is ample. */
static double z_quantile(double p)
{
	double lo = -40, hi = 40;

	for (int i = 0; i < 200; i++) {
		double mid = (lo + hi) / 2;

		if (0.5 * erfc(-mid / M_SQRT2) < p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
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

/* ---- comparing two samples ---- */

/* Each side's median and its bootstrap interval. */
static int compare_centers(const double *old, size_t n_old, const double *new_, size_t n_new,
			   const struct cb_compare_opts *o, struct cb_compare *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	out->n_old = n_old;
	out->n_new = n_new;
	out->old_center = cb_center_of(old, n_old, CB_CENTER_MEDIAN);
	out->new_center = cb_center_of(new_, n_new, CB_CENTER_MEDIAN);
	err = cb_boot_center_ci(old, n_old, CB_CENTER_MEDIAN, o->conf, o->resamples, o->seed, &out->old_lo,
				&out->old_hi);
	if (!err)
		err = cb_boot_center_ci(new_, n_new, CB_CENTER_MEDIAN, o->conf, o->resamples, o->seed + 1, &out->new_lo,
					&out->new_hi);
	return err;
}

/* Relative spread (sample stddev / |mean|) of v; NAN for fewer than 2 values or a zero mean. */
static double cv_of(const double *v, size_t n)
{
	double m;

	if (n < 2)
		return NAN;
	m = mean_of(v, n);
	return m == 0 ? NAN : stddev_of(v, n, m) / fabs(m);
}

size_t cb_test_min_n(bool paired, double alpha)
{
	for (size_t n = 1; n < 64; n++)
		if ((paired ? cb_wsr_min_p(n) : cb_mwu_min_p(n, n)) < alpha)
			return n;
	return 0;
}

/*
 * Significant on its own: p < alpha, and the ratio's interval excludes 1
 * (where there is a ratio). cb_compare_decide() later judges the same
 * comparison as one of a set.
 */
static void judge_significance(const struct cb_compare_opts *o, struct cb_compare *out)
{
	out->p_adj = out->p;
	out->test_min_n = cb_test_min_n(out->paired, o->alpha);
	out->significant = out->p < o->alpha;
	if (out->significant && !isnan(out->ratio))
		out->significant = out->ratio_lo > 1 || out->ratio_hi < 1;
}

int cb_compare_samples(const double *old, size_t n_old, const double *new_, size_t n_new,
		       const struct cb_compare_opts *o, struct cb_compare *out)
{
	int err;

	if (n_old == 0 || n_new == 0)
		return -EINVAL;
	err = compare_centers(old, n_old, new_, n_new, o, out);
	if (err)
		return err;
	out->ratio = out->ratio_lo = out->ratio_hi = out->ratio_cv = NAN;
	err = cb_boot_ratio_ci(new_, n_new, old, n_old, CB_CENTER_MEDIAN, o->conf, o->resamples, o->seed + 2,
			       &out->ratio, &out->ratio_lo, &out->ratio_hi);
	if (err == -ENOMEM)
		return err; /* -EINVAL: the old median is 0, so there is no ratio */
	err = cb_mann_whitney(old, n_old, new_, n_new, &out->test);
	if (err)
		return err;
	out->p = out->test.p;
	out->exact = out->test.exact;
	out->can_be_significant = cb_mwu_min_p(n_old, n_new) < o->alpha;
	out->ratio_cv = hypot(cv_of(old, n_old), cv_of(new_, n_new)); /* the delta method's spread of a quotient */
	judge_significance(o, out);
	return 0;
}

/*
 * The change of paired rounds: the median of the per-round ratios new/old
 * (what drifted for both members of a round divides out) with its
 * bootstrap interval. NAN where an old value is 0.
 */
static int paired_ratio(const double *old, const double *new_, size_t n, const struct cb_compare_opts *o,
			struct cb_compare *out)
{
	double *r = malloc(n * sizeof(*r));
	int err = 0;

	out->ratio = out->ratio_lo = out->ratio_hi = out->ratio_cv = NAN;
	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (old[i] == 0)
			goto out;
		else
			r[i] = new_[i] / old[i];
	out->ratio = cb_center_of(r, n, CB_CENTER_MEDIAN);
	out->ratio_cv = cv_of(r, n);
	err = cb_boot_center_ci(r, n, CB_CENTER_MEDIAN, o->conf, o->resamples, o->seed + 2, &out->ratio_lo,
				&out->ratio_hi);
out:
	free(r);
	return err;
}

int cb_compare_paired(const double *old, const double *new_, size_t n, const struct cb_compare_opts *o,
		      struct cb_compare *out)
{
	int err;

	if (n == 0)
		return -EINVAL;
	err = compare_centers(old, n, new_, n, o, out);
	if (err)
		return err;
	out->paired = true;
	err = paired_ratio(old, new_, n, o, out);
	if (err)
		return err;
	err = cb_wilcoxon_signed_rank(old, new_, n, &out->wsr);
	if (err)
		return err;
	out->p = out->wsr.p;
	out->exact = out->wsr.exact;
	out->can_be_significant = cb_wsr_min_p(n) < o->alpha;
	judge_significance(o, out);
	return 0;
}

/* ---- noise verdict ---- */

const char *cb_noise_name(enum cb_noise n)
{
	static const char *const names[] = {
		[CB_NOISE_OK] = "ok", [CB_NOISE_TOO_FEW] = "too-few", [CB_NOISE_NOISY] = "noisy", [CB_NOISE_WIDE] = "wide",
	};

	return (size_t)n < sizeof(names) / sizeof(names[0]) ? names[n] : "?";
}

int cb_noise_judge(const double *v, size_t n, double target, double conf, struct cb_noise_verdict *out)
{
	double mean, lo, hi;
	int err;

	if (n == 0 || !(target > 0))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->cv = out->rel_half_width = NAN;
	out->verdict = CB_NOISE_TOO_FEW;
	err = cb_t_mean_ci(v, n, conf, &mean, &lo, &hi);
	if (err || n < 3 || mean == 0)
		return err;
	out->cv = stddev_of(v, n, mean) / fabs(mean);
	out->rel_half_width = (hi - lo) / 2 / fabs(mean);
	out->reps_needed = cb_reps_needed(out->cv, target, conf);
	if (out->cv > CB_NOISY_CV)
		out->verdict = CB_NOISE_NOISY;
	else if (out->rel_half_width > target)
		out->verdict = CB_NOISE_WIDE;
	else
		out->verdict = CB_NOISE_OK;
	return 0;
}
