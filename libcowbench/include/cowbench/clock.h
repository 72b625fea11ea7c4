#ifndef COWBENCH_CLOCK_H
#define COWBENCH_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

/** Which time source stamps the measurements. */
enum cb_clock_kind {
	CB_CLOCK_AUTO = 0,  /* TSC when invariant, else monotonic */
	CB_CLOCK_TSC,       /* rdtsc/rdtscp, calibrated against CLOCK_MONOTONIC_RAW */
	CB_CLOCK_MONOTONIC, /* clock_gettime(CLOCK_MONOTONIC_RAW) */
};

/** A calibrated time source. Ticks are TSC cycles or nanoseconds. */
struct cb_clock {
	enum cb_clock_kind kind;  /* CB_CLOCK_TSC or CB_CLOCK_MONOTONIC after init */
	double ticks_per_ns;      /* 1.0 for monotonic */
	bool tsc_invariant;       /* constant_tsc + nonstop_tsc in /proc/cpuinfo */
	bool tsc_available;       /* x86 with rdtscp */
	double overhead_ns;       /* median cost of two back-to-back reads */
	double overhead_min_ns;   /* minimum of the same */
};

/**
 * Prepare a clock. CB_CLOCK_AUTO picks the TSC where it is invariant.
 * Asking for CB_CLOCK_TSC where it is unusable returns -ENOTSUP; the
 * caller decides whether to fall back.
 */
int cb_clock_init(struct cb_clock *clk, enum cb_clock_kind want);

/** "tsc", "monotonic" or "auto". */
const char *cb_clock_name(enum cb_clock_kind kind);
/** Parse "tsc" / "monotonic" / "auto"; -EINVAL otherwise. */
int cb_clock_parse(const char *s, enum cb_clock_kind *out);

/** Read the clock (ticks). Not for the innermost loop: see touch.c. */
uint64_t cb_clock_read(const struct cb_clock *clk);
/** Convert a tick difference to nanoseconds. */
double cb_clock_ns(const struct cb_clock *clk, uint64_t ticks);

/** Nanoseconds of CLOCK_MONOTONIC_RAW. */
uint64_t cb_monotonic_ns(void);

#if defined(__x86_64__) || defined(__i386__)
/* Serialising stamps: lfence;rdtsc before the measured code, rdtscp;lfence after. */
static inline uint64_t cb_tsc_begin(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) :: "memory");
	return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t cb_tsc_end(void)
{
	uint32_t lo, hi, aux;
	__asm__ __volatile__("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux) :: "memory");
	return ((uint64_t)hi << 32) | lo;
}
#endif

#endif
