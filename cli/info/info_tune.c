/*
 * cowbench info's "what could be tuned" block: what on this machine adds
 * noise to a measurement that a user could change (pyperf's `system tune`
 * shows the same things). It reads and advises; it changes nothing.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cowbench/noise.h>

#include "info.h"
#include "info_damon.h"

#define SAMPLE_MS 200
#define MAXC 1024

static bool read_text(const char *path, char *buf, size_t len)
{
	FILE *fp = fopen(path, "re");
	bool ok = fp && fgets(buf, (int)len, fp);

	if (fp)
		fclose(fp);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

static void tune(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void tune(const char *key, const char *fmt, ...)
{
	va_list ap;

	printf("  %-20s ", key);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void governor_advice(void)
{
	char gov[64];

	if (!read_text("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", gov, sizeof(gov)))
		tune("governor:", "nothing to tune (no cpufreq: the host or firmware sets the clock)");
	else if (strcmp(gov, "performance") != 0)
		tune("governor:", "%s: the clock follows the load; as root: cpupower frequency-set -g performance", gov);
	else
		tune("governor:", "performance (good)");
}

static void turbo_advice(void)
{
	char v[16];

	if (read_text("/sys/devices/system/cpu/intel_pstate/no_turbo", v, sizeof(v)))
		tune("turbo:", "%s", strcmp(v, "0") == 0
					  ? "on: clocks vary with load and heat; as root: echo 1 > "
					    "/sys/devices/system/cpu/intel_pstate/no_turbo"
					  : "off (good)");
	else if (read_text("/sys/devices/system/cpu/cpufreq/boost", v, sizeof(v)))
		tune("turbo:", "%s", strcmp(v, "1") == 0
					  ? "boost on: clocks vary with load and heat; as root: echo 0 > "
					    "/sys/devices/system/cpu/cpufreq/boost"
					  : "boost off (good)");
	else
		tune("turbo:", "nothing to tune (no intel_pstate/no_turbo or cpufreq/boost here)");
}

/* Busy share of each CPU over SAMPLE_MS, the one --pin would take, and its SMT sibling's load. */
static void cpu_load_advice(const uint64_t *a, const uint64_t *b, int n)
{
	long hz = sysconf(_SC_CLK_TCK);
	char buf[512] = "", path[96], sib[64];
	int quiet = -1;
	double best = 2;

	if (n <= 0 || hz <= 0)
		return;
	for (int c = 0; c < n; c++) {
		double busy;

		if (a[c] == UINT64_MAX || b[c] == UINT64_MAX)
			continue;
		busy = (double)(b[c] - a[c]) / ((double)hz * SAMPLE_MS / 1000);
		busy = busy > 1 ? 1 : busy;
		if (strlen(buf) < sizeof(buf) - 32)
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%scpu%d %.0f %%", buf[0] ? ", " : "", c,
				 busy * 100);
		if (busy < best || (busy == best && quiet == 0)) {
			best = busy;
			quiet = c;
		}
	}
	tune("cpu load:", "%s busy over %d ms (besides cowbench)", buf, SAMPLE_MS);
	if (n > 1 && quiet >= 0 && best >= 0.9) /* the least busy is busy too: no quiet CPU to claim */
		tune("quiet cpu:", "none: even the least busy, cpu%d, was %.0f %% busy (--pin=auto still puts the writer "
		     "there); expect noisy cells", quiet, best * 100);
	else if (n > 1 && quiet >= 0)
		tune("quiet cpu:", "%d: the default --pin=auto puts the writer there (--pin=none: no pinning)", quiet);
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", quiet < 0 ? 0 : quiet);
	if (!read_text("/sys/devices/system/cpu/smt/active", sib, sizeof(sib)) || strcmp(sib, "1") != 0)
		tune("smt:", "off or absent: no sibling shares the writer's core");
	else if (read_text(path, sib, sizeof(sib)))
		tune("smt:", "on; CPU %d's core is shared by CPUs %s: a busy sibling slows the writer (check the load "
		     "above; as root: echo off > /sys/devices/system/cpu/smt/control)", quiet, sib);
}

static void isolation_advice(void)
{
	char iso[256] = "", nohz[256] = "";

	read_text("/sys/devices/system/cpu/isolated", iso, sizeof(iso));
	read_text("/sys/devices/system/cpu/nohz_full", nohz, sizeof(nohz));
	if (iso[0])
		tune("isolcpus:", "%s isolated%s%s: run with --cpu on one of them (taskset lets cowbench reach it)", iso,
		     nohz[0] && strcmp(nohz, "(null)") ? ", nohz_full " : "", nohz[0] && strcmp(nohz, "(null)") ? nohz : "");
	else
		tune("isolcpus:", "none: the writer shares CPUs with everything else; boot with isolcpus=N nohz_full=N "
		     "to reserve one");
}

static void load_advice(void)
{
	struct cb_sys_sample s;

	if (cb_sys_sample_read(NULL, &s) == 0)
		tune("run queue:", "%ld runnable now on %ld CPUs%s", s.procs_running, sysconf(_SC_NPROCESSORS_ONLN),
		     s.procs_running > sysconf(_SC_NPROCESSORS_ONLN) ? ": more than CPUs, expect noisy cells" : "");
}

/* One SAMPLE_MS window for the CPUs' load and the kdamond threads' CPU use. */
static void sample_window(void)
{
	uint64_t *a = malloc(2 * MAXC * sizeof(*a)), *b = a ? a + MAXC : NULL;
	struct timespec ts = { 0, SAMPLE_MS * 1000000L };
	const char *root = getenv("COWBENCH_DAMON_ROOT"); /* tests: a fake /sys and /proc */
	struct damon_info *d = malloc(sizeof(*d));
	int n = a ? cb_cpu_busy_ticks(NULL, a, MAXC) : -1;

	root = root && *root ? root : "";
	if (d)
		damon_read(root, d);
	nanosleep(&ts, NULL);
	if (n > 0 && cb_cpu_busy_ticks(NULL, b, MAXC) < n)
		n = -1;
	if (d)
		damon_sample_end(root, d);
	cpu_load_advice(a, b, n);
	if (d)
		damon_print(stdout, d);
	free(d);
	free(a);
}

void cli_info_tuning(void)
{
	printf("what could be tuned (read only; cowbench changes none of it):\n");
	governor_advice();
	turbo_advice();
	isolation_advice();
	sample_window();
	load_advice();
}
