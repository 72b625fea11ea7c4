/*
 * Changes judged as a set (cowbench/compare.h): each from the engine
 * (cowbench/estimate.h), then p adjusted over the set, the minimum effect,
 * the floor of a count, and for an undecided change the reps that would
 * decide it.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/compare.h>
#include <cowbench/repstats.h>

int cb_compare_samples(const double *old, size_t n_old, const double *new_, size_t n_new, bool count,
		       const struct cb_compare_opts *o, struct cb_compare *out)
{
	int err;

	if (n_old == 0 || n_new == 0)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->n_old = n_old;
	out->n_new = n_new;
	out->count = count;
	err = cb_estimate(old, n_old, o->conf, &out->old);
	if (!err)
		err = cb_estimate(new_, n_new, o->conf, &out->new_);
	if (!err)
		err = cb_estimate_change(old, n_old, new_, n_new, o->conf, &out->change);
	if (err)
		return err;
	out->old_center = out->old.centre;
	out->old_lo = out->old.lo;
	out->old_hi = out->old.hi;
	out->new_center = out->new_.centre;
	out->new_lo = out->new_.lo;
	out->new_hi = out->new_.hi;
	out->ratio = out->ratio_lo = out->ratio_hi = NAN;
	if (out->change.ratio) {
		out->ratio = out->change.est;
		out->ratio_lo = out->change.lo;
		out->ratio_hi = out->change.hi;
	}
	out->p = out->p_adj = out->change.p;
	out->exact = out->change.exact;
	out->test_min_n = cb_test_min_n(o->alpha);
	out->can_be_significant = cb_mwu_min_p(n_old, n_new) < o->alpha;
	return 0;
}

/*
 * The interval lies entirely beyond the minimum effect: outside
 * [1 - t, 1 + t] for a ratio; for a difference outside +-t of the old
 * centre (nothing is beyond +-0 % of a centre of 0 but a change of sign).
 */
static bool interval_beyond(const struct cb_compare *c, double t)
{
	const struct cb_change *ch = &c->change;
	double band;

	if (isnan(ch->lo) || isnan(ch->hi))
		return false;
	if (ch->ratio)
		return ch->lo > 1 + t || ch->hi < 1 - t;
	band = t * fabs(c->old_center);
	return ch->lo > band || ch->hi < -band;
}

/*
 * The repetitions per side that would settle an undecided change: the
 * test's minimum where the test cannot yet reach alpha, or more where the
 * observed spread asks for more for the interval to clear the minimum effect.
 */
static void estimate_reps(struct cb_compare *c, const struct cb_compare_opts *o)
{
	size_t have = c->n_old < c->n_new ? c->n_old : c->n_new;
	size_t from_spread = cb_n_to_decide(&c->change, o->threshold, c->count ? CB_COUNT_FLOOR : 0, o->conf);

	c->reps_needed = 0;
	c->reps_basis = CB_REPS_NONE;
	if (c->significant || (c->count && !c->above_floor))
		return; /* decided, or a count's change below its floor, which more reps do not lift */
	if (from_spread > c->test_min_n && from_spread > have) {
		c->reps_needed = from_spread;
		c->reps_basis = CB_REPS_SPREAD;
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
		c[i]->above_floor = !c[i]->count || fabs(c[i]->new_center - c[i]->old_center) > CB_COUNT_FLOOR;
		c[i]->significant = p[i] < o->alpha && c[i]->beyond_threshold && c[i]->above_floor;
		estimate_reps(c[i], o);
	}
	free(p);
	return err;
}

/* ---- noise verdict ---- */

const char *cb_noise_name(enum cb_noise n)
{
	static const char *const names[] = {
		[CB_NOISE_OK] = "ok", [CB_NOISE_TOO_FEW] = "too-few", [CB_NOISE_NOISY] = "noisy", [CB_NOISE_WIDE] = "wide",
	};

	return (size_t)n < sizeof(names) / sizeof(names[0]) ? names[n] : "?";
}

/* Sample stddev / |mean| (a description of spread, not an interval); NAN without one. */
static double cv_of(const double *v, size_t n)
{
	double mean = 0, ss = 0;

	if (n < 2)
		return NAN;
	for (size_t i = 0; i < n; i++)
		mean += v[i] / (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (v[i] - mean) * (v[i] - mean);
	return mean == 0 ? NAN : sqrt(ss / (double)(n - 1)) / fabs(mean);
}

int cb_noise_judge(const double *v, size_t n, double target, double conf, struct cb_noise_verdict *out)
{
	struct cb_estimate e;
	int err;

	if (n == 0 || !(target > 0))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->cv = out->rel_half_width = NAN;
	out->verdict = CB_NOISE_TOO_FEW;
	err = cb_estimate(v, n, conf, &e);
	if (err || n < 3 || e.centre == 0)
		return err;
	out->cv = cv_of(v, n);
	out->rel_half_width = fmax(e.hi - e.centre, e.centre - e.lo) / fabs(e.centre);
	out->reps_needed = cb_reps_needed(out->cv, target, conf);
	if (out->cv > CB_NOISY_CV)
		out->verdict = CB_NOISE_NOISY;
	else if (out->rel_half_width > target)
		out->verdict = CB_NOISE_WIDE;
	else
		out->verdict = CB_NOISE_OK;
	return 0;
}
