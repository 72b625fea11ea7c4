#ifndef COWBENCH_ERROR_H
#define COWBENCH_ERROR_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Errors: every function returns 0 (or a count) on success and a negative
 * errno-style code on failure. The codes below extend errno for failures
 * that have no errno of their own; CB_ERRNO_MAP is the one list of them
 * (like libuv's UV_ERRNO_MAP): it generates the constants and the text
 * cb_strerror prints, so a code cannot exist without its message.
 */
#define CB_EBASE 10000

/* X(NAME, offset from CB_EBASE, message) */
#define CB_ERRNO_MAP(X)                                                                          \
	X(ECHILD, 1, "a child process failed")                                                   \
	X(EFORMAT, 2, "malformed input")                                                         \
	X(EREGISTRY, 3, "malformed workload table entry")                                        \
	X(EDELAYACCT, 50, "delay accounting is off (kernel.task_delayacct=0)")                   \
	X(ENOPFN, 51, "page frame numbers are hidden (pagemap needs root)")                      \
	X(EPREDATES, 52, "the process started before delay accounting was switched on")

enum {
#define CB_ERRNO_ENUM(name, off, msg) CB_##name = -(CB_EBASE + (off)),
	CB_ERRNO_MAP(CB_ERRNO_ENUM)
#undef CB_ERRNO_ENUM
};

/** Human text for a negative code from this library (or a plain -errno). */
const char *cb_strerror(int err);

/*
 * Row statuses: one taxonomy for every workload. The status column holds
 * exactly one of
 *   ok                     the repetition measured what it should
 *   unsupported:WHY        this kernel or machine cannot run it (exit 3)
 *   no-resource:WHY        hugetlb pages, memory or a permission was missing (exit 4)
 *   child-killed:SIGNAME   a child died of a signal, e.g. child-killed:SIGKILL (exit 1)
 *   child-exit:N           a child exited with N != 0 (exit 1)
 *   error:WHAT             anything else that went wrong (exit 1)
 */
enum cb_status_kind {
	CB_STATUS_OK = 0,
	CB_STATUS_UNSUPPORTED,
	CB_STATUS_NO_RESOURCE,
	CB_STATUS_CHILD_KILLED,
	CB_STATUS_CHILD_EXIT,
	CB_STATUS_ERROR,
};

/** The kind of a status text (unknown prefixes count as errors). */
enum cb_status_kind cb_status_kind(const char *status);

/*
 * Exit codes of the cowbench program (stress-ng style): 0 all ok,
 * 1 some repetition failed, 2 bad input, 3 unsupported here, 4 resource
 * unavailable. A run's code is the worst of its rows: 1 over 4 over 3.
 */
#define CB_EXIT_OK          0
#define CB_EXIT_FAILED      1
#define CB_EXIT_USAGE       2
#define CB_EXIT_UNSUPPORTED 3
#define CB_EXIT_NO_RESOURCE 4

/** The exit code one row's status asks for. */
int cb_status_exit_code(const char *status);
/** Combine two exit codes into the worse one (1 > 4 > 3 > 0). */
int cb_exit_code_worst(int a, int b);

/**
 * Reap pid (EINTR retried) into *wstatus. 0, or -errno when waitpid fails.
 * Every place that reaps a child calls this, then cb_status_from_wait.
 */
int cb_wait_status(pid_t pid, int *wstatus);
/**
 * Write how a reaped child ended into status: "ok", "child-killed:SIGNAME"
 * (SIGKILL, or SIG<number> for a signal without a name) or "child-exit:N".
 * Returns 0 for a clean exit, CB_ECHILD otherwise.
 */
int cb_status_from_wait(int wstatus, char *status, size_t len);

#endif
