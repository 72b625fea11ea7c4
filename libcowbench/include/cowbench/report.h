#ifndef COWBENCH_REPORT_H
#define COWBENCH_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cowbench/output.h>

/*
 * Result rows and their writers. The CSV schema is versioned: a change
 * that removes, renames or re-means a column bumps CB_SCHEMA_VERSION;
 * columns are only ever added at the end within one version.
 */
#define CB_SCHEMA_VERSION 1

/*
 * Room for the lat_hist cell: a histogram of 16384 writes spread over 2 us to
 * 20 ms takes about 3 KiB of text; the widest one possible (every bucket
 * in use) about 22 KiB. A text that does not fit leaves the cell empty.
 * The row holds only a pointer to it (CB_COL_REF).
 */
#define CB_LAT_HIST_LEN 24576
/** Room for any one cell's text (the widest column is lat_hist). */
#define CB_CELL_MAX CB_LAT_HIST_LEN

/** Integer cell that was not measured (written as an empty cell). */
#define CB_NA INT64_MIN

struct cb_row {
	int64_t schema;
	char workload[32];
	int64_t size_bytes;
	int64_t pages;
	int64_t touched;
	char writer[8];
	int64_t fork;
	int64_t rep;
	char status[48];
	int64_t elapsed_ns;
	double ns_per_page;
	int64_t faults;
	double lat_min_ns, lat_mean_ns, lat_p50_ns, lat_p90_ns, lat_p99_ns, lat_p999_ns, lat_max_ns;
	double memcpy_ns;
	double memcpy_cold_ns;   /* the same copy into a freshly populated page (first user write) */
	int64_t prefault;        /* 1: run --prefault warmed the frames first; CB_NA: it did not */
	int64_t cow_faults;
	int64_t cow_copy_ns;
	int64_t precopy;
	char thp[8];
	int64_t cpu;
	int64_t seed;
	char clock[12];
	char kernel[65];
	/* Provenance: where and when the row was measured. */
	int64_t precopy_depth;
	const char *thp_mode; /* CB_COL_REF, as are host, git_revision, timestamp, numa_policy, pages_nodes, copy_nodes, options */
	const char *host;
	char cpu_model[64];
	char version[16];
	const char *git_revision;
	const char *timestamp;
	char cell[192]; /* matrix cell key (matrix.h); empty for cowbench run */
	/* Self-driven workloads (snapshot, fork, multi): parameters, then measurements. */
	char method[16];
	int64_t threads;
	int64_t checkpointers;
	int64_t batch_bytes;
	int64_t children;
	char thp_advice[8];
	int64_t hugetlb;
	int64_t huge_bytes;
	int64_t dontfork_bytes;
	int64_t wipeonfork_bytes;
	int64_t numa_nodes;
	const char *numa_policy;
	int64_t writer_ns;
	int64_t baseline_ns;
	double slowdown;
	int64_t copy_ns;
	int64_t reunite_ns;
	int64_t user_ns;
	int64_t sys_ns;
	int64_t cow_copies;
	int64_t cow_reuses;
	int64_t wp_faults;
	int64_t saved_pages;
	int64_t verified;
	int64_t fork_ns;
	int64_t child_start_ns;
	int64_t child_exit_ns;
	int64_t wait_ns;
	double ms_per_gib;
	int64_t vm_pte_kb;
	const char *pages_nodes;
	const char *copy_nodes;
	/* Stock-kernel evidence (cowbench/evidence.h); empty where a probe could not run. */
	int64_t cow_shared; /* with cow_copies/cow_reuses above, which cowbench run fills from pagemap */
	int64_t wpcopy_count, wpcopy_ns;
	double kernel_copy_ns_mean;
	char kernel_copy_source[12];
	int64_t private_dirty_kb_before, private_dirty_kb, shared_dirty_kb_before, shared_dirty_kb;
	int64_t snap_private_dirty_kb_before, snap_private_dirty_kb;
	int64_t snap_shared_dirty_kb_before, snap_shared_dirty_kb;
	int64_t perf_minflt, perf_majflt, perf_cs, perf_migrations;
	char evidence_notes[96];
	int64_t precopy_attempts, precopy_success; /* /proc/cow_stats deltas */
	const char *options; /* the workload's options, "name=value ..." (cowbench/option.h) */
	int64_t cow_path_ns, precopy_ns;            /* /proc/cow_stats: wp_page_copy() time, pre-copy time */
	/* What a touch cost besides time (cowbench/costs.h): copies, copies for nothing, memory. */
	int64_t copied_pages, precopy_wasted, anon_growth_kb;
	/*
	 * Every first write's latency, cb_hist_format's text, or NULL: held apart
	 * (CB_COL_REF), by a read file's row set until cb_results_free, or for a
	 * measured row by the thread that measured it until its next rep
	 * (cb_row_room). Reach it through cb_row_text.
	 */
	const char *lat_hist;
	char boot[40]; /* the measuring kernel's boot_id: ratios are compared inside one boot */
	char rep_kind[12]; /* "timed" or "evidence" (enum cb_rep_kind); empty in older files: timed */
	/* Noise around the rep (cowbench/noise.h), then why an adaptive cell stopped. */
	int64_t nivcsw, steal_ns, runq, migrations, writer_cpu;
	int64_t run_delay_ns; /* the writer's wait for a CPU (cowbench/noise.h) */
	char stop[12];
	int64_t round; /* cb_order.h: the round of an interleaved matrix; CB_NA: none */
	int64_t ref_ns; /* the machine-speed probe around the rep (cowbench/noise.h) */
	char break_mode[12]; /* fault or populate (page-order workloads; cowbench/touch.h) */
	int64_t break_ns;    /* --break=populate: the madvise alone */
	/* /proc/cow_stats precopy_fault_pages_<N> and precopy_fault_hist_<N> growth over the rep (CB_COL_REF, as lat_hist) */
	const char *fault_pages_hist, *fault_path_hist;
	int64_t first_ns;           /* page-order workloads: the timed window's start to the end of its first write */
	/* New columns go above this line, in the column table's order. */
};

/*
 * What a repetition is for. Timed reps run with the system as the user has
 * it; an evidence rep of the same cell, after them, runs the probes that add
 * work inside the fault path (delay accounting, perf counters): its times
 * are those of an instrumented machine and never enter statistics.
 */
enum cb_rep_kind { CB_REP_TIMED = 0, CB_REP_EVIDENCE };
const char *cb_rep_kind_name(enum cb_rep_kind k);

enum cb_col_type { CB_COL_INT, CB_COL_FLOAT, CB_COL_STR };

/** Where a column shows in the table for people (cowbench/output.h); pos 0: not shown. */
struct cb_column_view {
	unsigned char pos;      /* the table's order, from 1 */
	unsigned char priority; /* 0: never left out on a narrow terminal; the highest go first */
	enum cb_kind kind;      /* the cells' unit */
	const char *label;      /* the header: the quantity, without the unit the cells show */
};

/**
 * One column: the table drives the CSV, JSON, table and Markdown writers
 * (through cb_row_fields), compare's direction and the docs test.
 */
struct cb_column {
	const char *name;
	enum cb_col_type type;
	size_t offset;   /* offsetof(struct cb_row, ...) */
	int decimals;    /* for CB_COL_FLOAT */
	const char *help;
	unsigned flags;  /* CB_COL_* */
	struct cb_column_view view;
	size_t width;    /* CB_COL_REF: room for its text, the NUL included (a longer one is refused) */
};

/* The column says which configuration a row measured: rows of one cell agree on every one. */
#define CB_COL_IDENTITY 0x1u
/*
 * Identity only in rows without an `options` column value (files written
 * before it existed): these columns mirror workload options.
 */
#define CB_COL_IDENTITY_LEGACY 0x2u
/* A time (or rate) of the measured loop: what an evidence rep's instrumentation perturbs. */
#define CB_COL_TIMED 0x4u
/* Less is better (times, faults, copies): compare calls a rise worse; other columns have no direction. */
#define CB_COL_LOWER_BETTER 0x8u
/* The table shows it in every block, also where the row has none (rep, status). */
#define CB_COL_SHOWN 0x10u
/* A number that may be below 0 (a growth that can shrink); every other count, time and size cannot. */
#define CB_COL_SIGNED 0x20u
/*
 * A text column the row refers to instead of holding (a const char *, NULL
 * when empty): a long, mostly empty cell such as a whole distribution, so
 * that a row set of thousands of rows is not thousands of its widest text.
 */
#define CB_COL_REF 0x40u

/** The row is an evidence rep (rep_kind "evidence"); rows without rep_kind are timed. */
bool cb_row_is_evidence(const struct cb_row *row);
/**
 * Whether the row's cell in column c is a measurement statistics may use:
 * false for a timed column (CB_COL_TIMED) of an evidence rep. Every reader
 * that summarises, compares or plots goes through this (cb_row_number).
 */
bool cb_row_counts(const struct cb_row *row, const struct cb_column *c);

/** The column table (CSV order). */
const struct cb_column *cb_columns(size_t *count);
/** The column named NAME in this build's table, or NULL. */
const struct cb_column *cb_column_find(const char *name);
/** A text column's cell (CB_COL_STR, held or referred to, CB_COL_REF); "" when empty. */
const char *cb_row_text(const struct cb_row *row, const struct cb_column *c);
/**
 * Room to write a CB_COL_REF cell of a row being measured (field: its
 * pointer in row), *len bytes, the column's width: this thread's buffer
 * for the column, which the row now refers to. It holds the text until the
 * thread asks for the column's room again (its next rep): report the row
 * before, or keep a copy with cb_row_drop_refs. NULL (*len 0) when out of
 * memory or not such a column.
 */
char *cb_row_room(struct cb_row *row, const char **field, size_t *len);
/** Set a CB_COL_REF cell to a copy of text in its room, cut to the width; NULL or "" empties it. */
void cb_row_put(struct cb_row *row, const char **field, const char *text);
/** Empty the row's CB_COL_REF cells: a copy kept past the texts' life. */
void cb_row_drop_refs(struct cb_row *row);
/** Room for every CB_COL_REF text of a row, packed (cb_row_pack_refs). */
#define CB_ROW_REFS_MAX (CB_LAT_HIST_LEN + 2048)
/**
 * The row's CB_COL_REF texts one after another into buf (a row that
 * crosses a pipe); cb_row_unpack_refs copies them into this thread's room
 * (cb_row_room) and points the row at them. -ENOSPC, -ENOMEM.
 */
int cb_row_pack_refs(const struct cb_row *row, char *buf, size_t len);
int cb_row_unpack_refs(struct cb_row *row, const char *buf, size_t len);
/** One cell as text; "" means not measured (or not applicable) here. */
void cb_row_format(const struct cb_row *row, const struct cb_column *c, char *buf, size_t len);
/**
 * The row's field table for the output layer (cowbench/output.h), built
 * from the column table: every column in CSV and JSON, those with a view in
 * the table, in the view's order. *count gets its length.
 */
const struct cb_field *cb_row_fields(size_t *count);

struct cb_report {
	FILE *fp;
	enum cb_format format;
	bool sync;         /* fsync after every row (files) */
	bool started;      /* set true before the first row: the header is there already (--resume) */
	size_t rows;
	const char *columns; /* --columns for the table (checked with cb_out_columns_check), or NULL */
	struct cb_out out;
	bool open;
	/* The table's current block (its columns depend on the workload). */
	char table_workload[32];
	bool table_ok;
	char cells[CB_OUT_MAX_FIELDS][32]; /* the numbers' text of the row being written */
};

/** Start a report on fp (headers are written with the first row or at close). */
void cb_report_init(struct cb_report *r, FILE *fp, enum cb_format format, bool sync);
/** Append one row and flush it (and fsync when r->sync). */
int cb_report_row(struct cb_report *r, const struct cb_row *row);
/** Finish (writes the CSV header if no row came, so the file is still valid). */
int cb_report_finish(struct cb_report *r);

/** Longest CSV record read back (bytes): a bigger one is refused, not grown without bound. */
#define CB_CSV_MAX_RECORD (1u << 20)

/** One parsed CSV record. */
struct cb_csv_record {
	size_t nfields;
	char **field;
	bool terminated; /* false: the record ended at end of file, with no line end */
	char *buf;      /* storage behind field[] */
	size_t cap;
	/*
	 * The record reached end of file without a line end anywhere in it
	 * (also inside quotes): the only shape a write cut short can leave.
	 * Set on success (with terminated false) and on an unterminated quote.
	 */
	bool torn;
	const char *error; /* on CB_EFORMAT: why ("stray quote", "NUL byte", ...) */
};

/**
 * Read one RFC 4180 record (quoted fields may hold commas, quotes and
 * newlines). Returns 1 on a record, 0 at end of file, CB_EFORMAT on a
 * malformed record (rec->error says why; an unterminated quote at end of
 * file sets rec->torn when no line end came after the record's start),
 * -errno on a read error (never mistaken for end of file).
 */
int cb_csv_read_record(FILE *fp, struct cb_csv_record *rec);
void cb_csv_record_free(struct cb_csv_record *rec);

#endif
