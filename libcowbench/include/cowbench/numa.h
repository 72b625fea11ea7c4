#ifndef COWBENCH_NUMA_H
#define COWBENCH_NUMA_H

#include <stddef.h>
#include <stdint.h>

/*
 * NUMA placement of a region and of the processes that touch it, through
 * libnuma. Node sets are uint64_t masks (bit n = node n). On a machine
 * without NUMA support everything still works as "1 node" (node 0).
 */

/** Nodes the kernel knows (numa_max_node() + 1), 1 without NUMA support. */
int cb_numa_node_count(void);

/**
 * Parse a node list ("0", "0,2", "0-3", "1-2,5"). -EINVAL when malformed,
 * -ERANGE when a node is not below cb_numa_node_count(). Never prints.
 */
int cb_nodes_parse(const char *text, uint64_t *mask);
/** Format a mask as a node list ("0-2,5"); "" for an empty mask. */
void cb_nodes_format(uint64_t mask, char *buf, size_t len);

/** mbind the range with MPOL_BIND (bind) or MPOL_INTERLEAVE (interleave); 0 masks are no-ops. */
int cb_numa_place(void *addr, size_t len, uint64_t bind, uint64_t interleave);

/** Restrict the calling thread (and what it creates later) to the CPUs of nodes; 0: no-op. */
int cb_numa_run_on(uint64_t nodes);

/**
 * Where the pages of a range are: one move_pages() query per page_size
 * step, summarised as "node:count" pairs ("0:16384" or "0:100 1:28").
 * Pages not present count as "-". Returns 0 or a negative errno.
 */
int cb_numa_where(const void *addr, size_t len, size_t page_size, char *buf, size_t buflen);

#endif
