#ifndef COWBENCH_INSTRUMENTATION_H
#define COWBENCH_INSTRUMENTATION_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * Instrumentation that is on system-wide and adds work to every fault a
 * benchmark takes, whoever turned it on: delay accounting (two clock reads
 * in every COW copy), perf events held open by other processes, and tracing
 * in tracefs (a tracer, enabled events, kprobes/uprobes). cowbench's timed
 * reps leave it as it is: this says what they then include.
 */

#define CB_INSTR_MAX_HOLDERS 4

struct cb_instrumentation {
	int delayacct;          /* kernel.task_delayacct: 1 on, 0 off, < 0 unreadable (-errno) */
	/* perf events open in other processes (/proc/PID/fd links to anon_inode:[perf_event]) */
	long perf_fds, perf_procs;
	pid_t perf_pid[CB_INSTR_MAX_HOLDERS]; /* the first holders */
	char perf_comm[CB_INSTR_MAX_HOLDERS][16];
	long procs_unreadable;  /* processes whose fds could not be read (not root): perf may hide there */
	/* tracefs: where, and what is on; tracefs[0] == '\0' when none was readable */
	char tracefs[96];
	int tracing_on;         /* tracing_on (-1: unreadable) */
	char tracer[32];        /* current_tracer ("nop": none) */
	long trace_events;      /* enabled events, every instance's set_event together */
	char first_event[64];
	long kprobes, uprobes;  /* lines of kprobe_events / uprobe_events */
};

/**
 * Look at proc_root (normally "/proc") and the tracefs mounts (tracefs_root,
 * or NULL for /sys/kernel/tracing then /sys/kernel/debug/tracing). Fills
 * what it can read; never fails.
 */
void cb_instrumentation_scan(struct cb_instrumentation *in, const char *proc_root, const char *tracefs_root);
/** Whether anything found adds work to a fault (tracing on with a tracer, events or probes; perf; delay accounting). */
bool cb_instrumentation_any(const struct cb_instrumentation *in);
/** Tracing that records something: tracing_on with a tracer other than nop, an event or a probe. */
bool cb_instrumentation_tracing(const struct cb_instrumentation *in);

#endif
