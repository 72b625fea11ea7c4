#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/cowstats.h>
#include <cowbench/error.h>

#include "fileutil.h"

static const char *const aliases[][2] = {
	/* current key     the study's spelling */
	{ "copy_ns_total", "total_ns" },
	{ "copy_ns_max",   "max_ns" },
};

static int add_entry(struct cb_cowstats *out, const char *key, size_t klen, uint64_t value)
{
	if (klen == 0 || klen >= CB_COWSTATS_KEY_LEN)
		return CB_EFORMAT;
	for (size_t i = 0; i < out->count; i++) {
		if (strlen(out->entry[i].key) == klen && memcmp(out->entry[i].key, key, klen) == 0) {
			out->entry[i].value = value; /* a repeated key: the last wins */
			return 0;
		}
	}
	if (out->count == CB_COWSTATS_MAX_KEYS)
		return 0; /* more keys than we keep: ignore the rest, they are unknown to us */
	memcpy(out->entry[out->count].key, key, klen);
	out->entry[out->count].key[klen] = '\0';
	out->entry[out->count].value = value;
	out->count++;
	return 0;
}

static bool is_key_char(int c)
{
	return isalnum(c) || c == '_' || c == '-' || c == '.';
}

int cb_cowstats_parse(const char *text, struct cb_cowstats *out)
{
	const char *p = text;

	out->count = 0;
	for (;;) {
		const char *key;
		size_t klen;
		char *end;
		unsigned long long v;
		int err;

		while (isspace((unsigned char)*p))
			p++;
		if (*p == '\0')
			break;
		key = p;
		while (is_key_char((unsigned char)*p))
			p++;
		klen = (size_t)(p - key);
		if (klen == 0 || *p != ':')
			return CB_EFORMAT;
		p++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!isdigit((unsigned char)*p))
			return CB_EFORMAT;
		errno = 0;
		v = strtoull(p, &end, 10);
		if (errno == ERANGE)
			return CB_EFORMAT;
		p = end;
		if (*p && !isspace((unsigned char)*p))
			return CB_EFORMAT;
		err = add_entry(out, key, klen, (uint64_t)v);
		if (err)
			return err;
	}
	return out->count ? 0 : CB_EFORMAT;
}

int cb_cowstats_read(const char *path, struct cb_cowstats *out)
{
	char buf[8192];
	int err = cb_read_text_file(path ? path : CB_COWSTATS_PATH, buf, sizeof(buf));

	if (err < 0)
		return err;
	return cb_cowstats_parse(buf, out);
}

static const struct cb_cowstats_entry *find(const struct cb_cowstats *s, const char *key)
{
	for (size_t i = 0; i < s->count; i++)
		if (strcmp(s->entry[i].key, key) == 0)
			return &s->entry[i];
	return NULL;
}

bool cb_cowstats_get(const struct cb_cowstats *s, const char *key, uint64_t *value)
{
	const struct cb_cowstats_entry *e = find(s, key);

	for (size_t i = 0; !e && i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strcmp(aliases[i][0], key) == 0)
			e = find(s, aliases[i][1]);
	if (!e)
		return false;
	*value = e->value;
	return true;
}

bool cb_cowstats_delta(const struct cb_cowstats *before, const struct cb_cowstats *after,
		       const char *key, uint64_t *delta)
{
	uint64_t a, b;

	if (!cb_cowstats_get(before, key, &b) || !cb_cowstats_get(after, key, &a) || a < b)
		return false;
	*delta = a - b;
	return true;
}

/* "16" or "inf" after the prefix: a bucket key, not PREFIXmax or another family's key. */
static bool bucket_label(const char *label)
{
	if (strcmp(label, "inf") == 0)
		return true;
	if (!*label)
		return false;
	for (const char *p = label; *p; p++)
		if (!isdigit((unsigned char)*p))
			return false;
	return true;
}

int cb_cowstats_hist_delta(const struct cb_cowstats *before, const struct cb_cowstats *after, const char *prefix,
			   char *buf, size_t len)
{
	size_t plen = strlen(prefix), used = 0;
	int written = 0;
	bool any = false;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < after->count; i++) {
		const char *key = after->entry[i].key;
		uint64_t d;
		int n;

		if (strncmp(key, prefix, plen) != 0 || !bucket_label(key + plen))
			continue;
		any = true;
		if (!cb_cowstats_delta(before, after, key, &d) || d == 0)
			continue;
		n = snprintf(buf + used, len - used, "%s%s:%llu", written ? ";" : "", key + plen, (unsigned long long)d);
		if (n < 0 || (size_t)n >= len - used) {
			buf[used] = '\0';
			return -ENOSPC;
		}
		used += (size_t)n;
		written++;
	}
	return any ? written : -ENOENT;
}
