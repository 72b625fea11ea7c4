#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cowbench/error.h>
#include <cowbench/array.h>
#include <cowbench/vmas.h>

static const struct {
	const char *key;
	size_t offset;
} vma_fields[] = {
	{ "Rss:", offsetof(struct cb_vma, rss_kb) },
	{ "Shared_Dirty:", offsetof(struct cb_vma, shared_dirty_kb) },
	{ "Private_Dirty:", offsetof(struct cb_vma, private_dirty_kb) },
	{ "AnonHugePages:", offsetof(struct cb_vma, anon_huge_kb) },
	{ "Swap:", offsetof(struct cb_vma, swap_kb) },
	{ "Referenced:", offsetof(struct cb_vma, referenced_kb) },
};

static struct cb_vma *push(struct cb_vmas *vs)
{
	struct cb_vma *v = cb_array_room(vs->v, &vs->cap, vs->n, sizeof(*v), 64);

	if (!v)
		return NULL;
	vs->v = v;
	memset(&vs->v[vs->n], 0, sizeof(vs->v[0]));
	vs->v[vs->n].thp_eligible = -1;
	return &vs->v[vs->n++];
}

/* "start-end perms offset dev inode [path]": a mapping header, else false. */
static bool parse_header(const char *line, size_t len, struct cb_vma *v)
{
	unsigned long long s, e;
	char buf[512], perms[8];
	int path_at = 0;

	/* sscanf must not run past the line: whitespace in its format would eat the newline */
	snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) ? len : sizeof(buf) - 1), line);
	memset(v, 0, sizeof(*v));
	if (sscanf(buf, "%llx-%llx %7s %*s %*s %*s %n", &s, &e, perms, &path_at) < 3 || e < s || strlen(perms) != 4)
		return false;
	v->start = s;
	v->end = e;
	memcpy(v->perms, perms, 5);
	if (path_at > 0)
		snprintf(v->path, sizeof(v->path), "%s", buf + path_at);
	return true;
}

static void parse_field(const char *line, struct cb_vma *v)
{
	long long val;

	if (sscanf(line, "THPeligible: %lld", &val) == 1) {
		v->thp_eligible = val != 0;
		return;
	}
	for (size_t i = 0; i < sizeof(vma_fields) / sizeof(vma_fields[0]); i++) {
		size_t k = strlen(vma_fields[i].key);

		if (strncmp(line, vma_fields[i].key, k) == 0 && sscanf(line + k, "%lld", &val) == 1 && val >= 0)
			*(int64_t *)((char *)v + vma_fields[i].offset) = val;
	}
}

int cb_vmas_parse(const char *text, struct cb_vmas *out)
{
	struct cb_vma *cur = NULL, probe;

	out->n = 0;
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		/* Field lines start with a capital letter; headers with a hex address. */
		if (!(*p >= 'A' && *p <= 'Z') && parse_header(p, len, &probe)) {
			if (!(cur = push(out)))
				return -ENOMEM;
			memcpy(cur, &probe, offsetof(struct cb_vma, rss_kb));
		} else if (cur) {
			parse_field(p, cur);
		}
		p = nl ? nl + 1 : NULL;
	}
	return out->n ? 0 : CB_EFORMAT;
}

/* The whole of a /proc file, whatever its size. */
static char *slurp(const char *path, int *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0, cap = 1 << 16;
	char *buf = NULL;

	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	for (;;) {
		ssize_t n;

		if (!buf || len + 4096 > cap) {
			char *b = realloc(buf, cap *= 2);

			if (!b) {
				*err = -ENOMEM;
				break;
			}
			buf = b;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			*err = -errno;
			break;
		}
		if (n == 0) {
			close(fd);
			buf[len] = '\0';
			return buf;
		}
		len += (size_t)n;
	}
	close(fd);
	free(buf);
	return NULL;
}

int cb_vmas_read(pid_t pid, struct cb_vmas *out)
{
	char path[64];
	int err = 0;
	char *text;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	text = slurp(path, &err);
	if (!text)
		return err;
	err = cb_vmas_parse(text, out);
	free(text);
	return err == CB_EFORMAT ? -ESRCH : err; /* empty: a zombie's */
}

void cb_vmas_free(struct cb_vmas *vs)
{
	free(vs->v);
	vs->v = NULL;
	vs->n = vs->cap = 0;
}

const struct cb_vma *cb_vmas_find(const struct cb_vmas *vs, uint64_t addr)
{
	size_t lo = 0, hi = vs->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < vs->v[mid].start)
			hi = mid;
		else if (addr >= vs->v[mid].end)
			lo = mid + 1;
		else
			return &vs->v[mid];
	}
	return NULL;
}

bool cb_vma_cow_candidate(const struct cb_vma *v)
{
	return v->perms[1] == 'w' && v->perms[3] == 'p';
}

