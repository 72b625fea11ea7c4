/*
 * cowbench record: the first write of each process to each page after a
 * fork, in a trace file (trace.h) that --workload=replay plays back. The
 * write-fault tracepoint gives every write fault on a present page with its
 * address; fork snapshots through pagemap (forkcow.h) say which fork, which
 * mapping and whether the write copied, reused or copied the zero page. The
 * file is written to a temporary name and renamed when whole, with a
 * trailer a reader requires.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cowbench/cowbench.h>
#include <cowbench/forkcow.h>
#include <cowbench/trace.h>
#include <cowbench/wpfault.h>

#include "common/diag.h"
#include "common/args.h"
#include "common/spawn.h"
#include "common/outfile.h"
#include "common/commands.h"

struct record_opts {
	pid_t pid;
	const char *output;
	double duration;
	bool no_children, force;
};

struct recorder {
	struct cb_wpfault *wp;
	struct cb_forkcow *fc;
	struct cb_trace_rec *rec;
	size_t n, cap;
	bool oom;
	uint64_t execs;
};

static volatile sig_atomic_t stop_requested;

#define ROPTS(p) ((struct record_opts *)(p))

static bool ropt_pid(void *o, const char *v)
{
	long pid;

	if (!cli_parse_long(v, 1, 0x3fffffff, &pid) || (kill((pid_t)pid, 0) < 0 && errno == ESRCH)) {
		cli_error("--pid=%s is not a running process", v);
		return false;
	}
	ROPTS(o)->pid = (pid_t)pid;
	return true;
}

/* Checked with every other output's rule (cli_output_check) once --force is known, before anything runs. */
static bool ropt_output(void *o, const char *v)
{
	ROPTS(o)->output = v;
	return true;
}

static bool ropt_duration(void *o, const char *v)
{
	return cli_parse_seconds("--duration", v, &ROPTS(o)->duration);
}

static const struct cli_option record_options[] = {
	{ "pid", "PID", "record this running process", .parse = ropt_pid, .letter = 'p' },
	{ "output", "FILE", "the trace file (required; written whole or not at all)", .parse = ropt_output },
	{ "duration", "S", "stop after S seconds (default: until the process ends or Ctrl-C)", .parse = ropt_duration },
	{ "no-children", NULL, "record the process alone, not the children it forks",
	  CLI_SET(CLI_STORE_TRUE, struct record_opts, no_children) },
	{ "force", NULL, "replace an existing non-empty --output", CLI_SET(CLI_STORE_TRUE, struct record_opts, force) },
};

#define N_RECORD_OPTIONS ((int)(sizeof(record_options) / sizeof(record_options[0])))

static void record_usage(void)
{
	printf("usage: cowbench record --output=FILE [OPTIONS] -p PID\n"
	       "       cowbench record --output=FILE [OPTIONS] -- COMMAND [ARGS...]\n\n"
	       "As root: per process, the first write to each page after a fork (time since the fork,\n"
	       "mapping kind, size and page, copy or reuse or zero-page copy) from the write-fault\n"
	       "tracepoint and pagemap fork snapshots, into a versioned trace for\n"
	       "cowbench run --workload=replay --trace=FILE. Cost to the program: as cowbench stat\n"
	       "(each fork makes record read the forker's page map; see the man page).\n\n");
	cli_print_options(record_options, N_RECORD_OPTIONS);
}

static void on_write(void *arg, const struct cb_fc_write *w)
{
	struct recorder *r = arg;
	struct cb_trace_rec *t;

	if (!w->map || !w->first || w->cls == CB_FC_OTHER)
		return; /* only first writes to pages a fork covers */
	t = r->n < CB_TRACE_MAX_RECORDS ? cb_array_room(r->rec, &r->cap, r->n, sizeof(*t), 4096) : NULL;
	if (!t) {
		r->oom = true;
		return;
	}
	r->rec = t;
	t = &r->rec[r->n++];
	memset(t, 0, sizeof(*t));
	t->t_ns = w->time_ns >= w->fork_ns ? w->time_ns - w->fork_ns : 0;
	t->fork = (uint32_t)w->fork_id;
	t->side = w->child ? CB_TRACE_CHILD : CB_TRACE_PARENT;
	t->pid = (int)w->pid;
	t->map = w->map->index;
	snprintf(t->kind, sizeof(t->kind), "%s", cb_fc_map_kind(w->map));
	t->map_pages = (w->map->end - w->map->start) / (uint64_t)sysconf(_SC_PAGESIZE);
	t->page = (w->addr - w->map->start) / (uint64_t)sysconf(_SC_PAGESIZE);
	t->cls = w->cls == CB_FC_FORK_COPY ? CB_TRACE_COPY : w->cls == CB_FC_FORK_REUSE ? CB_TRACE_REUSE : CB_TRACE_ZERO;
}

static void rec_sample(void *arg, const struct cb_wpfault_sample *s)
{
	cb_forkcow_fault(((struct recorder *)arg)->fc, s);
}

static void rec_task(void *arg, const struct cb_wpfault_task *t)
{
	struct recorder *r = arg;
	struct cb_fc_counts c;

	uint64_t forks, unsnapped;

	cb_forkcow_forks(r->fc, &forks, &unsnapped);
	/* the command's own exec at the start is not news; one after a fork cuts that fork short */
	if (t->kind == CB_WPFAULT_EXEC && t->pid == t->tid && forks > 0 && cb_forkcow_counts(r->fc, t->pid, &c))
		r->execs++;
	cb_forkcow_task(r->fc, t);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* final: everything buffered, else what is older than the drain's start (forkcow.h) */
static void drain(struct recorder *r, bool final)
{
	const struct cb_wpfault_handler h = { rec_sample, rec_task, r };
	uint64_t mark = mono_ns();

	cb_wpfault_drain(r->wp, &h);
	cb_forkcow_flush(r->fc, final ? UINT64_MAX : mark, on_write, r);
}

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* Until the root ends, the duration passes or a stop signal; true when the root ended. */
static bool record_loop(struct recorder *r, pid_t root, double deadline)
{
	int pidfd = (int)syscall(SYS_pidfd_open, root, 0);
	bool ended = false;

	bool rung = false;

	/* A fork rings the bells: drained at once, the fork's page map read while its process runs. */
	while (!stop_requested && !ended && (deadline <= 0 || cli_now_s() < deadline)) {
		ended = cli_wait_watched(pidfd, r->wp, rung ? 0.002 : 0.02, &rung) > 0;
		drain(r, false);
	}
	usleep(50000); /* the last records of the end reach the buffers */
	drain(r, true);
	if (pidfd >= 0)
		close(pidfd);
	return ended;
}

static int cmp_rec(const void *a, const void *b)
{
	const struct cb_trace_rec *x = a, *y = b;

	if (x->fork != y->fork)
		return x->fork < y->fork ? -1 : 1;
	return x->t_ns < y->t_ns ? -1 : x->t_ns > y->t_ns;
}

static void describe(char *buf, size_t len, char **cmdv, pid_t pid)
{
	size_t off = 0;

	buf[0] = '\0';
	if (!cmdv || !cmdv[0]) {
		char path[64], args[512] = "";
		FILE *fp;
		size_t n = 0;

		/* -p PID: what that process runs, as /proc/PID/cmdline says (the header sanitises it) */
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
		if ((fp = fopen(path, "re"))) {
			n = fread(args, 1, sizeof(args) - 1, fp);
			fclose(fp);
		}
		while (n > 0 && args[n - 1] == '\0')
			n--;
		for (size_t i = 0; i < n; i++)
			args[i] = args[i] ? args[i] : ' ';
		args[n] = '\0';
		snprintf(buf, len, "pid %d%s%s%s", (int)pid, n ? " (" : "", args, n ? ")" : "");
		return;
	}
	for (int i = 0; cmdv[i] && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? " " : "", cmdv[i]);
}

/* The whole trace into OUT's temporary file (opened before the command ran), renamed over FILE once complete. */
static int write_trace(struct cli_output *out, struct recorder *r, const char *command)
{
	char kernel[200];
	struct utsname u;
	int err = 0;

	uname(&u);
	snprintf(kernel, sizeof(kernel), "%s %s %s", u.sysname, u.release, u.machine);
	if (r->n) /* qsort wants an array, even of nothing */
		qsort(r->rec, r->n, sizeof(*r->rec), cmp_rec);
	err = cb_trace_write_header(out->fp, "exceptions:page_fault_user tracepoint + pagemap fork snapshots "
					     "(cowbench record)", kernel, command);
	for (size_t i = 0; i < r->n && !err; i++)
		err = cb_trace_write_rec(out->fp, &r->rec[i]);
	if (!err)
		err = cb_trace_write_end(out->fp, r->n, cb_wpfault_lost(r->wp));
	if (err) {
		cli_error("cannot write %s: %s (nothing written)", out->path, strerror(-err));
		cli_output_abort(out);
		return -1;
	}
	return cli_output_commit(out);
}

static int parse_record_args(int argc, char **argv, struct record_opts *o)
{
	int argi;

	/* The command's own options are its: the first operand ends cowbench's. */
	argi = cli_parse_options_first(argc, argv, record_options, N_RECORD_OPTIONS, o, record_usage);
	if (argi < 0)
		return -1;
	if (cli_check_target(argc, argv, argi, o->pid != 0, "cowbench record --output=FILE") < 0)
		return -1;
	if (!o->pid && argi >= argc) {
		cli_error("nothing to record: give -p PID or -- COMMAND (see cowbench record --help)");
		return -1;
	}
	if (!o->output) {
		cli_error("record needs --output=FILE");
		return -1;
	}
	if (!o->pid && cli_output_not_input("--output", o->output, argv + argi, argc - argi) < 0)
		return -1; /* the program to record (or a file it is given) is never the trace file, even with --force */
	if (cli_output_check("--output", o->output, o->force, NULL, 0) < 0)
		return -1;
	return argi;
}

static void summarize(const struct recorder *r, const struct record_opts *o, bool ended)
{
	size_t cls[3] = { 0, 0, 0 };
	uint64_t forks, unsnapped;

	for (size_t i = 0; i < r->n; i++)
		cls[r->rec[i].cls]++;
	cb_forkcow_forks(r->fc, &forks, &unsnapped);
	cli_note("recorded %zu first writes after %llu forks (%zu copies, %zu reuses, %zu zero-page copies) to %s%s",
		 r->n, (unsigned long long)forks, cls[0], cls[1], cls[2], o->output,
		 ended ? "" : " (stopped before the process ended)");
	if (unsnapped)
		cli_note("%llu forks could not be read (both sides gone within milliseconds): their writes are missing",
			 (unsigned long long)unsnapped);
	if (r->execs)
		cli_note("%llu recorded processes exec'd: their writes after exec belong to no fork and are left out",
			 (unsigned long long)r->execs);
	if (cb_wpfault_lost(r->wp))
		cli_note("the kernel dropped %llu write faults (buffers full): the trace misses them, its trailer says so",
			 (unsigned long long)cb_wpfault_lost(r->wp));
	if (!forks)
		cli_note("no fork of the recorded processes was seen: the trace has no records");
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o = { 0 };
	struct recorder r = { 0 };
	struct cb_wpfault_opts wo = { .period = 1 };
	struct cli_output out = { .lockfd = -1 };
	char command[1024];
	int argi, err, go_fd = -1, err_fd = -1, status = 0;
	pid_t root;
	bool ended;

	if ((argi = parse_record_args(argc, argv, &o)) < 0)
		return EXIT_USAGE;
	if ((err = cb_wpfault_open(&wo, &r.wp)) < 0) {
		cli_error("record needs the write-fault tracepoint: %s", cb_wpfault_advice(err));
		return EXIT_USAGE;
	}
	if ((err = cb_forkcow_new(!o.no_children, &r.fc)) < 0) {
		cli_error("record needs page frame numbers from pagemap (root): %s", strerror(-err));
		cb_wpfault_close(r.wp);
		return EXIT_USAGE;
	}
	/* the trace's temporary file exists before the command runs: nothing recorded is lost to a bad name */
	if (cli_output_begin(&out, o.output, o.force) < 0) {
		status = EXIT_USAGE;
		goto out;
	}
	root = o.pid ? o.pid : cli_spawn_held(argv + argi, &go_fd, &err_fd);
	if (root < 0) {
		cli_error("cannot start %s: %s", argv[argi], strerror(errno));
		cli_output_abort(&out);
		status = EXIT_USAGE;
		goto out;
	}
	cb_forkcow_watch(r.fc, root);
	describe(command, sizeof(command), o.pid ? NULL : argv + argi, root);
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	signal(SIGHUP, on_stop);
	if (go_fd >= 0 && (err = cli_release_held(root, go_fd, err_fd)) != 0) {
		/* a command that never ran leaves no trace file (and replaces none) */
		cli_error("cannot run %s: %s", argv[argi], strerror(err));
		cli_output_abort(&out);
		status = EXIT_USAGE;
		goto out;
	}
	ended = record_loop(&r, root, o.duration > 0 ? cli_now_s() + o.duration : 0);
	if (!o.pid) {
		int ws;

		if (!ended)
			kill(root, SIGTERM);
		status = cb_wait_status(root, &ws) < 0 ? EXIT_INTERNAL : WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	}
	if (r.oom) {
		cli_error("out of memory after %zu records: %s not written", r.n, o.output);
		cli_output_abort(&out);
		status = EXIT_INTERNAL;
	} else if (write_trace(&out, &r, command) < 0) {
		status = EXIT_INTERNAL;
	} else {
		summarize(&r, &o, ended);
	}
out:
	cb_forkcow_free(r.fc);
	cb_wpfault_close(r.wp);
	free(r.rec);
	return status;
}
