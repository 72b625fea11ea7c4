#ifndef COWBENCH_SYSCTL_H
#define COWBENCH_SYSCTL_H

#include <stddef.h>

/*
 * Reading and temporarily changing sysctls (e.g. vm.cow_precopy,
 * kernel.task_delayacct, vm.nr_hugepages). Every change is journaled
 * with its original value and owner PIDs in CB_SYSCTL_JOURNAL_DIR (a
 * tmpfs: a reboot clears it), shared by concurrent cowbench runs under a
 * lock: the last owner restores the original, and any later cowbench puts
 * back what a dead run (SIGKILL, OOM kill) left. cb_sysctl_restore_all()
 * is async-signal-safe so a signal handler can call it.
 */

/*
 * The keys: the only sysctls cowbench changes (cb_sysctl_known). The
 * library owns their names; the modules that set them (taskstats, hugepage,
 * cowstats) and the CLI use these.
 */
#define CB_DELAYACCT_SYSCTL     "/proc/sys/kernel/task_delayacct"
#define CB_NR_HUGEPAGES_SYSCTL  "/proc/sys/vm/nr_hugepages"
#define CB_OVERCOMMIT_SYSCTL    "/proc/sys/vm/overcommit_memory"
#define CB_PRECOPY_SYSCTL       "/proc/sys/vm/cow_precopy"       /* the pre-copy series' */
#define CB_PRECOPY_DEPTH_SYSCTL "/proc/sys/vm/cow_precopy_depth"
#define CB_PRECOPY_BATCH_SYSCTL "/proc/sys/vm/cow_precopy_batch"
#define CB_REUSE_AROUND_SYSCTL  "/proc/sys/vm/cow_reuse_around" /* patch 5's fault-around window */

/** Where the journal lives (COWBENCH_RUN_DIR overrides it, for tests). */
#define CB_SYSCTL_JOURNAL_DIR "/run/cowbench"

/**
 * The most processes one journaled setting can have as owners at once (a
 * node's Slurm shards and runs together); one more is refused with -EUSERS.
 */
#define CB_SYSCTL_MAX_OWNERS 256

/**
 * Whether path is a sysctl cowbench (and its tools: analysis/redis/redis_load) may change: the journal's
 * known keys (kernel.task_delayacct, vm.nr_hugepages, vm.overcommit_memory and the pre-copy
 * series' vm.cow_precopy, vm.cow_precopy_depth, vm.cow_precopy_batch). Nothing else is written.
 */
int cb_sysctl_known(const char *path);
/** Read an integer sysctl file; -ENOENT when absent, CB_EFORMAT when not a number. */
int cb_sysctl_read_long(const char *path, long *value);
/** Write an integer to a sysctl file; -errno (-EACCES/-EPERM without root). */
int cb_sysctl_write_long(const char *path, long value);
/**
 * Set path to value for this process's lifetime, journaling the original.
 * When another live cowbench holds path at the same value, this process
 * becomes a co-owner; at another value: -EBUSY (nothing changed); with
 * CB_SYSCTL_MAX_OWNERS owners already: -EUSERS (nothing changed).
 * Returns 0 or -errno.
 */
int cb_sysctl_override(const char *path, long value);
/** As cb_sysctl_override, but for a floor (vm.nr_hugepages): shares a higher value, raises a lower one. */
int cb_sysctl_raise(const char *path, long value);
/**
 * After cb_sysctl_share(): become a co-owner of a journaled override of path (another run's, live
 * or dying), so it stays while this process runs and is restored when the last owner ends:
 * 1 if joined. Without cb_sysctl_share() (cowbench info), nothing is joined.
 */
int cb_sysctl_join(const char *path);
/** This process measures: let cb_sysctl_join (and cb_delayacct_enabled) join overrides. */
void cb_sysctl_share(void);
/** Release this process's overrides; the last owner puts the original back. Async-signal-safe. */
void cb_sysctl_restore_all(void);

/** An override put back because every process holding it had died. */
struct cb_sysctl_stale {
	char path[128];
	long value, original; /* value found, value restored */
	long pid;             /* the (last) dead owner */
};
/** Restore what dead runs left (needs write access to the journal); the number restored. */
int cb_sysctl_recover(struct cb_sysctl_stale *restored, size_t max);

/** A journaled override, for cowbench info. */
struct cb_sysctl_held {
	char path[128];
	long value, original;
	long pid;  /* first owner */
	int live;  /* owners still running; 0: stale (a dead run left it) */
};
/** The journal's overrides (read-only): count, or -errno. */
int cb_sysctl_overrides(struct cb_sysctl_held *out, size_t max);

#endif
