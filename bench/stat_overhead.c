/*
 * What does watching cost the watched program? Runs a forking CPython loop
 * (bench/forkloop.py) alone and under `cowbench stat` (its defaults: every
 * descendant, 1 s lines; as root taskstats, the tracepoint and the exit
 * listener), in rounds of one of each with the order alternating, and
 * prints the median of each and the median of the paired ratios watched /
 * alone, twice: the program's own time (what it measures itself from its
 * first line to its last: what watching costs the program) and the wall
 * time of the whole command (stat's start and its end included).
 * Target: <= 1.1 for the program's own time.
 *
 * usage: bench_stat [ROUNDS [FORKS [OBJECTS]]]   (default 7, 100, 20000)
 * BENCH_STAT_COWBENCH=PATH: watch with another build of cowbench (a before/after comparison under the same load).
 */
#define _GNU_SOURCE
#include <fcntl.h>
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

/* The seconds the program wrote into path (its own time); -1 when missing. */
static double own_time(const char *path)
{
	FILE *fp = fopen(path, "re");
	double s = -1;

	if (fp) {
		if (fscanf(fp, "%lf", &s) != 1)
			s = -1;
		fclose(fp);
	}
	unlink(path);
	return s;
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
	char dir[] = "/tmp/bench-stat.XXXXXX", tfile[64];
	char *alone[] = { "python3", BENCH_DIR "/forkloop.py", (char *)forks, (char *)objects, tfile, NULL };
	char *cli = getenv("BENCH_STAT_COWBENCH") ? getenv("BENCH_STAT_COWBENCH") : COWBENCH_CLI;
	char *watched[] = { cli, "stat", "--", "python3", BENCH_DIR "/forkloop.py", (char *)forks,
			    (char *)objects, tfile, NULL };
	double a[64], w[64], r[64], ao[64], wo[64], ro[64];

	if (rounds < 1 || rounds > 64 || atoi(forks) < 1 || atoi(objects) < 1) {
		fprintf(stderr, "usage: bench_stat [ROUNDS 1..64 [FORKS [OBJECTS]]]\n");
		return 2;
	}
	if (!mkdtemp(dir)) {
		perror("bench_stat: mkdtemp");
		return 1;
	}
	snprintf(tfile, sizeof(tfile), "%s/t", dir);
	for (int i = 0; i < rounds; i++) {
		bool watched_first = i % 2;

		if (watched_first) {
			w[i] = timed_run(watched);
			wo[i] = own_time(tfile);
		}
		a[i] = timed_run(alone);
		ao[i] = own_time(tfile);
		if (!watched_first) {
			w[i] = timed_run(watched);
			wo[i] = own_time(tfile);
		}
		if (a[i] <= 0 || w[i] <= 0 || ao[i] <= 0 || wo[i] <= 0) {
			fprintf(stderr, "bench_stat: a run failed (python3 or cowbench stat)\n");
			rmdir(dir);
			return 1;
		}
		r[i] = w[i] / a[i];
		ro[i] = wo[i] / ao[i];
	}
	rmdir(dir);
	printf("forking CPython loop (%s forks, %s objects), %d rounds, %s:\n", forks, objects, rounds,
	       geteuid() == 0 ? "as root (taskstats, tracepoint, exit records)" : "not root (/proc only)");
	printf("  the program's own time: alone %.3f s, under cowbench stat %.3f s (medians)\n", median(ao, rounds),
	       median(wo, rounds));
	printf("  the whole command:      alone %.3f s, under cowbench stat %.3f s (medians)\n", median(a, rounds),
	       median(w, rounds));
	printf("ratio watched / alone, the program's own time: %.3f (median of %d paired rounds; target <= 1.1)\n",
	       median(ro, rounds), rounds);
	printf("ratio watched / alone, the whole command:      %.3f (stat's start and end included)\n", median(r, rounds));
	return 0;
}
