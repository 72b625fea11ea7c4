/*
 * Does the harness perturb what it measures? Alternates the default
 * `cowbench run --workload=seq` (the program, its default probes, as a user
 * runs it: as root its evidence rep switches delay accounting on after the
 * timed rep) with a minimal hand-written fork-and-touch loop (child writes
 * one word per page, rdtscp around each write), with the system left as it
 * is (say it with kernel.task_delayacct=0, the default), and prints the
 * ratios of their median per-fault p50 and of their median total touch
 * time. Target: both within 1.00 +- 0.05.
 *
 * usage: bench_overhead [SIZE] [ROUNDS]   (default 64M, 7)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cowbench/cowbench.h>
#include <cowbench/results.h>

struct sample {
	double p50_ns, total_ns;
};

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cb_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

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

int main(int argc, char **argv)
{
	uint64_t size = 64ull << 20;
	int rounds = argc > 2 ? atoi(argv[2]) : 7;
	struct cb_clock clk;
	double cb_p50[64], cb_tot[64], mn_p50[64], mn_tot[64];

	if (argc > 1 && cb_size_parse(argv[1], &size) < 0) {
		fprintf(stderr, "bench_overhead: bad size '%s'\n", argv[1]);
		return 2;
	}
	if (rounds < 1 || rounds > 64 || cb_clock_init(&clk, CB_CLOCK_TSC) < 0) {
		fprintf(stderr, "bench_overhead: needs 1..64 rounds and a usable TSC\n");
		return 2;
	}
	printf("harness overhead: seq %" PRIu64 " MiB, child writes, %d alternating rounds\n", size >> 20, rounds);
	printf("%5s  %14s  %14s  %14s  %14s\n", "round", "cowbench p50", "minimal p50", "cowbench total", "minimal total");
	(void)cowbench_rep(&clk, size); /* warm-up of both, unrecorded */
	(void)minimal_loop(&clk, size);
	for (int i = 0; i < rounds; i++) {
		/* Alternate which goes first so drift does not favour one side. */
		struct sample a, b;

		if (i % 2) {
			b = minimal_loop(&clk, size);
			a = cowbench_rep(&clk, size);
		} else {
			a = cowbench_rep(&clk, size);
			b = minimal_loop(&clk, size);
		}
		if (a.p50_ns < 0 || b.p50_ns < 0) {
			fprintf(stderr, "bench_overhead: a measurement failed\n");
			return 1;
		}
		cb_p50[i] = a.p50_ns;
		cb_tot[i] = a.total_ns;
		mn_p50[i] = b.p50_ns;
		mn_tot[i] = b.total_ns;
		printf("%5d  %11.1f ns  %11.1f ns  %11.3f ms  %11.3f ms\n", i + 1, a.p50_ns, b.p50_ns,
		       a.total_ns / 1e6, b.total_ns / 1e6);
	}
	double rp = median(cb_p50, (size_t)rounds) / median(mn_p50, (size_t)rounds);
	double rt = median(cb_tot, (size_t)rounds) / median(mn_tot, (size_t)rounds);

	printf("ratio of median p50 (cowbench / minimal):   %.3f  %s\n", rp,
	       rp >= 0.95 && rp <= 1.05 ? "within 1.00 +- 0.05" : "OUTSIDE 1.00 +- 0.05");
	printf("ratio of median total (cowbench / minimal): %.3f  %s\n", rt,
	       rt >= 0.95 && rt <= 1.05 ? "within 1.00 +- 0.05" : "OUTSIDE 1.00 +- 0.05");
	return 0;
}
