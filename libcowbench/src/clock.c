#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cowbench/clock.h>
#include <cowbench/stats.h>

uint64_t cb_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *cb_clock_name(enum cb_clock_kind kind)
{
	switch (kind) {
	case CB_CLOCK_TSC:
		return "tsc";
	case CB_CLOCK_MONOTONIC:
		return "monotonic";
	default:
		return "auto";
	}
}

int cb_clock_parse(const char *s, enum cb_clock_kind *out)
{
	for (int k = CB_CLOCK_AUTO; k <= CB_CLOCK_MONOTONIC; k++) {
		if (strcmp(s, cb_clock_name((enum cb_clock_kind)k)) == 0) {
			*out = (enum cb_clock_kind)k;
			return 0;
		}
	}
	return -EINVAL;
}

/* Is flag a whole word of the first CPU's "flags" line in /proc/cpuinfo? */
static bool flags_have(const char *flags, const char *flag)
{
	size_t len = strlen(flag);

	for (const char *p = strstr(flags, flag); p; p = strstr(p + 1, flag))
		if ((p == flags || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\n' || p[len] == '\0'))
			return true;
	return false;
}

static void probe_tsc(struct cb_clock *clk)
{
	clk->tsc_available = false;
	clk->tsc_invariant = false;
#if defined(__x86_64__) || defined(__i386__)
	static char line[1 << 14];
	const char *path = getenv("COWBENCH_CPUINFO"); /* tests: a CPU without rdtscp on any machine */
	FILE *fp = fopen(path && *path ? path : "/proc/cpuinfo", "re");

	if (!fp)
		return;
	while (fgets(line, sizeof(line), fp)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "flags", 5) != 0 || !colon)
			continue;
		clk->tsc_available = flags_have(colon + 1, "tsc") && flags_have(colon + 1, "rdtscp");
		clk->tsc_invariant = flags_have(colon + 1, "constant_tsc") &&
				     flags_have(colon + 1, "nonstop_tsc");
		break;
	}
	fclose(fp);
#endif
}

#if defined(__x86_64__) || defined(__i386__)
/* Ticks per ns from three 20 ms windows against CLOCK_MONOTONIC_RAW; the median resists a preemption. */
static double calibrate_tsc(void)
{
	double rate[3];

	for (int i = 0; i < 3; i++) {
		uint64_t t0 = cb_monotonic_ns(), c0 = cb_tsc_begin(), t1, c1;

		do {
			t1 = cb_monotonic_ns();
		} while (t1 - t0 < 20000000ull);
		c1 = cb_tsc_end();
		t1 = cb_monotonic_ns();
		rate[i] = (double)(c1 - c0) / (double)(t1 - t0);
	}
	qsort(rate, 3, sizeof(rate[0]), cb_cmp_double);
	return rate[1];
}
#endif

static void measure_overhead(struct cb_clock *clk)
{
	enum { N = 2001 };
	static double d[N];

	for (int i = 0; i < N; i++) {
		uint64_t a = cb_clock_read(clk), b = cb_clock_read(clk);

		d[i] = cb_clock_ns(clk, b - a);
	}
	qsort(d, N, sizeof(d[0]), cb_cmp_double);
	clk->overhead_min_ns = d[0];
	clk->overhead_ns = d[N / 2];
}

int cb_clock_init(struct cb_clock *clk, enum cb_clock_kind want)
{
	memset(clk, 0, sizeof(*clk));
	probe_tsc(clk);
	if (want == CB_CLOCK_AUTO)
		want = clk->tsc_available && clk->tsc_invariant ? CB_CLOCK_TSC : CB_CLOCK_MONOTONIC;
	if (want == CB_CLOCK_TSC && !clk->tsc_available)
		return -ENOTSUP;
	clk->kind = want;
	clk->ticks_per_ns = 1.0;
#if defined(__x86_64__) || defined(__i386__)
	if (want == CB_CLOCK_TSC)
		clk->ticks_per_ns = calibrate_tsc();
#endif
	measure_overhead(clk);
	return 0;
}

uint64_t cb_clock_read(const struct cb_clock *clk)
{
#if defined(__x86_64__) || defined(__i386__)
	if (clk->kind == CB_CLOCK_TSC)
		return cb_tsc_end();
#endif
	(void)clk;
	return cb_monotonic_ns();
}

double cb_clock_ns(const struct cb_clock *clk, uint64_t ticks)
{
	return (double)ticks / clk->ticks_per_ns;
}
