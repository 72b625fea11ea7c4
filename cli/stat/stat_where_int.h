#ifndef COWBENCH_STAT_WHERE_INT_H
#define COWBENCH_STAT_WHERE_INT_H

/* State shared by stat_where*.c: measurement, code view, printing and advice. */

#include <cowbench/strmap.h>
#include <cowbench/vmas.h>
#include <cowbench/wpfault.h>

#include "stat_where.h"

/* One mapping of one process over the window. */
struct vrow {
	uint64_t start, end;
	char perms[5];
	char path[128];
	int thp;                         /* THPeligible (-1: not said) */
	int64_t anon_huge_kb_max;        /* most AnonHugePages seen */
	bool first_look;
	int64_t pd_first, sd_first, pd_last, sd_last; /* smaps, kB */
	int64_t unshared_kb;             /* Private_Dirty gained at Shared_Dirty's expense, summed per interval */
	int64_t faults;                  /* write faults on present pages (tracepoint) */
	int64_t copied, zero, reused, unclassified; /* faulted pages by pagemap */
	int64_t shared_now;              /* present pages mapped by another process too, at the last look */
	int64_t referenced_kb;           /* smaps Referenced at the last look */
};

struct snap {
	uint64_t start;
	size_t pages;
	uint64_t *e;
};

struct pending {
	uint64_t addr, t;
};

struct wproc {
	pid_t pid, ppid;
	bool alive, at_start, execd;
	uint64_t fork_ns, exec_ns; /* when it was forked (its parent's code then), last ran exec; 0: not seen */
	uint64_t first_exec_ns;    /* its first exec seen (before it: a fork child runs its parent's code) */
	char comm[32];
	int64_t faults, unmapped_faults;
	struct cb_vmas vmas;
	struct vrow *rows;
	size_t nrows, caprows;
	struct snap *snaps, *old;   /* pagemap at the last look, and at the one before */
	size_t nsnaps, nold;
	uint64_t snap_t1, old_t1;   /* when the reading of each ended */
	struct pending *pending;
	size_t npending, cappending;
};

struct stat_where {
	struct stat_where_opts o;
	size_t page;
	struct cb_wpfault *wp;
	struct cb_forkcow *fc;      /* fork copies apart from zero-page copies and reuses (root) */
	bool pagemap;
	int kpageflags_fd;
	struct wproc *procs;
	size_t nprocs, capprocs;
	uint32_t *index;            /* pid -> 1 + its place in procs (open addressing); NULL: a linear search */
	size_t index_mask;
	pid_t born[256];
	size_t nborn;
	long exits_pending, skipped_ticks, nlooks;
	/* code view */
	struct cli_symbols *syms;
	struct cb_strmap funcs, paths, folded;
	int64_t code_samples, code_unresolved, code_unwound;
	int64_t code_replaced;           /* samples of code an exec replaced before its modules were read */
	/* forked CPython children: their samples, those named, those in the cyclic collector */
	int64_t py_samples, py_named, py_gc;
	struct cb_strmap py_funcs;          /* their faulting functions */
	struct queued **queue;           /* samples copied out of the kernel's buffers, not yet unwound */
	size_t qhead, qlen, qcap;
	struct queued **unknown;         /* samples of processes not watched (yet): their fork record may follow */
	size_t nunknown, capunknown;
	bool write_failed; /* --folded could not be written (said on stderr) */
};

/* stat_procs.c: a watched process by PID, and the mappings its faults fall in. */
struct wproc *where_proc(const struct stat_where *w, pid_t pid);
/* procs[at] was appended: index it (every sample of every process on the machine looks its pid up). */
void where_index_add(struct stat_where *w, size_t at);
const struct cb_vmas *where_layout(const struct stat_where *w, const struct wproc *p);
/* Pages a row's process copied there, and from which source ("pagemap", "tracepoint", "smaps"). */
int64_t where_row_copies(const struct stat_where *w, const struct vrow *r, const char **source);

/* stat_where.c */
struct vrow *where_row(struct wproc *p, const struct cb_vma *v);
/* Faults still waiting for a look (after the last one, or of processes gone): to their mappings, unclassified. */
void where_settle_rest(struct stat_where *w);

/* stat_where_code.c */
#define CODE_STACK_BYTES 4096 /* user stack copied per sample for unwinding: 8 KiB overflowed the buffers */
/* Copy a sample out of the kernel's buffer; where_code_process unwinds and names up to max of them. */
void where_code_queue(struct stat_where *w, const struct cb_wpfault_sample *s);
/* A sample with its call chain and stack copied into one block (free it), and the sample in it. */
struct queued *where_sample_copy(const struct cb_wpfault_sample *s);
const struct cb_wpfault_sample *where_sample_of(const struct queued *q);
/*
 * The measurement side's reading of the records the kernel holds now (no
 * unwinding): handed down to the code view, which calls it when an exec may
 * have come to light, rather than calling back up into stat_where.c.
 */
typedef void where_take_records_fn(struct stat_where *w);
size_t where_code_process(struct stat_where *w, size_t max, where_take_records_fn *take_records);
void where_code_free(struct stat_where *w);
void where_code_print(struct stat_where *w, enum cb_format fmt, FILE *out);
/* A forked CPython child of a CPython parent (both watched). */
bool where_is_python_child(const struct stat_where *w, const struct wproc *p);

/* stat_advice.c: advice lines tied to the numbers they rest on. */
void where_advice_print(struct stat_where *w, enum cb_format fmt, FILE *out);

#endif
