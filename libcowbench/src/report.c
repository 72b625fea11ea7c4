#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <stdlib.h>

#include <cowbench/report.h>
#include <cowbench/units.h>

#include "out_cell.h"

/* Each entry: name, help, then .flags and, for the table people read, .view = VIEW(...). */
#define INT(col, h, ...) { .name = #col, .type = CB_COL_INT, .offset = offsetof(struct cb_row, col), .help = h, __VA_ARGS__ }
#define FLT(col, dec, h, ...) \
	{ .name = #col, .type = CB_COL_FLOAT, .offset = offsetof(struct cb_row, col), .decimals = dec, .help = h, __VA_ARGS__ }
#define STR(col, h, ...) { .name = #col, .type = CB_COL_STR, .offset = offsetof(struct cb_row, col), .help = h, __VA_ARGS__ }
#define ID CB_COL_IDENTITY
#define LEGACY_ID CB_COL_IDENTITY_LEGACY
#define TIMED CB_COL_TIMED
#define LOWER CB_COL_LOWER_BETTER
#define SHOWN CB_COL_SHOWN
#define SIGNED CB_COL_SIGNED
/* The table: its position, priority on a narrow terminal (0: always shown), unit and header. */
#define VIEW(pos, prio, kind, label) { pos, prio, CB_KIND_##kind, label }

static const struct cb_column columns[] = {
	INT(schema, "CSV schema version of this row"),
	STR(workload, "workload name (cowbench list)", .flags = ID, .view = VIEW(1, 0, TEXT, "workload")),
	INT(size_bytes, "region size in bytes, rounded up to whole pages", .flags = ID, .view = VIEW(2, 0, BYTES, "size")),
	INT(pages, "pages in the region"),
	INT(touched, "pages the writer wrote (one word each)"),
	STR(writer, "which side writes after the fork: child or parent", .flags = ID, .view = VIEW(3, 3, TEXT, "writer")),
	INT(fork, "1: pages shared by fork (COW); 0: the --no-fork baseline on private pages", .flags = ID, .view = VIEW(4, 0, COUNT, "fork")),
	INT(rep, "repetition number, 1-based (warm-up repetitions are not written)", .flags = SHOWN, .view = VIEW(9, 0, COUNT, "rep")),
	STR(status, "ok, unsupported:WHY, no-resource:WHY, child-killed:SIGNAME, child-exit:N or error:WHAT", .flags = SHOWN, .view = VIEW(11, 0, TEXT, "status")),
	INT(elapsed_ns, "wall time of the whole touch loop (ns)", .flags = TIMED | LOWER, .view = VIEW(12, 2, TIME_NS, "elapsed")),
	FLT(ns_per_page, 1, "elapsed_ns / touched", .flags = TIMED | LOWER),
	INT(faults, "writer's minor faults during the touch loop (getrusage delta)", .flags = LOWER, .view = VIEW(13, 4, COUNT, "faults")),
	FLT(lat_min_ns, 1, "fastest single first write (ns)", .flags = TIMED | LOWER),
	FLT(lat_mean_ns, 1, "mean first-write latency (ns)", .flags = TIMED | LOWER),
	FLT(lat_p50_ns, 1, "median first-write latency (ns, nearest rank)", .flags = TIMED | LOWER, .view = VIEW(14, 1, TIME_NS, "write p50")),
	FLT(lat_p90_ns, 1, "90th percentile first-write latency (ns)", .flags = TIMED | LOWER),
	FLT(lat_p99_ns, 1, "99th percentile first-write latency (ns)", .flags = TIMED | LOWER, .view = VIEW(15, 3, TIME_NS, "write p99")),
	FLT(lat_p999_ns, 1, "99.9th percentile first-write latency (ns)", .flags = TIMED | LOWER),
	FLT(lat_max_ns, 1, "slowest single first write (ns)", .flags = TIMED | LOWER, .view = VIEW(16, 6, TIME_NS, "write max")),
	FLT(memcpy_ns, 1, "median user-space memcpy of one page into a page written before (a warm copy), same run (ns)", .flags = TIMED | LOWER, .view = VIEW(17, 5, TIME_NS, "memcpy 4K")),
	INT(cow_faults, "COW faults counted by /proc/cow_stats during the rep (patched kernel only)", .flags = LOWER, .view = VIEW(18, 4, COUNT, "cow_faults")),
	INT(cow_copy_ns, "kernel page-copy time from /proc/cow_stats during the rep (ns, patched kernel only)", .flags = LOWER),
	INT(precopy, "value of /proc/sys/vm/cow_precopy during the rep (patched kernel only)", .flags = ID),
	STR(thp, "transparent huge pages allowed on the region: on or off", .flags = ID),
	INT(cpu, "CPU the writer was pinned to (empty: not pinned)", .flags = ID),
	INT(seed, "seed of the page order (workloads that randomise)", .flags = ID),
	STR(clock, "time source: tsc or monotonic", .flags = ID),
	STR(kernel, "kernel release (uname -r)", .flags = ID),
	INT(precopy_depth, "value of /proc/sys/vm/cow_precopy_depth during the rep (patched kernel only)", .flags = ID),
	STR(thp_mode, "system THP mode (/sys/kernel/mm/transparent_hugepage/enabled)", .flags = CB_COL_REF, .width = 12),
	STR(host, "host name", .flags = CB_COL_REF, .width = 64),
	STR(cpu_model, "CPU model name"),
	STR(version, "cowbench version"),
	STR(git_revision, "git revision cowbench was built from", .flags = CB_COL_REF, .width = 24),
	STR(timestamp, "UTC time the rep finished (ISO 8601)", .flags = CB_COL_REF, .width = 24),
	STR(cell, "matrix cell: its axis settings as NAME=VALUE pairs separated by spaces (empty for cowbench run)", .view = VIEW(32, 0, TEXT, "cell")),
	STR(method, "snapshot: fork, fork-wait, uffd-wp, memcpy or none; fork: fork, vfork, posix_spawn or clone-vm; multi: split or all", .flags = LEGACY_ID, .view = VIEW(5, 0, TEXT, "method")),
	INT(threads, "snapshot: writer threads in the parent (--threads)", .flags = LEGACY_ID, .view = VIEW(6, 4, COUNT, "threads")),
	INT(checkpointers, "snapshot: copier threads (--checkpointers)", .flags = LEGACY_ID, .view = VIEW(7, 5, COUNT, "checkpointers")),
	INT(batch_bytes, "snapshot: bytes each copier copies (and, with fork, unmaps) at a time (--batch)", .flags = LEGACY_ID),
	INT(children, "multi: children forked from the same parent (--children)", .flags = LEGACY_ID, .view = VIEW(8, 4, COUNT, "children")),
	STR(thp_advice, "THP advice on the region: never, madvise or always (--thp)", .flags = ID),
	INT(hugetlb, "1: the region is 2 MiB hugetlb pages (--hugetlb)", .flags = ID),
	INT(huge_bytes, "bytes of the region backed by huge pages after populating (smaps AnonHugePages or *_Hugetlb)"),
	INT(dontfork_bytes, "fork: bytes of the region marked MADV_DONTFORK (--dontfork)", .flags = LEGACY_ID),
	INT(wipeonfork_bytes, "fork: bytes of the region marked MADV_WIPEONFORK (--wipeonfork)", .flags = LEGACY_ID),
	INT(numa_nodes, "NUMA nodes of the machine (1 node: placement options have nothing to choose)"),
	STR(numa_policy, "placement asked for: bind:, interleave:, cpu:, child-bind:, child-cpu: NODES (empty: none)", .flags = ID | CB_COL_REF, .width = 48),
	INT(writer_ns, "snapshot: wall time of the writer threads with the snapshot running (ns)", .flags = TIMED | LOWER, .view = VIEW(26, 2, TIME_NS, "writers")),
	INT(baseline_ns, "snapshot: wall time of the same writers without a snapshot, same rep (ns)", .flags = TIMED, .view = VIEW(27, 3, TIME_NS, "baseline")),
	FLT(slowdown, 3, "snapshot: writer_ns / baseline_ns", .flags = TIMED | LOWER, .view = VIEW(25, 1, RATIO, "slowdown")),
	INT(copy_ns, "snapshot: time to complete the checkpoint copy (ns; fork: the child's copy loop)", .flags = TIMED | LOWER, .view = VIEW(28, 3, TIME_NS, "checkpoint")),
	INT(reunite_ns, "snapshot: writers' start to the parent reaping the child (ns, fork only)", .flags = TIMED | LOWER),
	INT(user_ns, "snapshot: parent's user CPU time during the snapshot run, all threads (ns)", .flags = TIMED | LOWER),
	INT(sys_ns, "snapshot: parent's system CPU time during the snapshot run, all threads (ns)", .flags = TIMED | LOWER),
	INT(cow_copies, "pages whose page frame changed after the writes: copied (pagemap PFNs, root; snapshot: the parent's side)", .flags = LOWER, .view = VIEW(29, 5, COUNT, "cow_copies")),
	INT(cow_reuses, "pages written in place, same frame as before (pagemap PFNs, root)", .view = VIEW(30, 5, COUNT, "cow_reuses")),
	INT(wp_faults, "snapshot uffd-wp: write-protect faults the copiers handled", .flags = LOWER),
	INT(saved_pages, "snapshot: pages saved into the checkpoint (uffd-wp: each exactly once)"),
	INT(verified, "1: checkpoint equals the data at snapshot time and every write landed (multi: every child saw the original data); 0: not", .view = VIEW(31, 6, COUNT, "verified")),
	INT(fork_ns, "fork: call to return in the parent (ns)", .flags = TIMED | LOWER, .view = VIEW(20, 1, TIME_NS, "fork()")),
	INT(child_start_ns, "fork: call to the child's first instruction (ns; empty for posix_spawn)", .flags = TIMED | LOWER, .view = VIEW(21, 3, TIME_NS, "child start")),
	INT(child_exit_ns, "fork: child's _exit call to the parent's waitpid return (ns; empty for posix_spawn)", .flags = TIMED | LOWER, .view = VIEW(22, 3, TIME_NS, "child exit")),
	INT(wait_ns, "fork: time the parent spent in waitpid (ns)", .flags = TIMED | LOWER),
	FLT(ms_per_gib, 3, "fork: fork_ns in ms per GiB of populated memory", .flags = TIMED | LOWER, .view = VIEW(23, 4, NUMBER, "ms/GiB")),
	INT(vm_pte_kb, "VmPTE of the parent with the region populated (KiB of page tables)", .flags = LOWER, .view = VIEW(24, 4, KIB, "page tables")),
	STR(pages_nodes, "NUMA node:pages of the region before the fork (move_pages; - = not present)", .flags = CB_COL_REF, .width = 64),
	STR(copy_nodes, "NUMA node:pages of the written (COW-copied) side after the writes", .flags = CB_COL_REF, .width = 64),
	INT(cow_shared, "region pages still shared by writer and snapshot after the touch (pagemap, root)"),
	INT(wpcopy_count, "writer's COW copies counted by the kernel (taskstats wpcopy_count delta, root)", .flags = LOWER),
	INT(wpcopy_ns, "writer's time in the kernel COW copy path (taskstats wpcopy_delay_total delta, ns)", .flags = LOWER),
	FLT(kernel_copy_ns_mean, 1, "kernel copy-path time per COW copy (ns): wpcopy_ns/wpcopy_count or /proc/cow_stats", .flags = LOWER),
	STR(kernel_copy_source, "where kernel_copy_ns_mean comes from: taskstats or cow_stats"),
	INT(private_dirty_kb_before, "writer's Private_Dirty before the touch (smaps_rollup, kB)"),
	INT(private_dirty_kb, "writer's Private_Dirty after the touch (smaps_rollup, kB)"),
	INT(shared_dirty_kb_before, "writer's Shared_Dirty before the touch (smaps_rollup, kB)"),
	INT(shared_dirty_kb, "writer's Shared_Dirty after the touch (smaps_rollup, kB)"),
	INT(snap_private_dirty_kb_before, "snapshot side's Private_Dirty before the touch (smaps_rollup, kB)"),
	INT(snap_private_dirty_kb, "snapshot side's Private_Dirty after the touch (smaps_rollup, kB)"),
	INT(snap_shared_dirty_kb_before, "snapshot side's Shared_Dirty before the touch (smaps_rollup, kB)"),
	INT(snap_shared_dirty_kb, "snapshot side's Shared_Dirty after the touch (smaps_rollup, kB)"),
	INT(perf_minflt, "writer's minor faults from release to end of the loop (perf software counter)", .flags = LOWER),
	INT(perf_majflt, "writer's major faults, same window (perf software counter)", .flags = LOWER),
	INT(perf_cs, "writer's context switches, same window (perf software counter)", .flags = LOWER),
	INT(perf_migrations, "writer's CPU migrations, same window (perf software counter)", .flags = LOWER),
	STR(evidence_notes, "probes that could not measure and why, e.g. taskstats:needs-root"),
	INT(precopy_attempts, "pages the kernel considered for pre-copy during the rep (/proc/cow_stats, patched kernel only)"),
	INT(precopy_success, "pages the kernel copied ahead during the rep (/proc/cow_stats, patched kernel only)", .view = VIEW(19, 4, COUNT, "precopied")),
	STR(options, "the workload's options as name=value pairs (cowbench run --workload=NAME --help)", .flags = ID | CB_COL_REF, .width = 160),
	INT(cow_path_ns, "kernel time in the whole COW copy path, wp_page_copy(), during the rep (/proc/cow_stats path_ns_total, ns, patched kernel only)"),
	INT(precopy_ns, "kernel time spent pre-copying during the rep (/proc/cow_stats precopy_ns_total, ns, patched kernel only)"),
	INT(copied_pages, "region pages on a frame of the writer's own after the touch, written or not (pagemap, root): cow_copies + precopy_wasted"),
	INT(precopy_wasted, "region pages the writer never wrote that were copied all the same: copied ahead for nothing (pagemap, root)"),
	INT(anon_growth_kb, "growth of the writer's private memory over the touch (smaps_rollup Private_Clean + Private_Dirty + Private_Hugetlb, kB)", .flags = SIGNED),
	STR(lat_hist, "every first write's latency as a log-linear histogram (cowbench/hist.h text: h1;MIN;MAX;GAP:COUNT...)", .flags = TIMED | CB_COL_REF, .width = CB_LAT_HIST_LEN),
	STR(boot, "boot_id of the kernel that measured the row (guest rows: one id per QEMU boot)"),
	STR(rep_kind, "timed (the system as it is) or evidence (a rep after them with the probes that add work inside the fault path; its times are left out of statistics)", .view = VIEW(10, 2, TEXT, "rep_kind")),
	INT(nivcsw, "writer's involuntary context switches during the loop (getrusage; self-driven workloads: the whole process and its reaped children)"),
	INT(steal_ns, "CPU time stolen by the hypervisor from all CPUs during the rep (/proc/stat steal delta, ns; tick resolution)"),
	INT(runq, "runnable tasks on the machine around the rep (/proc/stat procs_running, larger of the reads before and after)"),
	INT(migrations, "writer's CPU migrations during the loop (/proc/thread-self/sched se.nr_migrations; empty without CONFIG_SCHED_DEBUG)"),
	INT(writer_cpu, "CPU the writer ran on when its loop ended (sched_getcpu)"),
	STR(stop, "adaptive repetitions (--target-ci): on a cell's last rep, why it stopped: target, max-reps or max-time"),
	INT(round, "interleaved matrix (--order): the round the rep ran in; rows of one comparison set with the same boot and round ran side by side (empty: sequential or cowbench run)"),
	INT(run_delay_ns, "writer's time runnable but waiting for a CPU during the loop (/proc/thread-self/schedstat run_delay delta, ns; self-driven workloads: the thread that runs the workload over the whole rep; snapshot: its writer threads' loops)"),
	INT(ref_ns, "machine-speed probe: wall time of a fixed reference workload (1024 copies of 4 KiB within a 4 MiB buffer) run by the process that runs the rep, mean of one run just before and one just after the rep, outside every timed window (ns; higher: the machine ran slower)"),
	STR(break_mode, "page-order workloads: populate when COW broke by one MADV_POPULATE_WRITE over the region inside the timed loop before the writes (--break=populate); empty: by fault, each first write trapping", .flags = ID),
	INT(break_ns, "--break=populate: the MADV_POPULATE_WRITE call alone (ns; it is inside elapsed_ns too)", .flags = TIMED),
	STR(fault_pages_hist, "pages copied per COW fault, its own included, over the rep: N:COUNT for faults that copied N to 2N-1 pages (0: none), ';'-separated (/proc/cow_stats precopy_fault_pages_<N> growth; patched kernel with pre-copy on)", .flags = CB_COL_REF, .width = 256),
	STR(fault_path_hist, "time of each COW fault's whole copy path over the rep: N:COUNT for faults that took N/2 to N ns (inf: longer), ';'-separated (/proc/cow_stats precopy_fault_hist_<N> growth; patched kernel with pre-copy on and timing)", .flags = CB_COL_REF, .width = 512),
	INT(first_ns, "page-order workloads: from the start of the timed window to the end of its first write (ns; inside elapsed_ns): the run's fixed costs land here, the writer's first trap after the fork on cold caches and TLB and its first touch of the loop's code (with --break=populate the madvise too)", .flags = TIMED),
	FLT(memcpy_cold_ns, 1, "median user-space memcpy of one page into a page the kernel has just populated (its first user write), same run (ns): far above memcpy_ns where the host backs guest memory lazily (cowbench info: first touch), a cost every COW copy's new page pays there", .flags = TIMED | LOWER),
	INT(prefault, "1: the run wrote and freed twice the region's size of fresh memory before each rep (run --prefault), so the frames its pages and COW copies took were touched before (a lazily backed VM then gives the bare-metal shape); empty: not", .flags = ID),
	/* New columns go above this line, at the end within one schema version. */
};

const struct cb_column *cb_column_find(const char *name)
{
	for (size_t i = 0; i < sizeof(columns) / sizeof(columns[0]); i++)
		if (strcmp(columns[i].name, name) == 0)
			return &columns[i];
	return NULL;
}

const char *cb_rep_kind_name(enum cb_rep_kind k)
{
	return k == CB_REP_EVIDENCE ? "evidence" : "timed";
}

bool cb_row_is_evidence(const struct cb_row *row)
{
	return strcmp(row->rep_kind, cb_rep_kind_name(CB_REP_EVIDENCE)) == 0;
}

bool cb_row_counts(const struct cb_row *row, const struct cb_column *c)
{
	return !(c->flags & CB_COL_TIMED) || !cb_row_is_evidence(row);
}

const struct cb_column *cb_columns(size_t *count)
{
	*count = sizeof(columns) / sizeof(columns[0]);
	return columns;
}

const char *cb_row_text(const struct cb_row *row, const struct cb_column *c)
{
	const char *base = (const char *)row + c->offset, *ref;

	if (c->type != CB_COL_STR)
		return "";
	if (!(c->flags & CB_COL_REF))
		return base;
	memcpy(&ref, base, sizeof(ref));
	return ref ? ref : "";
}

/* ---- texts a row refers to (CB_COL_REF) ---- */

#define N_COLUMNS (sizeof(columns) / sizeof(columns[0]))

/*
 * A measured row's referred-to texts: one buffer a column per thread,
 * allocated on first use, so that threads that never fill a row (a
 * workload's writers) carry nothing and a row needs no freeing.
 */
static _Thread_local char *rep_room[N_COLUMNS];

static char *room_of(struct cb_row *row, const struct cb_column *c)
{
	size_t i = (size_t)(c - columns);
	char *room = NULL;

	if (i < N_COLUMNS && (c->flags & CB_COL_REF)) {
		if (!rep_room[i])
			rep_room[i] = calloc(1, c->width);
		room = rep_room[i];
		if (room)
			room[0] = '\0';
		memcpy((char *)row + c->offset, &room, sizeof(room));
	}
	return room;
}

/* The referred-to column whose pointer is *field. */
static const struct cb_column *ref_column(const struct cb_row *row, const char *const *field)
{
	size_t off = (size_t)((const char *)field - (const char *)row);

	for (size_t i = 0; i < N_COLUMNS; i++)
		if (columns[i].offset == off && (columns[i].flags & CB_COL_REF))
			return &columns[i];
	return NULL;
}

char *cb_row_room(struct cb_row *row, const char **field, size_t *len)
{
	const struct cb_column *c = ref_column(row, field);
	char *room = c ? room_of(row, c) : NULL;

	*len = room ? c->width : 0;
	return room;
}

void cb_row_put(struct cb_row *row, const char **field, const char *text)
{
	size_t len;
	char *room;

	if (!text || !*text) {
		*field = NULL;
		return;
	}
	room = cb_row_room(row, field, &len);
	if (room)
		snprintf(room, len, "%s", text); /* cut to the column's width, as the row's own array was */
}

static void set_ref(struct cb_row *row, const struct cb_column *c, const char *text)
{
	memcpy((char *)row + c->offset, &text, sizeof(text));
}

void cb_row_drop_refs(struct cb_row *row)
{
	for (size_t i = 0; i < N_COLUMNS; i++)
		if (columns[i].flags & CB_COL_REF)
			set_ref(row, &columns[i], NULL);
}

int cb_row_pack_refs(const struct cb_row *row, char *buf, size_t len)
{
	size_t at = 0;

	for (size_t i = 0; i < N_COLUMNS; i++) {
		const char *text = cb_row_text(row, &columns[i]);
		size_t n = strlen(text) + 1;

		if (!(columns[i].flags & CB_COL_REF))
			continue;
		if (n > len - at)
			return -ENOSPC;
		memcpy(buf + at, text, n);
		at += n;
	}
	return 0;
}

int cb_row_unpack_refs(struct cb_row *row, const char *buf, size_t len)
{
	size_t at = 0;

	for (size_t i = 0; i < N_COLUMNS; i++) {
		const struct cb_column *c = &columns[i];
		size_t n;
		char *room;

		if (!(c->flags & CB_COL_REF))
			continue;
		n = at < len ? strnlen(buf + at, len - at) : 0;
		if (at >= len || n == len - at || n >= c->width) {
			cb_row_drop_refs(row);
			return -ENOSPC;
		}
		set_ref(row, c, NULL);
		if (n) {
			room = room_of(row, c);
			if (!room)
				return -ENOMEM;
			memcpy(room, buf + at, n + 1);
		}
		at += n + 1;
	}
	return 0;
}

void cb_row_format(const struct cb_row *row, const struct cb_column *c, char *buf, size_t len)
{
	const char *base = (const char *)row + c->offset;

	buf[0] = '\0';
	switch (c->type) {
	case CB_COL_INT: {
		int64_t v;

		memcpy(&v, base, sizeof(v));
		if (v != CB_NA)
			snprintf(buf, len, "%" PRId64, v);
		break;
	}
	case CB_COL_FLOAT: {
		double v;

		memcpy(&v, base, sizeof(v));
		if (isfinite(v)) /* inf is no measurement, and neither CSV readers nor JSON take it */
			snprintf(buf, len, "%.*f", c->decimals, v);
		break;
	}
	case CB_COL_STR:
		snprintf(buf, len, "%s", cb_row_text(row, c));
		break;
	}
}

/* ---- the row's field table: the column table, seen by the output layer (cowbench/output.h) ---- */

static struct cb_field row_fields[N_COLUMNS];
static pthread_once_t row_fields_once = PTHREAD_ONCE_INIT;

static void build_row_fields(void)
{
	for (size_t i = 0; i < N_COLUMNS; i++) {
		const struct cb_column *c = &columns[i];
		struct cb_field *f = &row_fields[i];

		f->name = c->name;
		f->label = c->view.label ? c->view.label : c->name;
		f->kind = c->view.pos ? c->view.kind : c->type == CB_COL_STR ? CB_KIND_TEXT : cb_kind_of_metric(c->name);
		f->flags = CB_FIELD_DATA | (c->view.pos ? CB_FIELD_VIEW : 0) |
			   (c->flags & CB_COL_LOWER_BETTER ? CB_FIELD_LOWER_BETTER : 0) |
			   (c->flags & CB_COL_SHOWN ? CB_FIELD_ALWAYS : 0) |
			   (c->offset == offsetof(struct cb_row, cell) ? CB_FIELD_LEFT : 0); /* the last, long text */
		f->priority = c->view.priority;
		f->pos = c->view.pos;
		f->decimals = c->type == CB_COL_FLOAT ? c->decimals : -1;
	}
}

const struct cb_field *cb_row_fields(size_t *count)
{
	pthread_once(&row_fields_once, build_row_fields);
	*count = N_COLUMNS;
	return row_fields;
}

/*
 * One row as the output layer's values: text columns point into the row,
 * numbers are cb_row_format's text (the CSV's exact digits) in r->cells.
 * An evidence rep is not one more measured rep: the table shows no rep
 * number for it (its rep_kind says which it is).
 */
static void row_values(struct cb_report *r, const struct cb_row *row, struct cb_val *v, bool people)
{
	bool evidence = people && cb_row_is_evidence(row);

	for (size_t i = 0; i < N_COLUMNS; i++) {
		const struct cb_column *c = &columns[i];

		if (c->type == CB_COL_STR) {
			const char *s = cb_row_text(row, c);

			v[i] = s[0] ? cb_text(s) : cb_none();
			continue;
		}
		cb_row_format(row, c, r->cells[i], sizeof(r->cells[i]));
		if (evidence && c->offset == offsetof(struct cb_row, rep))
			r->cells[i][0] = '\0';
		v[i] = r->cells[i][0] ? (struct cb_val){ .type = CB_VAL_RAW, .text = r->cells[i] } : cb_none();
	}
}

void cb_report_init(struct cb_report *r, FILE *fp, enum cb_format format, bool sync)
{
	memset(r, 0, sizeof(*r));
	r->fp = fp;
	r->format = format;
	r->sync = sync;
}

static int flush_report(struct cb_report *r)
{
	errno = 0;
	if (fflush(r->fp) == EOF)
		return cb_out_write_error();
	if (ferror(r->fp))
		return -EIO; /* an earlier write failed and its cause is gone */
	/* fsync fails with EINVAL on pipes and terminals: that is fine, there is nothing to sync. */
	if (r->sync && fsync(fileno(r->fp)) < 0 && errno != EINVAL && errno != EROFS)
		return -errno;
	return 0;
}

/* The output opens with the first row (or at finish): r->columns may be set after init. */
static int open_out(struct cb_report *r)
{
	size_t n;
	const struct cb_field *f = cb_row_fields(&n);
	int err;

	if (r->open)
		return 0;
	if ((err = cb_out_open(&r->out, r->fp, r->format, f, n, r->columns)) < 0)
		return err;
	r->out.stream = true; /* a row prints when its rep ends */
	r->out.began = r->started; /* set before the first row: a resumed file has its header */
	r->open = true;
	return 0;
}

int cb_report_row(struct cb_report *r, const struct cb_row *row)
{
	struct cb_val v[N_COLUMNS];
	bool ok = strcmp(row->status, "ok") == 0;
	int err = open_out(r);

	if (err)
		return err;
	r->started = true;
	/* A new workload, or the first ok row after a block a failed row began: new columns. */
	if (r->rows && (strcmp(row->workload, r->table_workload) != 0 || (ok && !r->table_ok)))
		cb_out_block_end(&r->out);
	if (!r->rows || strcmp(row->workload, r->table_workload) != 0 || (ok && !r->table_ok)) {
		snprintf(r->table_workload, sizeof(r->table_workload), "%s", row->workload);
		r->table_ok = ok;
	}
	row_values(r, row, v, r->format == CB_FORMAT_TABLE || r->format == CB_FORMAT_MARKDOWN);
	if ((err = cb_out_record(&r->out, v)) < 0)
		return err;
	r->rows++;
	return flush_report(r);
}

int cb_report_finish(struct cb_report *r)
{
	int err = open_out(r);

	if (err)
		return err;
	r->started = true;
	cb_out_close(&r->out);
	return flush_report(r);
}
