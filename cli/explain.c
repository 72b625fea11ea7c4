/* cowbench run --explain: where the time of a COW fault went, in a few lines for people. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cowbench/cowbench.h>
#include <cowbench/evidence.h>
#include <cowbench/results.h>

#include "cli.h"

struct acc {
	double sum;
	size_t n;
};

struct cli_explain {
	char workload[32], writer[8], source[12], notes[96];
	int64_t pages, touched, fork;
	size_t rows, failed, evidence_rows; /* rows: timed reps that are ok */
	struct acc copies, reuses, shared, wpcopy, kmean, p50, mean, memcpy, faults;
	struct acc pd_delta, snap_sd_delta, minflt, majflt, cs, mig, cowstats;
	struct acc evidence_p50; /* the evidence reps' own p50: what their probes cost */
};

struct cli_explain *cli_explain_new(void)
{
	return calloc(1, sizeof(struct cli_explain));
}

void cli_explain_free(struct cli_explain *ex)
{
	free(ex);
}

static void add_int(struct acc *a, int64_t v)
{
	if (v != CB_NA) {
		a->sum += (double)v;
		a->n++;
	}
}

static void add_flt(struct acc *a, double v)
{
	if (!isnan(v)) {
		a->sum += v;
		a->n++;
	}
}

/* A time of the loop: from timed reps only (cb_row_number leaves an evidence rep's out). */
static void add_timed(struct acc *a, const struct cb_row *row, const char *column)
{
	double v;

	if (cb_row_number(row, column, &v))
		add_flt(a, v);
}

static void add_delta(struct acc *a, int64_t before, int64_t after)
{
	if (before != CB_NA && after != CB_NA)
		add_int(a, after - before);
}

void cli_explain_add(struct cli_explain *ex, const struct cb_row *row)
{
	if (!ex)
		return;
	if (strcmp(row->status, "ok") != 0) {
		ex->failed++;
		return;
	}
	snprintf(ex->workload, sizeof(ex->workload), "%s", row->workload);
	snprintf(ex->writer, sizeof(ex->writer), "%s", row->writer);
	ex->pages = row->pages;
	ex->touched = row->touched;
	ex->fork = row->fork;
	if (cb_row_is_evidence(row)) {
		ex->evidence_rows++;
		add_flt(&ex->evidence_p50, row->lat_p50_ns);
	} else {
		ex->rows++;
	}
	add_int(&ex->copies, row->cow_copies);
	add_int(&ex->reuses, row->cow_reuses);
	add_int(&ex->shared, row->cow_shared);
	add_int(&ex->wpcopy, row->wpcopy_count);
	add_int(&ex->cowstats, row->cow_faults);
	add_flt(&ex->kmean, row->kernel_copy_ns_mean);
	add_timed(&ex->p50, row, "lat_p50_ns");
	add_timed(&ex->mean, row, "lat_mean_ns");
	add_timed(&ex->memcpy, row, "memcpy_ns");
	add_int(&ex->faults, row->faults);
	add_delta(&ex->pd_delta, row->private_dirty_kb_before, row->private_dirty_kb);
	add_delta(&ex->snap_sd_delta, row->snap_shared_dirty_kb_before, row->snap_shared_dirty_kb);
	add_int(&ex->minflt, row->perf_minflt);
	add_int(&ex->majflt, row->perf_majflt);
	add_int(&ex->cs, row->perf_cs);
	add_int(&ex->mig, row->perf_migrations);
	if (row->kernel_copy_source[0])
		snprintf(ex->source, sizeof(ex->source), "%s", row->kernel_copy_source);
	if (row->evidence_notes[0])
		snprintf(ex->notes, sizeof(ex->notes), "%s", row->evidence_notes);
}

static bool have(const struct acc *a)
{
	return a->n > 0;
}

static double avg(const struct acc *a)
{
	return a->sum / (double)a->n;
}

/* The copy path's share of a fault, and what it leaves for the trap and page-table work. */
static void print_breakdown(const struct cli_explain *ex, FILE *fp)
{
	double k = avg(&ex->kmean), p50 = avg(&ex->p50);

	fprintf(fp, "  per fault: %.2f us p50, %.2f us mean (first writes timed in user space)\n", p50 / 1e3,
		have(&ex->mean) ? avg(&ex->mean) / 1e3 : NAN);
	fprintf(fp, "    %6.2f us  kernel copy path per copy [%s]: allocate a page, copy it, map it\n", k / 1e3,
		ex->source[0] ? ex->source : "?");
	if (have(&ex->memcpy))
		fprintf(fp, "    %6.2f us    of which a page's memcpy takes in user space\n", avg(&ex->memcpy) / 1e3);
	fprintf(fp, "    %6.2f us  remainder of the median fault: trap entry/exit, page-table and TLB work\n",
		(p50 - k) / 1e3);
	fprintf(fp, "  => the kernel copy path is %.0f%% of the median fault", 100.0 * k / p50);
	if (have(&ex->mean))
		fprintf(fp, " (%.0f%% of the mean, which outliers pull up)", 100.0 * k / avg(&ex->mean));
	fprintf(fp, ": %s\n", k >= p50 / 2 ? "copying dominates here" : "trap and page-table work dominate here");
}

/* The evidence reps' times are left out above; what their probes cost the fault is worth saying. */
static void print_evidence_cost(const struct cli_explain *ex, FILE *fp)
{
	if (!have(&ex->evidence_p50) || !have(&ex->p50))
		return;
	fprintf(fp, "  probes: the evidence reps (kernel counts above) ran at %.2f us p50, %+.0f%% against the timed "
		"reps' %.2f us\n", avg(&ex->evidence_p50) / 1e3, 100.0 * (avg(&ex->evidence_p50) / avg(&ex->p50) - 1),
		avg(&ex->p50) / 1e3);
}

/* Kernel copies per page written: about 1 when every write copied, about 0 without fork or on reuse. */
static double copies_per_write(const struct cli_explain *ex)
{
	double copies = have(&ex->wpcopy) ? avg(&ex->wpcopy) : have(&ex->copies) ? avg(&ex->copies) : NAN;

	return ex->touched > 0 ? copies / (double)ex->touched : NAN;
}

void cli_explain_print(const struct cli_explain *ex, FILE *fp)
{
	if (!ex)
		return;
	if (ex->rows + ex->evidence_rows == 0) {
		fprintf(fp, "cowbench: explain: no successful repetition to explain (%zu failed)\n", ex->failed);
		return;
	}
	fprintf(fp, "cowbench: explain: %s, %lld pages, %s writes%s, %zu reps", ex->workload, (long long)ex->pages,
		ex->writer, ex->fork ? " after fork" : " without fork (baseline)", ex->rows);
	if (ex->evidence_rows)
		fprintf(fp, " + %zu evidence rep%s", ex->evidence_rows, ex->evidence_rows == 1 ? "" : "s");
	fprintf(fp, " (means over reps)\n");
	if (have(&ex->copies)) {
		fprintf(fp, "  pages: %.0f copied (new page frame), %.0f reused in place", avg(&ex->copies),
			avg(&ex->reuses));
		if (have(&ex->shared))
			fprintf(fp, ", %.0f still shared", avg(&ex->shared));
		fprintf(fp, " [pagemap]\n");
	}
	if (have(&ex->wpcopy))
		fprintf(fp, "  kernel: %.0f COW copies counted by the kernel for the writer [taskstats]\n",
			avg(&ex->wpcopy));
	else if (have(&ex->cowstats))
		fprintf(fp, "  kernel: %.0f COW faults system-wide [/proc/cow_stats]\n", avg(&ex->cowstats));
	if (have(&ex->kmean) && have(&ex->p50) && copies_per_write(ex) >= 0.5)
		print_breakdown(ex, fp);
	else if (have(&ex->kmean) && have(&ex->p50))
		fprintf(fp, "  per fault: %.2f us p50; few writes copied (pages private or reused): no copy-time split\n",
			avg(&ex->p50) / 1e3);
	else if (have(&ex->p50))
		fprintf(fp, "  per fault: %.2f us p50; kernel copy time not measured here\n", avg(&ex->p50) / 1e3);
	if (have(&ex->pd_delta)) {
		fprintf(fp, "  memory: writer Private_Dirty %+.0f kB", avg(&ex->pd_delta));
		if (have(&ex->snap_sd_delta))
			fprintf(fp, ", snapshot Shared_Dirty %+.0f kB", avg(&ex->snap_sd_delta));
		fprintf(fp, " [smaps_rollup]\n");
	}
	if (have(&ex->minflt))
		fprintf(fp, "  faults: %.0f minor, %.0f major, %.0f context switches, %.0f migrations [perf]\n",
			avg(&ex->minflt), avg(&ex->majflt), avg(&ex->cs), avg(&ex->mig));
	else if (have(&ex->faults))
		fprintf(fp, "  faults: %.0f minor [getrusage]\n", avg(&ex->faults));
	print_evidence_cost(ex, fp);
	if (ex->notes[0])
		fprintf(fp, "cowbench: note: not measured: %s (see README, \"Explaining COW on a stock kernel\")\n",
			ex->notes);
}

int cli_evidence_prepare(void)
{
	int on = cb_delayacct_enabled();

	if (on != 0 || geteuid() != 0)
		return 0; /* already on, absent, or not ours to change: the probe says why */
	cli_restore_sysctls_at_exit();
	return cb_delayacct_enable() == 0 ? 1 : 0;
}

void cli_evidence_info(void)
{
	static const char *const labels[CB_NPROBES] = {
		[CB_PROBE_TASKSTATS] = "taskstats:", [CB_PROBE_PAGEMAP] = "pagemap:",
		[CB_PROBE_SMAPS] = "smaps_rollup:", [CB_PROBE_PERF] = "perf counters:",
	};

	for (int p = 0; p < CB_NPROBES; p++) {
		char detail[160];

		cb_probe_check((enum cb_probe)p, detail, sizeof(detail));
		printf("%-22s %s\n", labels[p], detail);
	}
}
