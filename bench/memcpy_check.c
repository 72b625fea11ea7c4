/*
 * Is run's "4 KiB memcpy" the copy and not the machine? Interleaves, in
 * rounds, cowbench's own probe (cb_memcpy_page_cost: each page copied
 * twice, timed one copy at a time, the second the warm figure) with a
 * plain C loop that copies 4 KiB between two hot buffers many times and
 * divides the time (no timer read inside). Prints the medians over the
 * rounds, the ratio warm / plain (target: within 2x; the probe carries
 * one timer read per copy, the loop none), and the cold first-touch copy
 * beside them.
 *
 * usage: bench_memcpy [ROUNDS]   (default 21)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/cowbench.h>

#define LOOP_COPIES 20000

static char src[4096] __attribute__((aligned(4096))), dst[4096] __attribute__((aligned(4096)));

/* Through a volatile pointer: the compiler can neither fold the repeated copies nor inline them away. */
static void *(*volatile copy_fn)(void *, const void *, size_t) = memcpy;

static double plain_loop_ns(void)
{
	uint64_t t0 = cb_monotonic_ns();

	for (int i = 0; i < LOOP_COPIES; i++) {
		copy_fn(dst, src, sizeof(dst));
		__asm__ __volatile__("" ::: "memory"); /* each copy happens */
	}
	return (double)(cb_monotonic_ns() - t0) / LOOP_COPIES;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 21;
	double *plain, *warm, *cold;
	struct cb_clock clk;

	if (rounds < 1 || rounds > 10000) {
		fprintf(stderr, "usage: bench_memcpy [ROUNDS 1..10000]\n");
		return 2;
	}
	plain = calloc((size_t)rounds, sizeof(double));
	warm = calloc((size_t)rounds, sizeof(double));
	cold = calloc((size_t)rounds, sizeof(double));
	if (!plain || !warm || !cold || cb_clock_init(&clk, CB_CLOCK_AUTO) < 0)
		return 1;
	memset(src, 0x5a, sizeof(src));
	for (int r = 0; r < rounds; r++) {
		struct cb_memcpy_cost c;

		if (r % 2 == 0)
			plain[r] = plain_loop_ns();
		if (cb_memcpy_page_cost(&clk, 4096, 64, &c) < 0)
			return 1;
		warm[r] = c.warm_ns;
		cold[r] = c.cold_ns;
		if (r % 2)
			plain[r] = plain_loop_ns();
	}
	qsort(plain, (size_t)rounds, sizeof(double), cb_cmp_double);
	qsort(warm, (size_t)rounds, sizeof(double), cb_cmp_double);
	qsort(cold, (size_t)rounds, sizeof(double), cb_cmp_double);
	printf("clock %s, one read %.1f ns; %d rounds, medians:\n", cb_clock_name(clk.kind), clk.overhead_ns, rounds);
	printf("  plain C loop (4 KiB memcpy, hot buffers): %8.1f ns a copy\n", plain[rounds / 2]);
	printf("  cowbench memcpy_ns (warm, timed alone):   %8.1f ns\n", warm[rounds / 2]);
	printf("  cowbench memcpy_cold_ns (first touch):    %8.1f ns\n", cold[rounds / 2]);
	printf("ratio warm / plain: %.2f (target <= 2)\n", warm[rounds / 2] / plain[rounds / 2]);
	free(plain);
	free(warm);
	free(cold);
	return 0;
}
