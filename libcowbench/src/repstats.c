#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/estimate.h>
#include <cowbench/results.h>
#include <cowbench/stats.h>
#include <cowbench/repstats.h>

int cb_summarize(const double *v, size_t n, struct cb_summary *out)
{
	double *s, ss = 0, sum = 0, q1, q3, iqr;
	struct cb_estimate e;
	int err;

	if (n == 0)
		return -EINVAL;
	err = cb_estimate(v, n, 0.95, &e);
	if (err)
		return err;
	s = malloc(n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cb_cmp_double);
	memset(out, 0, sizeof(*out));
	out->n = n;
	out->median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	for (size_t i = 0; i < n; i++)
		sum += s[i];
	out->mean = sum / (double)n;
	out->centre = e.centre;
	out->ci_lo = e.lo;
	out->ci_hi = e.hi;
	out->ci_level = e.level;
	out->stddev = out->cv = NAN;
	if (n >= 2) {
		for (size_t i = 0; i < n; i++)
			ss += (s[i] - out->mean) * (s[i] - out->mean);
		out->stddev = sqrt(ss / (double)(n - 1));
		if (out->mean != 0)
			out->cv = out->stddev / fabs(out->mean);
	}
	q1 = cb_quantile_sorted(s, n, 0.25);
	q3 = cb_quantile_sorted(s, n, 0.75);
	iqr = q3 - q1;
	for (size_t i = 0; i < n; i++)
		out->outliers += s[i] < q1 - 1.5 * iqr || s[i] > q3 + 1.5 * iqr;
	free(s);
	return 0;
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

/* Whether key has the pair tok (len bytes) after its first skip bytes, as a whole token. */
static bool has_token(const char *key, size_t skip, const char *tok, size_t len)
{
	for (const char *p = key + skip; *p; p += strcspn(p, " "), p += strspn(p, " "))
		if (strncmp(p, tok, len) == 0 && (p[len] == ' ' || p[len] == '\0'))
			return true;
	return false;
}

static void drop_token(char *key, const char *tok, size_t len, size_t skip)
{
	for (char *p = key + skip; *p; p += strcspn(p, " "), p += strspn(p, " "))
		if (strncmp(p, tok, len) == 0 && (p[len] == ' ' || p[len] == '\0')) {
			char *end = p + len + (p[len] == ' ');

			if (!*end && p > key)
				p--; /* the last token: take the space before it */
			memmove(p, end, strlen(end) + 1);
			return;
		}
}

/*
 * Shown keys name what differs: a pair every group has (same host kernel,
 * same clock...) is dropped after the cell part. Distinct keys stay distinct.
 */
static void trim_common(struct cb_row_group *g, size_t ng, const size_t *cell_len)
{
	char first[CB_ROW_KEY_LEN];
	size_t skip0 = cell_len[0] + (g[0].key[cell_len[0]] == ' ');

	if (ng < 2)
		return;
	snprintf(first, sizeof(first), "%s", g[0].key);
	for (const char *p = first + skip0; *p; p += strcspn(p, " "), p += strspn(p, " ")) {
		size_t len = strcspn(p, " ");
		bool everywhere = true;

		for (size_t i = 1; i < ng && everywhere; i++)
			everywhere = has_token(g[i].key, cell_len[i], p, len);
		for (size_t i = 0; everywhere && i < ng; i++)
			drop_token(g[i].key, p, len, cell_len[i]);
	}
	for (size_t i = 0; i < ng; i++)
		if (!g[i].key[0] && g[i].n)
			snprintf(g[i].key, sizeof(g[i].key), "workload=%s", g[i].rows[0]->workload);
}

static bool row_key(const struct cb_row *row, char *buf, size_t len, size_t *cell_len, void *ctx)
{
	(void)ctx;
	cb_row_key(row, buf, len);
	*cell_len = strlen(row->cell);
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
	size_t ng = 0, *cell_len = NULL;
	char key[CB_ROW_KEY_LEN];

	for (size_t i = 0; i < n; i++) {
		struct cb_row_group *grp;
		const struct cb_row **nr;
		size_t *cl, klen;

		if (!key_of(&rows[i], key, sizeof(key), &klen, ctx))
			continue;
		grp = find_or_add(&g, &ng, key);
		if (!grp)
			goto nomem;
		cl = realloc(cell_len, ng * sizeof(*cl));
		if (!cl)
			goto nomem;
		cell_len = cl;
		cell_len[grp - g] = klen;
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
		trim_common(g, ng, cell_len);
	free(cell_len);
	if (ng)
		qsort(g, ng, sizeof(*g), cmp_group);
	*out = g;
	*ngroups = ng;
	return 0;
nomem:
	free(cell_len);
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

static bool has_boot(const struct cb_row_group *g, const char *boot)
{
	for (size_t i = 0; i < g->n; i++)
		if (strcmp(g->rows[i]->boot, boot) == 0)
			return true;
	return false;
}

const char *cb_shared_boot(const struct cb_row_group *a, const struct cb_row_group *b)
{
	const char *best = NULL;
	size_t best_n = 0;

	for (size_t i = 0; i < a->n; i++) {
		size_t n = 0;

		for (size_t j = 0; j < a->n; j++)
			n += strcmp(a->rows[j]->boot, a->rows[i]->boot) == 0;
		if (n > best_n && has_boot(b, a->rows[i]->boot)) {
			best = a->rows[i]->boot;
			best_n = n;
		}
	}
	return best;
}

size_t cb_values_in_boot(const struct cb_row_group *g, const char *column, const char *boot, double *out)
{
	size_t k = 0;

	for (size_t i = 0; i < g->n; i++)
		if (strcmp(g->rows[i]->boot, boot) == 0 && cb_row_number(g->rows[i], column, &out[k]))
			k++;
	return k;
}

/* Row i's value of column when it ran in boot with a round id; NAN otherwise. */
static double round_value(const struct cb_row_group *g, size_t i, const char *column, const char *boot)
{
	double v;

	if (g->rows[i]->round == CB_NA || strcmp(g->rows[i]->boot, boot) != 0 || !cb_row_number(g->rows[i], column, &v))
		return NAN;
	return v;
}

/* The row of g in boot with round id round: its index, -1 when none, -2 when the round repeats. */
static long row_of_round(const struct cb_row_group *g, const char *column, const char *boot, int64_t round)
{
	long at = -1;

	for (size_t i = 0; i < g->n; i++) {
		if (g->rows[i]->round != round || isnan(round_value(g, i, column, boot)))
			continue;
		if (at >= 0)
			return -2;
		at = (long)i;
	}
	return at;
}

size_t cb_round_pairs(const struct cb_row_group *a, const char *column_a, const struct cb_row_group *b,
		      const char *column_b, const char *boot, double *av, double *bv)
{
	size_t k = 0;

	for (size_t i = 0; i < a->n; i++) {
		long j, self;

		if (isnan(round_value(a, i, column_a, boot)))
			continue;
		self = row_of_round(a, column_a, boot, a->rows[i]->round);
		j = row_of_round(b, column_b, boot, a->rows[i]->round);
		if (self == -2 || j == -2)
			return 0;
		if (j >= 0) {
			av[k] = round_value(a, i, column_a, boot);
			bv[k++] = round_value(b, (size_t)j, column_b, boot);
		}
	}
	return k;
}
