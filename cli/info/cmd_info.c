#define _GNU_SOURCE
#include <dirent.h>
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

#include "cli.h"
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
		line("tsc:", "unavailable (not x86 or no rdtscp)");
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

static void info_usage(void)
{
	printf("usage: cowbench info\n\n"
	       "Describe this machine as it bears on COW measurements: kernel, CPU, hypervisor, CPU\n"
	       "frequency governor, steal time, clock and its cost, THP mode and defrag, NUMA and\n"
	       "numa_balancing, mitigations, COW-relevant kernel config, which probes can measure, and\n"
	       "what could be tuned: governor, turbo, isolcpus, CPU load, SMT sibling, run queue, DAMON.\n\n");
	cli_print_options(NULL, 0);
}

int cmd_info(int argc, char **argv)
{
	char buf[256];
	uint64_t avail;
	long precopy;
	int nodes;

	int argi = cli_parse_options(argc, argv, NULL, 0, NULL, info_usage);

	if (argi < 0)
		return EXIT_USAGE;
	if (argi < argc) {
		cli_error("info takes no arguments, not '%s' (see cowbench info --help)", argv[argi]);
		return EXIT_USAGE;
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
	cli_guest_info();
	cli_info_tuning();
	return 0;
}
