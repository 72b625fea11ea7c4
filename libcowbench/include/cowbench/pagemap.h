#ifndef COWBENCH_PAGEMAP_H
#define COWBENCH_PAGEMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * /proc/PID/pagemap: one 64-bit entry per virtual page. Comparing the page
 * frame numbers (PFNs) before and after a touch says, per page, whether a
 * write copied it (new frame), reused it in place (same frame: nobody else
 * mapped it any more) or left it shared. PFNs read as 0 without
 * CAP_SYS_ADMIN; the classifier then says -EPERM instead of guessing.
 */

#define CB_PM_PRESENT   (1ull << 63)
#define CB_PM_SWAPPED   (1ull << 62)
#define CB_PM_FILE      (1ull << 61)
#define CB_PM_EXCLUSIVE (1ull << 56) /* mapped by exactly one process */
#define CB_PM_PFN_MASK  ((1ull << 55) - 1)

/** Read npages entries starting at addr of process pid (0: this process). */
int cb_pagemap_read(pid_t pid, const void *addr, size_t npages, size_t page_size, uint64_t *out);
/** The same from a pagemap file (tests use fixture files); addr is an offset in pages there. */
int cb_pagemap_read_path(const char *path, uintptr_t addr, size_t npages, size_t page_size,
			 uint64_t *out);
/** The same from an open pagemap file: several ranges of one process for one open. */
int cb_pagemap_read_fd(int fd, uintptr_t addr, size_t npages, size_t page_size, uint64_t *out);

struct cb_pagemap_diff {
	int64_t copied;      /* touched pages whose frame changed */
	int64_t reused;      /* touched pages written in place (same frame) */
	int64_t shared;      /* region pages the writer still shares with the other side (-1: unknown) */
	int64_t not_present; /* touched pages absent before or after (swapped out, unmapped) */
	int64_t copied_unwritten; /* pages NOT touched whose frame changed all the same (copied ahead) */
};

/**
 * Classify a touch. before/after: the writer's entries for the region's n
 * pages; other: the other side's entries after the touch, or NULL when
 * there is none (shared is then -1). touched[0..ntouched): page indices
 * written (duplicates are counted once); NULL means every page. The other
 * pages of the region are classified too: copied_unwritten counts those
 * present before and after on a new frame, which only a copy made ahead of
 * the writes (pre-copy) explains.
 * -EPERM when no present entry carries a PFN (not privileged).
 */
int cb_pagemap_classify(const uint64_t *before, const uint64_t *after, const uint64_t *other, size_t n,
			const size_t *touched, size_t ntouched, struct cb_pagemap_diff *out);

#endif
