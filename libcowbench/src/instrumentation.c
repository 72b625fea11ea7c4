/* System-wide instrumentation that taxes every fault: delay accounting, perf events, tracing. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cowbench/instrumentation.h>
#include <cowbench/sysctl.h>

#include "fileutil.h"

static const char *const tracefs_mounts[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* Perf event fds a process holds; -errno when its fd table cannot be read (gone, or not ours). */
static long perf_fds_of(const char *proc_root, const char *pid)
{
	char path[256], link[64];
	struct dirent *e;
	long n = 0;
	DIR *d;

	if (snprintf(path, sizeof(path), "%s/%s/fd", proc_root, pid) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	d = opendir(path);
	if (!d)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		ssize_t len;

		if (!all_digits(e->d_name))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s/fd/%s", proc_root, pid, e->d_name) >= (int)sizeof(path))
			continue;
		len = readlink(path, link, sizeof(link) - 1);
		if (len < 0)
			continue;
		link[len] = '\0';
		n += strcmp(link, "anon_inode:[perf_event]") == 0;
	}
	closedir(d);
	return n;
}

static void note_holder(struct cb_instrumentation *in, const char *proc_root, const char *pid)
{
	char path[256];
	long i = in->perf_procs;

	if (i >= CB_INSTR_MAX_HOLDERS)
		return;
	in->perf_pid[i] = (pid_t)atol(pid);
	if (snprintf(path, sizeof(path), "%s/%s/comm", proc_root, pid) >= (int)sizeof(path) ||
	    cb_read_text_file(path, in->perf_comm[i], sizeof(in->perf_comm[i])) < 0)
		in->perf_comm[i][0] = '\0';
	in->perf_comm[i][strcspn(in->perf_comm[i], "\n")] = '\0';
}

static void scan_perf(struct cb_instrumentation *in, const char *proc_root)
{
	char self[24];
	struct dirent *e;
	DIR *d = opendir(proc_root);

	snprintf(self, sizeof(self), "%ld", (long)getpid());
	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		long n;

		if (!all_digits(e->d_name) || strcmp(e->d_name, self) == 0)
			continue;
		n = perf_fds_of(proc_root, e->d_name);
		if (n == -EACCES || n == -EPERM)
			in->procs_unreadable++; /* another user's: its perf events are hidden from us */
		if (n < 0)
			continue;
		if (n == 0)
			continue;
		note_holder(in, proc_root, e->d_name);
		in->perf_fds += n;
		in->perf_procs++;
	}
	closedir(d);
}

/* Non-empty, non-comment lines of a tracefs file; the first one into first[]. -1 when unreadable. */
static long count_lines(const char *dir, const char *name, char *first, size_t len)
{
	char path[256], line[256];
	long n = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "re");
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		line[strcspn(line, "\n")] = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		if (n++ == 0 && first)
			snprintf(first, len, "%.*s", (int)len - 1, line); /* a name cut short is still a hint */
	}
	fclose(fp);
	return n;
}

/* Events enabled in the instances under dir/instances (each is a tracing buffer of its own). */
static void count_instance_events(struct cb_instrumentation *in, const char *dir)
{
	char path[256];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "%s/instances", dir);
	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		char inst[384];
		long n;

		if (e->d_name[0] == '.')
			continue;
		if (snprintf(inst, sizeof(inst), "%s/%s", path, e->d_name) >= (int)sizeof(inst))
			continue;
		n = count_lines(inst, "set_event", in->trace_events ? NULL : in->first_event, sizeof(in->first_event));
		if (n > 0)
			in->trace_events += n;
	}
	closedir(d);
}

static void scan_tracefs(struct cb_instrumentation *in, const char *dir)
{
	char buf[64];
	long v;

	snprintf(buf, sizeof(buf), "%s/current_tracer", dir);
	if (cb_read_text_file(buf, in->tracer, sizeof(in->tracer)) < 0)
		return; /* not mounted here, or not readable (root) */
	in->tracer[strcspn(in->tracer, "\n")] = '\0';
	snprintf(in->tracefs, sizeof(in->tracefs), "%s", dir);
	snprintf(buf, sizeof(buf), "%s/tracing_on", dir);
	in->tracing_on = cb_sysctl_read_long(buf, &v) == 0 ? (int)v : -1;
	v = count_lines(dir, "set_event", in->first_event, sizeof(in->first_event));
	in->trace_events = v > 0 ? v : 0;
	count_instance_events(in, dir);
	v = count_lines(dir, "kprobe_events", NULL, 0);
	in->kprobes = v > 0 ? v : 0;
	v = count_lines(dir, "uprobe_events", NULL, 0);
	in->uprobes = v > 0 ? v : 0;
}

void cb_instrumentation_scan(struct cb_instrumentation *in, const char *proc_root, const char *tracefs_root)
{
	char path[256];
	long v;
	int err;

	memset(in, 0, sizeof(*in));
	in->tracing_on = -1;
	snprintf(path, sizeof(path), "%s/sys/kernel/task_delayacct", proc_root);
	err = cb_sysctl_read_long(path, &v);
	in->delayacct = err < 0 ? err : v != 0;
	scan_perf(in, proc_root);
	if (tracefs_root) {
		scan_tracefs(in, tracefs_root);
		return;
	}
	for (size_t i = 0; i < sizeof(tracefs_mounts) / sizeof(tracefs_mounts[0]) && !in->tracefs[0]; i++)
		scan_tracefs(in, tracefs_mounts[i]);
}

bool cb_instrumentation_tracing(const struct cb_instrumentation *in)
{
	return in->tracefs[0] && ((in->tracer[0] && strcmp(in->tracer, "nop") != 0) || in->trace_events > 0 ||
				  in->kprobes > 0 || in->uprobes > 0);
}

bool cb_instrumentation_any(const struct cb_instrumentation *in)
{
	return in->delayacct == 1 || in->perf_fds > 0 || cb_instrumentation_tracing(in);
}
