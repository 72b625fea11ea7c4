#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include <cowbench/cowbench.h>

#include "cli.h"

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

static const char *present(const char *path)
{
	return cb_path_exists(path) ? "present" : "absent (stock kernel: see README, kernel/)";
}

int cmd_info(int argc, char **argv)
{
	char buf[256];
	uint64_t avail;
	long precopy;
	int nodes;

	(void)argv;
	if (argc > 1) {
		cli_error("info takes no arguments");
		return EXIT_USAGE;
	}
	printf("%-22s %s (%s)\n", "cowbench:", cb_version(), cb_git_revision());
	line("kernel:", cb_kernel_release(buf, sizeof(buf)) == 0 ? buf : "unknown");
	line("cpu:", cb_cpu_model(buf, sizeof(buf)) == 0 ? buf : "unknown");
	printf("%-22s %ld online\n", "cpus:", sysconf(_SC_NPROCESSORS_ONLN));
	clock_lines();
	printf("%-22s %ld bytes\n", "page size:", sysconf(_SC_PAGESIZE));
	line("thp mode:", cb_thp_mode(buf, sizeof(buf)) == 0 ? buf : "unavailable");
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
	cli_evidence_info();
	cli_instrumentation_info();
	return 0;
}
