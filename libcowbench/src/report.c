#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <stdlib.h>

#include <cowbench/report.h>
#include <cowbench/units.h>

#define INT(name, help, ...) { #name, CB_COL_INT, offsetof(struct cb_row, name), 0, help, __VA_ARGS__ + 0 }
#define FLT(name, dec, help, ...) { #name, CB_COL_FLOAT, offsetof(struct cb_row, name), dec, help, __VA_ARGS__ + 0 }
#define STR(name, help, ...) { #name, CB_COL_STR, offsetof(struct cb_row, name), 0, help, __VA_ARGS__ + 0 }
#define ID CB_COL_IDENTITY
#define LEGACY_ID CB_COL_IDENTITY_LEGACY
#define TIMED CB_COL_TIMED

static const struct cb_column columns[] = {
	INT(schema, "CSV schema version of this row"),
	STR(workload, "workload name (cowbench list)", ID),
	INT(size_bytes, "region size in bytes, rounded up to whole pages", ID),
	INT(pages, "pages in the region"),
	INT(touched, "pages the writer wrote (one word each)"),
	STR(writer, "which side writes after the fork: child or parent", ID),
	INT(fork, "1: pages shared by fork (COW); 0: the --no-fork baseline on private pages", ID),
	INT(rep, "repetition number, 1-based (warm-up repetitions are not written)"),
	STR(status, "ok, unsupported:WHY, no-resource:WHY, child-killed:SIGNAME, child-exit:N or error:WHAT"),
	INT(elapsed_ns, "wall time of the whole touch loop (ns)", TIMED),
	FLT(ns_per_page, 1, "elapsed_ns / touched", TIMED),
	INT(faults, "writer's minor faults during the touch loop (getrusage delta)"),
	FLT(lat_min_ns, 1, "fastest single first write (ns)", TIMED),
	FLT(lat_mean_ns, 1, "mean first-write latency (ns)", TIMED),
	FLT(lat_p50_ns, 1, "median first-write latency (ns, nearest rank)", TIMED),
	FLT(lat_p90_ns, 1, "90th percentile first-write latency (ns)", TIMED),
	FLT(lat_p99_ns, 1, "99th percentile first-write latency (ns)", TIMED),
	FLT(lat_p999_ns, 1, "99.9th percentile first-write latency (ns)", TIMED),
	FLT(lat_max_ns, 1, "slowest single first write (ns)", TIMED),
	FLT(memcpy_ns, 1, "median user-space memcpy of one page, same run (ns)", TIMED),
	INT(cow_faults, "COW faults counted by /proc/cow_stats during the rep (patched kernel only)"),
	INT(cow_copy_ns, "kernel page-copy time from /proc/cow_stats during the rep (ns, patched kernel only)"),
	INT(precopy, "value of /proc/sys/vm/cow_precopy during the rep (patched kernel only)", ID),
	STR(thp, "transparent huge pages allowed on the region: on or off", ID),
	INT(cpu, "CPU the writer was pinned to (empty: not pinned)", ID),
	INT(seed, "seed of the page order (workloads that randomise)", ID),
	STR(clock, "time source: tsc or monotonic", ID),
	STR(kernel, "kernel release (uname -r)", ID),
	INT(precopy_depth, "value of /proc/sys/vm/cow_precopy_depth during the rep (patched kernel only)", ID),
	STR(thp_mode, "system THP mode (/sys/kernel/mm/transparent_hugepage/enabled)"),
	STR(host, "host name"),
	STR(cpu_model, "CPU model name"),
	STR(version, "cowbench version"),
	STR(git_revision, "git revision cowbench was built from"),
	STR(timestamp, "UTC time the rep finished (ISO 8601)"),
	STR(cell, "matrix cell: its axis settings as NAME=VALUE pairs separated by spaces (empty for cowbench run)"),
	STR(method, "snapshot: fork, fork-wait, uffd-wp, memcpy or none; fork: fork, vfork, posix_spawn or clone-vm; multi: split or all", LEGACY_ID),
	INT(threads, "snapshot: writer threads in the parent (--threads)", LEGACY_ID),
	INT(checkpointers, "snapshot: copier threads (--checkpointers)", LEGACY_ID),
	INT(batch_bytes, "snapshot: bytes each copier copies (and, with fork, unmaps) at a time (--batch)", LEGACY_ID),
	INT(children, "multi: children forked from the same parent (--children)", LEGACY_ID),
	STR(thp_advice, "THP advice on the region: never, madvise or always (--thp)", ID),
	INT(hugetlb, "1: the region is 2 MiB hugetlb pages (--hugetlb)", ID),
	INT(huge_bytes, "bytes of the region backed by huge pages after populating (smaps AnonHugePages or *_Hugetlb)"),
	INT(dontfork_bytes, "fork: bytes of the region marked MADV_DONTFORK (--dontfork)", LEGACY_ID),
	INT(wipeonfork_bytes, "fork: bytes of the region marked MADV_WIPEONFORK (--wipeonfork)", LEGACY_ID),
	INT(numa_nodes, "NUMA nodes of the machine (1 node: placement options have nothing to choose)"),
	STR(numa_policy, "placement asked for: bind:, interleave:, cpu:, child-bind:, child-cpu: NODES (empty: none)", ID),
	INT(writer_ns, "snapshot: wall time of the writer threads with the snapshot running (ns)", TIMED),
	INT(baseline_ns, "snapshot: wall time of the same writers without a snapshot, same rep (ns)", TIMED),
	FLT(slowdown, 3, "snapshot: writer_ns / baseline_ns", TIMED),
	INT(copy_ns, "snapshot: time to complete the checkpoint copy (ns; fork: the child's copy loop)", TIMED),
	INT(reunite_ns, "snapshot: writers' start to the parent reaping the child (ns, fork only)", TIMED),
	INT(user_ns, "snapshot: parent's user CPU time during the snapshot run, all threads (ns)", TIMED),
	INT(sys_ns, "snapshot: parent's system CPU time during the snapshot run, all threads (ns)", TIMED),
	INT(cow_copies, "pages whose page frame changed after the writes: copied (pagemap PFNs, root; snapshot: the parent's side)"),
	INT(cow_reuses, "pages written in place, same frame as before (pagemap PFNs, root)"),
	INT(wp_faults, "snapshot uffd-wp: write-protect faults the copiers handled"),
	INT(saved_pages, "snapshot: pages saved into the checkpoint (uffd-wp: each exactly once)"),
	INT(verified, "1: checkpoint equals the data at snapshot time and every write landed (multi: every child saw the original data); 0: not"),
	INT(fork_ns, "fork: call to return in the parent (ns)", TIMED),
	INT(child_start_ns, "fork: call to the child's first instruction (ns; empty for posix_spawn)", TIMED),
	INT(child_exit_ns, "fork: child's _exit call to the parent's waitpid return (ns; empty for posix_spawn)", TIMED),
	INT(wait_ns, "fork: time the parent spent in waitpid (ns)", TIMED),
	FLT(ms_per_gib, 3, "fork: fork_ns in ms per GiB of populated memory", TIMED),
	INT(vm_pte_kb, "VmPTE of the parent with the region populated (KiB of page tables)"),
	STR(pages_nodes, "NUMA node:pages of the region before the fork (move_pages; - = not present)"),
	STR(copy_nodes, "NUMA node:pages of the written (COW-copied) side after the writes"),
	INT(cow_shared, "region pages still shared by writer and snapshot after the touch (pagemap, root)"),
	INT(wpcopy_count, "writer's COW copies counted by the kernel (taskstats wpcopy_count delta, root)"),
	INT(wpcopy_ns, "writer's time in the kernel COW copy path (taskstats wpcopy_delay_total delta, ns)"),
	FLT(kernel_copy_ns_mean, 1, "kernel copy-path time per COW copy (ns): wpcopy_ns/wpcopy_count or /proc/cow_stats"),
	STR(kernel_copy_source, "where kernel_copy_ns_mean comes from: taskstats or cow_stats"),
	INT(private_dirty_kb_before, "writer's Private_Dirty before the touch (smaps_rollup, kB)"),
	INT(private_dirty_kb, "writer's Private_Dirty after the touch (smaps_rollup, kB)"),
	INT(shared_dirty_kb_before, "writer's Shared_Dirty before the touch (smaps_rollup, kB)"),
	INT(shared_dirty_kb, "writer's Shared_Dirty after the touch (smaps_rollup, kB)"),
	INT(snap_private_dirty_kb_before, "snapshot side's Private_Dirty before the touch (smaps_rollup, kB)"),
	INT(snap_private_dirty_kb, "snapshot side's Private_Dirty after the touch (smaps_rollup, kB)"),
	INT(snap_shared_dirty_kb_before, "snapshot side's Shared_Dirty before the touch (smaps_rollup, kB)"),
	INT(snap_shared_dirty_kb, "snapshot side's Shared_Dirty after the touch (smaps_rollup, kB)"),
	INT(perf_minflt, "writer's minor faults from release to end of the loop (perf software counter)"),
	INT(perf_majflt, "writer's major faults, same window (perf software counter)"),
	INT(perf_cs, "writer's context switches, same window (perf software counter)"),
	INT(perf_migrations, "writer's CPU migrations, same window (perf software counter)"),
	STR(evidence_notes, "probes that could not measure and why, e.g. taskstats:needs-root"),
	INT(precopy_attempts, "pages the kernel considered for pre-copy during the rep (/proc/cow_stats, patched kernel only)"),
	INT(precopy_success, "pages the kernel copied ahead during the rep (/proc/cow_stats, patched kernel only)"),
	STR(options, "the workload's options as name=value pairs (cowbench run --workload=NAME --help)", ID),
	INT(cow_path_ns, "kernel time in the whole COW copy path, wp_page_copy(), during the rep (/proc/cow_stats path_ns_total, ns, patched kernel only)"),
	INT(precopy_ns, "kernel time spent pre-copying during the rep (/proc/cow_stats precopy_ns_total, ns, patched kernel only)"),
	INT(copied_pages, "region pages on a frame of the writer's own after the touch, written or not (pagemap, root): cow_copies + precopy_wasted"),
	INT(precopy_wasted, "region pages the writer never wrote that were copied all the same: copied ahead for nothing (pagemap, root)"),
	INT(anon_growth_kb, "growth of the writer's private memory over the touch (smaps_rollup Private_Clean + Private_Dirty + Private_Hugetlb, kB)", CB_COL_SIGNED),
	STR(lat_hist, "every first write's latency as a log-linear histogram (cowbench/hist.h text: h1;MIN;MAX;GAP:COUNT...)", TIMED),
	STR(boot, "boot_id of the kernel that measured the row (guest rows: one id per QEMU boot)"),
	STR(rep_kind, "timed (the system as it is) or evidence (a rep after them with the probes that add work inside the fault path; its times are left out of statistics)"),
	INT(nivcsw, "writer's involuntary context switches during the loop (getrusage; self-driven workloads: the whole process and its reaped children)"),
	INT(steal_ns, "CPU time stolen by the hypervisor from all CPUs during the rep (/proc/stat steal delta, ns; tick resolution)"),
	INT(runq, "runnable tasks on the machine around the rep (/proc/stat procs_running, larger of the reads before and after)"),
	INT(migrations, "writer's CPU migrations during the loop (/proc/thread-self/sched se.nr_migrations; empty without CONFIG_SCHED_DEBUG)"),
	INT(writer_cpu, "CPU the writer ran on when its loop ended (sched_getcpu)"),
	STR(stop, "adaptive repetitions (--target-ci): on a cell's last rep, why it stopped: target, max-reps or max-time"),
	INT(round, "interleaved matrix (--order): the round the rep ran in; rows of one comparison set with the same boot and round ran side by side (empty: sequential or cowbench run)"),
	INT(run_delay_ns, "writer's time runnable but waiting for a CPU during the loop (/proc/thread-self/schedstat run_delay delta, ns; self-driven workloads: the thread that runs the workload over the whole rep; snapshot: its writer threads' loops)"),
	INT(ref_ns, "machine-speed probe: wall time of a fixed reference workload (1024 copies of 4 KiB within a 4 MiB buffer) run by the process that runs the rep, mean of one run just before and one just after the rep, outside every timed window (ns; higher: the machine ran slower)"),
	STR(break_mode, "page-order workloads: populate when COW broke by one MADV_POPULATE_WRITE over the region inside the timed loop before the writes (--break=populate); empty: by fault, each first write trapping", ID),
	INT(break_ns, "--break=populate: the MADV_POPULATE_WRITE call alone (ns; it is inside elapsed_ns too)", TIMED),
	STR(fault_pages_hist, "pages copied per COW fault, its own included, over the rep: N:COUNT for faults that copied N to 2N-1 pages (0: none), ';'-separated (/proc/cow_stats precopy_fault_pages_<N> growth; patched kernel with pre-copy on)"),
	STR(fault_path_hist, "time of each COW fault's whole copy path over the rep: N:COUNT for faults that took N/2 to N ns (inf: longer), ';'-separated (/proc/cow_stats precopy_fault_hist_<N> growth; patched kernel with pre-copy on and timing)"),
	INT(first_ns, "page-order workloads: from the start of the timed window to the end of its first write (ns; inside elapsed_ns): the run's fixed costs land here, the writer's first trap after the fork on cold caches and TLB and its first touch of the loop's code (with --break=populate the madvise too)", TIMED),
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

int cb_format_parse(const char *s, enum cb_format *out)
{
	static const char *const names[] = { "csv", "json", "table" };

	for (int i = 0; i < 3; i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = (enum cb_format)i;
			return 0;
		}
	}
	return -EINVAL;
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
		snprintf(buf, len, "%s", base);
		break;
	}
}

/* A failed write's cause (ENOSPC, EDQUOT, EPIPE...), EIO only when stdio gives none. */
static int write_error(void)
{
	return errno > 0 ? -errno : -EIO;
}

int cb_csv_write_field(FILE *fp, const char *field)
{
	errno = 0;
	if (strpbrk(field, ",\"\r\n") == NULL)
		return fputs(field, fp) < 0 ? write_error() : 0;
	if (fputc('"', fp) == EOF)
		return write_error();
	for (const char *p = field; *p; p++) {
		if (*p == '"' && fputc('"', fp) == EOF)
			return write_error();
		if (fputc(*p, fp) == EOF)
			return write_error();
	}
	return fputc('"', fp) == EOF ? write_error() : 0;
}

int cb_record_end(FILE *fp)
{
	errno = 0;
	return fputs(CB_RECORD_END, fp) < 0 ? write_error() : 0;
}

int cb_csv_number(FILE *fp, double v, int decimals)
{
	int n = 0;

	errno = 0;
	if (!isfinite(v))
		return 0;
	if (decimals >= 0)
		n = fprintf(fp, "%.*f", decimals, v);
	else
		n = fprintf(fp, "%.10g", v);
	return n < 0 ? write_error() : 0;
}

int cb_json_number(FILE *fp, const char *name, double v)
{
	int n;

	errno = 0;
	n = isfinite(v) ? fprintf(fp, ",\"%s\":%.10g", name, v) : fprintf(fp, ",\"%s\":null", name);
	return n < 0 ? write_error() : 0;
}

void cb_json_string(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(fp, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(fp, "\\u%04x", c);
		else
			fputc(c, fp);
	}
	fputc('"', fp);
}

static void write_csv_header(FILE *fp)
{
	for (size_t i = 0; i < sizeof(columns) / sizeof(columns[0]); i++) {
		if (i)
			fputc(',', fp);
		cb_csv_write_field(fp, columns[i].name);
	}
	cb_record_end(fp);
}

static void write_csv_row(FILE *fp, const struct cb_row *row)
{
	char cell[CB_CELL_MAX]; /* fits the widest column (lat_hist) */

	for (size_t i = 0; i < sizeof(columns) / sizeof(columns[0]); i++) {
		if (i)
			fputc(',', fp);
		cb_row_format(row, &columns[i], cell, sizeof(cell));
		cb_csv_write_field(fp, cell);
	}
	cb_record_end(fp);
}

/* JSON Lines: one object per row; unmeasured cells are null. */
static void write_json_row(FILE *fp, const struct cb_row *row)
{
	char cell[CB_CELL_MAX]; /* fits the widest column (lat_hist) */

	fputc('{', fp);
	for (size_t i = 0; i < sizeof(columns) / sizeof(columns[0]); i++) {
		const struct cb_column *c = &columns[i];

		cb_row_format(row, c, cell, sizeof(cell));
		if (i)
			fputc(',', fp);
		cb_json_string(fp, c->name);
		fputc(':', fp);
		if (c->type == CB_COL_STR && cell[0])
			cb_json_string(fp, cell);
		else
			fputs(cell[0] ? cell : "null", fp);
	}
	fputc('}', fp);
	cb_record_end(fp);
}

/*
 * The table for people: who the row is (workload, size, writer, fork or
 * method, rep, status), then the results this kind of row has, in units
 * people read (cowbench/units.h). A block of rows shares one header; a row
 * of another workload starts a new block with its own columns.
 */
enum cell_unit { U_PLAIN, U_NS, U_BYTES, U_KIB };

static const struct table_col {
	const char *name;  /* the column (cowbench/report.h) */
	const char *label; /* its header: the CSV name less a unit the cells now show ("elapsed" over "72.3 ms") */
	enum cell_unit unit;
	bool identity; /* always shown when the row has it; results only when measured */
} table_cols[] = {
	{ "workload", "workload", U_PLAIN, true }, { "size_bytes", "size", U_BYTES, true },
	{ "writer", "writer", U_PLAIN, true }, { "fork", "fork", U_PLAIN, true }, { "method", "method", U_PLAIN, true },
	{ "threads", "threads", U_PLAIN, true }, { "checkpointers", "checkpointers", U_PLAIN, true },
	{ "children", "children", U_PLAIN, true }, { "rep", "rep", U_PLAIN, true },
	{ "rep_kind", "rep_kind", U_PLAIN, true }, { "status", "status", U_PLAIN, true },
	/* page-order and multi rows */
	{ "elapsed_ns", "elapsed", U_NS, false }, { "faults", "faults", U_PLAIN, false },
	{ "lat_p50_ns", "write p50", U_NS, false }, { "lat_p99_ns", "write p99", U_NS, false },
	{ "lat_max_ns", "write max", U_NS, false }, { "memcpy_ns", "memcpy 4K", U_NS, false },
	{ "cow_faults", "cow_faults", U_PLAIN, false }, { "precopy_success", "precopied", U_PLAIN, false },
	/* fork */
	{ "fork_ns", "fork()", U_NS, false }, { "child_start_ns", "child start", U_NS, false },
	{ "child_exit_ns", "child exit", U_NS, false }, { "ms_per_gib", "ms/GiB", U_PLAIN, false },
	{ "vm_pte_kb", "page tables", U_KIB, false },
	/* snapshot */
	{ "slowdown", "slowdown", U_PLAIN, false }, { "writer_ns", "writers", U_NS, false },
	{ "baseline_ns", "baseline", U_NS, false }, { "copy_ns", "checkpoint", U_NS, false },
	{ "cow_copies", "cow_copies", U_PLAIN, false }, { "cow_reuses", "cow_reuses", U_PLAIN, false },
	{ "verified", "verified", U_PLAIN, false },
};

#define N_TABLE_COLS (sizeof(table_cols) / sizeof(table_cols[0]))

/* One cell as people read it; "" when not measured. */
static void table_cell(const struct cb_row *row, const struct table_col *tc, enum cb_units_style style, char *buf,
		       size_t len)
{
	const struct cb_column *c = cb_column_find(tc->name);
	double v;

	cb_row_format(row, c, buf, len);
	if (!buf[0] || tc->unit == U_PLAIN)
		return;
	v = strtod(buf, NULL);
	if (tc->unit == U_NS)
		cb_fmt_ns(buf, len, v, style);
	else
		cb_fmt_bytes(buf, len, tc->unit == U_KIB ? v * 1024 : v);
}

static int table_width(const struct table_col *tc)
{
	int w = (int)strlen(tc->label);
	int min = tc->unit == U_PLAIN ? 4 : 9;

	return w > min ? w : min;
}

/* The block's columns: identity ones the row has, results it measured, and the matrix cell last. */
static void table_layout(struct cb_report *r, const struct cb_row *row)
{
	char cell[256];

	r->tcols = 0;
	for (size_t i = 0; i < N_TABLE_COLS && r->tcols < CB_REPORT_MAX_TCOLS; i++) {
		table_cell(row, &table_cols[i], CB_UNITS_ASCII, cell, sizeof(cell));
		if (cell[0] || (table_cols[i].identity && !strcmp(table_cols[i].name, "status")))
			r->tcol[r->tcols++] = (unsigned char)i;
	}
	snprintf(r->table_workload, sizeof(r->table_workload), "%s", row->workload);
	r->table_ok = strcmp(row->status, "ok") == 0;
	r->table_cell = row->cell[0] != '\0';
}

static void write_table_header(struct cb_report *r)
{
	for (size_t i = 0; i < r->tcols; i++) {
		const struct table_col *tc = &table_cols[r->tcol[i]];

		fprintf(r->fp, "%s%*s", i ? "  " : "", i ? table_width(tc) : -table_width(tc), tc->label);
	}
	fputs(r->table_cell ? "  cell\n" : "\n", r->fp);
}

static void write_table_row(struct cb_report *r, const struct cb_row *row)
{
	char cell[256]; /* fits the longest column (cell) */
	bool ok = strcmp(row->status, "ok") == 0;

	/* A new workload, or the first ok row after a block a failed row began: new columns. */
	if (!r->tcols || strcmp(row->workload, r->table_workload) != 0 || (ok && !r->table_ok)) {
		if (r->tcols)
			fputc('\n', r->fp);
		table_layout(r, row);
		write_table_header(r);
	}
	for (size_t i = 0; i < r->tcols; i++) {
		const struct table_col *tc = &table_cols[r->tcol[i]];

		table_cell(row, tc, r->units, cell, sizeof(cell));
		/* An evidence rep is not one more measured rep: its rep_kind says which it is. */
		if (!strcmp(tc->name, "rep") && cb_row_is_evidence(row))
			cell[0] = '\0';
		if (!cell[0])
			snprintf(cell, sizeof(cell), "-");
		fprintf(r->fp, "%s%*s", i ? "  " : "", cb_pad_width(cell, i ? table_width(tc) : -table_width(tc)), cell);
	}
	if (r->table_cell)
		fprintf(r->fp, "  %s", row->cell);
	fputc('\n', r->fp);
}

void cb_report_init(struct cb_report *r, FILE *fp, enum cb_format format, bool sync)
{
	memset(r, 0, sizeof(*r));
	r->fp = fp;
	r->format = format;
	r->sync = sync;
	r->units = cb_units_style_for(fp);
}

static int flush_report(struct cb_report *r)
{
	errno = 0;
	if (fflush(r->fp) == EOF)
		return write_error();
	if (ferror(r->fp))
		return -EIO; /* an earlier write failed and its cause is gone */
	/* fsync fails with EINVAL on pipes and terminals: that is fine, there is nothing to sync. */
	if (r->sync && fsync(fileno(r->fp)) < 0 && errno != EINVAL && errno != EROFS)
		return -errno;
	return 0;
}

static void write_header(struct cb_report *r)
{
	if (r->started)
		return;
	r->started = true;
	if (r->format == CB_FORMAT_CSV)
		write_csv_header(r->fp);
}

int cb_report_row(struct cb_report *r, const struct cb_row *row)
{
	write_header(r);
	switch (r->format) {
	case CB_FORMAT_CSV:
		write_csv_row(r->fp, row);
		break;
	case CB_FORMAT_JSON:
		write_json_row(r->fp, row);
		break;
	case CB_FORMAT_TABLE:
		write_table_row(r, row);
		break;
	}
	r->rows++;
	return flush_report(r);
}

int cb_report_finish(struct cb_report *r)
{
	write_header(r);
	return flush_report(r);
}
