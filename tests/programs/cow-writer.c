/*
 * cow-writer PAGES [THREADS [LINGER_MS [PAUSE_MS]]]: a test program that makes a
 * known number of COW copies. It populates PAGES pages, forks a child that
 * keeps them mapped, waits PAUSE_MS milliseconds (an observer that learns of
 * the fork from its next read gets to see it first), then writes each page once
 * (PAGES copies in this process, split over THREADS threads when given),
 * releases the child, waits LINGER_MS milliseconds and exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

struct slice {
	char *base;
	size_t first, count, page;
};

static void *write_slice(void *arg)
{
	struct slice *s = arg;

	for (size_t i = s->first; i < s->first + s->count; i++)
		((volatile char *)s->base)[i * s->page] = 2;
	return NULL;
}

int main(int argc, char **argv)
{
	long pages = argc > 1 ? strtol(argv[1], NULL, 10) : 0, threads = argc > 2 ? strtol(argv[2], NULL, 10) : 1;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	pthread_t tid[64];
	struct slice sl[64];
	int hold[2];
	char *base;
	pid_t pid;

	if (pages <= 0 || threads < 1 || threads > 64) {
		fprintf(stderr, "usage: cow-writer PAGES [THREADS<=64]\n");
		return 2;
	}
	base = mmap(NULL, (size_t)pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED || pipe(hold) < 0)
		return 1;
	madvise(base, (size_t)pages * page, MADV_NOHUGEPAGE);
	memset(base, 1, (size_t)pages * page);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		char c;

		close(hold[1]);
		while (read(hold[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(hold[0]);
	if (argc > 4)
		usleep((useconds_t)strtol(argv[4], NULL, 10) * 1000);
	for (long t = 0; t < threads; t++) {
		sl[t] = (struct slice){ base, (size_t)(pages * t / threads),
					(size_t)(pages * (t + 1) / threads - pages * t / threads), page };
		if (threads == 1)
			write_slice(&sl[t]);
		else if (pthread_create(&tid[t], NULL, write_slice, &sl[t]) != 0)
			return 1;
	}
	for (long t = 0; threads > 1 && t < threads; t++)
		pthread_join(tid[t], NULL);
	close(hold[1]);
	waitpid(pid, NULL, 0);
	if (argc > 3)
		usleep((useconds_t)strtol(argv[3], NULL, 10) * 1000);
	return 0;
}
