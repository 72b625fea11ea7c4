#ifndef COWBENCH_VMAS_H
#define COWBENCH_VMAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * A process's mappings with their memory, from /proc/PID/smaps (no root
 * needed for one's own processes): where COW lands. After fork a private
 * page shows as Shared_Dirty in both processes; each copy moves one page
 * from Shared_Dirty to Private_Dirty in the writer (and, once the other
 * side has no sharer left, in it too).
 */

struct cb_vma {
	uint64_t start, end;       /* [start, end) */
	char perms[5];             /* "rw-p" */
	char path[128];            /* file, [heap], [stack], ... or "" for anonymous */
	int64_t rss_kb, shared_dirty_kb, private_dirty_kb, anon_huge_kb, swap_kb;
	int64_t referenced_kb;      /* pages this process accessed (a fork child's start unreferenced) */
	int thp_eligible;          /* THPeligible: 1/0, -1 when the kernel does not say */
};

struct cb_vmas {
	struct cb_vma *v;
	size_t n, cap;
};

/** Parse smaps text (mappings in address order). CB_EFORMAT when no mapping header is found. */
int cb_vmas_parse(const char *text, struct cb_vmas *out);
/** Read /proc/PID/smaps; -ESRCH/-ENOENT when the process is gone, -EACCES for another user's. */
int cb_vmas_read(pid_t pid, struct cb_vmas *out);
void cb_vmas_free(struct cb_vmas *vs);
/** The mapping holding addr, or NULL. */
const struct cb_vma *cb_vmas_find(const struct cb_vmas *vs, uint64_t addr);
/** Private and writable: the mappings fork shares copy-on-write. */
bool cb_vma_cow_candidate(const struct cb_vma *v);

#endif
