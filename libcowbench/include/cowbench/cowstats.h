#ifndef COWBENCH_COWSTATS_H
#define COWBENCH_COWSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cowbench/sysctl.h>

/*
 * Reader for /proc/cow_stats, the file of cowbench's kernel patch (and of
 * the study it reproduces). The text is a sequence of "key: value" pairs,
 * one or several per line; unknown keys are kept, never rejected.
 */

#define CB_COWSTATS_PATH   "/proc/cow_stats"
/* The pre-copy sysctls (CB_PRECOPY_SYSCTL, ...) are the settings journal's keys: cowbench/sysctl.h. */
#define CB_COWSTATS_MAX_KEYS 256 /* the v3 series prints ~110 keys; room for more */
#define CB_COWSTATS_KEY_LEN  48

struct cb_cowstats_entry {
	char key[CB_COWSTATS_KEY_LEN];
	uint64_t value;
};

struct cb_cowstats {
	size_t count;
	struct cb_cowstats_entry entry[CB_COWSTATS_MAX_KEYS];
};

/** Parse the text of /proc/cow_stats. -CB_EFORMAT-style error on malformed text. */
int cb_cowstats_parse(const char *text, struct cb_cowstats *out);

/** Read and parse a file (default CB_COWSTATS_PATH when path is NULL); -ENOENT when absent. */
int cb_cowstats_read(const char *path, struct cb_cowstats *out);

/**
 * Look a key up, accepting the study's older spelling as an alias
 * (total_ns for copy_ns_total, max_ns for copy_ns_max). false when absent.
 */
bool cb_cowstats_get(const struct cb_cowstats *s, const char *key, uint64_t *value);

/** after - before for one key; false when either lacks it or the counter went backwards (reset). */
bool cb_cowstats_delta(const struct cb_cowstats *before, const struct cb_cowstats *after,
		       const char *key, uint64_t *delta);

/**
 * A histogram's growth over an interval: every key PREFIX<N> (N a number, or
 * "inf") of after, less its value in before, written as "N:COUNT;N:COUNT..."
 * for the buckets that grew, in the file's order (e.g. prefix
 * "precopy_fault_pages_": "1:16000;16:1000"). Returns the number of buckets
 * written (0: none grew), or -ENOENT when the kernel prints no such key. A
 * text that does not fit is cut at a whole bucket and returns -ENOSPC.
 */
int cb_cowstats_hist_delta(const struct cb_cowstats *before, const struct cb_cowstats *after, const char *prefix,
			   char *buf, size_t len);

#endif
