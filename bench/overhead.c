/*
 * Does the harness perturb what it measures? Alternates the default
 * `cowbench run --workload=seq` (the program, its default probes, as a user
 * runs it: as root its evidence rep switches delay accounting on after the
 * timed rep) with a minimal hand-written fork-and-touch loop (child writes
 * one word per page, rdtscp around each write), with the system left as it
 * is (say it with kernel.task_delayacct=0, the default), in rounds of one of
 * each (the order alternating so drift favours neither). Each round gives a
 * paired ratio cowbench / minimal of the per-fault p50 and of the total
 * touch time. The estimate is the engine's centre of the paired ratios
 * (cb_estimate: Hodges-Lehmann, robust to the rounds a busy machine spoils
 * for one side) with its exact interval; rounds go on until each interval is
 * within +-3 %, or a bound is hit. Target: both ratios 1.00 +- 0.05.
 *
 * usage: bench_overhead [SIZE] [MAX_ROUNDS] [MAX_SECONDS]   (default 64M, 200, 120)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cowbench/compare.h>
#include <cowbench/cowbench.h>
#include <cowbench/results.h>

struct sample {
	double p50_ns, total_ns;
};

/* The loop a careful person writes by hand, with nothing of cowbench in it. */
static struct sample minimal_loop(const struct cb_clock *clk, size_t size)
{
	size_t ps = 4096, pages = size / ps;
	char *region = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct sample s = { -1, -1 };
	int fds[2];
	pid_t pid;

	if (region == MAP_FAILED || pipe(fds) < 0)
		exit(1);
	madvise(region, size, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < pages; i++)
		region[i * ps] = 1;
	pid = fork();
	if (pid == 0) {
		double *lat = malloc(pages * sizeof(*lat));
		uint64_t *ticks = malloc(pages * sizeof(*ticks));
		uint64_t t0, t1;

		memset(ticks, 0, pages * sizeof(*ticks));
		t0 = cb_tsc_begin();
		for (size_t i = 0; i < pages; i++) {
			uint64_t a = cb_tsc_begin();

			*(volatile uint64_t *)(region + i * ps) = i;
			ticks[i] = cb_tsc_end() - a;
		}
		t1 = cb_tsc_end();
		for (size_t i = 0; i < pages; i++)
			lat[i] = cb_clock_ns(clk, ticks[i]);
		s.p50_ns = cb_percentile_sorted((qsort(lat, pages, sizeof(*lat), cb_cmp_double), lat), pages, 50);
		s.total_ns = cb_clock_ns(clk, t1 - t0);
		if (write(fds[1], &s, sizeof(s)) != sizeof(s))
			_exit(1);
		_exit(0);
	}
	if (read(fds[0], &s, sizeof(s)) != sizeof(s))
		s.p50_ns = -1;
	waitpid(pid, NULL, 0);
	close(fds[0]);
	close(fds[1]);
	munmap(region, size);
	return s;
}

/* What the first run's probes saw and the system's state, said once so a reader knows what was compared. */
static void say_evidence_once(const struct cb_results *res)
{
	static bool said;
	const struct cb_row *ev = NULL;
	long on = -1;

	if (said)
		return;
	said = true;
	cb_sysctl_read_long("/proc/sys/kernel/task_delayacct", &on);
	for (size_t i = 0; i < res->n; i++)
		if (cb_row_is_evidence(&res->rows[i]))
			ev = &res->rows[i];
	printf("system: kernel.task_delayacct=%ld%s; ", on, on == 0 ? " (the default)" : " (NOT the default: both sides pay it)");
	if (ev && ev->wpcopy_count != CB_NA)
		printf("cowbench's evidence rep counted %" PRId64 " COW copies (taskstats)\n", ev->wpcopy_count);
	else if (ev)
		printf("cowbench's evidence rep counted no copies (%s)\n", ev->evidence_notes);
	else
		printf("no evidence rep (no probe adds work inside the fault path here)\n");
}

/*
 * cowbench as a user runs it: the cowbench program, default probes, one
 * timed rep (after its default warm-up; as root its evidence rep then
 * switches delay accounting on and back off). Its timed row's p50 and total.
 */
static struct sample cowbench_rep(const struct cb_clock *clk, size_t size)
{
	char size_opt[48], out_opt[64], path[] = "/tmp/cowbench-overhead-XXXXXX", why[512];
	char *const argv[] = { COWBENCH_CLI, "run", "--workload=seq", size_opt, "--reps=1", out_opt, NULL };
	posix_spawn_file_actions_t fa;
	struct sample s = { -1, -1 };
	struct cb_results res;
	int fd = mkstemp(path), ws;
	pid_t pid;

	(void)clk; /* the program calibrates its own clock, as it does for a user */
	if (fd < 0)
		return s;
	close(fd);
	snprintf(size_opt, sizeof(size_opt), "--size=%zu", size);
	snprintf(out_opt, sizeof(out_opt), "--output=%s", path);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) == 0 && waitpid(pid, &ws, 0) == pid &&
	    WIFEXITED(ws) && WEXITSTATUS(ws) == 0 && cb_results_read(path, &res, why, sizeof(why)) == 0) {
		for (size_t i = 0; i < res.n; i++)
			if (!cb_row_is_evidence(&res.rows[i])) {
				s.p50_ns = res.rows[i].lat_p50_ns;
				s.total_ns = (double)res.rows[i].elapsed_ns;
			}
		say_evidence_once(&res);
		cb_results_free(&res);
	}
	posix_spawn_file_actions_destroy(&fa);
	unlink(path);
	return s;
}

#define MIN_ROUNDS 10
#define TARGET_HALF_WIDTH 0.03 /* stop when each ratio is known to +-3 % */

/* One ratio measured round by round: the paired ratios and both sides. */
struct ratio_series {
	const char *name;
	double *r, *a, *b;
	double est, lo, hi; /* the engine's centre of the paired ratios (cb_estimate) and its interval */
};

static void series_add(struct ratio_series *s, int i, double a, double b)
{
	s->a[i] = a;
	s->b[i] = b;
	s->r[i] = a / b;
}

/* Update the estimate from n rounds; returns the relative half-width of its interval. */
static double series_update(struct ratio_series *s, int n)
{
	struct cb_estimate e;

	if (cb_estimate(s->r, (size_t)n, 0.95, &e) < 0)
		return INFINITY;
	s->est = e.centre;
	s->lo = e.lo;
	s->hi = e.hi;
	return fmax(s->hi / s->est - 1, 1 - s->lo / s->est);
}

static const char *target_verdict(const struct ratio_series *s)
{
	if (s->lo >= 0.95 && s->hi <= 1.05)
		return "within 1.00 +- 0.05";
	if (s->hi < 0.95 || s->lo > 1.05)
		return "OUTSIDE 1.00 +- 0.05";
	return "undecided: the interval crosses 1.00 +- 0.05";
}

static void series_print(const struct ratio_series *s, int n)
{
	struct cb_change c;

	printf("%-6s ratio cowbench / minimal: %.3f [%.3f, %.3f] (centre of %d paired rounds' ratios, exact CI)  %s\n",
	       s->name, s->est, s->lo, s->hi, n, target_verdict(s));
	if (cb_estimate_change(s->b, (size_t)n, s->a, (size_t)n, 0.95, &c) == 0 && c.ratio)
		printf("%-6s two-sample ratio:          %.3f [%.3f, %.3f] (Hodges-Lehmann, exact CI, unpaired)\n", s->name,
		       c.est, c.lo, c.hi);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One round: one of each, in the order the round's parity says. */
static int run_round(const struct cb_clock *clk, size_t size, int i, struct sample *a, struct sample *b)
{
	if (i % 2) {
		*b = minimal_loop(clk, size);
		*a = cowbench_rep(clk, size);
	} else {
		*a = cowbench_rep(clk, size);
		*b = minimal_loop(clk, size);
	}
	return a->p50_ns > 0 && b->p50_ns > 0 && a->total_ns > 0 && b->total_ns > 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	uint64_t size = 64ull << 20;
	int max_rounds = argc > 2 ? atoi(argv[2]) : 200, n = 0;
	double max_s = argc > 3 ? atof(argv[3]) : 120, t0, hw_p50 = INFINITY, hw_tot = INFINITY;
	struct cb_clock clk;
	struct ratio_series p50 = { .name = "p50" }, tot = { .name = "total" };

	if (argc > 1 && cb_size_parse(argv[1], &size) < 0) {
		fprintf(stderr, "bench_overhead: bad size '%s'\n", argv[1]);
		return 2;
	}
	if (max_rounds < MIN_ROUNDS || max_rounds > 100000 || !(max_s > 0) || cb_clock_init(&clk, CB_CLOCK_TSC) < 0) {
		fprintf(stderr, "bench_overhead: needs %d..100000 rounds, a time bound > 0 s and a usable TSC\n",
			MIN_ROUNDS);
		return 2;
	}
	p50.r = calloc((size_t)max_rounds, sizeof(double));
	p50.a = calloc((size_t)max_rounds, sizeof(double));
	p50.b = calloc((size_t)max_rounds, sizeof(double));
	tot.r = calloc((size_t)max_rounds, sizeof(double));
	tot.a = calloc((size_t)max_rounds, sizeof(double));
	tot.b = calloc((size_t)max_rounds, sizeof(double));
	if (!p50.r || !p50.a || !p50.b || !tot.r || !tot.a || !tot.b) {
		fprintf(stderr, "bench_overhead: out of memory\n");
		return 1;
	}
	printf("harness overhead: seq %" PRIu64 " MiB, child writes; rounds until each ratio's 95 %% CI is within "
	       "+-%.0f %% (at least %d, at most %d rounds or %.0f s)\n",
	       size >> 20, TARGET_HALF_WIDTH * 100, MIN_ROUNDS, max_rounds, max_s);
	printf("%5s  %14s  %14s  %14s  %14s\n", "round", "cowbench p50", "minimal p50", "cowbench total", "minimal total");
	(void)cowbench_rep(&clk, size); /* warm-up of both, unrecorded */
	(void)minimal_loop(&clk, size);
	t0 = now_s();
	while (n < max_rounds && (n < MIN_ROUNDS || hw_p50 > TARGET_HALF_WIDTH || hw_tot > TARGET_HALF_WIDTH) &&
	       now_s() - t0 < max_s) {
		struct sample a, b;

		if (run_round(&clk, size, n, &a, &b) < 0) {
			fprintf(stderr, "bench_overhead: a measurement failed\n");
			return 1;
		}
		series_add(&p50, n, a.p50_ns, b.p50_ns);
		series_add(&tot, n, a.total_ns, b.total_ns);
		n++;
		printf("%5d  %11.1f ns  %11.1f ns  %11.3f ms  %11.3f ms\n", n, a.p50_ns, b.p50_ns, a.total_ns / 1e6,
		       b.total_ns / 1e6);
		if (n >= 2) {
			hw_p50 = series_update(&p50, n);
			hw_tot = series_update(&tot, n);
		}
	}
	if (n < 2) {
		fprintf(stderr, "bench_overhead: the time bound allowed %d round(s): no interval\n", n);
		return 1;
	}
	printf("stopped after %d rounds, %.1f s: %s (CI half-widths: p50 +-%.1f %%, total +-%.1f %%)\n", n, now_s() - t0,
	       hw_p50 <= TARGET_HALF_WIDTH && hw_tot <= TARGET_HALF_WIDTH ? "both ratios within +-3 %" :
	       n >= max_rounds ? "round bound hit" : "time bound hit",
	       hw_p50 * 100, hw_tot * 100);
	series_print(&p50, n);
	series_print(&tot, n);
	free(p50.r);
	free(p50.a);
	free(p50.b);
	free(tot.r);
	free(tot.a);
	free(tot.b);
	return 0;
}
