/*
 * cowbench run --explain: where the time of a COW fault went, in a few lines
 * for people. Every line says its statistic and its source; a share is only
 * ever a mean over a mean (the kernel's copy-path clocks give sums, hence
 * means), and never negative or above 100 %: when the inputs disagree the
 * line says so instead.
 */
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
#include <cowbench/repstats.h>
#include <cowbench/units.h>
#include <cowbench/results.h>

#include "trial/delayacct.h"
#include "run_cmd.h"
#include "explain_where.h"

/* Per-rep values of one column, for medians over reps. */
struct series {
	double *v;
	size_t n, cap;
};

/* Sums over reps, for means over every write or copy. */
struct total {
	double sum, count;
	size_t reps;
};

enum { S_COPIES, S_REUSES, S_SHARED, S_WPCOPY, S_COWFAULTS, S_PRECOPIED, S_P50, S_P99, S_MEMCPY, S_MEMCPY_COLD, S_FAULTS,
       S_PD, S_SD, S_MINFLT, S_MAJFLT, S_CS, S_MIG, S_N };

struct cli_explain {
	char workload[32], writer[8], notes[96];
	int64_t size, pages, touched, fork;
	bool prefault;              /* run --prefault: the frames were touched before */
	size_t rows, failed, noted; /* rows: timed reps; noted: reps with evidence notes */
	size_t evidence_rows;       /* evidence reps: their counts are used, their times are not */
	struct series evidence_p50; /* the evidence reps' own p50: what their probes cost */
	struct series s[S_N];
	struct total write;      /* first-write latency: sum of (mean x writes), writes */
	struct total taskstats;  /* wpcopy_ns, wpcopy_count */
	struct total path, copy; /* /proc/cow_stats: path_ns_total and copy_ns_total over faults */
	struct total precopy;    /* precopy_ns over pages pre-copied */
};

struct cli_explain *cli_explain_new(void)
{
	return calloc(1, sizeof(struct cli_explain));
}

void cli_explain_free(struct cli_explain *ex)
{
	if (!ex)
		return;
	for (int i = 0; i < S_N; i++)
		free(ex->s[i].v);
	free(ex->evidence_p50.v);
	free(ex);
}

static void push(struct series *s, double v)
{
	if (isnan(v))
		return;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		double *nv = realloc(s->v, cap * sizeof(*nv));

		if (!nv)
			return; /* out of memory: this rep's value is left out of the median */
		s->v = nv;
		s->cap = cap;
	}
	s->v[s->n++] = v;
}

static double int_or_nan(int64_t v)
{
	return v == CB_NA ? NAN : (double)v;
}

/* A time of the loop: NaN for an evidence rep (cb_row_number leaves its times out). */
static double timed(const struct cb_row *row, const char *column)
{
	double v;

	return cb_row_number(row, column, &v) ? v : NAN;
}

static double delta(int64_t before, int64_t after)
{
	return before == CB_NA || after == CB_NA ? NAN : (double)(after - before);
}

static void add_total(struct total *t, double sum, double count)
{
	if (isnan(sum) || isnan(count) || count <= 0)
		return;
	t->sum += sum;
	t->count += count;
	t->reps++;
}

void cli_explain_add(struct cli_explain *ex, const struct cb_row *row)
{
	const double v[S_N] = {
		[S_COPIES] = int_or_nan(row->cow_copies), [S_REUSES] = int_or_nan(row->cow_reuses),
		[S_SHARED] = int_or_nan(row->cow_shared), [S_WPCOPY] = int_or_nan(row->wpcopy_count),
		[S_COWFAULTS] = int_or_nan(row->cow_faults), [S_PRECOPIED] = int_or_nan(row->precopy_success),
		[S_P50] = timed(row, "lat_p50_ns"), [S_P99] = timed(row, "lat_p99_ns"),
		[S_MEMCPY] = timed(row, "memcpy_ns"), [S_MEMCPY_COLD] = timed(row, "memcpy_cold_ns"),
		[S_FAULTS] = int_or_nan(row->faults),
		[S_PD] = delta(row->private_dirty_kb_before, row->private_dirty_kb),
		[S_SD] = delta(row->snap_shared_dirty_kb_before, row->snap_shared_dirty_kb),
		[S_MINFLT] = int_or_nan(row->perf_minflt), [S_MAJFLT] = int_or_nan(row->perf_majflt),
		[S_CS] = int_or_nan(row->perf_cs), [S_MIG] = int_or_nan(row->perf_migrations),
	};

	if (!ex)
		return;
	if (strcmp(row->status, "ok") != 0) {
		ex->failed++;
		return;
	}
	snprintf(ex->workload, sizeof(ex->workload), "%s", row->workload);
	ex->prefault = row->prefault == 1;
	snprintf(ex->writer, sizeof(ex->writer), "%s", row->writer);
	ex->size = row->size_bytes;
	ex->pages = row->pages;
	ex->touched = row->touched;
	ex->fork = row->fork;
	if (cb_row_is_evidence(row)) {
		ex->evidence_rows++;
		push(&ex->evidence_p50, row->lat_p50_ns);
	} else {
		ex->rows++;
	}
	for (int i = 0; i < S_N; i++)
		push(&ex->s[i], v[i]);
	add_total(&ex->write, timed(row, "lat_mean_ns") * int_or_nan(row->touched), int_or_nan(row->touched));
	add_total(&ex->taskstats, int_or_nan(row->wpcopy_ns), int_or_nan(row->wpcopy_count));
	add_total(&ex->path, int_or_nan(row->cow_path_ns), int_or_nan(row->cow_faults));
	add_total(&ex->copy, int_or_nan(row->cow_copy_ns), int_or_nan(row->cow_faults));
	add_total(&ex->precopy, int_or_nan(row->precopy_ns), int_or_nan(row->precopy_success));
	if (row->evidence_notes[0]) {
		snprintf(ex->notes, sizeof(ex->notes), "%s", row->evidence_notes);
		ex->noted++;
	}
}

/* Median over reps; NaN when no rep measured it. */
static double med(const struct cli_explain *ex, int which)
{
	struct cb_summary sum;

	return ex->s[which].n && cb_summarize(ex->s[which].v, ex->s[which].n, &sum) == 0 ? sum.median : NAN;
}

static double mean_of(const struct total *t)
{
	return t->count > 0 ? t->sum / t->count : NAN;
}

/* The kernel's COW copies for this run: the writer's own (taskstats), else system-wide (cow_stats). */
static double kernel_copies(const struct cli_explain *ex, const char **source)
{
	*source = "taskstats, the writer's";
	if (ex->s[S_WPCOPY].n)
		return med(ex, S_WPCOPY);
	*source = "/proc/cow_stats, system-wide";
	return med(ex, S_COWFAULTS);
}

static void print_pages(const struct cli_explain *ex, FILE *fp)
{
	const char *src;
	double copies = kernel_copies(ex, &src), pre = med(ex, S_PRECOPIED);

	if (ex->s[S_COPIES].n) {
		fprintf(fp, "  pages:   %lld written; %.0f copied (new page frame), %.0f reused in place", (long long)ex->touched,
			med(ex, S_COPIES), med(ex, S_REUSES));
		if (ex->s[S_SHARED].n)
			fprintf(fp, ", %.0f still shared", med(ex, S_SHARED));
		fprintf(fp, " [pagemap; median of reps]\n");
	}
	if (!isnan(copies))
		fprintf(fp, "  kernel:  %.0f COW faults copied a page [%s; median of reps]\n", copies, src);
	cli_explain_where(fp, ex->s[S_COPIES].n ? med(ex, S_COPIES) : NAN, ex->s[S_WPCOPY].n ? med(ex, S_WPCOPY) : NAN,
			  ex->s[S_PRECOPIED].n ? med(ex, S_PRECOPIED) : NAN);
	if (!isnan(pre) && pre > 0 && ex->s[S_COWFAULTS].n) {
		double faults = med(ex, S_COWFAULTS), already = (double)ex->touched - faults;

		fprintf(fp, "  pre-copy: %.0f faults copied %.0f pages themselves and %.0f more ahead; "
			    "%.0f of %lld writes found their page already copied [/proc/cow_stats; median of reps]\n",
			faults, faults, pre, already > 0 ? already : 0, (long long)ex->touched);
		if (ex->precopy.count > 0)
			fprintf(fp, "            pre-copy took %s per page copied ahead [/proc/cow_stats; mean]\n",
				cb_fmt_ns((char[24]){ 0 }, 24, mean_of(&ex->precopy), cb_units_style_for(fp)));
	}
}

/*
 * A COW copy writes a page the kernel has just taken off its free lists.
 * Where the host backs guest memory lazily, that first write traps into the
 * host, and the trap sits inside the copy path: memcpy_cold_ns (the same
 * copy into a freshly populated page) less memcpy_ns (into a written one)
 * prices it, measured in the same run. Said where it is split, and why not.
 */
static void print_first_touch(const struct cli_explain *ex, FILE *fp, double kpath)
{
	enum cb_units_style st = cb_units_style_for(fp);
	double warm = med(ex, S_MEMCPY), cold = med(ex, S_MEMCPY_COLD), touch = cold - warm;
	char a[24], pct[16];

	if (isnan(cold) || isnan(warm)) {
		fprintf(fp, "    the copy path's first-touch share is not split: these rows have no memcpy_cold_ns\n");
		return;
	}
	if (ex->prefault) {
		fprintf(fp, "    the frames were touched before each rep (--prefault): no host first touch in the copy path\n");
		return;
	}
	if (!(touch > 3 * warm && touch > 1000)) {
		fprintf(fp, "    %*s  a first write to a freshly populated page: no host share in the copy path here\n",
			cb_pad_width(cb_fmt_ns(a, sizeof(a), cold, st), 9), a);
		return;
	}
	if (touch >= kpath)
		fprintf(fp, "    %*s    of which the host's first touch of the new page, at least all of it (a first write\n"
			    "             to a freshly populated page less a warm copy: the host backs memory lazily) [same run]\n",
			cb_pad_width(cb_fmt_ns(a, sizeof(a), touch, st), 9), a);
	else
		fprintf(fp, "    %*s    of which the host's first touch of the new page (%s of the path: a first write to a\n"
			    "             freshly populated page less a warm copy; the host backs memory lazily) [same run]\n",
			cb_pad_width(cb_fmt_ns(a, sizeof(a), touch, st), 9), a, cb_fmt_percent(pct, sizeof(pct), touch / kpath));
	fprintf(fp, "  => on this VM the copy path carries the host's first touch; run --prefault warms the frames first\n"
		    "     and gives the shape bare metal has (cowbench info: first touch)\n");
}

/*
 * The split of one faulting write, means over means. Returns false (after
 * saying why) when the inputs disagree, so no share is printed.
 */
static void print_split(const struct cli_explain *ex, FILE *fp)
{
	enum cb_units_style st = cb_units_style_for(fp);
	bool own = ex->path.count > 0; /* the cowbench kernel times path and copy itself */
	double write = mean_of(&ex->write), kpath = own ? mean_of(&ex->path) : mean_of(&ex->taskstats);
	double kcopy = own ? mean_of(&ex->copy) : NAN, mc = med(ex, S_MEMCPY);
	const char *src = own ? "/proc/cow_stats, system-wide" : "taskstats, the writer's";
	char a[24], b[24], c[24], pct[16];

	fprintf(fp, "  where a faulting write's time goes (means: the kernel's copy-path clock gives sums):\n");
	fprintf(fp, "    %*s  the whole write: trap, fault handling, return [user-space timing; mean]\n",
		cb_pad_width(cb_fmt_ns(a, sizeof(a), write, st), 9), a);
	if (isnan(kpath)) {
		fprintf(fp, "    the kernel copy path was not measured here (see the note below)\n");
		return;
	}
	if (!(kpath <= write) || kpath <= 0) {
		fprintf(fp, "    %*s  kernel copy path [%s; mean]\n", cb_pad_width(cb_fmt_ns(b, sizeof(b), kpath, st), 9), b,
			src);
		fprintf(fp, "  => inconsistent: the kernel copy path is longer than the whole write that contains it, so no\n"
			    "     share is given. The two clocks disagree: under emulation (QEMU TCG) both are emulated,\n"
			    "     or preemption fell inside the kernel's timing and not in the user-space one.\n");
		return;
	}
	fprintf(fp, "    %*s  kernel copy path: allocate, charge, copy, map (%s of the write) [%s; mean]\n",
		cb_pad_width(cb_fmt_ns(b, sizeof(b), kpath, st), 9), b, cb_fmt_percent(pct, sizeof(pct), kpath / write), src);
	if (!isnan(kcopy) && kcopy <= kpath)
		fprintf(fp, "    %*s    of which the copy itself (%s of the path) [%s; mean]\n",
			cb_pad_width(cb_fmt_ns(c, sizeof(c), kcopy, st), 9), c, cb_fmt_percent(pct, sizeof(pct), kcopy / kpath), src);
	else if (!isnan(kcopy))
		fprintf(fp, "    the copy itself (%s) exceeds its path: inconsistent counters, no share [%s]\n",
			cb_fmt_ns(c, sizeof(c), kcopy, st), src);
	fprintf(fp, "    %*s  the rest: trap entry/exit, page-table walk, TLB, preemption (%s)\n",
		cb_pad_width(cb_fmt_ns(c, sizeof(c), write - kpath, st), 9), c, cb_fmt_percent(pct, sizeof(pct), (write - kpath) / write));
	if (!isnan(mc))
		fprintf(fp, "    %*s  for scale: a 4 KiB memcpy in user space [same run; median of samples]\n",
			cb_pad_width(cb_fmt_ns(c, sizeof(c), mc, st), 9), c);
	print_first_touch(ex, fp, kpath);
	/* Outliers land in "the rest" of the mean: then no verdict on what a typical fault spends. */
	if (med(ex, S_P50) > 0 && write > 1.5 * med(ex, S_P50)) {
		fprintf(fp, "  => the kernel copy path is %s of a faulting write on average, but the mean write is %.1fx\n"
			    "     the median: outliers (preemption, interrupts) fill the rest, so no verdict on what a\n"
			    "     typical fault spends; pin with --cpu and run on a quiet machine\n",
			cb_fmt_percent(pct, sizeof(pct), kpath / write), write / med(ex, S_P50));
		return;
	}
	fprintf(fp, "  => the kernel copy path is %s of a faulting write on average: %s\n",
		cb_fmt_percent(pct, sizeof(pct), kpath / write),
		kpath >= write / 2 ? "the copy path (not only the copy) is the larger part here"
				   : "the trap and the work around the copy path are the larger part here");
}

/* Why there is no split: no fork, reuse, or pre-copy (most writes did not fault). */
static void print_no_split(const struct cli_explain *ex, FILE *fp, double copies)
{
	if (ex->fork == 0)
		fprintf(fp, "  no fork: the pages were private, no write copied (this is the baseline)\n");
	else if (med(ex, S_PRECOPIED) > 0)
		fprintf(fp, "  %.0f of %lld writes faulted (pre-copy did the rest): a write's time is not a fault's,\n"
			    "  so no per-fault split\n", copies, (long long)ex->touched);
	else if (!isnan(copies))
		fprintf(fp, "  %.0f of %lld writes copied (the others found their page private or reused it):\n"
			    "  no per-fault split\n", copies, (long long)ex->touched);
	else
		fprintf(fp, "  the kernel's copy count was not measured here: no per-fault split (see the note below)\n");
}

static void print_memory(const struct cli_explain *ex, FILE *fp)
{
	if (ex->s[S_PD].n) {
		fprintf(fp, "  memory:  writer Private_Dirty %+.0f kB", med(ex, S_PD));
		if (ex->s[S_SD].n)
			fprintf(fp, ", snapshot Shared_Dirty %+.0f kB", med(ex, S_SD));
		fprintf(fp, " [smaps_rollup; median of reps]\n");
	}
	if (ex->s[S_MINFLT].n)
		fprintf(fp, "  faults:  %.0f minor, %.0f major, %.0f context switches, %.0f migrations [perf; median of reps]\n",
			med(ex, S_MINFLT), med(ex, S_MAJFLT), med(ex, S_CS), med(ex, S_MIG));
	else if (ex->s[S_FAULTS].n)
		fprintf(fp, "  faults:  %.0f minor [getrusage; median of reps]\n", med(ex, S_FAULTS));
}

/* The evidence reps' times are left out above; what their probes cost a write is worth saying. */
static void print_evidence_cost(const struct cli_explain *ex, FILE *fp, enum cb_units_style st)
{
	struct cb_summary sum;
	char a[24], b[24];
	double e, t;

	if (!ex->evidence_p50.n || !ex->s[S_P50].n || cb_summarize(ex->evidence_p50.v, ex->evidence_p50.n, &sum) < 0)
		return;
	e = sum.median;
	t = med(ex, S_P50);
	fprintf(fp, "  probes:  p50 %s in the evidence reps against %s in the timed reps (%+.0f %%) [median of reps; "
		"delay accounting and perf counters on there]\n", cb_fmt_ns(a, sizeof(a), e, st),
		cb_fmt_ns(b, sizeof(b), t, st), 100.0 * (e / t - 1));
}

void cli_explain_print(const struct cli_explain *ex, FILE *fp)
{
	enum cb_units_style st = cb_units_style_for(fp);
	const char *src;
	char a[24], b[24], size[24];
	double copies;

	if (!ex)
		return;
	if (ex->rows + ex->evidence_rows == 0) {
		fprintf(fp, "cowbench: explain: no successful repetition to explain (%zu failed)\n", ex->failed);
		return;
	}
	copies = kernel_copies(ex, &src);
	fprintf(fp, "cowbench: explain: %s %s (%lld pages), %s writes%s, %zu reps", ex->workload,
		cb_fmt_bytes(size, sizeof(size), (double)ex->size), (long long)ex->pages, ex->writer,
		ex->fork ? " after fork" : " without fork (baseline)", ex->rows);
	if (ex->evidence_rows)
		fprintf(fp, " + %zu evidence rep%s (kernel counts; times from the timed reps)", ex->evidence_rows,
			ex->evidence_rows == 1 ? "" : "s");
	fputc('\n', fp);
	print_pages(ex, fp);
	if (ex->s[S_P50].n)
		fprintf(fp, "  writes:  p50 %s, p99 %s per first write [user-space timing; median of reps]\n",
			cb_fmt_ns(a, sizeof(a), med(ex, S_P50), st), cb_fmt_ns(b, sizeof(b), med(ex, S_P99), st));
	/* Split only where (nearly) every write faulted: otherwise the mean write is not a fault. */
	if (ex->fork && ex->touched > 0 && copies >= 0.95 * (double)ex->touched)
		print_split(ex, fp);
	else
		print_no_split(ex, fp, copies);
	print_memory(ex, fp);
	print_evidence_cost(ex, fp, st);
	if (ex->failed)
		fprintf(fp, "  %zu failed reps left out (their rows say how)\n", ex->failed);
	if (ex->notes[0] && ex->noted < ex->rows + ex->evidence_rows)
		fprintf(fp, "cowbench: note: not measured in %zu of %zu reps: %s (see docs/guide.md, \"Explaining COW on a stock kernel\")\n",
			ex->noted, ex->rows + ex->evidence_rows, ex->notes);
	else if (ex->notes[0])
		fprintf(fp, "cowbench: note: not measured: %s (see docs/guide.md, \"Explaining COW on a stock kernel\")\n",
			ex->notes);
	if (strstr(ex->notes, "delayacct-off") && cli_delayacct_holder()) {
		char why[256];

		fprintf(fp, "cowbench: note: %s; what that costs here: the kernel copy path's time and count, so no "
			    "per-fault split\n", cli_delayacct_off_why(why, sizeof(why)));
	}
}
