/*
 * Why is a cell noisy? Split its reps into the odd ones (Tukey outliers of
 * the metric more than CB_NOISY_CV from the median, else the smaller side
 * of the widest gap between values) and the
 * rest, and look for a noise column that differs between the two, or that
 * rises and falls with the metric across all reps (Spearman), or drift
 * with the rep number, or odd reps that came in stretches of consecutive
 * reps, or with the cells that ran in the same rounds of an interleaved
 * matrix. ref_ns, the machine-speed probe, is a candidate too,
 * held to a test of significance: its effects are modest (tens of %), so a
 * factor alone would let coincidences through. What is printed is what
 * co-varied, never a guess.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/compare.h>
#include <cowbench/stats.h>
#include <cowbench/noise.h>
#include <cowbench/report.h>
#include <cowbench/results.h>
#include <cowbench/repstats.h>

#include "noise_int.h"

static const struct {
	const char *column, *what;
	double min_factor; /* a difference this large between odd and other reps is a cause */
} noise_columns[] = {
	{ "steal_ns", "the steal time", 2 },
	{ "nivcsw", "the involuntary context switches", 2 },
	{ "migrations", "the CPU migrations", 2 },
	{ "runq", "the run-queue length", 1.5 },
	{ "run_delay_ns", "the wait for a CPU", 2 },
};

#define NCOLS (sizeof(noise_columns) / sizeof(noise_columns[0]))

/*
 * The slow reps ran on a slower machine when their reference probe took
 * REF_MIN_FACTOR the others' (median) and a Mann-Whitney test of the two
 * sides' probe times gives p < REF_MAX_P (two-sided).
 */
#define REF_MIN_FACTOR 1.1
#define REF_MAX_P 0.01

/*
 * The odd reps came in stretches when their runs along the rep order are
 * far fewer than chance gives (Wald-Wolfowitz runs test, normal
 * approximation, one-sided p < STRETCH_MAX_P), with at least
 * STRETCH_MIN_ODD odd reps among STRETCH_MIN_REPS.
 */
#define STRETCH_MAX_P 0.001
#define STRETCH_MIN_ODD 3
#define STRETCH_MIN_REPS 20

struct sample {
	double y;            /* the metric */
	double x[NCOLS];     /* noise columns; NAN: not measured */
	double cpu, rep;
	double ref;          /* ref_ns; NAN: not measured */
	bool odd;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * A spread without Tukey outliers (two modes, e.g. reps that were
 * preempted and reps that were not): cut at the widest gap between
 * consecutive values, if it is wider than CB_NOISY_CV of the median.
 */
static bool gap_split(const struct sample *s, size_t n, double med, double *cut)
{
	double *v = malloc(n * sizeof(*v)), best = 0;

	if (!v)
		return false;
	for (size_t i = 0; i < n; i++)
		v[i] = s[i].y;
	qsort(v, n, sizeof(*v), cmp_double);
	for (size_t i = 1; i < n; i++)
		if (v[i] - v[i - 1] > best) {
			best = v[i] - v[i - 1];
			*cut = (v[i] + v[i - 1]) / 2;
		}
	free(v);
	return best > CB_NOISY_CV * fabs(med);
}

/* The odd reps are the smaller side of the cut (the slow side on a tie). */
static size_t mark_side(struct sample *s, size_t n, double cut)
{
	size_t above = 0;
	bool odd_above;

	for (size_t i = 0; i < n; i++)
		above += s[i].y > cut;
	odd_above = above * 2 <= n;
	for (size_t i = 0; i < n; i++)
		s[i].odd = (s[i].y > cut) == odd_above;
	return odd_above ? above : n - above;
}

/* Mark the odd reps; returns how many (0: none, or all). */
static size_t mark_odd(struct sample *s, size_t n)
{
	double *v = malloc(n * sizeof(*v)), q1, q3, med, iqr, cut = 0;
	size_t odd = 0;

	if (!v)
		return 0;
	for (size_t i = 0; i < n; i++)
		v[i] = s[i].y;
	qsort(v, n, sizeof(*v), cmp_double);
	q1 = cb_quantile_sorted(v, n, 0.25);
	q3 = cb_quantile_sorted(v, n, 0.75);
	med = cb_quantile_sorted(v, n, 0.5);
	iqr = q3 - q1;
	for (size_t i = 0; i < n; i++)
		/* Outside Tukey's fences and far enough from the median to matter for the CV. */
		odd += s[i].odd = (s[i].y < q1 - 1.5 * iqr || s[i].y > q3 + 1.5 * iqr) &&
				  fabs(s[i].y - med) > CB_NOISY_CV * fabs(med);
	if (odd == 0 && gap_split(s, n, med, &cut))
		odd = mark_side(s, n, cut);
	free(v);
	return odd < n ? odd : 0;
}

/* Median of noise column k over the odd or the other reps (robust: one lucky rep moves it not); NAN when a rep lacks it. */
static double median_of(const struct sample *s, size_t n, size_t k, bool odd)
{
	double *v = malloc(n * sizeof(*v)), med = NAN;
	size_t m = 0;

	if (!v)
		return NAN;
	for (size_t i = 0; i < n; i++) {
		if (s[i].odd != odd)
			continue;
		if (isnan(s[i].x[k])) {
			free(v);
			return NAN;
		}
		v[m++] = s[i].x[k];
	}
	if (m) {
		qsort(v, m, sizeof(*v), cmp_double);
		med = cb_quantile_sorted(v, m, 0.5);
	}
	free(v);
	return med;
}

static void fmt_value(char *buf, size_t len, const char *column, double v)
{
	if (strcmp(column, "steal_ns") == 0 || strcmp(column, "run_delay_ns") == 0)
		snprintf(buf, len, "%.3g ms", v / 1e6);
	else
		snprintf(buf, len, "%.3g", v);
}

/* Whether the odd reps are the slow ones (their mean metric above the others'). */
static bool odd_are_slow(const struct sample *s, size_t n)
{
	double so = 0, sr = 0;
	size_t no = 0, nr = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i].odd) {
			so += s[i].y;
			no++;
		} else {
			sr += s[i].y;
			nr++;
		}
	}
	return so / (double)no > sr / (double)nr;
}

/*
 * The strongest noise difference between the slow and the fast side:
 * noise explains slowness only when the slow reps had more of it. Its
 * factor, or 0 when none reaches the column's min_factor.
 */
static double odd_difference(const struct sample *s, size_t n, size_t odd, char *buf, size_t len)
{
	bool slow = odd_are_slow(s, n);
	size_t ns = slow ? odd : n - odd, nf = n - ns;
	double best = 0;

	for (size_t k = 0; k < NCOLS; k++) {
		double a = median_of(s, n, k, slow), b = median_of(s, n, k, !slow), f;
		char va[32], vb[32], who[64];

		if (isnan(a) || isnan(b) || a <= 0)
			continue;
		f = b > 0 ? a / b : INFINITY;
		if (f < noise_columns[k].min_factor || f <= best)
			continue;
		best = f;
		fmt_value(va, sizeof(va), noise_columns[k].column, a);
		fmt_value(vb, sizeof(vb), noise_columns[k].column, b);
		snprintf(who, sizeof(who), "the %zu %s rep%s", ns, slow ? "outlying slow" : "slow", ns == 1 ? "" : "s");
		if (isinf(f))
			snprintf(buf, len, "%s had %s (median %s %s), the %zu other%s none", who, noise_columns[k].what, va,
				 noise_columns[k].column, nf, nf == 1 ? "" : "s");
		else
			snprintf(buf, len, "%s had %.1fx %s of the %zu other%s (median %s vs %s %s)", who, f,
				 noise_columns[k].what, nf, nf == 1 ? "" : "s", va, vb, noise_columns[k].column);
	}
	return best;
}

/* The odd reps all ran on one CPU and the others mostly elsewhere. */
static bool cpu_difference(const struct sample *s, size_t n, size_t odd, char *buf, size_t len)
{
	double cpu = NAN;
	size_t same_other = 0, other = 0;

	for (size_t i = 0; i < n; i++) {
		if (isnan(s[i].cpu))
			return false;
		if (!s[i].odd)
			continue;
		if (!isnan(cpu) && s[i].cpu != cpu)
			return false;
		cpu = s[i].cpu;
	}
	for (size_t i = 0; i < n; i++)
		if (!s[i].odd) {
			other++;
			same_other += s[i].cpu == cpu;
		}
	if (odd < 2 || same_other * 2 > other)
		return false;
	snprintf(buf, len, "all %zu odd reps ran on CPU %.0f, %zu of the other %zu did", odd, cpu, same_other, other);
	return true;
}

/* ref_ns of the slow (or fast) side into v; how many, 0 when a rep of the side lacks it. */
static size_t side_refs(const struct sample *s, size_t n, bool odd, double *v)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i].odd != odd)
			continue;
		if (isnan(s[i].ref) || s[i].ref <= 0)
			return 0;
		v[m++] = s[i].ref;
	}
	return m;
}

static double median_in_place(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return cb_quantile_sorted(v, n, 0.5);
}

/*
 * The slow side's reps ran on a slower machine: their reference probe took
 * longer, by REF_MIN_FACTOR and with a significant Mann-Whitney test.
 */
static bool slow_machine(const struct sample *s, size_t n, char *buf, size_t len)
{
	bool slow = odd_are_slow(s, n);
	double *a = malloc(2 * n * sizeof(*a)), *b = a ? a + n : NULL, ma, mb;
	size_t na, nb;
	struct cb_mwu t;
	bool found = false;

	if (!a)
		return false;
	na = side_refs(s, n, slow, a);
	nb = side_refs(s, n, !slow, b);
	if (na && nb && cb_mann_whitney(a, na, b, nb, &t) == 0 && t.p < REF_MAX_P) {
		ma = median_in_place(a, na);
		mb = median_in_place(b, nb);
		found = ma >= REF_MIN_FACTOR * mb;
		if (found)
			snprintf(buf, len, "the machine itself ran slower: the %zu %s %s reference probe took %.2fx "
				 "as long as the %zu %s (median %.3g vs %.3g ms ref_ns, Mann-Whitney p %.2g)", na,
				 slow ? "outlying slow" : "slow", na == 1 ? "rep's" : "reps'", ma / mb, nb,
				 nb == 1 ? "other's" : "others'", ma / 1e6, mb / 1e6, t.p);
	}
	free(a);
	return found;
}

/* Rank correlation of the metric with a noise column, the machine-speed probe, or the rep number (drift). */
static bool correlation(const struct sample *s, size_t n, char *buf, size_t len)
{
	double *y = malloc(2 * n * sizeof(*y)), *x = y ? y + n : NULL, best = 0;
	bool found = false;

	if (!y || n < 6) {
		free(y);
		return false;
	}
	for (int k = -1; k <= (int)NCOLS; k++) {
		double rho;
		bool all = true;

		for (size_t i = 0; i < n; i++) {
			y[i] = s[i].y;
			x[i] = k < 0 ? s[i].rep : k == (int)NCOLS ? s[i].ref : s[i].x[k];
			all = all && !isnan(x[i]);
		}
		rho = all ? cb_spearman(y, x, n) : NAN;
		if (isnan(rho) || fabs(rho) < MIN_RHO || fabs(rho) < RHO_Z / sqrt((double)n - 1) || fabs(rho) <= best)
			continue;
		best = fabs(rho);
		found = true;
		if (k < 0)
			snprintf(buf, len, "drift: the metric %s with the rep number (Spearman rho %.2f)",
				 rho > 0 ? "rose" : "fell", rho);
		else if (k == (int)NCOLS)
			snprintf(buf, len, "the machine's speed: the metric %s as the reference probe around each rep "
				 "took longer (ref_ns, Spearman rho %.2f over %zu reps)", rho > 0 ? "rose" : "fell", rho, n);
		else
			snprintf(buf, len, "the metric %s with %s (Spearman rho %.2f over %zu reps)",
				 rho > 0 ? "rose" : "fell", noise_columns[k].what + 4, rho, n);
	}
	free(y);
	return found;
}

/*
 * A rep that timed a handful of writes (its loop time, or a per-write
 * percentile of it) is a handful of samples: one fault's own variation
 * (cache and TLB state, the allocator) shows in full. The median writes
 * per rep when below FEW_WRITES, else 0.
 */
#define FEW_WRITES 10

static double few_writes(const struct cb_row_group *g, const char *metric)
{
	double *t = calloc(g->n ? g->n : 1, sizeof(*t)), med;
	size_t n = 0;

	if (!t || (strncmp(metric, "lat_", 4) != 0 && strcmp(metric, "elapsed_ns") != 0 &&
		   strcmp(metric, "ns_per_page") != 0)) {
		free(t);
		return 0;
	}
	for (size_t i = 0; i < g->n; i++)
		if (cb_row_number(g->rows[i], "touched", &t[n]) && t[n] > 0)
			n++;
	qsort(t, n, sizeof(*t), cmp_double);
	med = n ? t[n / 2] : 0;
	free(t);
	return med > 0 && med < FEW_WRITES ? med : 0;
}

/*
 * A metric that took only two or three values (a p50 of ~25 ns writes read
 * with a 10 ns clock: 20.0 or 29.9) moves by whole clock ticks: its CV is
 * the resolution's, not the machine's. So does one whose reps took three
 * values but for a few (at most 5 %) that stand alone, as in a long run.
 */
#define FEW_LEVELS 3
#define STRAY_SHARE 0.05

/* Mark the FEW_LEVELS most frequent of the k distinct values v[] (count[]); returns how many reps they hold. */
static size_t mark_top_levels(const size_t *count, size_t k, bool *top)
{
	size_t covered = 0;

	for (size_t j = 0; j < FEW_LEVELS && j < k; j++) {
		size_t best = SIZE_MAX;

		for (size_t i = 0; i < k; i++)
			if (!top[i] && (best == SIZE_MAX || count[i] > count[best]))
				best = i;
		top[best] = true;
		covered += count[best];
	}
	return covered;
}

static bool few_levels(const struct sample *s, size_t n, const char *metric, char *buf, size_t len)
{
	double *v = malloc((n ? n : 1) * sizeof(*v)), lo = INFINITY, hi = -INFINITY, slo = INFINITY, shi = -INFINITY;
	size_t k = 0, *count = calloc(n ? n : 1, sizeof(*count)), covered;
	bool *top = calloc(n ? n : 1, sizeof(*top)), yes = false;

	if (v && count && top && n >= 5) {
		for (size_t i = 0; i < n; i++)
			v[i] = s[i].y;
		qsort(v, n, sizeof(*v), cmp_double);
		for (size_t i = 0; i < n; i++) {
			if (k == 0 || v[i] != v[k - 1])
				v[k++] = v[i];
			count[k - 1]++;
		}
		covered = mark_top_levels(count, k, top);
		for (size_t i = 0; i < k; i++) {
			*(top[i] ? &lo : &slo) = fmin(top[i] ? lo : slo, v[i]);
			*(top[i] ? &hi : &shi) = fmax(top[i] ? hi : shi, v[i]);
		}
		yes = k >= 2 && (k <= FEW_LEVELS || (double)(n - covered) <= STRAY_SHARE * (double)n);
		if (yes && k <= FEW_LEVELS)
			snprintf(buf, len, "%s took only %zu distinct values over %zu reps (%.4g to %.4g): whole ticks of "
				 "the clock, not a spread", metric, k, n, lo, hi);
		else if (yes)
			snprintf(buf, len, "%s took one of %d values (%.4g to %.4g) in %zu of %zu reps: whole ticks of the "
				 "clock, not a spread; the %zu others stand alone (%.4g to %.4g)", metric, FEW_LEVELS, lo,
				 hi, covered, n, n - covered, slo, shi);
	}
	free(v);
	free(count);
	free(top);
	return yes;
}

static int cmp_rep(const void *a, const void *b)
{
	const struct sample *x = a, *y = b;

	return (x->rep > y->rep) - (x->rep < y->rep);
}

/* The odd reps of s (in rep order) as ranges, "12-22, 41", the first few only. */
static void odd_ranges(const struct sample *s, size_t n, char *buf, size_t len)
{
	size_t used = 0, shown = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && used < len; i++) {
		size_t j = i;
		int w;

		if (!s[i].odd)
			continue;
		while (j + 1 < n && s[j + 1].odd)
			j++;
		if (shown++ == 4) {
			snprintf(buf + used, len - used, ", ...");
			return;
		}
		w = j > i ? snprintf(buf + used, len - used, "%s%.0f-%.0f", used ? ", " : "", s[i].rep, s[j].rep)
			  : snprintf(buf + used, len - used, "%s%.0f", used ? ", " : "", s[i].rep);
		used += w > 0 ? (size_t)w : 0;
		i = j;
	}
}

/*
 * Wald-Wolfowitz runs test of flag[0..n), in rep order: so few runs of
 * equal flags that the sequence is not in random order (one-sided p, by
 * the normal approximation). False when either value is missing.
 */
static bool few_runs(const bool *flag, size_t n, size_t *runs, double *mu, double *p)
{
	double n1 = 0, n2, nn = (double)n, var;

	*runs = n > 0;
	for (size_t i = 0; i < n; i++) {
		n1 += flag[i];
		*runs += i > 0 && flag[i] != flag[i - 1];
	}
	n2 = nn - n1;
	*mu = 2 * n1 * n2 / nn + 1;
	var = 2 * n1 * n2 * (2 * n1 * n2 - nn) / (nn * nn * (nn - 1));
	if (n1 == 0 || n2 == 0 || var <= 0)
		return false;
	*p = 0.5 * erfc(((double)*runs - *mu) / sqrt(var) / -sqrt(2.0));
	return *p < STRETCH_MAX_P;
}

/*
 * The cut between the two modes of sorted v[0..n): where the between-group
 * variance k (n - k) (mean below - mean above)^2 is largest (Otsu). It uses
 * the values alone, never their order, so a runs test of it stays valid.
 */
static double modes_cut(const double *v, size_t n)
{
	double total = 0, below = 0, best = -1, cut = v[0];

	for (size_t i = 0; i < n; i++)
		total += v[i];
	for (size_t k = 1; k < n; k++) {
		double lo, hi, between;

		below += v[k - 1];
		if (v[k] == v[k - 1])
			continue;
		lo = below / (double)k;
		hi = (total - below) / (double)(n - k);
		between = (double)k * (double)(n - k) * (hi - lo) * (hi - lo);
		if (between > best) {
			best = between;
			cut = (v[k - 1] + v[k]) / 2;
		}
	}
	return cut;
}

/* Runs test of which reps (in rep order) lie above cut, reps on it on neither side: its p, 1 when untestable. */
static double runs_above(const struct sample *s, size_t n, double cut, bool *flag, size_t *runs, double *mu)
{
	size_t m = 0;
	double p = 1;

	for (size_t i = 0; i < n; i++)
		if (s[i].y != cut)
			flag[m++] = s[i].y > cut;
	*runs = 0;
	*mu = 0;
	if (m >= STRETCH_MIN_REPS)
		few_runs(flag, m, runs, mu, &p);
	return p;
}

/*
 * The reps ran in stretches: the odd ones bunched in time, or (without
 * odd reps) the metric stayed above or below its median, or on one side of
 * the cut between its two modes, for stretches of consecutive reps.
 * Something that lasted that long moved them (the host's load, the
 * memory's state); reps hit by chance one at a time do not bunch.
 * Sorts s by rep.
 */
static bool stretches(struct sample *s, size_t n, size_t odd, char *buf, size_t len)
{
	bool *flag = malloc(n * sizeof(*flag)), found = false;
	double *v = malloc(n * sizeof(*v)), mu = 0, p = 1, cut[2];
	size_t runs = 0;
	int best = 0;
	char where[96];

	if (!flag || !v || n < STRETCH_MIN_REPS)
		goto out;
	qsort(s, n, sizeof(*s), cmp_rep);
	if (odd >= STRETCH_MIN_ODD) {
		for (size_t i = 0; i < n; i++)
			flag[i] = s[i].odd;
		found = few_runs(flag, n, &runs, &mu, &p);
		if (found) {
			odd_ranges(s, n, where, sizeof(where));
			snprintf(buf, len, "the %zu odd reps bunched in time (reps %s): %zu runs along the rep order "
				 "where chance gives %.1f (runs test p %.2g), so something that lasted a while moved them",
				 odd, where, runs, mu, p);
		}
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = s[i].y;
	qsort(v, n, sizeof(*v), cmp_double);
	cut[0] = cb_quantile_sorted(v, n, 0.5);
	cut[1] = modes_cut(v, n);
	for (int k = 0; k < 2; k++) {
		size_t r;
		double m_k, p_k = runs_above(s, n, cut[k], flag, &r, &m_k);

		if (k == 0 || p_k < p) {
			p = p_k;
			runs = r;
			mu = m_k;
			best = k;
		}
	}
	p = fmin(1, 2 * p); /* Bonferroni: two splits were tried */
	found = p < STRETCH_MAX_P;
	if (found && best == 0)
		snprintf(buf, len, "the metric moved in stretches of consecutive reps: %zu runs above and below its median "
			 "where chance gives %.1f (runs test p %.2g, two splits tried), so something that lasted a while "
			 "moved it", runs, mu, p);
	else if (found)
		snprintf(buf, len, "the metric moved in stretches of consecutive reps: its reps below and above %.4g (the "
			 "cut between its two modes) came in %zu runs where chance gives %.1f (runs test p %.2g, two splits "
			 "tried), so something that lasted a while moved it", cut[1], runs, mu, p);
out:
	free(flag);
	free(v);
	return found;
}

int cb_noise_explain(const struct cb_row_group *g, const struct cb_row_group *peers, size_t npeers,
		     const char *metric, char *buf, size_t len)
{
	double few;
	struct sample *s = calloc(g->n ? g->n : 1, sizeof(*s));
	size_t n = 0, odd;
	int found = 0;

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < g->n; i++) {
		double v;

		if (!cb_row_number(g->rows[i], metric, &s[n].y))
			continue;
		for (size_t k = 0; k < NCOLS; k++)
			s[n].x[k] = cb_row_number(g->rows[i], noise_columns[k].column, &v) ? v : NAN;
		s[n].cpu = cb_row_number(g->rows[i], "writer_cpu", &v) ? v : NAN;
		s[n].ref = cb_row_number(g->rows[i], "ref_ns", &v) ? v : NAN;
		s[n].rep = (double)g->rows[i]->rep;
		n++;
	}
	odd = n >= 3 ? mark_odd(s, n) : 0;
	if (odd && odd_difference(s, n, odd, buf, len) > 0)
		found = 1;
	else if (odd && cpu_difference(s, n, odd, buf, len))
		found = 1;
	else if (odd && slow_machine(s, n, buf, len))
		found = 1;
	else if (correlation(s, n, buf, len))
		found = 1;
	else if (few_levels(s, n, metric, buf, len))
		found = 1;
	else if ((few = few_writes(g, metric)) > 0)
		found = snprintf(buf, len, "each rep timed %.0f write%s: %s comes from %.0f sample%s, as variable as "
				 "one fault (cache and TLB state)", few, few == 1 ? "" : "s", metric, few,
				 few == 1 ? "" : "s") > 0;
	else if (cb_noise_quotient_part(g, metric, buf, len))
		found = 1;
	else if ((found = cb_noise_same_rounds(g, peers, npeers, metric, buf, len)) != 0)
		;
	else if (stretches(s, n, odd, buf, len))
		found = 1;
	else
		snprintf(buf, len, "no stated cause: steal, context switches, migrations, run queue, wait for a "
			 "CPU, machine speed, CPU, rep order and the cells of the same rounds did not co-vary with the "
			 "%s%s", odd ? "odd reps" : "metric",
			 odd ? ", nor did they bunch in time" : ", nor did it move in stretches");
	free(s);
	return found;
}
