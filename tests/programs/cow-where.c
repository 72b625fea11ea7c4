/*
 * cow-where HEAP_PAGES ANON_PAGES STACK_PAGES [thp]: a test program for cowbench
 * stat --where. It fills a heap buffer (brk heap: malloc below the mmap
 * threshold), an anonymous mapping and a stack buffer, forks a child that
 * keeps them shared, waits so a watcher sees the shared state, then writes
 * one byte per page of each in its own function (write_heap, write_anon,
 * write_stack): exactly that many COW copies per mapping, in the parent.
 * It prints the three buffers' addresses on stderr, releases the child
 * after another pause and exits 0. With "thp" the anonymous mapping is
 * 2 MiB aligned and MADV_HUGEPAGE (transparent huge pages where the kernel
 * has them), else MADV_NOHUGEPAGE.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAUSE_US 400000 /* several of the watcher's intervals */

static size_t page;

static __attribute__((noinline)) void write_heap(volatile char *p, long n)
{
	for (long i = 0; i < n; i++)
		p[i * (long)page] = 2;
}

static __attribute__((noinline)) void write_anon(volatile char *p, long n)
{
	for (long i = 0; i < n; i++)
		p[i * (long)page] = 2;
}

static __attribute__((noinline)) void write_stack(volatile char *p, long n)
{
	for (long i = 0; i < n; i++)
		p[i * (long)page] = 2;
}

/*
 * A pause between phases: PAUSE_US, or with COW_WHERE_GATE=FIFO until the
 * watcher's test writes a byte there (it paces the phases by the watcher's
 * own lines, so a loaded machine cannot merge them); then `said` on stderr.
 */
static void pause_phase(const char *said)
{
	const char *gate = getenv("COW_WHERE_GATE");
	char c;
	int fd;

	if (!gate) {
		usleep(PAUSE_US);
		return;
	}
	fprintf(stderr, "cow-where: %s\n", said);
	fd = open(gate, O_RDONLY);
	if (fd < 0 || read(fd, &c, 1) != 1)
		_exit(3);
	close(fd);
}

static __attribute__((noinline)) int fork_and_write(char *heap, long h, char *anon, long a, long s)
{
	char *stack = alloca((size_t)s * page + page);
	char *st = (char *)(((unsigned long)stack + page - 1) & ~(page - 1));
	int hold[2], ws;
	pid_t pid;

	memset(st, 1, (size_t)s * page);
	fprintf(stderr, "cow-where: pid=%d heap=%p anon=%p stack=%p\n", (int)getpid(), (void *)heap, (void *)anon,
		(void *)st);
	if (pipe(hold) < 0)
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		char c;

		close(hold[1]);
		_exit(read(hold[0], &c, 1) < 0 ? 1 : 0);
	}
	close(hold[0]);
	pause_phase("forked");
	write_heap(heap, h);
	write_anon(anon, a);
	write_stack(st, s);
	pause_phase("written");
	close(hold[1]);
	return waitpid(pid, &ws, 0) == pid && WIFEXITED(ws) && WEXITSTATUS(ws) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	long h = argc > 3 ? strtol(argv[1], NULL, 10) : -1, a = argc > 3 ? strtol(argv[2], NULL, 10) : -1;
	long s = argc > 3 ? strtol(argv[3], NULL, 10) : -1;
	int thp = argc > 4 && strcmp(argv[4], "thp") == 0;
	size_t huge = 2u << 20;
	char *heap, *anon;

	page = (size_t)sysconf(_SC_PAGESIZE);
	if (h < 1 || a < 1 || s < 1 || s > 1024) {
		fprintf(stderr, "usage: cow-where HEAP_PAGES ANON_PAGES STACK_PAGES(<=1024) [thp]\n");
		return 2;
	}
	mallopt(M_MMAP_THRESHOLD, 256 << 20); /* the heap buffer stays in [heap] */
	heap = malloc((size_t)(h + 1) * page);
	anon = mmap(NULL, (size_t)a * page + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!heap || anon == MAP_FAILED)
		return 1;
	heap = (char *)(((unsigned long)heap + page - 1) & ~(page - 1));
	anon = (char *)(((unsigned long)anon + huge - 1) & ~(huge - 1));
	madvise(anon, (size_t)a * page, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	memset(heap, 1, (size_t)h * page);
	memset(anon, 1, (size_t)a * page);
	return fork_and_write(heap, h, anon, a, s);
}
