#ifndef COWBENCH_WPFAULT_H
#define COWBENCH_WPFAULT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Write faults on present pages, machine-wide, from a stock x86 kernel:
 * the exceptions:page_fault_user tracepoint, filtered in the kernel to
 * error_code == 7 (present + write + user). Bare faults (no call chain, no
 * stack, every one) go through a BPF program on the tracepoint into one
 * ring buffer, far cheaper for the faulting program than a perf sample;
 * otherwise (or where the kernel refuses BPF, or COWBENCH_WPFAULT_NO_BPF
 * is set) through perf_event_open samples, one event per CPU, filtered by
 * the kernel when it accepts the filter, else in user space.
 * Such a fault is a COW copy or a reuse in place (the page was write
 * protected but nobody else maps it any more); pagemap tells the two
 * apart. Samples carry the process, the faulting address and, when asked,
 * the user call chain (frame pointers, as `perf record -g`). Fork and exit
 * records come along so a caller can follow a process tree, short-lived
 * children included. Needs root (the tracepoint id lives in tracefs, and
 * per-CPU events need CAP_PERFMON or kernel.perf_event_paranoid=-1; the
 * BPF program CAP_BPF too, else perf samples carry the faults).
 */

/* error_code bits (arch/x86/include/asm/trap_pf.h) */
#define CB_PF_PROT  1u
#define CB_PF_WRITE 2u
#define CB_PF_USER  4u
#define CB_PF_WRITE_ON_PRESENT (CB_PF_PROT | CB_PF_WRITE | CB_PF_USER)

#define CB_WPFAULT_MAX_CHAIN 128
#define CB_WPFAULT_NREGS 17 /* user registers sampled with the stack: ax bx cx dx si di bp sp ip r8..r15 */

struct cb_wpfault_sample {
	pid_t pid, tid;
	uint64_t time_ns;          /* CLOCK_MONOTONIC */
	uint64_t addr, ip, error_code;
	uint32_t nchain;           /* user frames, innermost first (0 without callchains) */
	const uint64_t *chain;
	bool have_regs;            /* uregs and the stack copy are there (stack_bytes asked, a user context) */
	uint64_t uregs[CB_WPFAULT_NREGS];
	const unsigned char *stack; /* a copy of the user stack from uregs' sp up */
	uint64_t stack_size;
};

enum cb_wpfault_task_kind { CB_WPFAULT_FORK, CB_WPFAULT_EXIT, CB_WPFAULT_EXEC };

/* A process or thread created, gone or given a new program (PERF_RECORD_FORK/EXIT/COMM exec). */
struct cb_wpfault_task {
	enum cb_wpfault_task_kind kind;
	pid_t pid, ppid, tid;
	uint64_t time_ns;          /* CLOCK_MONOTONIC */
};

struct cb_wpfault_opts {
	unsigned period;           /* record every Nth fault per CPU (1: every one) */
	bool callchain;            /* with the user call chain of each sample */
	unsigned stack_bytes;      /* with the user registers and this much user stack (DWARF unwinding), 0: none */
};

struct cb_wpfault_handler {
	void (*sample)(void *arg, const struct cb_wpfault_sample *s);
	void (*task)(void *arg, const struct cb_wpfault_task *t);
	void *arg;
};

struct cb_wpfault;

/**
 * Start recording on every online CPU. -EACCES/-EPERM when not permitted
 * (see cb_wpfault_advice), -ENOENT when the kernel has no such tracepoint
 * (not x86, or tracefs cannot be mounted).
 */
int cb_wpfault_open(const struct cb_wpfault_opts *o, struct cb_wpfault **out);
/** Hand every record received so far to h, oldest first per CPU; the count of samples. */
long cb_wpfault_drain(struct cb_wpfault *w, const struct cb_wpfault_handler *h);
/**
 * Up to max file descriptors that poll readable (POLLIN) as soon as a
 * process forks or exits on some CPU, for a caller that wants to
 * drain then (a fork's page map read before the process can exit) rather
 * than at its next timed drain; cb_wpfault_drain re-arms them. Their count:
 * 0 where the kernel has no software dummy event.
 */
int cb_wpfault_task_fds(const struct cb_wpfault *w, int *fds, int max);
/** Samples the kernel dropped because a buffer was full. */
uint64_t cb_wpfault_lost(const struct cb_wpfault *w);
void cb_wpfault_close(struct cb_wpfault *w);
/** One line saying what to change after cb_wpfault_open failed with err (static storage). */
const char *cb_wpfault_advice(int err);

/** Parse a tracepoint format file: offsets of address, ip and error_code. CB_EFORMAT when absent. */
int cb_wpfault_parse_format(const char *text, unsigned *off_addr, unsigned *off_ip, unsigned *off_err);

#endif
