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

#include "cli.h"

#include "stat_state.h"

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
	static const char *const names[] = { [STAT_TEXT] = "text", [STAT_CSV] = "csv", [STAT_JSON] = "json" };

	for (int f = STAT_TEXT; f <= STAT_JSON; f++)
		if (strcmp(v, names[f]) == 0) {
			OPTS(o)->format = (enum stat_format)f;
			return true;
		}
	cli_error("--format must be text, csv or json, not '%s'", v);
	return false;
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
	{ "format", "text|csv|json", "aligned text (default), CSV or JSON Lines", .parse = opt_format },
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
	       "stat reads a forking process's page map at each fork; a Python loop forking 100 times ran\n"
	       "about 1.2-1.8x slower under stat (loaded 2-vCPU VM, docs/cowbench.1).\n\n");
	cli_print_options(stat_options, N_STAT_OPTIONS);
}

struct line {
	int64_t procs, copies, copy_ns, minflt, majflt, private_dirty_kb, sys_cow;
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
	struct line l = { 0, -1, -1, -1, -1, -1, -1, { -1, -1, -1, -1 } };
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
	if (st->system_only) { /* the machine's copies, counted by the cowbench kernel */
		l.procs = -1;
		l.copies = l.sys_cow;
		if (cb_cowstats_delta(total ? &st->cs_base : &st->cs_prev, &st->cs_cur, "copy_ns_total", &d))
			l.copy_ns = (int64_t)d;
	}
	return l;
}

static void cell_int(bool csv, int width, int64_t v)
{
	if (csv)
		v >= 0 ? printf(",%" PRId64, v) : printf(",");
	else
		v >= 0 ? printf(" %*" PRId64, width, v) : printf(" %*s", width, "-");
}

static void cell_flt(bool csv, int width, int decimals, double v)
{
	if (csv)
		!isnan(v) ? printf(",%.*f", decimals, v) : printf(",");
	else
		!isnan(v) ? printf(" %*.*f", width, decimals, v) : printf(" %*s", width, "-");
}

/* Where cow_copies come from: the kernel's copy count, or write faults on present pages. */
static const char *copies_source(const struct stat_state *st)
{
	if (st->system_only)
		return "cow_stats";
	if (st->copies_from_faults)
		return "tracepoint";
	return st->ts_err == 0 ? "taskstats" : "";
}

/* Write faults on present pages by cause (forkcow.h); the names of their columns. */
static const char *const cause_cols[CB_FC_NCLASS] = { "fork_copies", "fork_reuses", "zero_copies", "other_wp_faults" };

/* The text header names what cow_copies counts here: every kernel copy, or write faults. */
static const char *copies_label(const struct stat_state *st)
{
	if (st->copies_from_faults)
		return "wp_faults";
	return st->ts_err == 0 && !st->system_only ? "all_copies" : "cow_copies";
}

static void print_header(const struct stat_state *st)
{
	if (st->o.format == STAT_CSV) {
		printf("time_s,procs,cow_copies,copy_ns,copy_ns_mean,minflt,majflt,private_dirty_kb,sys_cow_faults,"
		       "copies_source");
		for (int k = 0; k < CB_FC_NCLASS; k++)
			printf(",%s", cause_cols[k]);
		printf("\n");
	} else if (st->o.format == STAT_JSON) {
		return;
	} else {
		printf("%8s %5s", "time_s", "procs");
		if (st->causes)
			printf(" %11s %11s %11s %15s", cause_cols[0], cause_cols[1], cause_cols[2], cause_cols[3]);
		printf(" %10s %9s %8s %9s %6s %16s %14s\n", copies_label(st), "copy_ms", "us/copy", "minflt", "majflt",
		       "private_dirty_kb", "sys_cow_faults");
	}
	cli_flush_stdout(); /* at once: whoever reads it knows the baseline is taken */
}

/* JSON Lines: one object per line, null for what was not measured. */
static void print_json(const struct stat_state *st, const char *label, double t, const struct line *l)
{
	const int64_t v[] = { l->procs, l->copies, l->copy_ns, l->minflt, l->majflt, l->private_dirty_kb, l->sys_cow };
	static const char *const k[] = { "procs", "cow_copies", "copy_ns", "minflt", "majflt", "private_dirty_kb",
					 "sys_cow_faults" };

	printf("{\"line\":\"%s\",\"time_s\":%.3f", label, t);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		v[i] >= 0 ? printf(",\"%s\":%" PRId64, k[i], v[i]) : printf(",\"%s\":null", k[i]);
	if (l->copies > 0 && l->copy_ns >= 0)
		printf(",\"copy_ns_mean\":%.1f", (double)l->copy_ns / (double)l->copies);
	else
		printf(",\"copy_ns_mean\":null");
	for (int c = 0; c < CB_FC_NCLASS; c++)
		l->cause[c] >= 0 ? printf(",\"%s\":%" PRId64, cause_cols[c], l->cause[c])
				 : printf(",\"%s\":null", cause_cols[c]);
	printf(",\"copies_source\":\"%s\"}\n", copies_source(st));
	cli_flush_stdout();
}

static void print_line(const struct stat_state *st, const char *label, const struct line *l)
{
	bool csv = st->o.format == STAT_CSV;
	double mean = l->copies > 0 && l->copy_ns >= 0 ? (double)l->copy_ns / (double)l->copies : NAN;

	if (st->o.format == STAT_JSON) {
		print_json(st, strcmp(label, "total") == 0 ? "total" : "interval",
			   strcmp(label, "total") == 0 ? cli_now_s() - st->t0 : atof(label), l);
		return;
	}

	printf(csv ? "%s" : "%8s", label);
	cell_int(csv, 5, l->procs);
	for (int k = 0; k < CB_FC_NCLASS && st->causes && !csv; k++)
		cell_int(csv, k == 3 ? 15 : 11, l->cause[k]);
	cell_int(csv, 10, l->copies);
	if (csv) {
		cell_int(csv, 0, l->copy_ns);
		cell_flt(csv, 0, 1, mean);
	} else {
		cell_flt(csv, 9, 2, l->copy_ns >= 0 ? (double)l->copy_ns / 1e6 : NAN);
		cell_flt(csv, 8, 2, mean / 1e3);
	}
	cell_int(csv, 9, l->minflt);
	cell_int(csv, 6, l->majflt);
	cell_int(csv, 16, l->private_dirty_kb);
	cell_int(csv, 14, l->sys_cow);
	if (csv) {
		printf(",%s", copies_source(st));
		for (int k = 0; k < CB_FC_NCLASS; k++)
			cell_int(csv, 0, l->cause[k]);
	}
	printf("\n");
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
static bool wait_tick(struct stat_where *where, int pidfd, double deadline)
{
	bool rung = false;

	for (;;) {
		double left = deadline - cli_now_s(), nap;

		if (where)
			stat_where_poll(where);
		if (left <= 0 || stop_requested)
			return false;
		nap = where && left > POLL_S ? (rung ? RUNG_S : POLL_S) : left;
		if (cli_wait_watched(pidfd, where ? stat_where_recorder(where) : NULL, nap, &rung) > 0)
			return true;
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

/* The tracepoint, before the first process is looked at so that no fault is missed. */
static void open_where(struct stat_state *st)
{
	st->o.where.children = st->o.children;
	st->o.where.want_faults = true; /* the fallback count, and fork copies told from the rest */
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

		ended = wait_tick(st->where, pidfd, st->t0 + (double)i * st->o.interval);
		if (stop_requested)
			break;
		if (ended && st->own_child) /* a zombie until reaped: its last counts are still there */
			waitid(P_PID, (id_t)st->root, NULL, WEXITED | WNOWAIT);
		stat_sample_all(st);
		l = sum_line(st, false);
		snprintf(label, sizeof(label), "%.2f", cli_now_s() - st->t0);
		print_line(st, label, &l);
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
	struct stat_state st = { .o = { .interval = 1.0, .children = true } };
	struct line total;
	int cmd, status;
	bool ended;

	if (parse_stat_args(argc, argv, &st.o, &cmd) < 0)
		return EXIT_USAGE;
	st.procs = calloc(MAX_PROCS, sizeof(*st.procs));
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
		if (st.where)
			stat_where_print(st.where, &(struct stat_where_totals){ total.copies, copies_source(&st) },
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
	return status;
}
