#ifndef COWBENCH_PROJECT_H
#define COWBENCH_PROJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cowbench/report.h>

/*
 * Native projection of an emulated (QEMU TCG) cell. A COW writer's runtime is
 * modelled from its exact counts and per-page unit costs of the machine:
 *
 *   T = first + (writes - 1) * write + (faults - 1) * (fault - write) + precopied * batch
 *
 * first: a fresh writer's first write after the fork, from the start of its
 * timed window (first_ns): a COW fault on cold caches and TLB with the run's
 * fixed costs (the loop's first touch of its code); write: a write to an
 * already-private page (fork=0); fault: a COW write fault with its write
 * (fork=1, break=fault, no pre-copy), both steady, their rows' first writes
 * left out; batch: the cost of one page the kernel copied ahead inside a
 * fault. faults counts the loop's own (at most one per write). Rows without
 * first_ns (older files) give no first: then T = writes * write + faults *
 * (fault - write) + precopied * batch, every cost per page. The units come from the
 * seq rows of one boot: fork=1,0 x break=fault,populate (cowbench run
 * --break). Natively batch is not measured: it lies between a hot 4 KiB
 * memcpy (pure copy, memcpy_ns) and the trap-free COW break of
 * MADV_POPULATE_WRITE (populate), and the guest's own batch/populate ratio,
 * applied to the native populate cost, is the central estimate.
 */

/** Per-page unit costs (ns) of one machine; NAN where not measured. */
struct cb_units {
	double write_ns;    /* private write: seq fork=0 break=fault, (elapsed_ns - first_ns) / (touched - 1) */
	double fault_ns;    /* COW write fault with its write: seq fork=1 break=fault, the same */
	double first_ns;    /* a fresh writer's first write, fixed costs included: first_ns of those fork=1 rows */
	double populate_ns; /* trap-free COW break: (break_ns of fork=1 - of fork=0, populate) / pages */
	double copy_ns;     /* hot 4 KiB memcpy: memcpy_ns */
	double batch_ns;    /* kernel time per pre-copied page: precopy_ns / precopy_success (patched kernel) */
	unsigned n_write, n_fault, n_first, n_populate; /* reps behind each (medians over them) */
};

/** A cell's exact counts, means over its reps. */
struct cb_counts {
	double writes;    /* touched */
	double faults;    /* the writer's COW faults: wpcopy_count, else cow_faults, else its minor faults */
	double precopied; /* pages copied ahead: precopy_success (0 without pre-copy) */
	double elapsed_ns; /* measured runtime (mean elapsed_ns), for validation */
	double elapsed_centre_ns; /* the engine's centre over the same timed reps (cb_estimate) */
	double elapsed_lo_ns, elapsed_hi_ns; /* its interval (cb_estimate; NAN below 2 reps) */
	unsigned reps;     /* timed reps */
};

/** Low, central and high value of a projection (low <= central <= high). */
struct cb_range {
	double lo, mid, hi;
};

/**
 * Unit costs from rows: timed, ok rows of workload seq with no pre-copy
 * (precopy empty or 0) of the given boot (NULL: any) and size. Each unit is
 * the median over its reps; batch_ns is the ratio of sums over every row of
 * the boot with precopy_success > 0; first_ns is NAN unless every fault row
 * carries first_ns. -ENOENT when the fault or the write unit has no rep.
 */
int cb_units_from_rows(const struct cb_row *rows, size_t n, const char *boot, int64_t size_bytes,
		       struct cb_units *u);

/**
 * The fixed term for one cell: first_ns's median over the unit rows (as
 * cb_units_from_rows) whose cell key names the same probes as CELL (a rep's
 * probes run just before its timed window and change what its first write
 * costs: under TCG 10-25 us of 40-70). -ENOENT when no such row, or not every
 * fault row of them carries first_ns; -ENOMEM.
 */
int cb_units_first_like(const struct cb_row *rows, size_t n, const char *boot, int64_t size_bytes,
			const char *cell, double *first_ns, unsigned *n_first);

/**
 * Counts of a group of rows (one cell of one boot): each count the mean over
 * the ok rows that have it (evidence reps too: counts are exact there), the
 * runtime (mean and median) over timed rows only. -ENOENT without writes,
 * faults or a timed rep; -ENOMEM.
 */
int cb_counts_from_rows(const struct cb_row *const *rows, size_t n, struct cb_counts *c);

/**
 * The model's runtime (ns) of counts c with units u and batch cost batch_ns
 * per pre-copied page; faults capped at writes; with u->first_ns the first
 * write is priced at it (see above).
 */
double cb_project_ns(const struct cb_units *u, const struct cb_counts *c, double batch_ns);

/**
 * Native batch cost per page: lo = native copy_ns, hi = native populate_ns,
 * mid = native populate_ns * (guest batch_ns / guest populate_ns), the ratio
 * clamped into [lo/hi, 1]; mid = hi where the guest ratio is unknown.
 * -EINVAL when the native populate or copy cost is missing or not positive.
 */
int cb_project_batch(const struct cb_units *native, const struct cb_units *guest, struct cb_range *batch);

/**
 * Native runtime of counts c: cb_project_ns at each batch cost of
 * cb_project_batch (monotone in it, so lo <= mid <= hi). -EINVAL as there.
 */
int cb_project_native(const struct cb_units *native, const struct cb_units *guest, const struct cb_counts *c,
		      struct cb_range *ns);

/**
 * Projected native change of a mode against its pre-copy-off twin, as a
 * fraction (-0.2: 20 % faster), at each batch cost: (T(mode) / T(off)) - 1,
 * sorted lo <= hi. -EINVAL when a runtime is not positive.
 */
int cb_project_change(const struct cb_units *native, const struct cb_units *guest, const struct cb_counts *mode,
		      const struct cb_counts *off, struct cb_range *change);

/** (predicted - measured) / measured for counts c under units u (batch at u->batch_ns); NAN when unknown. */
double cb_project_error(const struct cb_units *u, const struct cb_counts *c);

/** The same against another measured runtime (e.g. c->elapsed_centre_ns, the engine's centre). */
double cb_project_error_vs(const struct cb_units *u, const struct cb_counts *c, double measured_ns);

/**
 * Worst single stall natively (ns): one fault that copies pages pages, its
 * trap and first copy at (fault - write) and every further page at batch.
 */
double cb_project_stall_ns(const struct cb_units *native, double batch_ns, double pages);

/**
 * Per-fault histograms as the rows carry them (fault_pages_hist,
 * fault_path_hist: "N:COUNT;..."), summed over n texts: the label of the
 * bucket where the running count first reaches share q of the total (q = 1:
 * the largest bucket used), labels in numeric order, "inf" as INFINITY. NAN
 * when no text has a count; a malformed text is skipped.
 */
double cb_hist_text_quantile(const char *const *texts, size_t n, double q);

#endif
