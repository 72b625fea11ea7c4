#ifndef COWBENCH_EVIDENCE_H
#define COWBENCH_EVIDENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cowbench/error.h>
#include <cowbench/pagemap.h>
#include <cowbench/perfcount.h>
#include <cowbench/report.h>
#include <cowbench/smaps.h>
#include <cowbench/taskstats.h>
#include <cowbench/touch.h>

/*
 * Evidence of what a touch did, from a stock kernel: taskstats (COW
 * copies and time in the kernel copy path), pagemap (copied vs reused
 * frames), smaps_rollup (private/shared dirty) and perf software
 * counters. It plugs into cb_touch_run as hooks: everything is read
 * before the writer is released and after it finished, never inside
 * the timed loop. Each probe that cannot run leaves its cells empty
 * and says why in a short note.
 */

enum cb_probe { CB_PROBE_TASKSTATS = 0, CB_PROBE_PAGEMAP, CB_PROBE_SMAPS, CB_PROBE_PERF, CB_NPROBES };

struct cb_evidence {
	/* Set by the caller before the touch. */
	size_t page_size;
	const size_t *touched;  /* page indices the writer writes (NULL: all) */
	size_t ntouched;
	bool disabled[CB_NPROBES];

	/* Results: err[p] is 0 when probe p measured, else why not. */
	int err[CB_NPROBES];
	struct cb_taskstats ts_before, ts_after;
	struct cb_pagemap_diff pm;
	struct cb_smaps w_before, w_after, s_before, s_after;
	bool have_snapshot_smaps;
	int64_t perf[CB_PERF_NCOUNTERS];

	/* Private state between the hooks. */
	struct cb_taskstats_sock *ts_sock;
	uint64_t *pm_before;
	size_t pm_pages;
	struct cb_perfcount perfc;
	bool perf_open;
	bool after_ran;         /* the writer finished and was looked at: results are whole */
	int self_accounted;     /* cb_taskstats_self_accounted() of the caller, found before the region exists */
};

/** Prepare ev (all probes on); fill page_size/touched afterwards. */
void cb_evidence_init(struct cb_evidence *ev, size_t page_size, const size_t *touched, size_t ntouched);
/*
 * Probe sets: bits (1 << enum cb_probe). perf is not in the default set:
 * a software counter on the writer adds a little to every fault it counts
 * (about 4 % of a COW fault here, bench_overhead), while the others read only around the loop.
 */
#define CB_PROBES_DEFAULT ((1u << CB_PROBE_TASKSTATS) | (1u << CB_PROBE_PAGEMAP) | (1u << CB_PROBE_SMAPS))
#define CB_PROBES_NONE (1u << 31)
#define CB_PROBES_ALL ((1u << CB_NPROBES) - 1)
/*
 * --probes=inline: every selected probe inside the timed reps, no evidence
 * reps (latencies then include delay accounting's and perf's work per fault).
 */
#define CB_PROBES_INLINE (1u << 30)
/* Probes that can add work inside the fault path: a cell selecting one has an evidence rep. */
#define CB_PROBES_FAULT_PATH ((1u << CB_PROBE_TASKSTATS) | (1u << CB_PROBE_PERF))
/**
 * The selected probes (0: the default set) that add work inside the fault
 * path as the system is now: perf (a counter on every fault) and taskstats
 * while kernel.task_delayacct is off (it must go on, and then reads the
 * clock in every COW copy). Pagemap and smaps read only around the loop.
 */
unsigned cb_probes_intrusive(unsigned probes);
/** The probes a rep of this kind runs: timed reps leave the intrusive ones out, unless inline. */
unsigned cb_probes_for_rep(unsigned probes, enum cb_rep_kind kind);
/** Run only these probes (0: CB_PROBES_DEFAULT). */
void cb_evidence_select(struct cb_evidence *ev, unsigned probes);
/**
 * "none", or a comma list of taskstats, pagemap, smaps, perf, all, default
 * and inline (inline alone: the default set, inline). -EINVAL otherwise.
 */
int cb_probes_parse(const char *text, unsigned *out);
/** The hooks to put in cb_touch_params.hooks (arg = ev). */
void cb_evidence_hooks(struct cb_evidence *ev, struct cb_touch_hooks *hooks);
/** Write the measured cells and the notes into row (cells of failed probes stay empty). */
void cb_evidence_fill_row(const struct cb_evidence *ev, struct cb_row *row);
void cb_evidence_free(struct cb_evidence *ev);
/** Mark the evidence cells of a fresh row "not measured". */
void cb_evidence_row_init(struct cb_row *row);
/**
 * kernel_copy_ns_mean from taskstats (wpcopy_ns/wpcopy_count), else from
 * /proc/cow_stats (cow_copy_ns/cow_faults), naming the source.
 */
void cb_evidence_fill_copy_mean(struct cb_row *row);

const char *cb_probe_name(enum cb_probe p);
/**
 * Can probe p measure here, for this process? 0 when it can, else the code
 * cells would be empty for (its reason: cb_probe_reason). detail gets a
 * short human line either way.
 */
int cb_probe_check(enum cb_probe p, char *detail, size_t len);
/** Short reason a probe did not measure: "needs-root", "delayacct-off", "not-supported", ... */
const char *cb_probe_reason(enum cb_probe p, int err);

/* Not-measured markers beyond errno (CB_EDELAYACCT, CB_ENOPFN, CB_EPREDATES) live in error.h. */

#endif
