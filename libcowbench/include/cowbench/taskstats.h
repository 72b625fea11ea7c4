#ifndef COWBENCH_TASKSTATS_H
#define COWBENCH_TASKSTATS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <cowbench/sysctl.h> /* CB_DELAYACCT_SYSCTL */

/*
 * The kernel's own count of COW copies on a stock kernel: taskstats delay
 * accounting over generic netlink (Linux >= 5.19 reports wpcopy_count and
 * wpcopy_delay_total, the number of times a task went through the COW copy
 * path and the time spent there). Needs CAP_NET_ADMIN to query and
 * kernel.task_delayacct=1 for the counts to move.
 */


struct cb_taskstats {
	unsigned version;          /* TASKSTATS_VERSION of the reply */
	uint64_t wpcopy_count;     /* COW copies (wp_page_copy) so far */
	uint64_t wpcopy_delay_ns;  /* time spent in them (ns) */
	uint64_t minflt, majflt;   /* the task's fault counts (BSD accounting part) */
	uint64_t cpu_run_real_ns;  /* CPU time the task ran (ns) */
};

struct cb_taskstats_sock;

/** Connect to the TASKSTATS family; -ENOENT when the kernel has none. */
int cb_taskstats_open(struct cb_taskstats_sock **out);
void cb_taskstats_close(struct cb_taskstats_sock *s);

/**
 * Stats of one task (tgid false: pid is a thread id) or of a whole thread
 * group, dead threads included (tgid true). -EPERM without CAP_NET_ADMIN,
 * -ESRCH when there is no such task, -ENOTSUP when the kernel predates
 * wpcopy accounting (version < 13).
 */
int cb_taskstats_query(struct cb_taskstats_sock *s, pid_t pid, bool tgid, struct cb_taskstats *out);

/**
 * 1 when the calling thread's COW copies are counted, 0 when they are not:
 * the kernel gives a task its delay-accounting record at fork only while
 * kernel.task_delayacct is 1, so a task born before it was switched on
 * reads 0 copies forever. Found out by making one COW copy (a short-lived
 * child holds the page); cached per thread. -errno when it cannot tell.
 */
int cb_taskstats_self_accounted(struct cb_taskstats_sock *s);

/** The final record of an exiting task (group: a whole thread group's, when it had threads). */
struct cb_taskstats_exit {
	pid_t pid;       /* the task (thread id), or the thread group id for a group record */
	pid_t tgid;      /* its thread group */
	pid_t ppid;      /* its parent process (0 in group records) */
	bool group;
	struct cb_taskstats ts;
};

/**
 * A socket on which the kernel sends the final stats of every task that
 * exits on any CPU, so a process's last copies are not lost when it is
 * reaped between two looks. CAP_NET_ADMIN.
 */
int cb_taskstats_listen(struct cb_taskstats_sock **out);
/** The exit records received so far, without blocking: up to max; the count or -errno. */
int cb_taskstats_exits(struct cb_taskstats_sock *s, struct cb_taskstats_exit *out, int max);
/** The socket's descriptor, to poll(2) for exit records between two reads. */
int cb_taskstats_fd(const struct cb_taskstats_sock *s);
/** How often the kernel dropped exit records since listening (the receive buffer was full). */
unsigned long cb_taskstats_overruns(const struct cb_taskstats_sock *s);

/**
 * 1 when delay accounting is on, 0 when off, -errno when the sysctl is absent/unreadable.
 * When it is on because another live cowbench run turned it on (cowbench/sysctl.h journal),
 * this process joins that override, so it is not switched off under us while we run.
 */
int cb_delayacct_enabled(void);
/** Turn delay accounting on for this process's life (restored by cb_sysctl_restore_all). */
int cb_delayacct_enable(void);

#endif
