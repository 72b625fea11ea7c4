#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cowbench/error.h>
#include <cowbench/results.h>

#include <cowbench/strmap.h>

/* Size of a string column: up to the next column's offset (or the end of the row). */
static size_t str_capacity(const struct cb_column *c)
{
	size_t n, end = sizeof(struct cb_row);
	const struct cb_column *cols = cb_columns(&n);

	for (size_t i = 0; i < n; i++)
		if (cols[i].offset > c->offset && cols[i].offset < end)
			end = cols[i].offset;
	return end - c->offset;
}

int cb_row_set(struct cb_row *row, const struct cb_column *c, const char *text)
{
	char *base = (char *)row + c->offset, *end;

	switch (c->type) {
	case CB_COL_INT: {
		int64_t v = CB_NA;

		if (*text) {
			errno = 0;
			v = strtoll(text, &end, 10);
			if (errno || *end || v == CB_NA || (v < 0 && !(c->flags & CB_COL_SIGNED)))
				return CB_EFORMAT; /* a negative count, time or size is damage, as nan is */
		}
		memcpy(base, &v, sizeof(v));
		return 0;
	}
	case CB_COL_FLOAT: {
		double v = NAN;

		if (*text) {
			errno = 0;
			v = strtod(text, &end);
			if (errno || *end || !isfinite(v) || (v < 0 && !(c->flags & CB_COL_SIGNED)))
				return CB_EFORMAT; /* no nan, inf or negative: no JSON, no statistics, no such time */
		}
		memcpy(base, &v, sizeof(v));
		return 0;
	}
	case CB_COL_STR: {
		size_t cap = c->flags & CB_COL_REF ? c->width : str_capacity(c);
		const char *ref = *text ? text : NULL;

		if (strlen(text) >= cap)
			return CB_EFORMAT;
		if (c->flags & CB_COL_REF)
			memcpy(base, &ref, sizeof(ref)); /* the caller's text: it keeps it (read_row: the file's pool) */
		else
			memcpy(base, text, strlen(text) + 1);
		return 0;
	}
	}
	return CB_EFORMAT;
}

bool cb_row_number(const struct cb_row *row, const char *name, double *out)
{
	const struct cb_column *c = cb_column_find(name);
	const char *base;

	if (!c || !cb_row_counts(row, c))
		return false; /* an evidence rep's times measure the instrumented machine */
	base = (const char *)row + c->offset;
	if (c->type == CB_COL_INT) {
		int64_t v;

		memcpy(&v, base, sizeof(v));
		if (v == CB_NA)
			return false;
		*out = (double)v;
		return true;
	}
	if (c->type == CB_COL_FLOAT) {
		double v;

		memcpy(&v, base, sizeof(v));
		if (isnan(v))
			return false;
		*out = v;
		return true;
	}
	return false;
}

/* Whether a matrix cell key has a pair NAME=... (the column's own name, or its axis). */
static bool cell_names(const char *cell, const char *name, size_t name_len)
{
	for (const char *p = cell; p && *p; p = strchr(p, ' '), p = p ? p + 1 : NULL)
		if (strncmp(p, name, name_len) == 0 && p[name_len] == '=')
			return true;
	return false;
}

const char *cb_column_axis(const char *column)
{
	static const char *const alias[][2] = { { "size_bytes", "size" }, { "thp_advice", "thp" },
								{ "break_mode", "break" } };

	for (size_t i = 0; i < sizeof(alias) / sizeof(alias[0]); i++)
		if (strcmp(column, alias[i][0]) == 0)
			return alias[i][1];
	return column;
}

static void append(char *buf, size_t len, size_t *used, const char *pair, size_t pair_len)
{
	if (*used < len)
		*used += (size_t)snprintf(buf + *used, len - *used, "%s%.*s", *used ? " " : "", (int)pair_len, pair);
}

/* The options column's own pairs, less those the cell names. */
static void append_options(const struct cb_row *row, char *buf, size_t len, size_t *used)
{
	for (const char *p = row->options ? row->options : ""; *p;) {
		size_t n = strcspn(p, " "), name_len = strcspn(p, "=");

		if (name_len < n && !cell_names(row->cell, p, name_len))
			append(buf, len, used, p, n);
		p += n;
		p += strspn(p, " ");
	}
}

void cb_row_key(const struct cb_row *row, char *buf, size_t len)
{
	unsigned want = CB_COL_IDENTITY | (row->options && row->options[0] ? 0 : CB_COL_IDENTITY_LEGACY);
	const struct cb_column *cols;
	size_t n, used = 0;

	if (len)
		buf[0] = '\0';
	append(buf, len, &used, row->cell, strlen(row->cell));
	cols = cb_columns(&n);
	for (size_t i = 0; i < n; i++) {
		const char *axis = cb_column_axis(cols[i].name);
		char value[200], pair[256];

		if (!(cols[i].flags & want) || cell_names(row->cell, axis, strlen(axis)))
			continue;
		if (strcmp(cols[i].name, "options") == 0) {
			append_options(row, buf, len, &used);
			continue;
		}
		cb_row_format(row, &cols[i], value, sizeof(value));
		if (!value[0])
			continue; /* empty stays empty: not applicable to this row */
		snprintf(pair, sizeof(pair), "%s=%s", cols[i].name, value);
		append(buf, len, &used, pair, strlen(pair));
	}
}

/* ---- reading ---- */

struct reader {
	const char *path;
	char *why;
	size_t len;
	const struct cb_column **map; /* per file column: our column or NULL */
	size_t ncols;
};

static int fail(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct reader *r, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(r->why, r->len, "%s: %s", r->path, msg);
	return CB_EFORMAT;
}

static int read_header(struct reader *r, const struct cb_csv_record *h, struct cb_results *res)
{
	static const char *const required[] = { CB_RESULTS_REQUIRED };
	struct cb_strmap seen = { 0 };
	size_t n;
	int err = 0;

	cb_columns(&n);
	/* A UTF-8 byte order mark (a spreadsheet's "CSV UTF-8") before the first name: not part of it. */
	if (h->nfields > 0 && strncmp(h->field[0], "\xef\xbb\xbf", 3) == 0)
		memmove(h->field[0], h->field[0] + 3, strlen(h->field[0] + 3) + 1);
	if (h->nfields == 0 || strcmp(h->field[0], "schema") != 0)
		return fail(r, "not a cowbench results CSV (the first column is not 'schema')");
	r->map = calloc(h->nfields, sizeof(*r->map));
	if (!r->map)
		return -ENOMEM;
	r->ncols = h->nfields;
	res->same_columns = h->nfields == n;
	for (size_t i = 0; i < h->nfields && !err; i++) {
		int put = cb_strmap_put(&seen, h->field[i], i, NULL);

		r->map[i] = cb_column_find(h->field[i]);
		if (put < 0)
			err = put;
		else if (put == 0)
			err = fail(r, "column '%.64s' appears twice in the header", h->field[i]);
		if (!r->map[i] && res->unknown++ == 0)
			snprintf(res->unknown_first, sizeof(res->unknown_first), "%s", h->field[i]);
		if (!r->map[i] || r->map[i] != &cb_columns(&n)[i])
			res->same_columns = false;
	}
	for (size_t k = 0; k < sizeof(required) / sizeof(required[0]) && !err; k++)
		if (!cb_strmap_get(&seen, required[k], NULL))
			err = fail(r, "missing column '%s'", required[k]);
	cb_strmap_free(&seen);
	return err;
}

/*
 * The rows' out-of-line texts (CB_COL_REF cells: a latency histogram of
 * up to 24 KiB), each kept once in blocks freed with the row set: a row
 * without one costs nothing for it.
 */
struct cb_text_pool {
	struct cb_text_pool *next;
	size_t used, cap;
	char data[];
};

enum { POOL_BLOCK = 64 * 1024 };

static const char *pool_keep(struct cb_text_pool **pool, const char *text)
{
	size_t len = strlen(text) + 1;
	struct cb_text_pool *b = *pool;
	char *p;

	if (!b || b->cap - b->used < len) {
		size_t cap = len > POOL_BLOCK ? len : POOL_BLOCK;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		*b = (struct cb_text_pool){ .next = *pool, .cap = cap };
		*pool = b;
	}
	p = b->data + b->used;
	memcpy(p, text, len);
	b->used += len;
	return p;
}

static void pool_free(struct cb_text_pool *pool)
{
	while (pool) {
		struct cb_text_pool *next = pool->next;

		free(pool);
		pool = next;
	}
}

/* A referred-to cell's text, now in the file's pool rather than the record that is read over next. */
static int keep_ref(struct cb_results *res, struct cb_row *row, const struct cb_column *c)
{
	const char *text = cb_row_text(row, c);

	if (!(c->flags & CB_COL_REF) || !*text)
		return 0;
	text = pool_keep(&res->texts, text);
	if (!text)
		return -ENOMEM;
	memcpy((char *)row + c->offset, &text, sizeof(text));
	return 0;
}

static void row_clear(struct cb_row *row)
{
	size_t n;
	const struct cb_column *cols = cb_columns(&n);

	memset(row, 0, sizeof(*row));
	for (size_t i = 0; i < n; i++)
		cb_row_set(row, &cols[i], "");
}

static int read_row(struct reader *r, const struct cb_csv_record *rec, long recno, struct cb_row *row,
		    struct cb_results *res)
{
	row_clear(row);
	if (rec->nfields != r->ncols) {
		return fail(r, "record %ld: %zu fields where the header has %zu", recno, rec->nfields, r->ncols);
	}
	/* The schema first: another version's other columns may not parse at all. */
	if (cb_row_set(row, r->map[0], rec->field[0]) < 0 || row->schema != CB_SCHEMA_VERSION)
		return fail(r, "record %ld: schema version '%.20s', this cowbench reads version %d", recno,
			    rec->field[0], CB_SCHEMA_VERSION);
	for (size_t i = 1; i < rec->nfields; i++) {
		if (!r->map[i])
			continue;
		if (cb_row_set(row, r->map[i], rec->field[i]) < 0 && rec->field[i][0] == '-' &&
		    r->map[i]->type != CB_COL_STR)
			return fail(r, "record %ld: negative %s %.40s (counts, times and sizes are never below 0)", recno,
				    r->map[i]->name, rec->field[i]);
		if (cb_row_set(row, r->map[i], rec->field[i]) < 0)
			return fail(r, "record %ld: bad value '%.40s' in column '%s'", recno, rec->field[i],
				    r->map[i]->name);
		if (keep_ref(res, row, r->map[i]) < 0)
			return -ENOMEM;
	}
	if (row->size_bytes != CB_NA && row->size_bytes < 0)
		return fail(r, "record %ld: negative size_bytes %" PRId64, recno, row->size_bytes);
	if (row->rep != CB_NA && row->rep < 1)
		return fail(r, "record %ld: rep %" PRId64 " (repetitions count from 1)", recno, row->rep);
	return 0;
}

static int push_row(struct cb_results *res, const struct cb_row *row, size_t *cap)
{
	if (res->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		struct cb_row *nr = realloc(res->rows, nc * sizeof(*nr));

		if (!nr)
			return -ENOMEM;
		res->rows = nr;
		*cap = nc;
	}
	res->rows[res->n++] = *row;
	return 0;
}

static int read_all(struct reader *r, FILE *fp, struct cb_results *res)
{
	struct cb_csv_record rec = { 0 };
	struct cb_row row;
	size_t cap = 0;
	long recno = 0;
	int err = 0;

	for (;;) {
		long at = ftell(fp);
		int rc = cb_csv_read_record(fp, &rec);

		if (rc == 0)
			break;
		recno++;
		/*
		 * A write cut short leaves one last record with no line end at
		 * all: drop it. Anything else malformed is corruption, never
		 * "torn": reading on would drop (and --resume delete) valid rows.
		 */
		if ((rc == CB_EFORMAT || (rc == 1 && !rec.terminated)) && rec.torn) {
			res->empty = recno == 1; /* even the header was cut short */
			res->torn = true;
			res->torn_offset = at;
			break;
		}
		if (rc < 0) {
			if (rc == CB_EFORMAT)
				err = fail(r, "record %ld: malformed CSV (%s)", recno, rec.error);
			else if (rc == -ENOMEM)
				err = rc;
			else
				err = fail(r, "read error: %s", strerror(-rc));
			break;
		}
		if (recno == 1) {
			err = read_header(r, &rec, res);
		} else {
			err = read_row(r, &rec, recno, &row, res);
			if (!err)
				err = push_row(res, &row, &cap);
		}
		if (err)
			break;
	}
	cb_csv_record_free(&rec);
	if (!err && recno == 0)
		res->empty = true;
	return err;
}

/* Open a results file for reading: a regular file, nothing else (no /dev/zero, FIFO, directory). */
static FILE *open_regular(const char *path, char *why, size_t len, int *err)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	FILE *fp;

	if (fd < 0) {
		*err = -errno;
		snprintf(why, len, "cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		*err = CB_EFORMAT;
		snprintf(why, len, "%s: not a regular file", path);
		close(fd);
		return NULL;
	}
	fp = fdopen(fd, "r");
	if (!fp) {
		*err = -errno;
		snprintf(why, len, "cannot read %s: %s", path, strerror(errno));
		close(fd);
	}
	return fp;
}

int cb_results_read(const char *path, struct cb_results *res, char *why, size_t len)
{
	struct reader r = { .path = path, .why = why, .len = len };
	FILE *fp;
	int err;

	memset(res, 0, sizeof(*res));
	fp = open_regular(path, why, len, &err);
	if (!fp)
		return err;
	err = read_all(&r, fp, res);
	fclose(fp);
	free(r.map);
	if (err == -ENOMEM)
		snprintf(why, len, "%s: out of memory", path);
	if (err)
		cb_results_free(res);
	return err;
}

void cb_results_free(struct cb_results *res)
{
	free(res->rows);
	pool_free(res->texts);
	memset(res, 0, sizeof(*res));
}
