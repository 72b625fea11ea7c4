#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <zlib.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <cowbench/cowbench.h>

#include "common/diag.h"
#include "common/args.h"
#include "common/guard.h"
#include "common/commands.h"
#include "info.h"

static void line(const char *key, const char *value)
{
	printf("%-22s %s\n", key, value);
}

static void clock_lines(void)
{
	struct cb_clock tsc, mono;
	char buf[128];

	cb_clock_init(&mono, CB_CLOCK_MONOTONIC);
	if (cb_clock_init(&tsc, CB_CLOCK_TSC) == 0) {
		snprintf(buf, sizeof(buf), "%.3f MHz (%s)", tsc.ticks_per_ns * 1000.0,
			 tsc.tsc_invariant ? "invariant: constant_tsc nonstop_tsc" : "NOT invariant");
		line("tsc:", buf);
		snprintf(buf, sizeof(buf), "%.1f ns median, %.1f ns min (back-to-back rdtscp)",
			 tsc.overhead_ns, tsc.overhead_min_ns);
		line("tsc overhead:", buf);
	} else {
#if defined(__x86_64__) || defined(__i386__)
		line("tsc:", tsc.tsc_available ? "unusable here (calibration failed): CLOCK_MONOTONIC_RAW is used"
						: "unavailable: this CPU has no rdtscp (CLOCK_MONOTONIC_RAW is used)");
#else
		line("tsc:", "unavailable: not an x86 CPU (CLOCK_MONOTONIC_RAW is used)");
#endif
	}
	snprintf(buf, sizeof(buf), "%.1f ns median, %.1f ns min (CLOCK_MONOTONIC_RAW)",
		 mono.overhead_ns, mono.overhead_min_ns);
	line("monotonic overhead:", buf);
	line("default clock:", tsc.tsc_available && tsc.tsc_invariant ? "tsc" : "monotonic");
}

/* The first line of a small file, without its newline; false when unreadable. */
static bool read_line(const char *path, char *buf, size_t len)
{
	FILE *fp = fopen(path, "re");
	bool ok;

	if (!fp)
		return false;
	ok = fgets(buf, (int)len, fp) != NULL;
	fclose(fp);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

/* A vendor string that repeats its one word ("bhyve bhyve ", "KVMKVMKVM"): the word once, no padding. */
static void dedupe_vendor(char *v)
{
	size_t n = strlen(v);

	while (n && (v[n - 1] == ' ' || v[n - 1] == '\0'))
		v[--n] = '\0';
	for (size_t w = 1; w <= n / 2; w++) {
		size_t step = v[w] == ' ' ? w + 1 : w, i;

		for (i = step; i < n; i++)
			if (v[i] != v[i % step])
				break;
		if (i == n) {
			v[w] = '\0';
			return;
		}
	}
}

/* The hypervisor's vendor from CPUID leaf 0x40000000 (when the "hypervisor" bit is set), else /sys/hypervisor. */
static void hypervisor_line(void)
{
	char buf[64] = "";

#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;

	if (__get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 31))) {
		unsigned regs[3];

		__cpuid(0x40000000, a, regs[0], regs[1], regs[2]);
		memcpy(buf, regs, sizeof(regs));
		buf[sizeof(regs)] = '\0';
		dedupe_vendor(buf);
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s(cpuid: a virtual machine)", buf[0] ? " " : "");
	}
#endif
	if (!buf[0] && read_line("/sys/hypervisor/type", buf, sizeof(buf)))
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), " (/sys/hypervisor)");
	line("hypervisor:", buf[0] ? buf : "none detected (bare metal, or a hypervisor that hides itself)");
}

static void governor_line(void)
{
	char buf[64];

	if (read_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", buf, sizeof(buf)))
		line("cpu governor:", buf);
	else
		line("cpu governor:", "none (no cpufreq here: the host or firmware sets the clock)");
}

/* Steal time since boot, from /proc/stat's cpu line (USER_HZ ticks): a busy host shows here. */
static void steal_line(void)
{
	unsigned long long v[8] = { 0 }, total = 0;
	char buf[128];
	FILE *fp = fopen("/proc/stat", "re");
	int n = fp ? fscanf(fp, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
			     &v[6], &v[7])
		   : 0;

	if (fp)
		fclose(fp);
	if (n < 8) {
		line("steal time:", "unavailable");
		return;
	}
	for (int i = 0; i < 8; i++)
		total += v[i];
	snprintf(buf, sizeof(buf), "%.1f s since boot, %.2f %% of all CPU time (another tenant's use of this VM's CPUs)",
		 (double)v[7] / (double)sysconf(_SC_CLK_TCK), total ? 100.0 * (double)v[7] / (double)total : 0.0);
	line("steal time:", buf);
}

static void knob_line(const char *key, const char *path, const char *absent)
{
	char buf[160];

	line(key, read_line(path, buf, sizeof(buf)) ? buf : absent);
}

/* /sys/devices/system/cpu/vulnerabilities: how many are mitigated, and which are left vulnerable. */
static void mitigations_line(void)
{
	const char *dir = "/sys/devices/system/cpu/vulnerabilities";
	DIR *d = opendir(dir);
	struct dirent *e;
	int mitigated = 0, unaffected = 0, vulnerable = 0;
	char vuln[160] = "", buf[256], path[512];

	if (!d) {
		line("mitigations:", "unavailable (no vulnerabilities directory)");
		return;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (!read_line(path, buf, sizeof(buf)))
			continue;
		if (!strncmp(buf, "Not affected", 12)) {
			unaffected++;
		} else if (!strncmp(buf, "Vulnerable", 10)) {
			vulnerable++;
			snprintf(vuln + strlen(vuln), sizeof(vuln) - strlen(vuln), "%s%.40s", vuln[0] ? "," : "", e->d_name);
		} else {
			mitigated++;
		}
	}
	closedir(d);
	snprintf(buf, sizeof(buf), "%d mitigated, %d not affected, %d vulnerable%s%s%s", mitigated, unaffected,
		 vulnerable, vuln[0] ? " (" : "", vuln, vuln[0] ? ")" : "");
	line("mitigations:", buf);
}

/* Kernel build options that change what a COW fault costs or what cowbench can see. */
static void config_lines(void)
{
	static const char *const keys[] = {
		"CONFIG_TRANSPARENT_HUGEPAGE", "CONFIG_TASK_DELAY_ACCT", "CONFIG_USERFAULTFD", "CONFIG_KSM",
		"CONFIG_NUMA_BALANCING", "CONFIG_MEMCG", "CONFIG_PREEMPT_DYNAMIC", "CONFIG_PREEMPT",
		"CONFIG_PAGE_TABLE_CHECK", "CONFIG_DEBUG_VM", "CONFIG_COW_STATS", "CONFIG_COW_PRECOPY",
	};
	struct utsname u;
	char path[512], l[256], out[512] = "";
	gzFile gz = NULL;

	/* zlib reads the plain /boot file and the compressed /proc one alike. */
	if (uname(&u) == 0) {
		snprintf(path, sizeof(path), "/boot/config-%s", u.release);
		gz = gzopen(path, "rb");
	}
	if (!gz) {
		snprintf(path, sizeof(path), "/proc/config.gz");
		gz = gzopen(path, "rb");
	}
	if (!gz) {
		line("kernel config:", "unreadable (no /boot/config-RELEASE, no /proc/config.gz)");
		return;
	}
	while (gzgets(gz, l, sizeof(l))) {
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			size_t kl = strlen(keys[k]);

			if (!strncmp(l, keys[k], kl) && l[kl] == '=') {
				l[strcspn(l, "\n")] = '\0';
				snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", out[0] ? " " : "", l + 7);
			}
		}
	}
	gzclose(gz);
	printf("%-22s %s [%s]\n", "kernel config:", out[0] ? out : "none of the COW-relevant options set", path);
}

static const char *present(const char *path)
{
	return cb_path_exists(path) ? "present" : "absent (stock kernel: see docs/kernel.md)";
}

struct info_opts {
	bool json;
};

static bool opt_format(void *o, const char *v)
{
	if (strcmp(v, "text") && strcmp(v, "json")) {
		cli_error("--format must be text or json, not '%s'", v);
		return false;
	}
	((struct info_opts *)o)->json = strcmp(v, "json") == 0;
	return true;
}

static const struct cli_option info_options[] = {
	{ "format", "text|json", "aligned text (default), or one JSON object (keys: the text's labels in snake case)",
	  .parse = opt_format },
};

static void info_usage(void)
{
	printf("usage: cowbench info [--format=text|json]\n\n"
	       "Describe this machine as it bears on COW measurements: kernel, CPU, hypervisor, CPU\n"
	       "frequency governor, steal time, clock and its cost, THP mode and defrag, NUMA and\n"
	       "numa_balancing, mitigations, COW-relevant kernel config, which probes can measure, what\n"
	       "a virtual machine adds (the first write to a freshly populated page against a second), and\n"
	       "what could be tuned: governor, turbo, isolcpus, CPU load, SMT sibling, run queue, DAMON.\n\n");
	cli_print_options(info_options, 1);
}

/* A label as a JSON key: lower case, runs of other characters one '_' ("/proc/cow_stats:" -> "proc_cow_stats"). */
static void json_key(const char *label, size_t n, const char *prefix, char *out, size_t len)
{
	size_t o = 0;
	bool sep = false;

	o = (size_t)snprintf(out, len, "%s", prefix);
	for (size_t i = 0; i < n && o + 2 < len; i++) {
		unsigned char c = (unsigned char)label[i];

		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z')) {
			if (sep && o > strlen(prefix))
				out[o++] = '_';
			out[o++] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
			sep = false;
		} else {
			sep = true;
		}
	}
	out[o] = '\0';
}

/*
 * info's text as one JSON object: each "label:   value" line a member (the
 * tuning section's indented ones prefixed "tune_"), a label seen twice
 * keeps its first value; the first-touch probe's numbers as numbers too.
 */
static int print_json(const char *text)
{
	char key[96], seen[64][96];
	int nseen = 0;
	double first, second;

	fputc('{', stdout);
	fputs("\"schema\":1", stdout);
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");
		const char *l = p, *colon, *v;
		bool indented = *l == ' ';
		bool dup = false;

		p += n + (p[n] == '\n');
		while (*l == ' ' && l < p)
			l++;
		colon = memchr(l, ':', (size_t)(p - l));
		/* the label ends at the first ':' that ends a word */
		while (colon && colon + 1 < p && colon[1] != ' ' && colon[1] != '\n')
			colon = memchr(colon + 1, ':', (size_t)(p - colon - 1));
		if (!colon)
			continue;
		for (v = colon + 1; v < p && *v == ' '; v++)
			;
		if (v >= p || *v == '\n')
			continue; /* a section's heading */
		json_key(l, (size_t)(colon - l), indented ? "tune_" : "", key, sizeof(key));
		for (int i = 0; i < nseen; i++)
			dup = dup || strcmp(seen[i], key) == 0;
		if (dup || !key[0])
			continue;
		if (nseen < 64)
			snprintf(seen[nseen++], sizeof(seen[0]), "%s", key);
		char value[2048];

		snprintf(value, sizeof(value), "%.*s", (int)(p - v - (p[-1] == '\n')), v);
		printf(",\"%s\":", key);
		cb_json_string(stdout, value);
	}
	if (cli_info_first_touch(&first, &second)) {
		cb_json_number(stdout, "first_touch_ns", first);
		cb_json_number(stdout, "second_write_ns", second);
		printf(",\"lazily_backed\":%s", cli_first_touch_lazy(first, second) ? "true" : "false");
	}
	fputc('}', stdout);
	return cb_record_end(stdout) < 0 || fflush(stdout) != 0 ? -1 : 0;
}

int cmd_info(int argc, char **argv)
{
	struct info_opts o = { false };
	char buf[256];
	uint64_t avail;
	long precopy;
	int nodes;
	char *text = NULL;
	size_t text_len = 0;
	FILE *real_stdout = stdout;

	int argi = cli_parse_options(argc, argv, info_options, 1, &o, info_usage);

	if (argi < 0)
		return EXIT_USAGE;
	if (argi < argc) {
		cli_error("info takes no arguments, not '%s' (see cowbench info --help)", argv[argi]);
		return EXIT_USAGE;
	}
	if (o.json) { /* the lines are written as for people, then turned into one object */
		fflush(stdout);
		if (!(stdout = open_memstream(&text, &text_len))) {
			stdout = real_stdout;
			cli_error("out of memory");
			return EXIT_INTERNAL;
		}
	}
	printf("%-22s %s (%s)\n", "cowbench:", cb_version(), cb_git_revision());
	line("kernel:", cb_kernel_release(buf, sizeof(buf)) == 0 ? buf : "unknown");
	line("cpu:", cb_cpu_model(buf, sizeof(buf)) == 0 ? buf : "unknown");
	printf("%-22s %ld online\n", "cpus:", sysconf(_SC_NPROCESSORS_ONLN));
	hypervisor_line();
	governor_line();
	steal_line();
	mitigations_line();
	clock_lines();
	printf("%-22s %ld bytes\n", "page size:", sysconf(_SC_PAGESIZE));
	line("thp mode:", cb_thp_mode(buf, sizeof(buf)) == 0 ? buf : "unavailable");
	knob_line("thp defrag:", "/sys/kernel/mm/transparent_hugepage/defrag", "unavailable");
	knob_line("numa_balancing:", "/proc/sys/kernel/numa_balancing", "absent (kernel without NUMA balancing)");
	if (cb_mem_available(&avail) == 0)
		printf("%-22s %" PRIu64 " MiB\n", "memavailable:", avail >> 20);
	nodes = cb_numa_nodes();
	if (nodes > 0)
		printf("%-22s %d node%s (libnuma)\n", "numa:", nodes, nodes == 1 ? "" : "s");
	else
		line("numa:", "unavailable (libnuma reports no NUMA support)");
	line("/proc/cow_stats:", present(CB_COWSTATS_PATH));
	if (cb_sysctl_read_long(CB_PRECOPY_SYSCTL, &precopy) == 0)
		printf("%-22s present, value %ld\n", "vm.cow_precopy:", precopy);
	else
		line("vm.cow_precopy:", present(CB_PRECOPY_SYSCTL));
	config_lines();
	cli_evidence_info();
	cli_overrides_info();
	cli_instrumentation_info();
	cli_info_vm();
	cli_guest_info();
	cli_info_tuning();
	if (o.json) {
		int err;

		fclose(stdout);
		stdout = real_stdout;
		err = print_json(text ? text : "");
		free(text);
		if (err < 0) {
			cli_error("cannot write: %s", strerror(errno));
			return EXIT_INTERNAL;
		}
	}
	return 0;
}
