#ifndef COWBENCH_RUN_H
#define COWBENCH_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cowbench/clock.h>
#include <cowbench/params.h>
#include <cowbench/report.h>
#include <cowbench/stats.h>
#include <cowbench/touch.h>
#include <cowbench/workload.h>

/*
 * Where every first write of a page-order repetition goes, in write order,
 * when someone wants them all (cowbench run --samples): fn gets the rep
 * (0 for a warm-up), the pages written and each write's latency (ns).
 */
struct cb_sample_sink {
	void (*fn)(void *arg, int rep, const size_t *pages, const double *lat_ns, size_t n);
	void *arg;
};

/*
 * One measurement cell: a workload at one size and configuration. The
 * runner turns a spec into rows (one per repetition) and never prints:
 * output is the report writers' job.
 */
struct cb_run_spec {
	const struct cb_workload *workload;
	uint64_t size;             /* bytes, whole pages */
	size_t page_size;
	enum cb_writer writer;
	bool fork;
	enum cb_break brk;         /* page-order workloads: fault (default) or populate (cowbench/touch.h) */
	bool thp;
	int cpu;                   /* -1: no pinning */
	bool cpu_auto;             /* cpu was chosen as the quiet one (--pin=auto): rows leave `cpu` empty */
	uint64_t seed;
	const struct cb_clock *clock;
	int inject_child_signal;   /* test aid, see cb_touch_params */
	unsigned probes;           /* evidence probes to run (cowbench/evidence.h); 0: the default set */
	struct cb_wl_params params; /* the region: page type, NUMA placement */
	struct cb_wl_opts opts;     /* the workload's own options (its table, cowbench/option.h) */
	const struct cb_sample_sink *samples; /* NULL: per-write samples only as lat_hist */
	enum cb_rep_kind rep_kind;  /* timed: probes that add work in the fault path stay out (cb_probes_for_rep) */
	bool prefault;              /* before the rep, write and free twice the region's size of fresh memory, so
				       the frames its pages and COW copies take were touched (a lazily backed VM) */
};

/** Set spec->workload to w and its options to w's defaults. */
void cb_run_spec_set_workload(struct cb_run_spec *spec, const struct cb_workload *w);
/**
 * Set the workload option NAME to VALUE (NULL: a flag given alone).
 * -ENOENT when the workload has no such option, -EINVAL when the value does
 * not parse or is out of range; why[] gets one line either way.
 */
int cb_run_spec_set_option(struct cb_run_spec *spec, const char *name, const char *value, char *why, size_t len);
/**
 * Check a spec before anything runs: the region parameters, then the
 * workload's own check. 0, or a negative errno with one line in why[].
 */
int cb_run_spec_check(const struct cb_run_spec *spec, char *why, size_t len);

/** Copy a latency summary into the row's lat_* columns. */
void cb_row_set_latency(struct cb_row *row, const struct cb_lat_stats *st);

/** Fill the identity columns of a row from a spec (measurements left empty). */
void cb_row_init(struct cb_row *row, const struct cb_run_spec *spec, int rep);

/**
 * The self-driven workloads' columns: measurements empty, and for those
 * workloads the region's parameters (THP advice, hugetlb, NUMA) filled in.
 */
void cb_row_init_workload(struct cb_row *row, const struct cb_run_spec *spec);

/**
 * Measure one repetition into row. Returns 0 when the row is good,
 * CB_ECHILD when a child failed (row->status says how; the row is still
 * to be recorded) or another negative code for a failure before anything
 * was measured (row->status says that too).
 */
int cb_run_rep(const struct cb_run_spec *spec, int rep, struct cb_row *row);

/**
 * Whether the cell has evidence reps: a fork-and-touch workload whose
 * probes (not --probes=inline) include one that can add work inside the
 * fault path (CB_PROBES_FAULT_PATH). It depends on the options alone, never
 * on the system's state, so a plan, a resume and a rerun agree.
 */
bool cb_run_wants_evidence(const struct cb_run_spec *spec);
/**
 * cb_run_rep, but where taskstats is to count a parent writer's copies and
 * this process was born before delay accounting went on (the kernel never
 * counts such a process), in a fresh child that dies with this process
 * (PR_SET_PDEATHSIG) and sends its row back.
 */
int cb_run_rep_accounted(const struct cb_run_spec *spec, int rep, struct cb_row *row);
/** cb_run_rep_accounted as an evidence rep: every selected probe, rep_kind "evidence". */
int cb_run_evidence_rep(const struct cb_run_spec *spec, int rep, struct cb_row *row);

#endif
