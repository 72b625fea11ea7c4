/*
 * DAMON in cowbench info's tune block. A kdamond thread samples page
 * accesses (CPU time taken from a 2-CPU machine) and its schemes act on
 * pages (pageout reclaims them, also the ones being measured), so a user
 * measuring COW wants to know it runs and how to stop it. Everything read
 * here is untrusted text: bounded reads, words checked against a charset,
 * numbers parsed strictly, nothing used as a format.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cowbench/units.h>

#include "info_damon.h"

#define ADMIN "/sys/kernel/mm/damon/admin"
#define LINE_MAX_READ 256

static const char *const module_names[DAMON_NR_MODULES] = { "damon_reclaim", "damon_lru_sort", "damon_stat" };

/* The first line of path (at most LINE_MAX_READ bytes), newline stripped; -errno when unreadable. */
static int read_line(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* COWBENCH_DAMON_ROOT may name a FIFO */
	struct stat st;
	FILE *fp = NULL;
	int err;

	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -1;
		errno = EINVAL;
	}
	if (fd >= 0 && !(fp = fdopen(fd, "re")))
		close(fd);

	if (!fp)
		return -errno;
	err = fgets(buf, (int)len, fp) ? 0 : -EIO;
	fclose(fp);
	if (err == 0)
		buf[strcspn(buf, "\n")] = '\0';
	return err;
}

/* A sysfs word ("paddr", "pageout", "on"): [A-Za-z0-9_.-] only, else "?". */
static bool read_word(const char *path, char *word, size_t len)
{
	char buf[LINE_MAX_READ];
	size_t n;

	snprintf(word, len, "?");
	if (read_line(path, buf, sizeof(buf)) != 0)
		return false;
	n = strlen(buf);
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	if (n == 0 || n >= len || strspn(buf, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != n)
		return false;
	memcpy(word, buf, n + 1);
	return true;
}

/* A decimal integer with nothing but whitespace after it; -1 (false) otherwise. */
static bool parse_ll(const char *s, long long *v)
{
	char *end;

	*v = -1;
	errno = 0;
	long long x = strtoll(s, &end, 10);

	if (end == s || errno == ERANGE)
		return false;
	while (isspace((unsigned char)*end))
		end++;
	if (*end)
		return false;
	*v = x;
	return true;
}

static bool read_ll(const char *path, long long *v)
{
	char buf[LINE_MAX_READ];

	*v = -1;
	return read_line(path, buf, sizeof(buf)) == 0 && parse_ll(buf, v);
}

/* dir/name into path; false (and path "") when it does not fit. */
static bool sub_path(char *path, size_t len, const char *dir, const char *name)
{
	int n = snprintf(path, len, "%s/%s", dir, name);

	if (n < 0 || (size_t)n >= len) {
		path[0] = '\0';
		return false;
	}
	return true;
}

static void read_context(const char *ctxdir, struct damon_context *c)
{
	char path[4096], name[64];
	long long nr;

	sub_path(path, sizeof(path), ctxdir, "operations");
	read_word(path, c->ops, sizeof(c->ops));
	sub_path(path, sizeof(path), ctxdir, "monitoring_attrs/intervals/sample_us");
	read_ll(path, &c->sample_us);
	sub_path(path, sizeof(path), ctxdir, "monitoring_attrs/intervals/aggr_us");
	read_ll(path, &c->aggr_us);
	sub_path(path, sizeof(path), ctxdir, "schemes/nr_schemes");
	c->nr_schemes = read_ll(path, &nr) && nr >= 0 && nr <= 1000000 ? (int)nr : -1;
	for (int s = 0; s < c->nr_schemes && s < DAMON_MAX_SCHEMES; s++) {
		snprintf(name, sizeof(name), "schemes/%d/action", s);
		sub_path(path, sizeof(path), ctxdir, name);
		read_word(path, c->action[s], sizeof(c->action[s]));
	}
}

static void read_kdamond(const char *root, int k, struct damon_kdamond *kd)
{
	char dir[2048], path[4096];
	long long nr;

	snprintf(dir, sizeof(dir), "%s" ADMIN "/kdamonds/%d", root, k);
	snprintf(path, sizeof(path), "%s/state", dir);
	read_word(path, kd->state, sizeof(kd->state));
	snprintf(path, sizeof(path), "%s/pid", dir);
	read_ll(path, &kd->pid);
	snprintf(path, sizeof(path), "%s/contexts/nr_contexts", dir);
	kd->nr_contexts = read_ll(path, &nr) && nr >= 0 && nr <= 1000000 ? (int)nr : -1;
	for (int c = 0; c < kd->nr_contexts && c < DAMON_MAX_CONTEXTS; c++) {
		snprintf(path, sizeof(path), "%s/contexts/%d", dir, c);
		read_context(path, &kd->ctx[c]);
	}
}

static void read_sysfs(const char *root, struct damon_info *d)
{
	char path[4096];
	long long nr;
	DIR *dir;

	snprintf(path, sizeof(path), "%s" ADMIN, root);
	if (!(dir = opendir(path))) {
		d->sysfs = DAMON_SYSFS_ABSENT;
		return;
	}
	closedir(dir);
	snprintf(path, sizeof(path), "%s" ADMIN "/kdamonds/nr_kdamonds", root);
	if (!read_ll(path, &nr) || nr < 0 || nr > 1000000) {
		d->sysfs = DAMON_SYSFS_UNREADABLE;
		d->sysfs_errno = access(path, R_OK) != 0 ? errno : 0;
		return;
	}
	d->sysfs = DAMON_SYSFS_READ;
	d->nr_kdamonds = (int)nr;
	for (int k = 0; k < d->nr_kdamonds && k < DAMON_MAX_KDAMONDS; k++)
		read_kdamond(root, k, &d->kd[k]);
}

static void read_module(const char *root, const char *name, struct damon_module *m)
{
	char dir[2048], path[4096];
	DIR *dp;

	m->name = name;
	m->pid = m->sample_us = m->aggr_us = -1;
	snprintf(m->enabled, sizeof(m->enabled), "?");
	snprintf(dir, sizeof(dir), "%s/sys/module/%s/parameters", root, name);
	if (!(dp = opendir(dir)))
		return;
	closedir(dp);
	m->present = true;
	snprintf(path, sizeof(path), "%s/enabled", dir);
	read_word(path, m->enabled, sizeof(m->enabled));
	snprintf(path, sizeof(path), "%s/kdamond_pid", dir);
	read_ll(path, &m->pid);
	snprintf(path, sizeof(path), "%s/sample_interval", dir);
	read_ll(path, &m->sample_us);
	snprintf(path, sizeof(path), "%s/aggr_interval", dir);
	read_ll(path, &m->aggr_us);
}

/* CPU time of pid in ns: schedstat's sum_exec_runtime, else utime+stime in clock ticks. */
static bool thread_cpu_ns(const char *root, long pid, uint64_t *ns, bool *ticks)
{
	char path[4096], buf[1024], *p, *save = NULL, *tok;
	unsigned long long v[2];
	long hz = sysconf(_SC_CLK_TCK);
	int field = 3;

	snprintf(path, sizeof(path), "%s/proc/%ld/schedstat", root, pid);
	if (read_line(path, buf, sizeof(buf)) == 0 && (p = strchr(buf, ' '))) {
		char *end;

		*p = '\0';
		errno = 0;
		*ns = strtoull(buf, &end, 10);
		if (end != buf && *end == '\0' && errno == 0 && buf[0] != '-') {
			*ticks = false;
			return true;
		}
	}
	snprintf(path, sizeof(path), "%s/proc/%ld/stat", root, pid);
	if (hz <= 0 || read_line(path, buf, sizeof(buf)) != 0 || !(p = strrchr(buf, ')')))
		return false;
	for (tok = strtok_r(p + 1, " ", &save); tok && field <= 15; tok = strtok_r(NULL, " ", &save), field++) {
		char *end;

		if (field < 14)
			continue;
		errno = 0;
		v[field - 14] = strtoull(tok, &end, 10);
		if (end == tok || *end || errno || tok[0] == '-')
			return false;
	}
	if (field <= 15)
		return false;
	*ns = (uint64_t)((long double)(v[0] + v[1]) * 1e9L / (long double)hz);
	*ticks = true;
	return true;
}

/* Every kdamond.* thread in root/proc with its CPU time now. */
static void find_threads(const char *root, struct damon_info *d)
{
	char path[4096], comm[DAMON_WORD];
	struct dirent *e;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/proc", root);
	if (!(dir = opendir(path)))
		return;
	while ((e = readdir(dir)) && d->nr_threads < DAMON_MAX_THREADS) {
		struct damon_thread *t = &d->th[d->nr_threads];
		long long pid;

		if (!isdigit((unsigned char)e->d_name[0]) || !parse_ll(e->d_name, &pid) || pid <= 0 || pid > 1 << 30)
			continue;
		snprintf(path, sizeof(path), "%s/proc/%lld/comm", root, pid);
		if (!read_word(path, comm, sizeof(comm)) || strncmp(comm, "kdamond.", 8) != 0)
			continue;
		memset(t, 0, sizeof(*t));
		snprintf(t->comm, sizeof(t->comm), "%s", comm);
		t->pid = (long)pid;
		if (thread_cpu_ns(root, t->pid, &t->ns0, &t->ticks))
			d->nr_threads++;
	}
	closedir(dir);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void damon_read(const char *root, struct damon_info *d)
{
	memset(d, 0, sizeof(*d));
	read_sysfs(root, d);
	for (int i = 0; i < DAMON_NR_MODULES; i++)
		read_module(root, module_names[i], &d->mod[i]);
	find_threads(root, d);
	d->t0 = now_ns();
}

void damon_sample_end(const char *root, struct damon_info *d)
{
	for (int i = 0; i < d->nr_threads; i++) {
		struct damon_thread *t = &d->th[i];
		bool ticks;

		t->gone = !thread_cpu_ns(root, t->pid, &t->ns1, &ticks) || ticks != t->ticks;
	}
	d->window_ns = (double)(now_ns() - d->t0);
}

/* ---- output ---- */

static void line(FILE *fp, const char *key, const char *text)
{
	fprintf(fp, "  %-20s %s\n", key, text);
}

static const char *us_text(char *buf, size_t len, long long us)
{
	if (us < 0)
		return snprintf(buf, len, "?"), buf;
	return cb_fmt_ns(buf, len, (double)us * 1000, CB_UNITS_ASCII);
}

static bool kdamond_on(const struct damon_kdamond *kd)
{
	return strcmp(kd->state, "on") == 0;
}

static bool module_on(const struct damon_module *m)
{
	return m->present && (strcmp(m->enabled, "Y") == 0 || strcmp(m->enabled, "1") == 0);
}

/* "paddr, sampling 500 ms, aggregation 5.00 s, schemes: pageout" */
static void context_text(char *buf, size_t len, const struct damon_context *c)
{
	char s[32], a[32];
	size_t n;

	snprintf(buf, len, "%s, sampling %s, aggregation %s, schemes: ", c->ops, us_text(s, sizeof(s), c->sample_us),
		 us_text(a, sizeof(a), c->aggr_us));
	n = strlen(buf);
	if (c->nr_schemes < 0)
		snprintf(buf + n, len - n, "?");
	else if (c->nr_schemes == 0)
		snprintf(buf + n, len - n, "none (monitoring only)");
	for (int i = 0; i < c->nr_schemes && i < DAMON_MAX_SCHEMES; i++) {
		n = strlen(buf);
		snprintf(buf + n, len - n, "%s%s", i ? " " : "", c->action[i]);
	}
	n = strlen(buf);
	if (c->nr_schemes > DAMON_MAX_SCHEMES)
		snprintf(buf + n, len - n, " and %d more", c->nr_schemes - DAMON_MAX_SCHEMES);
}

static void print_kdamond(FILE *fp, int k, const struct damon_kdamond *kd)
{
	char key[32], buf[1024], pid[32];
	size_t n;

	snprintf(key, sizeof(key), "damon kdamond %d:", k);
	if (kd->pid >= 0)
		snprintf(pid, sizeof(pid), "pid %lld", kd->pid);
	else
		snprintf(pid, sizeof(pid), "no pid");
	snprintf(buf, sizeof(buf), "%s, %s", kd->state, pid);
	if (kd->nr_contexts < 0)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "; contexts unreadable");
	for (int c = 0; c < kd->nr_contexts && c < DAMON_MAX_CONTEXTS; c++) {
		n = strlen(buf);
		if (kd->nr_contexts > 1)
			snprintf(buf + n, sizeof(buf) - n, "; context %d: ", c);
		else
			snprintf(buf + n, sizeof(buf) - n, "; ");
		n = strlen(buf);
		context_text(buf + n, sizeof(buf) - n, &kd->ctx[c]);
	}
	line(fp, key, buf);
}

static void print_module(FILE *fp, const struct damon_module *m)
{
	char key[32], buf[256], s[32], a[32], pid[32];

	snprintf(key, sizeof(key), "%s:", m->name);
	if (m->pid > 0)
		snprintf(pid, sizeof(pid), "kdamond pid %lld", m->pid);
	else
		snprintf(pid, sizeof(pid), "no kdamond");
	snprintf(buf, sizeof(buf), "enabled %s, %s, sampling %s, aggregation %s", m->enabled, pid,
		 us_text(s, sizeof(s), m->sample_us), us_text(a, sizeof(a), m->aggr_us));
	line(fp, key, buf);
}

static void print_thread_cpu(FILE *fp, const struct damon_info *d, const struct damon_thread *t)
{
	char buf[256], w[32], used[32];
	double share;

	cb_fmt_ns(w, sizeof(w), d->window_ns, CB_UNITS_ASCII);
	if (t->gone) {
		snprintf(buf, sizeof(buf), "%s (pid %ld) exited during the %s window", t->comm, t->pid, w);
	} else if (t->ns1 < t->ns0) {
		snprintf(buf, sizeof(buf), "%s (pid %ld): its CPU time went backwards over %s (pid reused?), not measured",
			 t->comm, t->pid, w);
	} else if ((share = (double)(t->ns1 - t->ns0) / d->window_ns) > 1 || d->window_ns <= 0) {
		cb_fmt_ns(used, sizeof(used), (double)(t->ns1 - t->ns0), CB_UNITS_ASCII);
		snprintf(buf, sizeof(buf), "%s (pid %ld): %s of CPU time in a %s window: the counters disagree, not shown",
			 t->comm, t->pid, used, w);
	} else {
		snprintf(buf, sizeof(buf), "%s (pid %ld) used %.1f %% of a CPU over %s (%s)", t->comm, t->pid,
			 share * 100, w, t->ticks ? "utime+stime, 1/HZ resolution" : "schedstat");
	}
	line(fp, "damon cpu:", buf);
}

/* Whether any running kdamond has a scheme that acts on pages (anything but stat). */
static bool acts_on_pages(const struct damon_info *d)
{
	for (int k = 0; k < d->nr_kdamonds && k < DAMON_MAX_KDAMONDS; k++) {
		const struct damon_kdamond *kd = &d->kd[k];

		for (int c = 0; kdamond_on(kd) && c < kd->nr_contexts && c < DAMON_MAX_CONTEXTS; c++)
			for (int s = 0; s < kd->ctx[c].nr_schemes && s < DAMON_MAX_SCHEMES; s++)
				if (strcmp(kd->ctx[c].action[s], "stat") != 0)
					return true;
	}
	return module_on(&d->mod[0]) || module_on(&d->mod[1]); /* reclaim: pageout; lru_sort: lru_(de)prio */
}

static void print_summary(FILE *fp, const struct damon_info *d, int running)
{
	char buf[512];
	bool modules = false;

	for (int i = 0; i < DAMON_NR_MODULES; i++)
		modules |= d->mod[i].present;
	if (running > 0)
		snprintf(buf, sizeof(buf), "%d kdamond%s running: its access sampling takes CPU time%s", running,
			 running == 1 ? "" : "s",
			 acts_on_pages(d) ? " and its schemes act on pages (pageout reclaims them), the measured ones too" : "");
	else if (d->sysfs == DAMON_SYSFS_ABSENT && !modules)
		snprintf(buf, sizeof(buf), "absent (no %s, no damon_* module): nothing to stop", ADMIN);
	else if (d->sysfs == DAMON_SYSFS_UNREADABLE)
		snprintf(buf, sizeof(buf), "no kdamond thread running; %s/kdamonds is %s", ADMIN,
			 d->sysfs_errno == EACCES ? "root-only: run cowbench info as root to see its configuration"
						  : "unreadable (nr_kdamonds is not a count)");
	else
		snprintf(buf, sizeof(buf), "no kdamond running (%d configured, none on): nothing to stop",
			 d->sysfs == DAMON_SYSFS_READ ? d->nr_kdamonds : 0);
	line(fp, "damon:", buf);
	if (running > 0 && d->sysfs == DAMON_SYSFS_UNREADABLE && d->sysfs_errno == EACCES)
		line(fp, "damon config:", ADMIN " is root-only: run cowbench info as root to see the schemes");
}

static void print_stop(FILE *fp, const struct damon_info *d)
{
	char buf[512];

	if (d->sysfs == DAMON_SYSFS_UNREADABLE && d->nr_threads > 0)
		line(fp, "damon stop:", "as root: echo off > " ADMIN "/kdamonds/N/state for each kdamond N that is on, "
		     "echo on after the measurement (cowbench leaves it running)");
	for (int k = 0; k < d->nr_kdamonds && k < DAMON_MAX_KDAMONDS; k++)
		if (kdamond_on(&d->kd[k])) {
			snprintf(buf, sizeof(buf), "as root: echo off > %s/kdamonds/%d/state for the measurement, echo on "
				 "after it (cowbench leaves it running)", ADMIN, k);
			line(fp, "damon stop:", buf);
		}
	for (int i = 0; i < DAMON_NR_MODULES; i++)
		if (module_on(&d->mod[i])) {
			snprintf(buf, sizeof(buf), "as root: echo N > /sys/module/%s/parameters/enabled for the "
				 "measurement, echo Y after it (cowbench leaves it running)", d->mod[i].name);
			line(fp, "damon stop:", buf);
		}
}

void damon_print(FILE *fp, const struct damon_info *d)
{
	int running = d->nr_threads;

	/* The threads are the ground truth; a configured "on" without a visible thread still counts. */
	for (int k = 0; running == 0 && k < d->nr_kdamonds && k < DAMON_MAX_KDAMONDS; k++)
		running += kdamond_on(&d->kd[k]);
	print_summary(fp, d, running);
	for (int k = 0; d->sysfs == DAMON_SYSFS_READ && k < d->nr_kdamonds && k < DAMON_MAX_KDAMONDS; k++)
		print_kdamond(fp, k, &d->kd[k]);
	if (d->nr_kdamonds > DAMON_MAX_KDAMONDS) {
		char buf[64];

		snprintf(buf, sizeof(buf), "and %d more kdamonds not shown", d->nr_kdamonds - DAMON_MAX_KDAMONDS);
		line(fp, "damon kdamonds:", buf);
	}
	for (int i = 0; i < DAMON_NR_MODULES; i++)
		if (d->mod[i].present)
			print_module(fp, &d->mod[i]);
	for (int i = 0; i < d->nr_threads; i++)
		print_thread_cpu(fp, d, &d->th[i]);
	print_stop(fp, d);
}
