#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cowbench/array.h>
#include <cowbench/error.h>
#include <cowbench/matrix.h>
#include <cowbench/order.h>
#include <cowbench/stats.h>

#include <cowbench/strmap.h>

void cb_matrix_init(struct cb_matrix *m)
{
	memset(m, 0, sizeof(*m));
	m->reps = -1;
	m->warmup = -1;
	m->order = -1;
}

static void free_axis(struct cb_axis *a)
{
	for (size_t i = 0; i < a->nvalues; i++)
		free(a->values[i]);
	free(a->values);
	free(a->name);
	memset(a, 0, sizeof(*a));
}

void cb_matrix_free(struct cb_matrix *m)
{
	for (size_t g = 0; g < m->ngroups; g++) {
		for (size_t a = 0; a < m->groups[g].naxes; a++)
			free_axis(&m->groups[g].axes[a]);
		free(m->groups[g].axes);
		free(m->groups[g].name);
	}
	free(m->groups);
	cb_matrix_init(m);
}

static bool valid_chars(const char *s, const char *extra, bool upper)
{
	if (!*s)
		return false;
	for (; *s; s++) {
		bool ok = (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
			  (upper && *s >= 'A' && *s <= 'Z') || strchr(extra, *s);

		if (!ok)
			return false;
	}
	return true;
}

static bool valid_name(const char *s) { return valid_chars(s, "_-", false); }
static bool valid_value(const char *s) { return valid_chars(s, "._:/+-", true); }

static struct cb_group *find_group(struct cb_matrix *m, const char *name, bool create)
{
	struct cb_group *g;

	for (size_t i = 0; i < m->ngroups; i++)
		if (strcmp(m->groups[i].name, name) == 0)
			return &m->groups[i];
	if (!create)
		return NULL;
	g = realloc(m->groups, (m->ngroups + 1) * sizeof(*g));
	if (!g)
		return NULL;
	m->groups = g;
	g = &m->groups[m->ngroups];
	memset(g, 0, sizeof(*g));
	g->name = strdup(name);
	if (!g->name)
		return NULL;
	m->ngroups++;
	return g;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	return s;
}

/* Split "a, b,c" into a fresh axis; CB_EFORMAT with why[] on a bad value. */
static int parse_values(const char *name, const char *values, struct cb_axis *a, char *why, size_t len)
{
	char *copy = strdup(values), *save = NULL, *tok;
	int err = 0;

	memset(a, 0, sizeof(*a));
	if (!copy)
		return -ENOMEM;
	a->name = strdup(name);
	if (!a->name) {
		free(copy);
		return -ENOMEM;
	}
	/* strtok_r would merge empty items; walk by hand so "a,,b" is an error. */
	for (tok = copy; tok; tok = save) {
		char **nv, *item;

		save = strchr(tok, ',');
		if (save)
			*save++ = '\0';
		item = trim(tok);
		if (!*item) {
			snprintf(why, len, "axis '%s': an empty value in '%s'", name, values);
			err = CB_EFORMAT;
			break;
		}
		if (!valid_value(item)) {
			snprintf(why, len, "axis '%s': bad value '%s' (use letters, digits and ._:/+-)", name, item);
			err = CB_EFORMAT;
			break;
		}
		nv = realloc(a->values, (a->nvalues + 1) * sizeof(*nv));
		if (!nv || !(nv[a->nvalues] = strdup(item))) {
			if (nv)
				a->values = nv;
			err = -ENOMEM;
			break;
		}
		a->values = nv;
		a->nvalues++;
	}
	free(copy);
	if (err)
		free_axis(a);
	return err;
}

int cb_matrix_set_axis(struct cb_matrix *m, const char *group, const char *name, const char *values,
		       char *why, size_t len)
{
	struct cb_group *g;
	struct cb_axis a, *na;
	int err;

	if (!valid_name(name)) {
		snprintf(why, len, "bad axis name '%s' (use a-z, 0-9, _ and -)", name);
		return CB_EFORMAT;
	}
	err = parse_values(name, values, &a, why, len);
	if (err)
		return err;
	g = find_group(m, group, true);
	if (!g) {
		free_axis(&a);
		return -ENOMEM;
	}
	for (size_t i = 0; i < g->naxes; i++) {
		if (strcmp(g->axes[i].name, name) == 0) {
			free_axis(&g->axes[i]);
			g->axes[i] = a;
			return 0;
		}
	}
	na = realloc(g->axes, (g->naxes + 1) * sizeof(*na));
	if (!na) {
		free_axis(&a);
		return -ENOMEM;
	}
	g->axes = na;
	g->axes[g->naxes++] = a;
	return 0;
}

int cb_matrix_rename_axis(struct cb_matrix *m, const char *from, const char *to, char *why, size_t len)
{
	for (size_t gi = 0; gi < m->ngroups; gi++) {
		struct cb_group *g = &m->groups[gi];
		struct cb_axis *src = NULL;

		for (size_t i = 0; i < g->naxes; i++) {
			if (strcmp(g->axes[i].name, to) == 0 && src == NULL) {
				for (size_t j = 0; j < g->naxes; j++)
					if (strcmp(g->axes[j].name, from) == 0) {
						snprintf(why, len, "axes '%s' and '%s' are the same axis; give one", from, to);
						return CB_EFORMAT;
					}
			}
			if (strcmp(g->axes[i].name, from) == 0)
				src = &g->axes[i];
		}
		if (src) {
			char *n = strdup(to);

			if (!n)
				return -ENOMEM;
			free(src->name);
			src->name = n;
		}
	}
	return 0;
}

void cb_matrix_sort_axes(struct cb_matrix *m, int (*rank)(const char *name))
{
	/* Insertion sort: stable, and groups have a handful of axes. */
	for (size_t gi = 0; gi < m->ngroups; gi++) {
		struct cb_axis *a = m->groups[gi].axes;

		for (size_t i = 1; i < m->groups[gi].naxes; i++) {
			struct cb_axis t = a[i];
			size_t j = i;

			while (j > 0 && rank(a[j - 1].name) > rank(t.name)) {
				a[j] = a[j - 1];
				j--;
			}
			a[j] = t;
		}
	}
}

/* ---- matrix files (inih) ---- */

struct load_ctx {
	struct cb_matrix *m;
	const char *path;
	char *why;
	size_t len;
	int err;
	FILE *fp;
	int line;        /* line being parsed: Debian's inih passes no line numbers to handlers */
	bool line_ended; /* the previous read ended a line */
};

/* fgets for inih that counts lines, so messages can say FILE:LINE. */
static char *counting_reader(char *str, int num, void *stream)
{
	struct load_ctx *c = stream;
	char *r = fgets(str, num, c->fp);

	if (!r)
		return NULL;
	if (c->line_ended)
		c->line++;
	c->line_ended = strchr(str, '\n') != NULL;
	return r;
}

static bool parse_setting(const char *v, long max, long *out)
{
	char *end;
	long x;

	errno = 0;
	x = strtol(v, &end, 10);
	if (errno || end == v || *end || x < 0 || x > max)
		return false;
	*out = x;
	return true;
}

static int load_setting(struct load_ctx *c, const char *name, const char *value, int line)
{
	long v;

	if (strcmp(name, "reps") == 0 && parse_setting(value, 1000000, &v) && v >= 1) {
		c->m->reps = v;
		return 1;
	}
	if (strcmp(name, "warmup") == 0 && parse_setting(value, 1000000, &v)) {
		c->m->warmup = v;
		return 1;
	}
	if (strcmp(name, "shuffle") == 0) {
		char *end;

		errno = 0;
		c->m->shuffle_seed = strtoull(value, &end, 0);
		if (!errno && end != value && !*end && *value != '-') {
			c->m->shuffle = true;
			return 1;
		}
	}
	if (strcmp(name, "order") == 0) {
		enum cb_order_mode mode;

		if (cb_order_parse(value, &mode, &c->m->order_seed, &c->m->order_seeded) == 0) {
			c->m->order = (int)mode;
			return 1;
		}
	}
	if (strcmp(name, "reps") && strcmp(name, "warmup") && strcmp(name, "shuffle") && strcmp(name, "order"))
		snprintf(c->why, c->len, "%s:%d: unknown setting '%s' in [matrix] (reps, warmup, shuffle, order)",
			 c->path, line, name);
	else
		snprintf(c->why, c->len, "%s:%d: bad value '%s' for %s", c->path, line, value, name);
	c->err = CB_EFORMAT;
	return 0;
}

static int load_handler(void *user, const char *section, const char *name, const char *value)
{
	struct load_ctx *c = user;
	int line = c->line;
	struct cb_group *g;
	char why[200];
	int err;

	if (c->err)
		return 0;
	if (strcmp(section, "matrix") == 0)
		return load_setting(c, name, value, line);
	if (*section && !valid_name(section)) {
		snprintf(c->why, c->len, "%s:%d: bad group name [%s] (use a-z, 0-9, _ and -)", c->path, line, section);
		c->err = CB_EFORMAT;
		return 0;
	}
	g = find_group(c->m, section, false);
	for (size_t i = 0; g && i < g->naxes; i++) {
		if (strcmp(g->axes[i].name, name) == 0) {
			snprintf(c->why, c->len, "%s:%d: axis '%s' given twice in [%s]", c->path, line, name, section);
			c->err = CB_EFORMAT;
			return 0;
		}
	}
	err = cb_matrix_set_axis(c->m, section, name, value, why, sizeof(why));
	if (err) {
		if (err == CB_EFORMAT)
			snprintf(c->why, c->len, "%s:%d: %s", c->path, line, why);
		else
			snprintf(c->why, c->len, "%s: %s", c->path, strerror(-err));
		c->err = err;
		return 0;
	}
	return 1;
}

/*
 * Before inih sees a file: a regular file (not /dev/zero, a FIFO or a
 * directory), at most CB_MATRIX_MAX_BYTES, no NUL byte, no line longer
 * than CB_MATRIX_MAX_LINE. inih would otherwise cut a long line and
 * parse its tail as a line of its own ("...fork = 0" from a comment).
 */
static FILE *open_checked(const char *path, char *why, size_t len, int *err)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO must not block the open */
	FILE *fp = fd >= 0 ? fdopen(fd, "r") : NULL;
	int line = 1, c;
	size_t col = 0;

	if (fd >= 0 && !fp)
		close(fd);
	if (!fp) {
		*err = -errno;
		snprintf(why, len, "cannot read matrix file %s: %s", path, strerror(errno));
		return NULL;
	}
	*err = CB_EFORMAT;
	if (fstat(fileno(fp), &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, len, "%s: not a regular file", path);
		goto bad;
	}
	if (st.st_size > CB_MATRIX_MAX_BYTES) {
		snprintf(why, len, "%s: larger than %d bytes: not a matrix file", path, CB_MATRIX_MAX_BYTES);
		goto bad;
	}
	while ((c = getc(fp)) != EOF) {
		if (c == '\0') {
			snprintf(why, len, "%s:%d: NUL byte", path, line);
			goto bad;
		}
		if (c == '\n') {
			line++;
			col = 0;
		} else if (++col > CB_MATRIX_MAX_LINE) {
			snprintf(why, len, "%s:%d: line longer than %d characters", path, line, CB_MATRIX_MAX_LINE);
			goto bad;
		}
	}
	if (ferror(fp)) {
		*err = -EIO;
		snprintf(why, len, "cannot read matrix file %s: %s", path, strerror(errno));
		goto bad;
	}
	rewind(fp);
	*err = 0;
	return fp;
bad:
	fclose(fp);
	return NULL;
}

int cb_matrix_load(struct cb_matrix *m, const char *path, char *why, size_t len)
{
	struct load_ctx c = { .m = m, .path = path, .why = why, .len = len, .line_ended = true };
	int rc, err;
	FILE *fp = open_checked(path, why, len, &err);

	if (!fp)
		return err;
	/* Debian's inih takes its line limit at run time: lines up to our own limit, on the heap. */
	ini_use_stack = false;
	ini_allow_realloc = true;
	ini_max_line = CB_MATRIX_MAX_LINE + 3; /* inih counts '\r', '\n' and '\0' too */
	c.fp = fp;
	rc = ini_parse_stream(counting_reader, &c, load_handler, &c);
	fclose(fp);
	if (c.err)
		return c.err;
	if (rc > 0) {
		snprintf(why, len, "%s:%d: not a 'name = value' line or '[section]' header", path, rc);
		return CB_EFORMAT;
	}
	if (rc < 0) {
		snprintf(why, len, "%s: out of memory while parsing", path);
		return -ENOMEM;
	}
	if (m->ngroups == 0) {
		snprintf(why, len, "%s: no axes (a group is a [section] with lines such as 'size = 16M, 64M')", path);
		return CB_EFORMAT;
	}
	return 0;
}

/* ---- enumeration ---- */

static int make_key(struct cb_cell *c, char *why, size_t len)
{
	size_t off = 0;

	c->key[0] = '\0';
	for (size_t i = 0; i < c->npairs; i++) {
		int n = snprintf(c->key + off, sizeof(c->key) - off, "%s%s=%s", i ? " " : "", c->names[i],
				 c->values[i]);

		if (n < 0 || (size_t)n >= sizeof(c->key) - off) {
			snprintf(why, len, "a cell's settings are longer than %d characters", CB_CELL_KEY_LEN - 1);
			return CB_EFORMAT;
		}
		off += (size_t)n;
	}
	return 0;
}

static int push_cell(struct cb_cells *out, const struct cb_group *g, const size_t *pos, char *why, size_t len)
{
	struct cb_cell *c = cb_array_room(out->cell, &out->cap, out->n, sizeof(*c), 64);

	if (!c)
		return -ENOMEM;
	out->cell = c;
	c = &out->cell[out->n];
	memset(c, 0, sizeof(*c));
	c->names = calloc(g->naxes, sizeof(*c->names));
	c->values = calloc(g->naxes, sizeof(*c->values));
	if (!c->names || !c->values) {
		free(c->names);
		free(c->values);
		return -ENOMEM;
	}
	c->npairs = g->naxes;
	for (size_t i = 0; i < g->naxes; i++) {
		c->names[i] = g->axes[i].name;
		c->values[i] = g->axes[i].values[pos[i]];
	}
	out->n++;
	return make_key(c, why, len);
}

/* Drop the index after cells moved (shard, shuffle): cb_cells_find builds it again. */
static void drop_index(struct cb_cells *c)
{
	if (c->index) {
		cb_strmap_free(c->index);
		free(c->index);
		c->index = NULL;
	}
}

static int build_index(struct cb_cells *c)
{
	c->index = calloc(1, sizeof(*c->index));
	if (!c->index)
		return -ENOMEM;
	for (size_t i = 0; i < c->n; i++)
		if (cb_strmap_put(c->index, c->cell[i].key, i, NULL) < 0) {
			drop_index(c);
			return -ENOMEM;
		}
	return 0;
}

long cb_cells_find(struct cb_cells *c, const char *key)
{
	size_t pos;

	if (!c->index && build_index(c) < 0)
		return -ENOMEM;
	return cb_strmap_get(c->index, key, &pos) ? (long)pos : -1;
}

static int enumerate_group(const struct cb_group *g, struct cb_cells *out, char *why, size_t len)
{
	size_t *pos;
	int err = 0;

	if (g->naxes == 0) {
		snprintf(why, len, "group [%s] has no axes", g->name);
		return CB_EFORMAT;
	}
	pos = calloc(g->naxes, sizeof(*pos));
	if (!pos)
		return -ENOMEM;
	for (;;) {
		err = push_cell(out, g, pos, why, len);
		if (err)
			break;
		/* Overlapping groups: a key already enumerated stays at its first place. */
		int put = cb_strmap_put(out->index, out->cell[out->n - 1].key, out->n - 1, NULL);

		if (put < 0) {
			err = put;
			break;
		}
		if (put == 0) {
			free(out->cell[out->n - 1].names);
			free(out->cell[out->n - 1].values);
			out->n--;
		}
		/* Odometer: the last axis turns fastest. */
		size_t i = g->naxes;

		while (i > 0 && ++pos[i - 1] == g->axes[i - 1].nvalues)
			pos[--i] = 0;
		if (i == 0)
			break;
	}
	free(pos);
	return err;
}

/* Cells before deduplication, saturating just above the cap (a hostile file must not overflow it). */
static size_t count_cells(const struct cb_matrix *m)
{
	size_t total = 0;

	for (size_t g = 0; g < m->ngroups; g++) {
		size_t n = 1;

		for (size_t a = 0; a < m->groups[g].naxes && n <= CB_MATRIX_MAX_CELLS; a++)
			n *= m->groups[g].axes[a].nvalues ? m->groups[g].axes[a].nvalues : 1;
		total += n > CB_MATRIX_MAX_CELLS ? (size_t)CB_MATRIX_MAX_CELLS + 1 : n;
		if (total > CB_MATRIX_MAX_CELLS)
			return (size_t)CB_MATRIX_MAX_CELLS + 1;
	}
	return total;
}

int cb_matrix_cells(const struct cb_matrix *m, struct cb_cells *out, char *why, size_t len)
{
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (m->ngroups == 0) {
		snprintf(why, len, "the matrix has no axes");
		return CB_EFORMAT;
	}
	if (count_cells(m) > CB_MATRIX_MAX_CELLS) {
		snprintf(why, len, "the matrix has more than %d cells (split it, or use fewer values)", CB_MATRIX_MAX_CELLS);
		return CB_EFORMAT;
	}
	out->index = calloc(1, sizeof(*out->index));
	if (!out->index)
		return -ENOMEM;
	for (size_t g = 0; g < m->ngroups && !err; g++)
		err = enumerate_group(&m->groups[g], out, why, len);
	for (size_t i = 0; i < out->n; i++)
		out->cell[i].index = i;
	if (err)
		cb_cells_free(out);
	return err;
}

void cb_cells_free(struct cb_cells *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->cell[i].names);
		free(c->cell[i].values);
	}
	free(c->cell);
	drop_index(c);
	memset(c, 0, sizeof(*c));
}

bool cb_cell_drop_pair(struct cb_cell *c, const char *name)
{
	char why[64];

	for (size_t i = 0; i < c->npairs; i++) {
		if (strcmp(c->names[i], name) != 0)
			continue;
		memmove(&c->names[i], &c->names[i + 1], (c->npairs - i - 1) * sizeof(c->names[0]));
		memmove(&c->values[i], &c->values[i + 1], (c->npairs - i - 1) * sizeof(c->values[0]));
		c->npairs--;
		make_key(c, why, sizeof(why)); /* a shorter key always fits */
		return true;
	}
	return false;
}

void cb_cells_dedupe(struct cb_cells *c)
{
	struct cb_strmap seen = { 0 };
	size_t kept = 0;

	drop_index(c); /* positions change: cb_cells_find builds it again */
	for (size_t k = 0; k < c->n; k++) {
		/* Hashing keeps this linear; out of memory keeps the cell (a duplicate, never a loss). */
		if (cb_strmap_put(&seen, c->cell[k].key, kept, NULL) == 0) {
			free(c->cell[k].names);
			free(c->cell[k].values);
		} else {
			c->cell[kept] = c->cell[k];
			c->cell[kept].index = kept; /* the enumeration as it now is */
			kept++;
		}
	}
	cb_strmap_free(&seen);
	c->n = kept;
}

int cb_shard_parse(const char *text, unsigned *i, unsigned *n)
{
	char *end;
	unsigned long a, b;

	if (!text || *text < '0' || *text > '9')
		return -EINVAL;
	errno = 0;
	a = strtoul(text, &end, 10);
	if (errno || *end != '/' || end[1] < '0' || end[1] > '9')
		return -EINVAL;
	b = strtoul(end + 1, &end, 10);
	if (errno || *end || a < 1 || b < a || b > 1000000)
		return -EINVAL;
	*i = (unsigned)a;
	*n = (unsigned)b;
	return 0;
}

void cb_cells_shard(struct cb_cells *c, unsigned i, unsigned n)
{
	cb_cells_shard_by(c, NULL, i, n);
}

void cb_cells_shard_by(struct cb_cells *c, const size_t *part, unsigned i, unsigned n)
{
	size_t kept = 0;

	for (size_t k = 0; k < c->n; k++) {
		if ((part ? part[k] : c->cell[k].index) % n == i - 1)
			c->cell[kept++] = c->cell[k];
		else {
			free(c->cell[k].names);
			free(c->cell[k].values);
		}
	}
	c->n = kept;
	drop_index(c);
}

void cb_cells_shuffle(struct cb_cells *c, uint64_t seed)
{
	uint64_t st = seed;

	for (size_t i = c->n; i > 1; i--) {
		size_t j = (size_t)(cb_splitmix64(&st) % i);
		struct cb_cell t = c->cell[i - 1];

		c->cell[i - 1] = c->cell[j];
		c->cell[j] = t;
	}
	drop_index(c);
}

const char *cb_cell_value(const struct cb_cell *c, const char *name)
{
	for (size_t i = 0; i < c->npairs; i++)
		if (strcmp(c->names[i], name) == 0)
			return c->values[i];
	return NULL;
}

/* Find "name=" at a pair boundary; returns the value's start and sets *vlen. */
static const char *key_find(const char *key, const char *name, size_t *vlen)
{
	size_t nl = strlen(name);

	for (const char *p = key; p && *p; p = strchr(p, ' '), p = p ? p + 1 : NULL) {
		if (strncmp(p, name, nl) == 0 && p[nl] == '=') {
			const char *v = p + nl + 1, *e = strchr(v, ' ');

			*vlen = e ? (size_t)(e - v) : strlen(v);
			return v;
		}
	}
	return NULL;
}

bool cb_key_value(const char *key, const char *name, char *value, size_t len)
{
	size_t vl;
	const char *v = key_find(key, name, &vl);

	if (!v || vl >= len)
		return false;
	memcpy(value, v, vl);
	value[vl] = '\0';
	return true;
}

bool cb_key_replace(const char *key, const char *name, const char *value, char *out, size_t len)
{
	size_t vl;
	const char *v = key_find(key, name, &vl);
	int n;

	if (!v)
		return false;
	n = snprintf(out, len, "%.*s%s%s", (int)(v - key), key, value, v + vl);
	return n >= 0 && (size_t)n < len;
}
