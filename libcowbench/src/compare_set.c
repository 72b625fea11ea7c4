/*
 * A set of comparisons judged together, as benchstat does: p-values
 * adjusted for how many were made (Benjamini-Hochberg or Holm), a change
 * called only when its whole interval lies beyond a minimum effect, and
 * for a change left undecided the repetitions that would decide it.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/compare.h>

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

/* The ratio's interval lies entirely beyond 1 +- threshold (false without one). */
static bool interval_beyond(const struct cb_compare *c, double threshold)
{
	if (isnan(c->ratio_lo) || isnan(c->ratio_hi))
		return false;
	return c->ratio_lo > 1 + threshold || c->ratio_hi < 1 - threshold;
}

/*
 * The relative half-width the ratio's interval may have and still lie
 * beyond the threshold, if the observed ratio is the true one: for a
 * ratio r > 1, r (1 - h) > 1 + t; for r < 1, r (1 + h) < 1 - t.
 * <= 0 when the effect itself is within the threshold.
 */
static double room_beyond(double ratio, double threshold)
{
	if (!(ratio > 0))
		return 0;
	return ratio > 1 ? 1 - (1 + threshold) / ratio : (1 - threshold) / ratio - 1;
}

/*
 * The repetitions per side that would settle an undecided change: the
 * test's minimum, or more where pyperf's n = z^2 CV^2 / h^2 for the room
 * beyond the threshold asks for more. None for a decided change.
 */
static void estimate_reps(struct cb_compare *c, const struct cb_compare_opts *o)
{
	size_t have = c->n_old < c->n_new ? c->n_old : c->n_new, from_cv = 0;
	double room = room_beyond(c->ratio, o->threshold);

	c->reps_needed = 0;
	c->reps_basis = CB_REPS_NONE;
	if (c->significant || isnan(c->ratio))
		return;
	if (room > 0 && isfinite(c->ratio_cv) && c->ratio_cv > 0)
		from_cv = cb_reps_needed(c->ratio_cv, room, o->conf);
	if (from_cv > c->test_min_n && from_cv > have) {
		c->reps_needed = from_cv;
		c->reps_basis = CB_REPS_CV;
	} else if (c->test_min_n > have) {
		c->reps_needed = c->test_min_n;
		c->reps_basis = CB_REPS_TEST_MIN;
	}
}

int cb_compare_decide(struct cb_compare *const *c, size_t n, enum cb_p_adjust m, const struct cb_compare_opts *o)
{
	double *p = calloc(n ? n : 1, sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		p[i] = c[i]->p;
	err = cb_p_adjust(p, n, m, p);
	for (size_t i = 0; i < n && !err; i++) {
		c[i]->p_adj = p[i];
		c[i]->beyond_threshold = interval_beyond(c[i], o->threshold);
		/* Without a ratio (an old median of 0) the adjusted p alone decides. */
		c[i]->significant = p[i] < o->alpha && (isnan(c[i]->ratio) || c[i]->beyond_threshold);
		estimate_reps(c[i], o);
	}
	free(p);
	return err;
}
