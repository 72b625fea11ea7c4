#ifndef COWBENCH_SMAPS_H
#define COWBENCH_SMAPS_H

#include <stdint.h>
#include <sys/types.h>

/*
 * /proc/PID/smaps_rollup: a process's memory summed over its mappings.
 * Private_Dirty growing while Shared_Dirty shrinks is how COW shows up
 * from outside (Redis reports "Fork CoW" this way). Fields absent from
 * the file stay -1.
 */

struct cb_smaps {
	int64_t rss_kb, pss_kb;
	int64_t shared_clean_kb, shared_dirty_kb;
	int64_t private_clean_kb, private_dirty_kb;
	int64_t anonymous_kb, anon_huge_kb, swap_kb;
	int64_t private_hugetlb_kb; /* hugetlb pages mapped by this process alone (not in Private_*) */
};

/** Parse smaps_rollup (or smaps) text; fields of several mappings are summed. CB_EFORMAT when no field is found. */
int cb_smaps_parse(const char *text, struct cb_smaps *out);
/** Read /proc/PID/smaps_rollup (pid 0: this process); -EACCES for another user's process. */
int cb_smaps_read(pid_t pid, struct cb_smaps *out);
int cb_smaps_read_path(const char *path, struct cb_smaps *out);

#endif
