/*
 * What does watching cost the watched program? Runs a forking CPython loop
 * (bench/forkloop.py) alone and under `cowbench stat` (its defaults: every
 * descendant, 1 s lines; as root taskstats, the tracepoint and the exit
 * listener), in rounds of one of each with the order alternating, and
 * prints the median wall time of each and the median of the paired ratios
 * watched / alone. Target: <= 1.1.
 *
 * usage: bench_stat [ROUNDS [FORKS [OBJECTS]]]   (default 7, 100, 20000)
 */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cowbench/cowbench.h>

extern char **environ;

/* Wall time of argv to its end (s), its output to /dev/null; -1 when it failed. */
static double timed_run(char *const argv[])
{
	posix_spawn_file_actions_t fa;
	uint64_t t0 = cb_monotonic_ns();
	pid_t pid;
	int ws;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 01, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", 01, 0);
	if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	if (waitpid(pid, &ws, 0) != pid || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
		return -1;
	return (double)(cb_monotonic_ns() - t0) / 1e9;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cb_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 7;
	const char *forks = argc > 2 ? argv[2] : "100", *objects = argc > 3 ? argv[3] : "20000";
	char *alone[] = { "python3", BENCH_DIR "/forkloop.py", (char *)forks, (char *)objects, NULL };
	char *watched[] = { COWBENCH_CLI, "stat", "--", "python3", BENCH_DIR "/forkloop.py", (char *)forks,
			    (char *)objects, NULL };
	double a[64], w[64], r[64];

	if (rounds < 1 || rounds > 64 || atoi(forks) < 1 || atoi(objects) < 1) {
		fprintf(stderr, "usage: bench_stat [ROUNDS 1..64 [FORKS [OBJECTS]]]\n");
		return 2;
	}
	for (int i = 0; i < rounds; i++) {
		bool watched_first = i % 2;

		if (watched_first)
			w[i] = timed_run(watched);
		a[i] = timed_run(alone);
		if (!watched_first)
			w[i] = timed_run(watched);
		if (a[i] <= 0 || w[i] <= 0) {
			fprintf(stderr, "bench_stat: a run failed (python3 or cowbench stat)\n");
			return 1;
		}
		r[i] = w[i] / a[i];
	}
	printf("forking CPython loop (%s forks, %s objects), %d rounds, %s:\n", forks, objects, rounds,
	       geteuid() == 0 ? "as root (taskstats, tracepoint, exit records)" : "not root (/proc only)");
	printf("  alone:                  %.3f s (median)\n", median(a, rounds));
	printf("  under cowbench stat:    %.3f s (median)\n", median(w, rounds));
	printf("ratio watched / alone: %.3f (median of %d paired rounds; target <= 1.1)\n", median(r, rounds), rounds);
	return 0;
}
