#ifndef COWBENCH_NOISE_H
#define COWBENCH_NOISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * What else the machine did during a rep: the per-rep noise columns
 * (steal_ns, nivcsw, runq, migrations, writer_cpu, run_delay_ns, ref_ns) and the choice
 * of a quiet CPU for the writer. Everything here is read around a rep, never
 * inside the timed loop.
 */

struct cb_row;

/** System-wide counters read before and after a rep (/proc/stat). */
struct cb_sys_sample {
	bool ok;
	uint64_t steal_ticks;   /* "cpu" line, steal column (USER_HZ ticks, all CPUs) */
	long procs_running;     /* runnable tasks at the moment of the read, this one included */
};

/** Read /proc/stat (or the file at path when not NULL, for tests). */
int cb_sys_sample_read(const char *path, struct cb_sys_sample *s);

/** Fill steal_ns (delta) and runq (the larger of the two reads) of row. */
void cb_sys_sample_fill_row(const struct cb_sys_sample *before, const struct cb_sys_sample *after,
			    struct cb_row *row);

/** The calling thread's se.nr_migrations (/proc/thread-self/sched); -1 when not available. */
long cb_thread_migrations(void);

/**
 * The calling thread's time spent runnable but waiting for a CPU, in ns
 * (/proc/thread-self/schedstat, second field: run_delay; needs
 * CONFIG_SCHED_INFO, which distribution kernels have); -1 when not
 * available. The direct measure of "a co-runner had the CPU".
 */
int64_t cb_thread_run_delay_ns(void);

/**
 * The machine-speed probe behind ref_ns: the wall time (ns) of a fixed
 * reference workload, CB_REF_COPIES copies of 4 KiB between the halves of a
 * CB_REF_BYTES buffer (beyond the L2 cache, like the copy of a COW fault).
 * The same work every call, so its time moves only with the machine: host
 * tenants, frequency, co-runners. The buffer is mapped and pre-faulted on
 * a process's first call and kept out of its children (MADV_DONTFORK), so
 * a call never faults after the first one in a process, also after a fork.
 * Run it around a rep, never inside a timed window. -1 when the buffer
 * cannot be mapped.
 */
#define CB_REF_BYTES (4u << 20)
#define CB_REF_COPIES 1024u
int64_t cb_ref_probe_ns(void);

/** Per-CPU busy ticks (all but idle and iowait) from /proc/stat (or path); returns CPUs read, <0 on error. */
int cb_cpu_busy_ticks(const char *path, uint64_t *busy, int max_cpus);

/**
 * The allowed CPU that was least busy over `sample_ms` milliseconds (CPU 0
 * avoided on ties: it takes most interrupts); -1 when the process may run
 * on one CPU only or /proc/stat cannot be read.
 */
int cb_quiet_cpu(unsigned sample_ms);

struct cb_row_group;

/**
 * Explain a noisy cell: what co-varied with the metric's odd reps (Tukey
 * outliers more than CB_NOISY_CV from the median, else the smaller side of
 * the widest gap between values) or with
 * the metric itself: steal_ns, nivcsw, migrations, runq, run_delay_ns, ref_ns (a slow
 * machine, judged by a Mann-Whitney test or a rank correlation), writer_cpu, the rep
 * number, the other groups of peers[0..npeers) that ran in the same rounds
 * (the round column of an interleaved matrix, in the same boot: their metric
 * or elapsed_ns rising and falling with g's; peers may include g, and may be
 * NULL), and stretches of consecutive reps. One line into buf ("the 2 odd
 * reps had 40.0x the steal time (...)"). Returns 1 when a cause was found,
 * 0 when none (buf says so), -ENOMEM.
 */
int cb_noise_explain(const struct cb_row_group *g, const struct cb_row_group *peers, size_t npeers,
		     const char *metric, char *buf, size_t len);

#endif
