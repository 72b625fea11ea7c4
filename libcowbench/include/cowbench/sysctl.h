#ifndef COWBENCH_SYSCTL_H
#define COWBENCH_SYSCTL_H

/*
 * Reading and temporarily changing sysctls (e.g. vm.cow_precopy,
 * kernel.task_delayacct). Every change is remembered and undone by
 * cb_sysctl_restore_all(), which is async-signal-safe so a signal
 * handler can call it: cowbench leaves the system as it found it.
 */

/** Read an integer sysctl file; -ENOENT when absent, CB_EFORMAT when not a number. */
int cb_sysctl_read_long(const char *path, long *value);
/** Write an integer to a sysctl file; -errno (-EACCES/-EPERM without root). */
int cb_sysctl_write_long(const char *path, long value);
/**
 * Set path to value, remembering the value it had the first time this
 * path was overridden. Returns 0 or -errno (nothing changed then).
 */
int cb_sysctl_override(const char *path, long value);
/** Put back every overridden sysctl, newest first. Async-signal-safe. */
void cb_sysctl_restore_all(void);

#endif
