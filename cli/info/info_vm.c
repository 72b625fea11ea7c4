/*
 * cowbench info: what a virtual machine adds to a COW fault that can be
 * measured from inside it. Some hosts back guest memory lazily (or track
 * it dirty): the first user write to a page the guest kernel has just
 * populated traps into the host. A COW copy writes into such a fresh page,
 * so there every copy pays that trap, and a copy path looks many times
 * slower than on bare metal while the copy itself is not.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cowbench/cowbench.h>

#include "info.h"

#define PROBE_PAGES 256

/* First and second write to each of PROBE_PAGES pages populated by the kernel: their medians (ns); 0 or -1. */
int cli_first_touch(double *first_ns, double *second_ns)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len = PROBE_PAGES * page;
	static double first[PROBE_PAGES], second[PROBE_PAGES];
	struct cb_clock clk;
	char *p;

	if (cb_clock_init(&clk, CB_CLOCK_AUTO) < 0)
		return -1;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	madvise(p, len, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < PROBE_PAGES; i++) {
		volatile char *v = p + i * page;
		uint64_t t0 = cb_clock_read(&clk), t1, t2;

		v[0] = 1;
		t1 = cb_clock_read(&clk);
		v[page / 2] = 1; /* another cache line of the same page: the page is written now */
		t2 = cb_clock_read(&clk);
		first[i] = cb_clock_ns(&clk, t1 - t0);
		second[i] = cb_clock_ns(&clk, t2 - t1);
	}
	munmap(p, len);
	qsort(first, PROBE_PAGES, sizeof(first[0]), cb_cmp_double);
	qsort(second, PROBE_PAGES, sizeof(second[0]), cb_cmp_double);
	*first_ns = first[PROBE_PAGES / 2];
	*second_ns = second[PROBE_PAGES / 2];
	return 0;
}

/* A first write this much dearer than the second, and by a microsecond at least, is the host's. */
bool cli_first_touch_lazy(double first_ns, double second_ns)
{
	return first_ns > 10 * second_ns && first_ns - second_ns > 1000;
}

static bool virtio_balloon(void)
{
	DIR *d = opendir("/sys/bus/virtio/drivers/virtio_balloon");
	struct dirent *e;
	bool bound = false;

	if (!d)
		return false;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "virtio", 6))
			bound = true;
	closedir(d);
	return bound;
}

static double measured_first = -1, measured_second = -1;

bool cli_info_first_touch(double *first_ns, double *second_ns)
{
	*first_ns = measured_first;
	*second_ns = measured_second;
	return measured_first >= 0;
}

void cli_info_vm(void)
{
	double first, second;
	char a[32], b[32], buf[512];

	if (cli_first_touch(&first, &second) == 0) {
		measured_first = first;
		measured_second = second;
	}
	if (measured_first < 0) {
		printf("%-22s %s\n", "first touch:", "not measured (no memory for 1 MiB, or no clock)");
	} else if (cli_first_touch_lazy(first, second)) {
		snprintf(buf, sizeof(buf),
			 "lazily backed memory: the first write to a page the kernel just populated takes %s, a second "
			 "write %s (the host traps each guest frame's first write); every COW copy writes a fresh page "
			 "and pays it, so run's copy path is mostly this here: run --prefault warms the frames first",
			 cb_fmt_ns(a, sizeof(a), first, CB_UNITS_ASCII), cb_fmt_ns(b, sizeof(b), second, CB_UNITS_ASCII));
		printf("%-22s %s\n", "first touch:", buf);
	} else {
		snprintf(buf, sizeof(buf), "%s, a second write %s: memory is backed up front (as on bare metal)",
			 cb_fmt_ns(a, sizeof(a), first, CB_UNITS_ASCII), cb_fmt_ns(b, sizeof(b), second, CB_UNITS_ASCII));
		printf("%-22s %s\n", "first touch:", buf);
	}
	if (virtio_balloon())
		printf("%-22s %s\n", "virtio balloon:",
		       "bound: the host may take freed guest memory back, and a page freed and used again then pays "
		       "a first touch again");
}
