#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/estimate.h>
#include <cowbench/project.h>
#include <cowbench/stats.h>

/* A row statistics may use: measured, not an evidence rep (its times carry probes). */
static bool usable(const struct cb_row *r)
{
	return strcmp(r->status, "ok") == 0 && !cb_row_is_evidence(r);
}

static bool known(int64_t v)
{
	return v != CB_NA;
}

/* Rows from before --break existed wrote every page-order row the fault way. */
static bool breaks_by(const struct cb_row *r, const char *mode)
{
	return strcmp(r->break_mode[0] ? r->break_mode : "fault", mode) == 0;
}

/* A unit row: seq, this boot and size, no pre-copy (stock: empty; patched: 0). */
static bool unit_row(const struct cb_row *r, const char *boot, int64_t size)
{
	return usable(r) && strcmp(r->workload, "seq") == 0 && r->size_bytes == size &&
	       (!boot || strcmp(r->boot, boot) == 0) && (!known(r->precopy) || r->precopy == 0) &&
	       known(r->fork);
}

/* Median of v[0..n) (sorts v); NAN when n is 0. */
static double median(double *v, size_t n)
{
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof(v[0]), cb_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

enum unit_kind { U_WRITE, U_FAULT, U_FIRST, U_POP_SHARED, U_POP_PRIVATE, U_COPY, U_KINDS };

/*
 * A row that times its first write apart (first_ns, inside elapsed_ns) gives
 * the steady per-page cost without it: the run's fixed costs are in first.
 */
static bool splits_first(const struct cb_row *r)
{
	return known(r->first_ns) && r->first_ns > 0 && r->first_ns <= r->elapsed_ns && r->touched > 1;
}

/* The per-page value a unit row gives for kind k, or NAN when the row is not of that kind. */
static double unit_value(const struct cb_row *r, enum unit_kind k)
{
	bool fork = r->fork == 1, pop = breaks_by(r, "populate");

	switch (k) {
	case U_WRITE:
	case U_FAULT:
		if (pop || fork != (k == U_FAULT) || !known(r->elapsed_ns) || !known(r->touched) || r->touched <= 0)
			return NAN;
		if (splits_first(r))
			return (double)(r->elapsed_ns - r->first_ns) / (double)(r->touched - 1);
		return (double)r->elapsed_ns / (double)r->touched;
	case U_FIRST: /* a fresh writer's first write after the fork: a COW fault with the run's fixed costs */
		if (pop || !fork || !known(r->elapsed_ns) || !known(r->touched) || !splits_first(r))
			return NAN;
		return (double)r->first_ns;
	case U_POP_SHARED:
	case U_POP_PRIVATE:
		if (!pop || fork != (k == U_POP_SHARED) || !known(r->break_ns) || !known(r->pages) || r->pages <= 0)
			return NAN;
		return (double)r->break_ns / (double)r->pages;
	case U_COPY:
		return r->memcpy_ns > 0 ? r->memcpy_ns : NAN;
	default:
		return NAN;
	}
}

/* Ratio of sums precopy_ns / precopy_success over the boot's rows that pre-copied. */
static double batch_per_page(const struct cb_row *rows, size_t n, const char *boot)
{
	double ns = 0, pages = 0;

	for (size_t i = 0; i < n; i++) {
		const struct cb_row *r = &rows[i];

		if (!usable(r) || (boot && strcmp(r->boot, boot) != 0) || !known(r->precopy_success) ||
		    r->precopy_success <= 0 || !known(r->precopy_ns))
			continue;
		ns += (double)r->precopy_ns;
		pages += (double)r->precopy_success;
	}
	return pages > 0 ? ns / pages : NAN;
}

int cb_units_from_rows(const struct cb_row *rows, size_t n, const char *boot, int64_t size_bytes,
		       struct cb_units *u)
{
	double *v[U_KINDS] = { 0 }, med[U_KINDS];
	size_t cnt[U_KINDS] = { 0 };
	int err = 0;

	for (int k = 0; k < U_KINDS; k++)
		if (!(v[k] = malloc((n ? n : 1) * sizeof(double))))
			err = -ENOMEM;
	for (size_t i = 0; !err && i < n; i++) {
		if (!unit_row(&rows[i], boot, size_bytes))
			continue;
		for (int k = 0; k < U_KINDS; k++) {
			double x = unit_value(&rows[i], (enum unit_kind)k);

			if (!isnan(x))
				v[k][cnt[k]++] = x;
		}
	}
	for (int k = 0; k < U_KINDS; k++) {
		med[k] = err ? NAN : median(v[k], cnt[k]);
		free(v[k]);
	}
	if (err)
		return err;
	/* The fixed term needs the steady units of the same kind of rows: every fault and write row split. */
	if (cnt[U_FIRST] != cnt[U_FAULT])
		med[U_FIRST] = NAN;
	*u = (struct cb_units){
		.write_ns = med[U_WRITE], .fault_ns = med[U_FAULT], .first_ns = med[U_FIRST], .copy_ns = med[U_COPY],
		/* The populate call on private pages is its walk, no copy: what is left is the COW break. */
		.populate_ns = isnan(med[U_POP_PRIVATE]) ? med[U_POP_SHARED] : med[U_POP_SHARED] - med[U_POP_PRIVATE],
		.batch_ns = batch_per_page(rows, n, boot),
		.n_write = (unsigned)cnt[U_WRITE], .n_fault = (unsigned)cnt[U_FAULT], .n_first = (unsigned)cnt[U_FIRST],
		.n_populate = (unsigned)cnt[U_POP_SHARED],
	};
	return cnt[U_WRITE] && cnt[U_FAULT] ? 0 : -ENOENT;
}

/* The probes= value of a matrix cell key ("" without one: the default set); probes run just before the window. */
static void probes_of(const char *cell, char *out, size_t len)
{
	const char *p = cell;

	out[0] = '\0';
	while ((p = strstr(p, "probes=")) != NULL) {
		if (p == cell || p[-1] == ' ') {
			size_t k = strcspn(p + 7, " ");

			snprintf(out, len, "%.*s", (int)(k < len ? k : len - 1), p + 7);
			return;
		}
		p += 7;
	}
}

int cb_units_first_like(const struct cb_row *rows, size_t n, const char *boot, int64_t size_bytes,
			const char *cell, double *first_ns, unsigned *n_first)
{
	char want[64], have[64];
	double *v = malloc((n ? n : 1) * sizeof(double));
	size_t cnt = 0, faults = 0;

	if (!v)
		return -ENOMEM;
	probes_of(cell, want, sizeof(want));
	for (size_t i = 0; i < n; i++) {
		double x;

		if (!unit_row(&rows[i], boot, size_bytes))
			continue;
		probes_of(rows[i].cell, have, sizeof(have));
		if (strcmp(have, want) != 0)
			continue;
		faults += !isnan(unit_value(&rows[i], U_FAULT));
		if (!isnan(x = unit_value(&rows[i], U_FIRST)))
			v[cnt++] = x;
	}
	*first_ns = cnt && cnt == faults ? median(v, cnt) : NAN;
	*n_first = (unsigned)cnt;
	free(v);
	return isnan(*first_ns) ? -ENOENT : 0;
}

/*
 * Counts are exact in every rep, evidence reps included (taskstats, the
 * writer's own COW copies, runs only there where it would tax the timed
 * ones); the runtime comes from timed reps alone. Each is a mean over the
 * reps that have it.
 */
int cb_counts_from_rows(const struct cb_row *const *rows, size_t n, struct cb_counts *c)
{
	double sum[4] = { 0 }, cnt[4] = { 0 };
	struct cb_estimate e;
	double *el = malloc((n ? n : 1) * sizeof(double));
	unsigned reps = 0;

	if (!el)
		return -ENOMEM;

	for (size_t i = 0; i < n; i++) {
		const struct cb_row *r = rows[i];
		int64_t f = known(r->wpcopy_count) ? r->wpcopy_count : known(r->cow_faults) ? r->cow_faults : r->faults;
		int64_t v[4] = { r->touched, f, r->precopy_success, usable(r) ? r->elapsed_ns : CB_NA };

		if (strcmp(r->status, "ok") != 0)
			continue;
		for (int k = 0; k < 4; k++)
			if (known(v[k])) {
				sum[k] += (double)v[k];
				cnt[k]++;
			}
		if (known(v[3]))
			el[(size_t)cnt[3] - 1] = (double)v[3];
		reps += usable(r);
	}
	if (cnt[3] == 0 || cb_estimate(el, (size_t)cnt[3], 0.95, &e) < 0)
		e = (struct cb_estimate){ .centre = NAN, .lo = NAN, .hi = NAN };
	free(el);
	if (!cnt[0] || !cnt[1] || !cnt[3])
		return -ENOENT;
	*c = (struct cb_counts){ .writes = sum[0] / cnt[0], .faults = sum[1] / cnt[1],
				 .precopied = cnt[2] ? sum[2] / cnt[2] : 0, .elapsed_ns = sum[3] / cnt[3],
				 .elapsed_centre_ns = e.centre, .elapsed_lo_ns = e.lo, .elapsed_hi_ns = e.hi, .reps = reps };
	return 0;
}

double cb_project_ns(const struct cb_units *u, const struct cb_counts *c, double batch_ns)
{
	double pre = c->precopied > 0 ? c->precopied * batch_ns : 0;
	/* A loop faults at most once per write: COW copies the writer made outside it are not its own. */
	double faults = fmin(c->faults, c->writes);

	if (u->first_ns > 0 && c->writes >= 1 && faults >= 1) /* its first write is a fault: nothing was ahead yet */
		return u->first_ns + (c->writes - 1) * u->write_ns + (faults - 1) * (u->fault_ns - u->write_ns) + pre;
	return c->writes * u->write_ns + faults * (u->fault_ns - u->write_ns) + pre;
}

int cb_project_batch(const struct cb_units *native, const struct cb_units *guest, struct cb_range *batch)
{
	double lo = native->copy_ns, hi = native->populate_ns, ratio;

	if (!(lo > 0) || !(hi > 0))
		return -EINVAL;
	if (lo > hi) { /* a copy dearer than the whole break: the machine was noisy; keep lo <= hi */
		double t = lo;

		lo = hi;
		hi = t;
	}
	ratio = guest && guest->batch_ns > 0 && guest->populate_ns > 0 ? guest->batch_ns / guest->populate_ns : 1;
	ratio = fmin(1, fmax(lo / hi, ratio));
	*batch = (struct cb_range){ .lo = lo, .mid = hi * ratio, .hi = hi };
	return 0;
}

int cb_project_native(const struct cb_units *native, const struct cb_units *guest, const struct cb_counts *c,
		      struct cb_range *ns)
{
	struct cb_range b;
	int err = cb_project_batch(native, guest, &b);

	if (err)
		return err;
	*ns = (struct cb_range){ cb_project_ns(native, c, b.lo), cb_project_ns(native, c, b.mid),
				 cb_project_ns(native, c, b.hi) };
	return 0;
}

int cb_project_change(const struct cb_units *native, const struct cb_units *guest, const struct cb_counts *mode,
		      const struct cb_counts *off, struct cb_range *change)
{
	struct cb_range m, o;
	int err = cb_project_native(native, guest, mode, &m);

	if (!err)
		err = cb_project_native(native, guest, off, &o);
	if (err)
		return err;
	if (!(m.lo > 0) || !(o.mid > 0))
		return -EINVAL;
	/* off pre-copies nothing, so only the mode's side moves with the batch cost. */
	*change = (struct cb_range){ m.lo / o.lo - 1, m.mid / o.mid - 1, m.hi / o.hi - 1 };
	if (change->lo > change->hi) {
		double t = change->lo;

		change->lo = change->hi;
		change->hi = t;
	}
	return 0;
}

double cb_project_error_vs(const struct cb_units *u, const struct cb_counts *c, double measured_ns)
{
	double b = c->precopied > 0 ? u->batch_ns : 0, pred;

	if (!(measured_ns > 0) || isnan(b))
		return NAN;
	pred = cb_project_ns(u, c, b);
	return isnan(pred) ? NAN : (pred - measured_ns) / measured_ns;
}

double cb_project_error(const struct cb_units *u, const struct cb_counts *c)
{
	return cb_project_error_vs(u, c, c->elapsed_ns);
}

double cb_project_stall_ns(const struct cb_units *native, double batch_ns, double pages)
{
	if (!(pages >= 1))
		return NAN;
	return native->fault_ns - native->write_ns + (pages - 1) * batch_ns;
}

#define HIST_MAX_BUCKETS 64

struct bucket {
	double label;
	double count;
};

/* Add one text's buckets into b[0..*nb), merging equal labels; false when it does not parse. */
static bool add_hist_text(const char *text, struct bucket *b, size_t *nb)
{
	const char *p = text;

	while (*p) {
		char *end;
		double label, count;
		size_t i;

		if (strncmp(p, "inf:", 4) == 0) {
			label = INFINITY;
			end = (char *)p + 3;
		} else {
			label = strtod(p, &end);
			if (end == p || !(label >= 0))
				return false;
		}
		if (*end != ':')
			return false;
		count = strtod(end + 1, &end);
		if (!(count >= 0) || (*end && *end != ';'))
			return false;
		for (i = 0; i < *nb && b[i].label != label; i++)
			;
		if (i == *nb) {
			if (*nb == HIST_MAX_BUCKETS)
				return false;
			b[(*nb)++] = (struct bucket){ label, 0 };
		}
		b[i].count += count;
		p = *end ? end + 1 : end;
	}
	return true;
}

static int cmp_bucket(const void *a, const void *b)
{
	double x = ((const struct bucket *)a)->label, y = ((const struct bucket *)b)->label;

	return (x > y) - (x < y);
}

double cb_hist_text_quantile(const char *const *texts, size_t n, double q)
{
	struct bucket b[HIST_MAX_BUCKETS];
	size_t nb = 0;
	double total = 0, run = 0;

	for (size_t i = 0; i < n; i++) {
		size_t keep = nb;
		struct bucket save[HIST_MAX_BUCKETS];

		memcpy(save, b, sizeof(b[0]) * nb);
		if (texts[i] && !add_hist_text(texts[i], b, &nb)) { /* a malformed text adds nothing */
			memcpy(b, save, sizeof(b[0]) * keep);
			nb = keep;
		}
	}
	qsort(b, nb, sizeof(b[0]), cmp_bucket);
	for (size_t i = 0; i < nb; i++)
		total += b[i].count;
	if (!(total > 0))
		return NAN;
	for (size_t i = 0; i < nb; i++) {
		run += b[i].count;
		if (b[i].count > 0 && run >= q * total * (1 - 1e-12))
			return b[i].label;
	}
	return NAN;
}
