/*
 * Which cells of two sides of a comparison are one configuration: their
 * rows agree on every identity column (fork, precopy, kernel, options, ...),
 * except a column one of them leaves empty (not applicable there: a stock
 * kernel has no precopy; but an empty break_mode is "fault" and an empty
 * numa_policy is "none", values like any other), the --by axis, and a column of where the rows
 * were measured (kernel, precopy, precopy_depth, clock, cpu, thp) that each
 * side holds at one value of its own (the kernel release of a one-kernel
 * file: what the two files are compared across). A workload, size, writer,
 * fork, seed or workload option that differs is never a partner.
 */
#ifndef COWBENCH_CLI_COMPARE_MATCH_H
#define COWBENCH_CLI_COMPARE_MATCH_H

#include <stdbool.h>
#include <stddef.h>

#include <cowbench/repstats.h>

/* Per column of cb_columns(): true when every row of the groups has one value there. NULL: no memory. */
bool *cm_constant_columns(const struct cb_row_group *g, size_t ng);
/* Whether group a (old side) and b (new side) are one configuration, by the rule above. */
bool cm_groups_agree(const struct cb_row_group *a, const struct cb_row_group *b, const bool *old_constant,
		     const bool *new_constant, const char *by);
/*
 * How the conditions the two groups ran under differ, as "load (runq 1 -> 3), CPU model" into out
 * ("" when alike or not recorded): the median runq, steal and run-queue wait as shares of the rep,
 * the machine-speed probe ref_ns, the CPU model and the kernel (not the --by axis itself).
 */
void cm_conditions(const struct cb_row_group *a, const struct cb_row_group *b, const char *by, char *out, size_t len);

#endif
