/*
 * cowbench stat: the Linux vm_stat for copy-on-write. Every interval, one
 * line for a process and its descendants (--no-children: the process
 * alone): COW copies and time in the kernel copy path (taskstats; when it
 * cannot count, write faults on present pages from a tracepoint), minor/
 * major faults (/proc/PID/stat), Private_Dirty (smaps_rollup), and
 * system-wide COW faults from /proc/cow_stats on the cowbench kernel.
 * --where adds where the copies land (stat_where.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cowbench/cowbench.h>
#include <cowbench/evidence.h>
#include <cowbench/forkcow.h>
#include <cowbench/wpfault.h>

#include "common/diag.h"
#include "common/args.h"
#include "common/spawn.h"
#include "common/outfile.h"
#include "trial/delayacct.h"
#include "common/commands.h"

#include "stat_state.h"

static const struct cb_field *stat_line_fields(size_t *n);

static volatile sig_atomic_t stop_requested;

#define OPTS(p) ((struct stat_opts *)(p))

/* The state letter of /proc/PID/stat (R, S, Z...), or 0 when unreadable. */
static char proc_state(pid_t pid)
{
	char path[64], buf[512];
	const char *paren;
	FILE *fp;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fp = fopen(path, "re");
	if (!fp)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	paren = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
	return paren && paren[1] == ' ' ? paren[2] : 0;
}

static bool opt_pid(void *o, const char *v)
{
	long pid;

	if (!cli_parse_long(v, 1, 0x3fffffff, &pid) || (kill((pid_t)pid, 0) < 0 && errno == ESRCH)) {
		cli_error("--pid=%s is not a running process", v);
		return false;
	}
	if (proc_state((pid_t)pid) == 'Z' || proc_state((pid_t)pid) == 'X') {
		cli_error("--pid=%s has exited (a zombie its parent has not reaped): nothing to watch", v);
		return false;
	}
	OPTS(o)->pid = (pid_t)pid;
	return true;
}

static bool opt_interval(void *o, const char *v)
{
	return cli_parse_seconds("--interval", v, &OPTS(o)->interval);
}

static bool opt_count(void *o, const char *v)
{
	if (!cli_parse_long(v, 1, 100000000, &OPTS(o)->count)) {
		cli_error("--count must be an integer from 1 to 100000000, not '%s'", v);
		return false;
	}
	return true;
}

static bool opt_where(void *o, const char *v)
{
	if (!v || strcmp(v, "maps") == 0) {
		OPTS(o)->where.mode = WHERE_MAPS;
	} else if (strcmp(v, "code") == 0) {
		OPTS(o)->where.mode = WHERE_CODE;
	} else {
		cli_error("--where must be maps or code, not '%s'", v);
		return false;
	}
	return true;
}

static bool opt_top(void *o, const char *v)
{
	if (!cli_parse_long(v, 1, 100000, &OPTS(o)->where.top)) {
		cli_error("--top must be an integer from 1 to 100000, not '%s'", v);
		return false;
	}
	return true;
}

static bool opt_sample(void *o, const char *v)
{
	if (!cli_parse_long(v, 1, 1000000, &OPTS(o)->where.sample)) {
		cli_error("--sample must be an integer from 1 to 1000000 (record 1 in N faults), not '%s'", v);
		return false;
	}
	return true;
}

/* The file is written at the end, through cli_output_begin: checked (with --force known) before anything runs. */
static bool opt_folded(void *o, const char *v)
{
	OPTS(o)->where.folded = v;
	return true;
}

static bool opt_format(void *o, const char *v)
{
	enum cb_format f;

	/* "text" is what stat called its table before every command said "table": scripts may still say it. */
	if (!strcmp(v, "text"))
		v = "table";
	if (cb_format_parse(v, &f) < 0 || f == CB_FORMAT_MARKDOWN) {
		cli_error("--format must be table, csv or json, not '%s'", v);
		return false;
	}
	OPTS(o)->format = f;
	return true;
}

static bool opt_columns(void *o, const char *v)
{
	size_t n;
	const struct cb_field *f = stat_line_fields(&n);

	if (!cli_check_columns(f, n, v))
		return false;
	OPTS(o)->columns = v;
	return true;
}

static const struct cli_option stat_options[] = {
	{ "pid", "PID", "watch this running process", opt_pid, .letter = 'p' },
	{ "interval", "S", "seconds between lines, decimals allowed; default 1", .parse = opt_interval },
	{ "count", "N", "stop after N lines (default: until the process ends or Ctrl-C)", .parse = opt_count },
	{ "children", NULL, "count the process's descendants too, following forks (the default)",
	  CLI_SET(CLI_STORE_TRUE, struct stat_opts, children) },
	{ "no-children", NULL, "count the process alone", CLI_SET(CLI_STORE_FALSE, struct stat_opts, children) },
	{ "where", "[maps|code]", "at the end, where the copies landed: by mapping (smaps; as root also "
	  "tracepoint + pagemap) or by code (root: sampled call chains)", .parse = opt_where },
	{ "top", "N", "rows per --where table (default 10)", .parse = opt_top },
	{ "sample", "N", "--where=code: record 1 in N write faults (default 1: every one)", .parse = opt_sample },
	{ "folded", "FILE", "--where=code: also write folded stacks (flame-graph input) to FILE", .parse = opt_folded },
	{ "force", NULL, "let --folded replace an existing non-empty file",
	  CLI_SET(CLI_STORE_TRUE, struct stat_opts, where.force) },
	{ "system", NULL, "the whole machine's COW faults and copy time from /proc/cow_stats (cowbench kernel); "
	  "alone, no process is needed", CLI_SET(CLI_STORE_TRUE, struct stat_opts, system) },
	{ "format", "table|csv|json", "a table for people (default; 'text' is its old name), CSV or JSON Lines",
	  .parse = opt_format },
	{ "columns", "NAME[,NAME]", "the table's columns, in this order (default: what fits the terminal)",
	  .parse = opt_columns },
};

#define N_STAT_OPTIONS ((int)(sizeof(stat_options) / sizeof(stat_options[0])))

static void stat_usage(void)
{
	printf("usage: cowbench stat [OPTIONS] -p PID\n"
	       "       cowbench stat [OPTIONS] -- COMMAND [ARGS...]\n"
	       "       cowbench stat [OPTIONS] --system\n\n"
	       "Every interval, the COW copies and copy time of a process and its descendants\n"
	       "(taskstats, root; else write faults on present pages from a tracepoint), faults,\n"
	       "Private_Dirty (smaps_rollup) and system-wide COW faults (/proc/cow_stats, cowbench\n"
	       "kernel); a total at the end, also on Ctrl-C, SIGTERM or SIGHUP. With COMMAND, exits\n"
	       "with the command's status; a command still running when stat stops (--count, a\n"
	       "signal) gets SIGTERM, as it does if stat dies (PR_SET_PDEATHSIG).\n\n"
	       "As root, write faults are also split by cause: fork_copies (pages a fork shared, copied),\n"
	       "fork_reuses, zero_copies and other_wp_faults (see the man page). Cost to the watched program:\n"
	       "a BPF program's record in each write fault on a present page (a perf sample, ~1 us, where BPF\n"
	       "is refused and for --where=code), delay accounting, and a page-map read by stat at each fork;\n"
	       "a Python loop forking 100 times used 1.07-1.13x the CPU time (2-vCPU VM, bench_stat); a\n"
	       "table whose --columns has no cause column needs no tracepoint (1.02-1.05x).\n\n");
	cli_print_options(stat_options, N_STAT_OPTIONS);
}

struct line {
	int64_t procs, copies, copy_ns, minflt, majflt, private_dirty_kb, sys_cow;
	int64_t wp_faults; /* write faults on present pages (tracepoint): copies and reuses, never under "copies" */
	int64_t cause[CB_FC_NCLASS];
};

static void add_delta(int64_t *out, int64_t from, int64_t to)
{
	if (from >= 0 && to >= 0)
		*out = (*out < 0 ? 0 : *out) + (to - from);
}

/* Sum of cur - from over the processes; a counter unmeasured anywhere stays -1. */
static struct line sum_line(const struct stat_state *st, bool total)
{
	struct line l = { 0, -1, -1, -1, -1, -1, -1, -1, { -1, -1, -1, -1 } };
	uint64_t d;

	for (size_t i = 0; i < st->nprocs; i++) {
		const struct proc *p = &st->procs[i];
		const struct sample *from = total ? &p->base : &p->prev, *c = &p->cur;
		const int64_t pairs[][3] = {
			{ from->copies, c->copies, 1 }, { from->copy_ns, c->copy_ns, 2 },
			{ from->minflt, c->minflt, 3 }, { from->majflt, c->majflt, 4 },
		};
		int64_t *dst[] = { NULL, &l.copies, &l.copy_ns, &l.minflt, &l.majflt };

		if (total || !p->gone)
			l.procs++;
		for (int k = 0; k < CB_FC_NCLASS; k++)
			add_delta(&l.cause[k], from->cause[k], c->cause[k]);
		for (size_t k = 0; k < sizeof(pairs) / sizeof(pairs[0]); k++) {
			int64_t *out = dst[pairs[k][2]];

			if (pairs[k][0] < 0 || pairs[k][1] < 0)
				continue;
			*out = (*out < 0 ? 0 : *out) + (pairs[k][1] - pairs[k][0]);
		}
		if (!p->gone && c->private_dirty_kb >= 0)
			l.private_dirty_kb = (l.private_dirty_kb < 0 ? 0 : l.private_dirty_kb) + c->private_dirty_kb;
	}
	if (st->have_cowstats &&
	    cb_cowstats_delta(total ? &st->cs_base : &st->cs_prev, &st->cs_cur, "faults", &d))
		l.sys_cow = (int64_t)d;
	/* One meaning per column: the fallback's write faults are wp_faults, and cow_copies stays empty. */
	if (st->copies_from_faults) {
		l.wp_faults = l.copies;
		l.copies = -1;
	} else if (l.cause[0] >= 0 && l.cause[1] >= 0 && l.cause[2] >= 0 && l.cause[3] >= 0) {
		l.wp_faults = l.cause[0] + l.cause[1] + l.cause[2] + l.cause[3];
	}
	if (st->system_only) { /* the machine's copies, counted by the cowbench kernel */
		l.procs = -1;
		l.copies = l.sys_cow;
		if (cb_cowstats_delta(total ? &st->cs_base : &st->cs_prev, &st->cs_cur, "copy_ns_total", &d))
			l.copy_ns = (int64_t)d;
	}
	return l;
}

/* Where the counts come from: the kernel's copy count (cow_copies), or write faults on present pages (wp_faults). */
static const char *copies_source(const struct stat_state *st)
{
	if (st->system_only)
		return "cow_stats";
	if (st->copies_from_faults)
		return "tracepoint";
	return st->ts_err == 0 ? "taskstats" : "";
}


/* The text header names what cow_copies counts here: every kernel copy, or write faults. */
static const char *copies_label(const struct stat_state *st)
{
	if (st->copies_from_faults)
		return "wp_faults";
	return st->ts_err == 0 && !st->system_only ? "all_copies" : "cow_copies";
}

/*
 * A sample line's fields (cowbench/output.h): CSV columns and JSON keys as
 * scripts read them (the two orders differ: copy_ns_mean and copies_source
 * have a field for each), then the table's, in its own order (pos).
 */
enum stat_field {
	SF_LINE, SF_TIME, SF_PROCS, SF_COPIES, SF_COPY_NS, SF_MEAN_CSV, SF_MINFLT, SF_MAJFLT, SF_PDIRTY, SF_SYS,
	SF_MEAN_JSON, SF_SOURCE_CSV, SF_CAUSE0, SF_WP_FAULTS = SF_CAUSE0 + CB_FC_NCLASS, SF_SOURCE_JSON, SF_COPY_MS, SF_US_COPY,
	SF_NFIELDS
};

#define ALL CB_FIELD_ALL

static struct cb_field stat_fields[SF_NFIELDS] = {
	[SF_LINE] = { "line", "line", CB_KIND_TEXT, CB_FIELD_JSON, 0, -1, 0, 0 },
	[SF_TIME] = { "time_s", "time_s", CB_KIND_NUMBER, ALL, 0, -1, 8, 1 },
	[SF_PROCS] = { "procs", "procs", CB_KIND_COUNT, ALL, 3, -1, 5, 2 },
	[SF_COPIES] = { "cow_copies", "cow_copies", CB_KIND_COUNT, ALL, 0, -1, 10, 7 },
	[SF_COPY_NS] = { "copy_ns", "copy_ns", CB_KIND_COUNT, CB_FIELD_DATA, 0, -1, 0, 0 },
	[SF_MEAN_CSV] = { "copy_ns_mean", "copy_ns_mean", CB_KIND_NUMBER, CB_FIELD_CSV, 0, -1, 0, 0 },
	[SF_MINFLT] = { "minflt", "minflt", CB_KIND_COUNT, ALL, 3, -1, 9, 10 },
	[SF_MAJFLT] = { "majflt", "majflt", CB_KIND_COUNT, ALL, 5, -1, 6, 11 },
	[SF_PDIRTY] = { "private_dirty_kb", "private_dirty_kb", CB_KIND_COUNT, ALL, 4, -1, 0, 12 },
	[SF_SYS] = { "sys_cow_faults", "sys_cow_faults", CB_KIND_COUNT, ALL, 2, -1, 0, 13 },
	[SF_MEAN_JSON] = { "copy_ns_mean", "copy_ns_mean", CB_KIND_NUMBER, CB_FIELD_JSON, 0, -1, 0, 0 },
	[SF_SOURCE_CSV] = { "copies_source", "copies_source", CB_KIND_TEXT, CB_FIELD_CSV, 0, -1, 0, 0 },
	[SF_CAUSE0] = { "fork_copies", "fork_copies", CB_KIND_COUNT, ALL, 6, -1, 11, 3 },
	[SF_CAUSE0 + 1] = { "fork_reuses", "fork_reuses", CB_KIND_COUNT, ALL, 6, -1, 11, 4 },
	[SF_CAUSE0 + 2] = { "zero_copies", "zero_copies", CB_KIND_COUNT, ALL, 7, -1, 11, 5 },
	[SF_CAUSE0 + 3] = { "other_wp_faults", "other_wp_faults", CB_KIND_COUNT, ALL, 7, -1, 15, 6 },
	[SF_WP_FAULTS] = { "wp_faults", "wp_faults", CB_KIND_COUNT, CB_FIELD_DATA, 0, -1, 0, 0 },
	[SF_SOURCE_JSON] = { "copies_source", "copies_source", CB_KIND_TEXT, CB_FIELD_JSON, 0, -1, 0, 0 },
	[SF_COPY_MS] = { "copy_ms", "copy_ms", CB_KIND_NUMBER, CB_FIELD_VIEW, 1, -1, 9, 8 },
	[SF_US_COPY] = { "us_per_copy", "us/copy", CB_KIND_NUMBER, CB_FIELD_VIEW, 2, -1, 8, 9 },
};

static const struct cb_field *stat_line_fields(size_t *n)
{
	*n = SF_NFIELDS;
	return stat_fields;
}

static struct cb_out stat_out;

/* The texts of one line's numbers, alive until it is written. */
struct stat_texts {
	char n[SF_NFIELDS][32];
};

/* A counter: its digits, or not measured (-1): empty in CSV, null in JSON, "-" in the table. */
static struct cb_val counter(struct stat_texts *t, size_t f, bool table, int64_t v)
{
	if (v < 0)
		return table ? (struct cb_val){ .type = CB_VAL_RAW, .text = "-" } : cb_none();
	snprintf(t->n[f], sizeof(t->n[f]), "%" PRId64, v);
	return (struct cb_val){ .type = CB_VAL_RAW, .text = t->n[f] };
}

static struct cb_val decimal(struct stat_texts *t, size_t f, bool table, int decimals, double v)
{
	if (isnan(v))
		return table ? (struct cb_val){ .type = CB_VAL_RAW, .text = "-" } : cb_none();
	snprintf(t->n[f], sizeof(t->n[f]), "%.*f", decimals, v);
	return (struct cb_val){ .type = CB_VAL_RAW, .text = t->n[f] };
}

static void line_values(const struct stat_state *st, const char *label, const struct line *l, struct cb_val *v,
			struct stat_texts *t)
{
	bool table = st->o.format == CB_FORMAT_TABLE, total = strcmp(label, "total") == 0;
	double mean = l->copies > 0 && l->copy_ns >= 0 ? (double)l->copy_ns / (double)l->copies : NAN;

	for (size_t i = 0; i < SF_NFIELDS; i++)
		v[i] = cb_none();
	v[SF_LINE] = cb_text(total ? "total" : "interval");
	if (st->o.format == CB_FORMAT_JSON)
		v[SF_TIME] = decimal(t, SF_TIME, false, 3, total ? cli_now_s() - st->t0 : atof(label));
	else
		v[SF_TIME] = cb_text(label);
	v[SF_PROCS] = counter(t, SF_PROCS, table, l->procs);
	/* The table has one count column, headed by what it counts here (copies_label). */
	v[SF_COPIES] = counter(t, SF_COPIES, table, table && st->copies_from_faults ? l->wp_faults : l->copies);
	v[SF_WP_FAULTS] = counter(t, SF_WP_FAULTS, table, l->wp_faults);
	v[SF_COPY_NS] = counter(t, SF_COPY_NS, table, l->copy_ns);
	v[SF_MEAN_CSV] = v[SF_MEAN_JSON] = decimal(t, SF_MEAN_CSV, table, 1, mean);
	v[SF_MINFLT] = counter(t, SF_MINFLT, table, l->minflt);
	v[SF_MAJFLT] = counter(t, SF_MAJFLT, table, l->majflt);
	v[SF_PDIRTY] = counter(t, SF_PDIRTY, table, l->private_dirty_kb);
	v[SF_SYS] = counter(t, SF_SYS, table, l->sys_cow);
	v[SF_SOURCE_CSV] = v[SF_SOURCE_JSON] = cb_text(copies_source(st));
	for (int k = 0; k < CB_FC_NCLASS; k++)
		v[SF_CAUSE0 + k] = !table || st->causes ? counter(t, SF_CAUSE0 + (size_t)k, table, l->cause[k]) : cb_none();
	v[SF_COPY_MS] = decimal(t, SF_COPY_MS, table, 2, l->copy_ns >= 0 ? (double)l->copy_ns / 1e6 : NAN);
	v[SF_US_COPY] = decimal(t, SF_US_COPY, table, 2, mean / 1e3);
}

static void print_header(const struct stat_state *st)
{
	struct cb_val v[SF_NFIELDS];
	struct stat_texts t;

	/* The header names what cow_copies counts here: every kernel copy, or write faults. */
	stat_fields[SF_COPIES].label = copies_label(st);
	cb_out_open(&stat_out, stdout, st->o.format, stat_fields, SF_NFIELDS, st->o.columns);
	stat_out.stream = true;
	line_values(st, "0.0", &(struct line){ .procs = -1, .copies = -1, .copy_ns = -1, .minflt = -1, .majflt = -1,
						.private_dirty_kb = -1, .sys_cow = -1, .cause = { -1, -1, -1, -1 },
						.wp_faults = -1 },
		    v, &t);
	cb_out_header(&stat_out, v);
	cli_flush_stdout(); /* at once: whoever reads it knows the baseline is taken */
}

static void print_line(const struct stat_state *st, const char *label, const struct line *l)
{
	struct cb_val v[SF_NFIELDS];
	struct stat_texts t;

	line_values(st, label, l, v, &t);
	cb_out_record(&stat_out, v);
	if (!strcmp(label, "total"))
		cb_out_close(&stat_out);
	cli_flush_stdout();
}

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void catch_stop_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop; /* no SA_RESTART: poll returns, the total is printed */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

#define POLL_S 0.02  /* the fault buffers are emptied this often between lines */
#define RUNG_S 0.002 /* and this soon again after a bell */

/*
 * Wait until the deadline, the root's end or a stop request; true when the
 * root ended. A fork or exit anywhere rings the recorder's bells: the
 * buffers are emptied at once, so a fork's page map is read while the
 * process that forked still runs (forkcow.h), and once more shortly after,
 * for a record another CPU had not yet written when the bell rang.
 */
static bool wait_tick(struct stat_state *st, int pidfd, double deadline)
{
	struct stat_where *where = st->where;
	struct cb_wpfault *recorder = where ? stat_where_recorder(where) : NULL; /* NULL: nothing to empty between lines */
	int xfd = st->exits ? cb_taskstats_fd(st->exits) : -1;
	bool rung = false, ready;

	for (;;) {
		double left = deadline - cli_now_s(), nap;

		if (where)
			stat_where_poll(where);
		if (left <= 0 || stop_requested)
			return false;
		nap = recorder && left > POLL_S ? (rung ? RUNG_S : POLL_S) : left;
		if (cli_wait_watched_fd(pidfd, recorder, xfd, nap, &rung, &ready) > 0)
			return true;
		if (ready)
			stat_drain_exits(st);
	}
}

static void note_missing(const struct stat_state *st)
{
	const char *why;

	if (st->system_only)
		return;
	if (st->ts_err != 0) {
		char off[256] = "";

		why = st->ts_err == CB_EDELAYACCT ? cli_delayacct_off_why(off, sizeof(off))
		      : st->ts_err == CB_EPREDATES ? "writer-predates-delayacct: the process started before kernel.task_delayacct=1"
						   : cb_probe_reason(CB_PROBE_TASKSTATS, st->ts_err);
		if (st->copies_from_faults)
			cli_note("no kernel copy count or copy time (taskstats: %s); wp_faults are write faults on "
				 "present pages (COW copies plus reuses) from the exceptions:page_fault_user tracepoint%s", why,
				 st->causes ? ", fork_copies those a fork caused" : "");
		else
			cli_note("COW copies not measured: taskstats: %s; tracepoint: %s", why,
				 cb_wpfault_advice(st->fault_err));
	}
	if (st->o.where.mode != WHERE_NONE && st->fault_err)
		cli_note("--where=%s: write faults not recorded: %s%s", st->o.where.mode == WHERE_CODE ? "code" : "maps",
			 cb_wpfault_advice(st->fault_err),
			 st->o.where.mode == WHERE_MAPS ? "; the smaps columns are measured" : "");
}

/*
 * Forks whose page map stat could not read: the process that forked and
 * its child were both gone (exit, exec) before stat ran after the fork
 * (a loaded machine). Their copies are in the count, but under other.
 */
static void note_unread_forks(const struct stat_state *st)
{
	uint64_t seen, unread;

	if (!st->causes)
		return;
	stat_where_forks(st->where, &seen, &unread);
	if (unread)
		cli_note("%llu of %llu forks could not be read (both sides gone before stat ran after the fork): "
			 "their copies count as other_wp_faults, not fork_copies",
			 (unsigned long long)unread, (unsigned long long)seen);
}

/* Records the kernel dropped: the counts are lower bounds, and say so (nothing measured is lost silently). */
static void note_lost(const struct stat_state *st)
{
	struct cb_wpfault *wp = st->where ? stat_where_recorder(st->where) : NULL;

	if (st->exits && cb_taskstats_overruns(st->exits))
		cli_note("the kernel dropped exit records %lu time(s) (its buffer was full): copies of processes that "
			 "ended meanwhile may be missing, so the counts are at least these",
			 cb_taskstats_overruns(st->exits));
	if (st->copies_from_faults && st->o.where.mode == WHERE_NONE && wp && cb_wpfault_lost(wp))
		cli_note("the kernel dropped %llu write-fault records (buffers full): the counts are short by that many",
			 (unsigned long long)cb_wpfault_lost(wp));
}

/*
 * The two sources disagree: taskstats counted fewer copies than the
 * tracepoint saw forks cause. Name the processes taskstats could not count
 * (none at all: born before delay accounting was switched on, by another
 * cowbench or by hand) and what remains (copies of processes gone unseen).
 */
static void note_disagreement(const struct stat_state *st, const struct line *total)
{
	int64_t unaccounted = 0;
	long procs = 0;
	pid_t first = 0;
	/* The column as this output names it: the table heads it all_copies, CSV and JSON cow_copies. */
	const char *col = st->o.format == CB_FORMAT_TABLE ? copies_label(st) : "cow_copies";

	if (st->ts_err != 0 || !st->causes || total->copies < 0 || total->cause[0] < 0 || total->copies >= total->cause[0])
		return;
	for (size_t i = 0; i < st->nprocs; i++) {
		const struct proc *p = &st->procs[i];
		int64_t copies = p->cur.copies - p->base.copies, fork = p->cur.cause[0] - p->base.cause[0];

		if (p->cur.copies >= 0 && p->base.copies >= 0 && copies == 0 && p->cur.cause[0] >= 0 && fork > 0) {
			unaccounted += fork;
			if (!procs++)
				first = p->pid;
		}
	}
	if (procs)
		cli_note("%s %lld < fork_copies %lld: %ld process(es) (pid %d%s) took %lld fork copies the kernel's "
			 "count has none of: born before kernel.task_delayacct=1, so delay accounting never counts them; "
			 "fork_copies (the tracepoint) has them", col, (long long)total->copies, (long long)total->cause[0], procs,
			 (int)first, procs > 1 ? " and others" : "", (long long)unaccounted);
	else
		cli_note("%s %lld < fork_copies %lld: the kernel's count misses copies the tracepoint saw (processes "
			 "that ended between two looks without an exit record), or the tracepoint took for copies writes "
			 "the kernel did in place because the fork's other side had dropped the page (MADV_DONTNEED, munmap: "
			 "no record shows it)", col, (long long)total->copies, (long long)total->cause[0]);
}

/*
 * Short-lived children and a long interval: every line but the last shows
 * nothing, and --where's pagemap rows see no page of a process that came
 * and went between two looks. Say what interval would show them.
 */
static void note_interval(const struct stat_state *st)
{
	size_t unseen = 0;

	for (size_t i = 0; i < st->nprocs; i++)
		if (st->procs[i].gone && st->procs[i].pid != st->root && st->procs[i].base.copies == 0 &&
		    st->procs[i].cur.private_dirty_kb < 0)
			unseen++; /* born and gone between two looks: known from its exit or fork record only */
	if (unseen && st->o.interval > 0.1 && st->o.where.mode != WHERE_NONE)
		cli_note("%zu process(es) lived less than one interval (%.2g s): their copies are in the totals, but --where "
			 "could not look at their pages; --interval=0.1 (or less) catches them alive", unseen, st->o.interval);
}

/* Whether the output shows a write-fault cause column: CSV and JSON always, the table unless --columns leaves them out. */
static bool causes_shown(const struct stat_opts *o)
{
	char list[256], *save, *name;

	if (o->format != CB_FORMAT_TABLE || !o->columns || strlen(o->columns) >= sizeof(list))
		return true;
	snprintf(list, sizeof(list), "%s", o->columns);
	for (name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save))
		for (int k = 0; k < CB_FC_NCLASS; k++)
			if (!strcmp(name, stat_fields[SF_CAUSE0 + k].name))
				return true;
	return false;
}

/*
 * The tracepoint, before the first process is looked at so that no fault
 * is missed: for --where, for the count when taskstats cannot give it, and
 * for the cause columns when they are shown. Its sample in every write
 * fault is most of what watching costs the program (bench_stat), so a
 * table whose --columns has no cause, with taskstats counting, goes
 * without it.
 */
static void open_where(struct stat_state *st)
{
	st->o.where.children = st->o.children;
	st->o.where.want_faults = st->ts_err != 0 || causes_shown(&st->o);
	st->where = stat_where_new(&st->o.where, &st->fault_err);
	st->copies_from_faults = st->where && st->ts_err != 0 && st->fault_err == 0;
	st->causes = st->where && stat_where_attributes(st->where);
}

/* true when the root process ended while watched */
static bool run_loop(struct stat_state *st)
{
	bool ended = false;

	int pidfd = (int)syscall(SYS_pidfd_open, st->root, 0);
	char label[32];

	for (long i = 1; st->o.count == 0 || i <= st->o.count; i++) {
		struct line l;

		ended = wait_tick(st, pidfd, st->t0 + (double)i * st->o.interval);
		if (stop_requested)
			break;
		if (ended && st->own_child) /* a zombie until reaped: its last counts are still there */
			waitid(P_PID, (id_t)st->root, NULL, WEXITED | WNOWAIT);
		stat_sample_all(st);
		l = sum_line(st, false);
		snprintf(label, sizeof(label), "%.2f", cli_now_s() - st->t0);
		print_line(st, label, &l);
		stat_mark_line(st);
		if (ended || (stat_find_proc(st, st->root) && stat_find_proc(st, st->root)->gone)) {
			ended = true;
			break;
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	return ended;
}

static int parse_stat_args(int argc, char **argv, struct stat_opts *o, int *cmd)
{
	int argi;

	/* The command's own options are its: the first operand ends cowbench's. */
	argi = cli_parse_options_first(argc, argv, stat_options, N_STAT_OPTIONS, o, stat_usage);
	if (argi < 0)
		return -1;
	if (cli_check_target(argc, argv, argi, o->pid != 0, "cowbench stat") < 0)
		return -1;
	if (!o->pid && argi >= argc && !o->system) {
		cli_error("nothing to watch: give -p PID, -- COMMAND or --system (see cowbench stat --help)");
		return -1;
	}
	if (o->where.mode == WHERE_NONE && (o->where.top || o->where.folded || o->where.sample)) {
		cli_error("--top, --sample and --folded go with --where");
		return -1;
	}
	if (o->where.mode != WHERE_CODE && (o->where.folded || o->where.sample)) {
		cli_error("--sample and --folded go with --where=code");
		return -1;
	}
	if (o->where.mode != WHERE_NONE && !o->pid && argi >= argc) {
		cli_error("--where needs a process: -p PID or -- COMMAND");
		return -1;
	}
	if (cli_output_not_input("--folded", o->where.folded, argv + argi, argc - argi) < 0)
		return -1;
	if (o->where.folded && cli_output_check("--folded", o->where.folded, o->where.force, NULL, 0) < 0)
		return -1;
	o->where.top = o->where.top ? o->where.top : 10;
	o->where.sample = o->where.sample ? o->where.sample : 1;
	*cmd = argi;
	return 0;
}

static int wait_status(pid_t pid)
{
	int ws;

	if (cb_wait_status(pid, &ws) < 0)
		return EXIT_INTERNAL;
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

/*
 * Taskstats, then the process (-p PID, or COMMAND held before exec) and its
 * baseline. 0, or EXIT_USAGE after saying why.
 */
static int start_watching(struct stat_state *st, char **cmdv)
{
	int go_fd = -1, err_fd = -1, e;
	/* Switched on only now: a process already running was born without its delay record. */
	bool predates = cli_evidence_prepare() == 1 && st->o.pid;

	st->ts_err = cb_delayacct_enabled() == 1 ? cb_taskstats_open(&st->ts) : CB_EDELAYACCT;
	if (getenv("COWBENCH_STAT_NO_TASKSTATS") && st->ts_err == 0) { /* test aid (documented): the fallback */
		cb_taskstats_close(st->ts);
		st->ts = NULL;
		st->ts_err = -ECANCELED;
	}
	if (predates && st->ts_err == 0)
		st->ts_err = CB_EPREDATES;
	if (st->ts_err == 0 && cb_taskstats_listen(&st->exits) < 0)
		st->exits = NULL; /* then a process's last interval before it is reaped is lost */
	open_where(st);
	st->root = st->o.pid;
	if (!st->root) {
		st->root = cli_spawn_held(cmdv, &go_fd, &err_fd);
		if (st->root < 0) {
			cli_error("cannot start %s: %s", cmdv[0], strerror(errno));
			return EXIT_USAGE;
		}
		st->own_child = true;
	}
	stat_add_proc(st, st->root, 0, true);
	if (st->o.children)
		stat_discover_children(st, true);
	if (st->own_child && (e = cli_release_held(st->root, go_fd, err_fd)) != 0) {
		cli_error("cannot run %s: %s", cmdv[0], strerror(e));
		st->own_child = false; /* already reaped */
		return EXIT_USAGE;
	}
	return 0;
}

int cmd_stat(int argc, char **argv)
{
	struct stat_state st = { .o = { .interval = 1.0, .children = true, .format = CB_FORMAT_TABLE } };
	struct line total;
	int cmd, status;
	bool ended;

	if (parse_stat_args(argc, argv, &st.o, &cmd) < 0)
		return EXIT_USAGE;
	st.procs = calloc(MAX_PROCS, sizeof(*st.procs));
	st.pend = calloc(MAX_PENDING_EXITS, sizeof(*st.pend));
	if (!st.procs) {
		cli_error("out of memory");
		return EXIT_INTERNAL;
	}
	st.system_only = st.o.system && !st.o.pid && cmd >= argc;
	st.have_cowstats = cb_cowstats_read(stat_cowstats_path(), &st.cs_base) == 0;
	st.cs_cur = st.cs_base;
	if (st.system_only && !st.have_cowstats) {
		cli_error("--system needs %s, from the cowbench kernel (see kernel/README.md)",
			  stat_cowstats_path() ? stat_cowstats_path() : CB_COWSTATS_PATH);
		status = EXIT_USAGE;
	} else {
		catch_stop_signals(); /* before the command runs: a SIGTERM then still stops it and prints the total */
		status = st.system_only ? 0 : start_watching(&st, argv + cmd);
	}
	if (status == 0) {
		note_missing(&st);
		print_header(&st);
		st.t0 = cli_now_s();
		ended = run_loop(&st);
		stat_finish_causes(&st);
		total = sum_line(&st, true);
		print_line(&st, "total", &total);
		note_unread_forks(&st);
		note_lost(&st);
		note_disagreement(&st, &total);
		note_interval(&st);
		if (st.where)
			stat_where_print(st.where,
					 &(struct stat_where_totals){ st.copies_from_faults ? total.wp_faults : total.copies,
								      copies_source(&st) },
					 st.o.format, stdout);
		if (st.own_child) {
			if (!ended) { /* stopped early: the command is not left running unwatched */
				cli_note("stopped watching: sent SIGTERM to %s (pid %d)", argv[cmd], (int)st.root);
				kill(st.root, SIGTERM);
			}
			status = wait_status(st.root);
		}
		if (stat_where_write_failed(st.where) && status == 0)
			status = EXIT_RUN_FAILED;
	}
	cb_taskstats_close(st.ts);
	cb_taskstats_close(st.exits);
	stat_where_free(st.where);
	free(st.procs);
	free(st.pend);
	return status;
}
