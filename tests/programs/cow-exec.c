/*
 * cow-exec CHILDREN PAGES PAUSE_MS: a test program for cowbench stat
 * --where=code across exec (issue 29, item 8). It fills PAGES pages, forks
 * CHILDREN children that wait, waits PAUSE_MS, then runs exec (itself, to
 * reap them). The exec closes the pipe the children wait on: then each
 * writes one byte per page in write_child, one write fault per page, all
 * in code the parent's exec has replaced by then. It prints its pid on
 * stderr and exits 0 once every child exited 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static __attribute__((noinline)) void write_child(volatile char *p, long n, long page)
{
	for (long i = 0; i < n; i++)
		p[i * page] = 2;
}

static int reap(void)
{
	int ws, failed = 0;

	for (;;) {
		pid_t pid = wait(&ws);

		if (pid < 0 && errno == EINTR)
			continue;
		if (pid < 0)
			return failed ? 1 : 0;
		failed |= !WIFEXITED(ws) || WEXITSTATUS(ws) != 0;
	}
}

int main(int argc, char **argv)
{
	long children, pages, pause_ms, page = sysconf(_SC_PAGESIZE);
	int go[2];
	char *buf;

	if (argc == 2 && strcmp(argv[1], "reap") == 0)
		return reap();
	if (argc != 4) {
		fprintf(stderr, "usage: cow-exec CHILDREN PAGES PAUSE_MS\n");
		return 2;
	}
	children = strtol(argv[1], NULL, 10);
	pages = strtol(argv[2], NULL, 10);
	pause_ms = strtol(argv[3], NULL, 10);
	buf = mmap(NULL, (size_t)(pages * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || pipe2(go, O_CLOEXEC) < 0)
		return 1;
	memset(buf, 1, (size_t)(pages * page));
	for (long i = 0; i < children; i++) {
		pid_t pid = fork();
		char c;

		if (pid < 0)
			return 1;
		if (pid == 0) {
			close(go[1]);
			if (read(go[0], &c, 1) != 0) /* end of file: the parent ran exec */
				_exit(1);
			write_child(buf, pages, page);
			_exit(0);
		}
	}
	close(go[0]);
	fprintf(stderr, "cow-exec: pid=%d children=%ld pages=%ld\n", (int)getpid(), children, pages);
	usleep((useconds_t)(pause_ms * 1000));
	execl("/proc/self/exe", argv[0], "reap", (char *)NULL);
	return 1;
}
