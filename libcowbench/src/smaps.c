#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/error.h>
#include <cowbench/smaps.h>

#include "fileutil.h"

static const struct {
	const char *key;
	size_t offset;
} fields[] = {
	{ "Rss:", offsetof(struct cb_smaps, rss_kb) },
	{ "Pss:", offsetof(struct cb_smaps, pss_kb) },
	{ "Shared_Clean:", offsetof(struct cb_smaps, shared_clean_kb) },
	{ "Shared_Dirty:", offsetof(struct cb_smaps, shared_dirty_kb) },
	{ "Private_Clean:", offsetof(struct cb_smaps, private_clean_kb) },
	{ "Private_Dirty:", offsetof(struct cb_smaps, private_dirty_kb) },
	{ "Anonymous:", offsetof(struct cb_smaps, anonymous_kb) },
	{ "AnonHugePages:", offsetof(struct cb_smaps, anon_huge_kb) },
	{ "Swap:", offsetof(struct cb_smaps, swap_kb) },
	{ "Private_Hugetlb:", offsetof(struct cb_smaps, private_hugetlb_kb) },
};

#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

static int64_t *field(struct cb_smaps *s, size_t i)
{
	return (int64_t *)((char *)s + fields[i].offset);
}

/* One "Key:   123 kB" line; true when it was one of ours. */
static bool parse_line(const char *line, struct cb_smaps *out)
{
	for (size_t i = 0; i < NFIELDS; i++) {
		size_t klen = strlen(fields[i].key);
		char *end;
		long long v;

		if (strncmp(line, fields[i].key, klen) != 0)
			continue;
		errno = 0;
		v = strtoll(line + klen, &end, 10);
		if (errno || end == line + klen || v < 0)
			return false;
		int64_t sum = *field(out, i) < 0 ? 0 : *field(out, i); /* smaps: one line per mapping */

		/* No real process has 2^63 kB; a sum that would overflow is garbage, not data. */
		*field(out, i) = v > INT64_MAX - sum ? INT64_MAX : sum + v;
		return true;
	}
	return false;
}

int cb_smaps_parse(const char *text, struct cb_smaps *out)
{
	bool any = false;

	for (size_t i = 0; i < NFIELDS; i++)
		*field(out, i) = -1;
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');

		any |= parse_line(p, out);
		p = nl ? nl + 1 : NULL;
	}
	return any ? 0 : CB_EFORMAT;
}

int cb_smaps_read_path(const char *path, struct cb_smaps *out)
{
	char buf[8192];
	int n = cb_read_text_file(path, buf, sizeof(buf));

	if (n < 0)
		return n;
	return cb_smaps_parse(buf, out);
}

int cb_smaps_read(pid_t pid, struct cb_smaps *out)
{
	char path[64];

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/smaps_rollup");
	return cb_smaps_read_path(path, out);
}
