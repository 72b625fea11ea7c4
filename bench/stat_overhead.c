/*
 * What does watching cost the watched program? Runs a forking CPython loop
 * (bench/forkloop.py) alone, under `cowbench stat` (its defaults: every
 * descendant, 1 s lines; as root taskstats, the write-fault recorder and
 * the exit listener) and under stat with the recorder's perf samples
 * instead of its BPF program (COWBENCH_WPFAULT_NO_BPF=1: what stat did
 * before, and what it does where the kernel refuses BPF), in rounds of one
 * of each, the order turning each round. Prints the median of each and
 * the median of the paired ratios watched / alone for the program's own
 * CPU time (user + system of it and its children, from its first line to
 * its last: what watching adds inside its faults, steady on a shared
 * machine) and its own wall time (the CPU time plus whatever the machine's
 * load and stat's own work took from it), and the CPU time stat itself
 * used beside it (the command's, less the program's own and less what the
 * interpreter's start costs alone). Target: <= 1.1 for the program's own time.
 *
 * usage: bench_stat [ROUNDS [FORKS [OBJECTS]]]   (default 7, 100, 20000)
 * BENCH_STAT_COWBENCH=PATH: watch with another build of cowbench (a before/after comparison under the same load).
 * BENCH_STAT_PYTHON=PATH: the interpreter (default python3 from PATH).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cowbench/cowbench.h>

extern char **environ;

enum { ALONE, STAT, STAT_PERF, NCOND };

static const char *const cond_name[NCOND] = { "alone", "under cowbench stat", "stat, perf samples" };

/* One run: the program's own wall and CPU seconds (its time file), and the CPU seconds of the whole command. */
struct run {
	double wall, cpu, cmd_cpu;
};

/* Run argv to its end, its output to /dev/null, with extra (NULL or "NAME=VALUE") in its environment; false when it failed. */
static bool spawn_wait(char *const argv[], char *extra, double *cpu)
{
	posix_spawn_file_actions_t fa;
	char **env = environ;
	struct rusage ru;
	size_t n = 0;
	pid_t pid;
	int ws, rc;

	if (extra) {
		while (environ[n])
			n++;
		env = calloc(n + 2, sizeof(*env));
		if (!env)
			return false;
		memcpy(env, environ, n * sizeof(*env));
		env[n] = extra;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 01, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", 01, 0);
	rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	if (extra)
		free(env);
	if (rc != 0 || wait4(pid, &ws, 0, &ru) != pid || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
		return false;
	*cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec / 1e6;
	return true;
}

/* The program's own wall and CPU seconds, as it wrote them into path; false when missing. */
static bool own_times(const char *path, struct run *r)
{
	FILE *fp = fopen(path, "re");
	bool ok = false;

	if (fp) {
		ok = fscanf(fp, "%lf %lf", &r->wall, &r->cpu) == 2 && r->wall > 0 && r->cpu > 0;
		fclose(fp);
	}
	unlink(path);
	return ok;
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
	char dir[] = "/tmp/bench-stat.XXXXXX", tfile[64], no_bpf[] = "COWBENCH_WPFAULT_NO_BPF=1";
	char *py = getenv("BENCH_STAT_PYTHON") ? getenv("BENCH_STAT_PYTHON") : "python3";
	char *cli = getenv("BENCH_STAT_COWBENCH") ? getenv("BENCH_STAT_COWBENCH") : COWBENCH_CLI;
	char *alone[] = { py, BENCH_DIR "/forkloop.py", (char *)forks, (char *)objects, tfile, NULL };
	char *watched[] = { cli, "stat", "--", py, BENCH_DIR "/forkloop.py", (char *)forks, (char *)objects, tfile, NULL };
	char *const *cmd[NCOND] = { alone, watched, watched };
	char *extra[NCOND] = { NULL, NULL, no_bpf };
	static struct run run[NCOND][64];
	double v[64];

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
		for (int k = 0; k < NCOND; k++) {
			int c = (i + k) % NCOND; /* each condition first, second and last in turn */
			struct run *r = &run[c][i];

			if (!spawn_wait(cmd[c], extra[c], &r->cmd_cpu) || !own_times(tfile, r)) {
				fprintf(stderr, "bench_stat: a run failed (%s %s)\n", py, c == ALONE ? "alone" : "under cowbench stat");
				rmdir(dir);
				return 1;
			}
		}
	}
	rmdir(dir);
	printf("forking CPython loop (%s forks, %s objects, %s), %d rounds, %s:\n", forks, objects, py, rounds,
	       geteuid() == 0 ? "as root (taskstats, write-fault recorder, exit records)" : "not root (/proc only)");
	for (int c = 0; c < NCOND; c++) {
		double wall, cpu;

		for (int i = 0; i < rounds; i++)
			v[i] = run[c][i].wall;
		wall = median(v, rounds);
		for (int i = 0; i < rounds; i++)
			v[i] = run[c][i].cpu;
		cpu = median(v, rounds);
		printf("  %-21s the program's own CPU %.3f s, wall %.3f s", cond_name[c], cpu, wall);
		if (c != ALONE) {
			/* what the command used besides the program's own, less the same for the program alone (its start) */
			for (int i = 0; i < rounds; i++)
				v[i] = (run[c][i].cmd_cpu - run[c][i].cpu) - (run[ALONE][i].cmd_cpu - run[ALONE][i].cpu);
			printf(", stat's own CPU %.3f s", median(v, rounds));
		}
		printf(" (medians)\n");
	}
	for (int c = STAT; c < NCOND; c++) {
		double rc, rw;

		for (int i = 0; i < rounds; i++)
			v[i] = run[c][i].cpu / run[ALONE][i].cpu;
		rc = median(v, rounds);
		for (int i = 0; i < rounds; i++)
			v[i] = run[c][i].wall / run[ALONE][i].wall;
		rw = median(v, rounds);
		printf("ratio %s / alone: CPU %.3f, wall %.3f (medians of %d paired rounds; target <= 1.1)\n", cond_name[c], rc,
		       rw, rounds);
	}
	return 0;
}
