#ifndef COWBENCH_SIZE_H
#define COWBENCH_SIZE_H

#include <stddef.h>
#include <stdint.h>

/**
 * Parse a size: plain bytes ("4096") or a binary suffix K, M, G, T
 * (either case, optionally followed by "iB" or "B": "64M", "64MiB").
 * Rejects empty text, signs, fractions, zero, overflow and trailing
 * garbage with -EINVAL (malformed), -ERANGE (overflow) or -EDOM (zero).
 */
int cb_size_parse(const char *text, uint64_t *bytes);

/** Round up to a whole number of pages; -ERANGE on overflow. */
int cb_size_round_pages(uint64_t bytes, size_t page_size, uint64_t *rounded);

/** Format as the shortest exact binary form ("64M", "4K", "1000"). */
void cb_size_format(uint64_t bytes, char *buf, size_t len);

#endif
