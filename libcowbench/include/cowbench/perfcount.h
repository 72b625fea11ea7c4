#ifndef COWBENCH_PERFCOUNT_H
#define COWBENCH_PERFCOUNT_H

#include <stdint.h>
#include <sys/types.h>

/*
 * perf_event_open software counters of one task: faults, context
 * switches, migrations. Opening fails with -EACCES/-EPERM when
 * kernel.perf_event_paranoid forbids it; callers report that instead.
 */

enum cb_perf_counter {
	CB_PERF_MINFLT = 0,
	CB_PERF_MAJFLT,
	CB_PERF_CS,
	CB_PERF_MIGRATIONS,
	CB_PERF_NCOUNTERS
};

struct cb_perfcount {
	int fd[CB_PERF_NCOUNTERS];
};

/** Start counting for task pid (0: the calling thread). -errno when not permitted. */
int cb_perfcount_open(struct cb_perfcount *pc, pid_t pid);
/** Read the counts so far. */
int cb_perfcount_read(const struct cb_perfcount *pc, int64_t out[CB_PERF_NCOUNTERS]);
void cb_perfcount_close(struct cb_perfcount *pc);

#endif
