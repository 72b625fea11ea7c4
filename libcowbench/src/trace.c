/* COW write traces: writer and strict reader (see trace.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cowbench/array.h>
#include <cowbench/error.h>
#include <cowbench/trace.h>

#include "fileutil.h"

#define MAX_FILE (256u << 20)
#define COLUMNS "t_ns,fork,side,pid,map,kind,map_pages,page,class"

static const char *const side_names[] = { "parent", "child" };
static const char *const class_names[] = { "copy", "reuse", "zero" };
static const char *const kinds[] = { "heap", "stack", "anon", "file", "special" };

const char *cb_trace_side_name(enum cb_trace_side s)
{
	return (unsigned)s < 2 ? side_names[s] : "?";
}

const char *cb_trace_class_name(enum cb_trace_class c)
{
	return (unsigned)c < 3 ? class_names[c] : "?";
}

/* One printable line: a command line or kernel string never breaks the file's structure. */
static void put_clean(FILE *fp, const char *key, const char *v, size_t max)
{
	fprintf(fp, "# %s: ", key);
	for (size_t i = 0; v && v[i] && i < max; i++)
		fputc(v[i] >= 0x20 && v[i] < 0x7f ? v[i] : '?', fp);
	fputc('\n', fp);
}

int cb_trace_write_header(FILE *fp, const char *source, const char *kernel, const char *command)
{
	fprintf(fp, "# cowbench-trace %d\n", CB_TRACE_VERSION);
	put_clean(fp, "source", source, 150);
	put_clean(fp, "kernel", kernel, 90);
	put_clean(fp, "command", command, 240);
	fprintf(fp, COLUMNS "\n");
	return ferror(fp) ? -EIO : 0;
}

int cb_trace_write_rec(FILE *fp, const struct cb_trace_rec *r)
{
	fprintf(fp, "%" PRIu64 ",%u,%s,%d,%u,%s,%" PRIu64 ",%" PRIu64 ",%s\n", r->t_ns, r->fork,
		cb_trace_side_name(r->side), r->pid, r->map, r->kind, r->map_pages, r->page, cb_trace_class_name(r->cls));
	return ferror(fp) ? -EIO : 0;
}

int cb_trace_write_end(FILE *fp, size_t records, uint64_t lost)
{
	fprintf(fp, "# end records=%zu lost=%" PRIu64 " complete\n", records, lost);
	return ferror(fp) ? -EIO : 0;
}

static int fail(char *err, size_t errlen, size_t line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, size_t line, const char *fmt, ...)
{
	char what[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (err && errlen)
		snprintf(err, errlen, "line %zu: %s", line, what);
	return CB_EFORMAT;
}

static bool parse_u64(const char *s, uint64_t max, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (*s < '0' || *s > '9' || strlen(s) > 20)
		return false;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || *end || x > max)
		return false;
	*v = x;
	return true;
}

static int index_of(const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

/* Split a line (no newline) at commas into exactly n fields. */
static bool split(char *line, char **f, int n)
{
	int k = 0;

	f[k++] = line;
	for (char *p = line; *p; p++)
		if (*p == ',') {
			if (k == n)
				return false;
			*p = '\0';
			f[k++] = p + 1;
		}
	return k == n;
}

static int parse_rec(char *line, struct cb_trace_rec *r, char *err, size_t errlen, size_t ln)
{
	char *f[9];
	uint64_t v[5];
	int side, cls;

	if (!split(line, f, 9))
		return fail(err, errlen, ln, "want 9 fields (" COLUMNS ")");
	if (!parse_u64(f[0], UINT64_MAX / 2, &v[0]) || !parse_u64(f[1], UINT32_MAX, &v[1]) || v[1] == 0 ||
	    !parse_u64(f[3], 0x3fffffff, &v[2]) || !parse_u64(f[4], 1u << 20, &v[3]))
		return fail(err, errlen, ln, "t_ns, fork (>= 1), pid or map is not a number in range");
	if ((side = index_of(f[2], side_names, 2)) < 0 || (cls = index_of(f[8], class_names, 3)) < 0 ||
	    index_of(f[5], kinds, 5) < 0)
		return fail(err, errlen, ln, "side must be parent|child, kind heap|stack|anon|file|special, "
					     "class copy|reuse|zero");
	if (!parse_u64(f[6], CB_TRACE_MAX_MAP_PAGES, &r->map_pages) || r->map_pages == 0 ||
	    !parse_u64(f[7], CB_TRACE_MAX_MAP_PAGES, &v[4]) || v[4] >= r->map_pages)
		return fail(err, errlen, ln, "map_pages must be 1..%llu and page below it",
			    (unsigned long long)CB_TRACE_MAX_MAP_PAGES);
	r->t_ns = v[0];
	r->fork = (uint32_t)v[1];
	r->pid = (int)v[2];
	r->map = (uint32_t)v[3];
	r->page = v[4];
	r->side = (enum cb_trace_side)side;
	r->cls = (enum cb_trace_class)cls;
	snprintf(r->kind, sizeof(r->kind), "%s", f[5]);
	return 0;
}

/* "# key: value" into dst; false when the line is not that key. */
static bool comment_value(const char *line, const char *key, char *dst, size_t len)
{
	size_t k = strlen(key);

	if (strncmp(line, "# ", 2) != 0 || strncmp(line + 2, key, k) != 0 || strncmp(line + 2 + k, ": ", 2) != 0)
		return false;
	snprintf(dst, len, "%s", line + 4 + k);
	return true;
}

static int parse_end(const char *line, size_t n, struct cb_trace *out, char *err, size_t errlen, size_t ln)
{
	unsigned long long recs, lost;
	int used = 0;

	if (sscanf(line, "# end records=%llu lost=%llu complete%n", &recs, &lost, &used) != 2 || line[used])
		return fail(err, errlen, ln, "malformed trailer");
	if (recs != n)
		return fail(err, errlen, ln, "trailer says %llu records, the file has %zu", recs, n);
	out->lost = lost;
	return 0;
}

/* Forks ascend, time within a fork does not go back; the same mapping keeps its size and kind. */
static int check_order(const struct cb_trace_rec *prev, const struct cb_trace_rec *r, char *err, size_t errlen,
		       size_t ln)
{
	if (!prev)
		return 0;
	if (r->fork < prev->fork || (r->fork == prev->fork && r->t_ns < prev->t_ns))
		return fail(err, errlen, ln, "records out of order (fork, then time)");
	return 0;
}

static int parse_lines(char *text, struct cb_trace *out, char *err, size_t errlen)
{
	size_t ln = 0, cap = 0;
	bool columns = false, ended = false;
	char *save, *line;
	struct cb_trace_rec *rec;
	int e;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		ln++;
		line[strcspn(line, "\r")] = '\0';
		if (ended)
			return fail(err, errlen, ln, "text after the trailer");
		if (ln == 1) {
			int v = 0, used = 0;

			if (sscanf(line, "# cowbench-trace %d%n", &v, &used) != 1 || line[used])
				return fail(err, errlen, ln, "not a cowbench trace (want '# cowbench-trace %d')",
					    CB_TRACE_VERSION);
			if (v != CB_TRACE_VERSION)
				return fail(err, errlen, ln, "trace version %d, this cowbench reads %d", v, CB_TRACE_VERSION);
			continue;
		}
		if (line[0] == '#') {
			if (strncmp(line, "# end ", 6) == 0) {
				if ((e = parse_end(line, out->n, out, err, errlen, ln)) < 0)
					return e;
				ended = true;
			} else if (!comment_value(line, "source", out->source, sizeof(out->source)) &&
				   !comment_value(line, "kernel", out->kernel, sizeof(out->kernel)) &&
				   !comment_value(line, "command", out->command, sizeof(out->command)) && !columns) {
				return fail(err, errlen, ln, "unknown header line");
			}
			continue;
		}
		if (!columns) {
			if (strcmp(line, COLUMNS) != 0)
				return fail(err, errlen, ln, "want the columns " COLUMNS);
			columns = true;
			continue;
		}
		if (out->n == CB_TRACE_MAX_RECORDS)
			return fail(err, errlen, ln, "more than %u records", CB_TRACE_MAX_RECORDS);
		if (!(rec = cb_array_room(out->rec, &cap, out->n, sizeof(*rec), 256)))
			return -ENOMEM;
		out->rec = rec;
		if ((e = parse_rec(line, &out->rec[out->n], err, errlen, ln)) < 0 ||
		    (e = check_order(out->n ? &out->rec[out->n - 1] : NULL, &out->rec[out->n], err, errlen, ln)) < 0)
			return e;
		out->n++;
	}
	if (!columns)
		return fail(err, errlen, ln, "no column line");
	if (!ended)
		return fail(err, errlen, ln, "no trailer ('# end records=N lost=L complete'): the file is not whole");
	return 0;
}

int cb_trace_parse(const char *text, size_t len, struct cb_trace *out, char *err, size_t errlen)
{
	char *copy;
	int e;

	memset(out, 0, sizeof(*out));
	if (err && errlen)
		err[0] = '\0';
	if (memchr(text, '\0', len))
		return fail(err, errlen, 0, "a NUL byte in the file");
	if (!(copy = malloc(len + 1)))
		return -ENOMEM;
	memcpy(copy, text, len);
	copy[len] = '\0';
	e = parse_lines(copy, out, err, errlen);
	free(copy);
	if (e < 0)
		cb_trace_free(out);
	return e;
}

int cb_trace_read(const char *path, struct cb_trace *out, char *err, size_t errlen)
{
	FILE *fp = cb_fopen_regular(path); /* a FIFO is refused, never waited on */
	struct stat sb;
	char *buf;
	size_t n;
	int e;

	memset(out, 0, sizeof(*out));
	if (!fp && errno == EINVAL) {
		if (err && errlen)
			snprintf(err, errlen, "not a regular file of at most %u MiB", MAX_FILE >> 20);
		return CB_EFORMAT;
	}
	if (!fp)
		return -errno;
	if (fstat(fileno(fp), &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size > (off_t)MAX_FILE) {
		fclose(fp);
		if (err && errlen)
			snprintf(err, errlen, "not a regular file of at most %u MiB", MAX_FILE >> 20);
		return CB_EFORMAT;
	}
	buf = malloc((size_t)sb.st_size + 1);
	if (!buf) {
		fclose(fp);
		return -ENOMEM;
	}
	n = fread(buf, 1, (size_t)sb.st_size, fp);
	fclose(fp);
	e = cb_trace_parse(buf, n, out, err, errlen);
	free(buf);
	return e;
}

void cb_trace_free(struct cb_trace *t)
{
	free(t->rec);
	t->rec = NULL;
	t->n = 0;
}
