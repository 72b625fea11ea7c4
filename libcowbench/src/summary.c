#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/compare.h>
#include <cowbench/results.h>
#include <cowbench/summary.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int cb_summarize(const double *v, size_t n, uint64_t seed, struct cb_summary *out)
{
	double *s, ss = 0, q1, q3, iqr;
	int err = 0;

	if (n == 0)
		return -EINVAL;
	s = malloc(n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	memset(out, 0, sizeof(*out));
	out->n = n;
	out->median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	out->mean = cb_center_of(s, n, CB_CENTER_MEAN);
	out->stddev = out->ci_lo = out->ci_hi = out->cv = NAN;
	if (n >= 2) {
		for (size_t i = 0; i < n; i++)
			ss += (s[i] - out->mean) * (s[i] - out->mean);
		out->stddev = sqrt(ss / (double)(n - 1));
		if (out->mean != 0)
			out->cv = out->stddev / fabs(out->mean);
		err = cb_boot_center_ci(v, n, CB_CENTER_MEAN, 0.95, CB_BOOTSTRAP_RESAMPLES, seed, &out->ci_lo,
					&out->ci_hi);
	}
	q1 = cb_quantile_sorted(s, n, 0.25);
	q3 = cb_quantile_sorted(s, n, 0.75);
	iqr = q3 - q1;
	for (size_t i = 0; i < n; i++)
		out->outliers += s[i] < q1 - 1.5 * iqr || s[i] > q3 + 1.5 * iqr;
	free(s);
	return err;
}

int cb_ratio_ci(const double *a, size_t na, const double *b, size_t nb, uint64_t seed,
		double *ratio, double *lo, double *hi)
{
	return cb_boot_ratio_ci(a, na, b, nb, CB_CENTER_MEAN, 0.95, CB_BOOTSTRAP_RESAMPLES, seed, ratio, lo, hi);
}

/* ---- grouping ---- */

/* A number with an optional binary size suffix, so 16M < 128M < 1G. */
static double read_number(const char **p)
{
	char *end;
	double v = strtod(*p, &end);

	switch (*end) {
	case 'K': v *= 1024.0; end++; break;
	case 'M': v *= 1048576.0; end++; break;
	case 'G': v *= 1073741824.0; end++; break;
	case 'T': v *= 1099511627776.0; end++; break;
	default: break;
	}
	*p = end;
	return v;
}

int cb_natural_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
			double x = read_number(&a), y = read_number(&b);

			if (x != y)
				return x < y ? -1 : 1;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return (unsigned char)*a - (unsigned char)*b;
}

static int cmp_group(const void *a, const void *b)
{
	return cb_natural_cmp(((const struct cb_row_group *)a)->key, ((const struct cb_row_group *)b)->key);
}

static struct cb_row_group *find_or_add(struct cb_row_group **g, size_t *n, const char *key)
{
	struct cb_row_group *ng;

	for (size_t i = 0; i < *n; i++)
		if (strcmp((*g)[i].key, key) == 0)
			return &(*g)[i];
	ng = realloc(*g, (*n + 1) * sizeof(*ng));
	if (!ng)
		return NULL;
	*g = ng;
	ng = &(*g)[(*n)++];
	memset(ng, 0, sizeof(*ng));
	snprintf(ng->key, sizeof(ng->key), "%s", key);
	return ng;
}

static bool row_key(const struct cb_row *row, char *buf, size_t len, void *ctx)
{
	(void)ctx;
	cb_row_key(row, buf, len);
	return true;
}

int cb_group_rows(const struct cb_row *rows, size_t n, struct cb_row_group **out, size_t *ngroups)
{
	return cb_group_rows_by(rows, n, row_key, NULL, out, ngroups);
}

int cb_group_rows_by(const struct cb_row *rows, size_t n, cb_row_key_fn key_of, void *ctx, struct cb_row_group **out,
		     size_t *ngroups)
{
	struct cb_row_group *g = NULL;
	size_t ng = 0;
	char key[CB_ROW_KEY_LEN];

	for (size_t i = 0; i < n; i++) {
		struct cb_row_group *grp;
		const struct cb_row **nr;

		if (!key_of(&rows[i], key, sizeof(key), ctx))
			continue;
		grp = find_or_add(&g, &ng, key);
		if (!grp)
			goto nomem;
		if (strcmp(rows[i].status, "ok") != 0) {
			grp->failed++;
			continue;
		}
		nr = realloc(grp->rows, (grp->n + 1) * sizeof(*nr));
		if (!nr)
			goto nomem;
		grp->rows = nr;
		grp->rows[grp->n++] = &rows[i];
	}
	if (ng)
		qsort(g, ng, sizeof(*g), cmp_group);
	*out = g;
	*ngroups = ng;
	return 0;
nomem:
	cb_row_groups_free(g, ng);
	return -ENOMEM;
}

void cb_row_groups_free(struct cb_row_group *g, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(g[i].rows);
	free(g);
}

size_t cb_group_values(const struct cb_row_group *g, const char *column, double *out)
{
	size_t k = 0;

	for (size_t i = 0; i < g->n; i++)
		if (cb_row_number(g->rows[i], column, &out[k]))
			k++;
	return k;
}
