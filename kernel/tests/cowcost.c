// SPDX-License-Identifier: GPL-2.0
/*
 * cowcost: the cost of each fault path a copy-on-write change touches, per
 * operation, for comparing a patched kernel (everything off) with stock.
 * Boot with `vm-run.sh --icount`: QEMU's clock then advances 1 ns per guest
 * instruction, so every time printed here is an instruction count (exact,
 * comparable across boots and kernels).  The loops are those of
 * will-it-scale's page_fault1/2 and vm-scalability's anon-cow-seq/-rand:
 *
 *   anon-touch  first write to each page of a fresh private anonymous
 *               mapping (page_fault1: do_anonymous_page)
 *   file-write  first write to each page of a private mapping of a tmpfs
 *               file (page_fault2: do_cow_fault)
 *   cow-seq     a forked child writes each page it shares with its parent,
 *               in order (wp_page_copy)
 *   cow-rand    the same in random order
 *   reuse       the parent writes each page after its child exited (the
 *               reuse path of do_wp_page; vm.cow_reuse_around, where the
 *               kernel has it, makes one fault cover several pages)
 *   cow-populate a forked child breaks COW on every page it shares with its
 *               parent with one MADV_POPULATE_WRITE over the range
 *   anon-populate one MADV_POPULATE_WRITE over a fresh private anonymous
 *               mapping (no fork: the path a COW populate batch must not tax)
 *   fork-vmas   fork() of a process with 5,000 VMAs (one touched page each)
 *
 *   cowcost [--pages N] [--reps N] [--vmas N] [--ops NAME,NAME...]
 *
 * Prints "cowcost op=NAME rep=R per_op=X traps=T" per repetition (X: ns per
 * page, or per fork, with 3 decimals; T: the minor faults the writing process
 * took for the whole range; GUP's faults for a populate count too), for the
 * populate operations followed by " batch=B" (the cow_populate_batch_pages
 * events of /proc/vmstat during the call, "-" without that event), and
 * "cowcost-median op=NAME per_op=X".
 * Run as root in an otherwise idle guest; exits 1 on any failure.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "cowtest.h"

#define PS 4096L

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

enum { OP_ANON, OP_FILE, OP_COW_SEQ, OP_COW_RAND, OP_REUSE, OP_FORK_VMAS, OP_COW_POPULATE,
       OP_ANON_POPULATE, NR_OPS };
static const char * const op_name[NR_OPS] = {
	"anon-touch", "file-write", "cow-seq", "cow-rand", "reuse", "fork-vmas", "cow-populate",
	"anon-populate",
};

/* Minor faults of the writing process in the last operation (child's, for COW ops). */
static long last_traps;
/* cow_populate_batch_pages events during the last populate, -1: no such event. */
static long long last_batch = -1;

/* One /proc/vmstat event, -1 when the kernel has no such line. */
static long long vmstat_event(const char *name)
{
	static char buf[16384];
	size_t len = strlen(name);
	ssize_t n, off = 0;
	int fd = open("/proc/vmstat", O_RDONLY);
	char *p;

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf + off, sizeof(buf) - 1 - off)) > 0)
		off += n;
	close(fd);
	buf[off] = 0;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, name, len) && p[len] == ' ')
			return atoll(p + len + 1);
	return -1;
}

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static long npages = 4096, nvmas = 5000;

static char *filled(long n)
{
	char *m = mmap(NULL, n * PS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return NULL;
	madvise(m, n * PS, MADV_NOHUGEPAGE);
	for (long i = 0; i < n; i++)
		memset(m + i * PS, 0x5a, PS);
	return m;
}

/* Write one byte to each page of @m in the order of @perm (or in order). */
static uint64_t write_pages(char *m, long n, const long *perm)
{
	long long b0 = perm == (const long *)-1L ? vmstat_event("cow_populate_batch_pages") : -1;
	long f0 = minflt();
	uint64_t t0 = now_ns();

	if (perm == (const long *)-1L) {	/* one MADV_POPULATE_WRITE */
		if (madvise(m, n * PS, MADV_POPULATE_WRITE))
			return 0;
	} else {
		for (long i = 0; i < n; i++)
			((volatile char *)m)[(perm ? perm[i] : i) * PS] = 1;
	}
	t0 = now_ns() - t0;
	last_traps = minflt() - f0;
	last_batch = b0 < 0 ? -1 : vmstat_event("cow_populate_batch_pages") - b0;
	return t0;
}

/* The child writes; its time and faults come back through a pipe. */
static double cow_writes(const long *perm)
{
	char *m = filled(npages);
	uint64_t t = 0, res[3];
	int p[2], status;
	pid_t pid;

	if (!m || pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		res[0] = write_pages(m, npages, perm);
		res[1] = last_traps;
		res[2] = (uint64_t)last_batch;
		_exit(write(p[1], res, sizeof(res)) == sizeof(res) ? 0 : 1);
	}
	if (pid < 0 || read(p[0], res, sizeof(res)) != sizeof(res))
		res[0] = 0;
	t = res[0];
	last_traps = res[1];
	last_batch = (long long)res[2];
	waitpid(pid, &status, 0);
	close(p[0]);
	close(p[1]);
	munmap(m, npages * PS);
	return t && WIFEXITED(status) && !WEXITSTATUS(status) ? (double)t / npages : -1;
}

static double run_op(int op, const long *perm)
{
	double r = -1;
	uint64_t t;
	char *m;

	switch (op) {
	case OP_ANON:
	case OP_ANON_POPULATE:
		m = mmap(NULL, npages * PS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return -1;
		madvise(m, npages * PS, MADV_NOHUGEPAGE);
		r = (double)write_pages(m, npages, op == OP_ANON ? NULL : (const long *)-1L) /
		    npages;
		munmap(m, npages * PS);
		return r > 0 ? r : -1;
	case OP_FILE: {
		int fd = open("/tmp/cowcost.file", O_RDWR | O_CREAT | O_TRUNC, 0600);

		if (fd < 0 || ftruncate(fd, npages * PS))
			return -1;
		m = mmap(NULL, npages * PS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED)
			return -1;
		for (long i = 0; i < npages; i++)	/* in the page cache first */
			m[i * PS] = 2;
		munmap(m, npages * PS);
		m = mmap(NULL, npages * PS, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
		close(fd);
		if (m == MAP_FAILED)
			return -1;
		r = (double)write_pages(m, npages, NULL) / npages;
		munmap(m, npages * PS);
		unlink("/tmp/cowcost.file");
		return r;
	}
	case OP_COW_SEQ:
		return cow_writes(NULL);
	case OP_COW_RAND:
		return cow_writes(perm);
	case OP_COW_POPULATE:
		return cow_writes((const long *)-1L);
	case OP_REUSE: {
		int status;
		pid_t pid;

		m = filled(npages);
		if (!m)
			return -1;
		pid = fork();
		if (pid == 0)
			_exit(0);
		waitpid(pid, &status, 0);
		r = (double)write_pages(m, npages, NULL) / npages;
		munmap(m, npages * PS);
		return r;
	}
	case OP_FORK_VMAS: {
		char **v = calloc(nvmas, sizeof(*v));
		int status;
		pid_t pid;

		if (!v)
			return -1;
		/* Alternating protections keep neighbours from merging. */
		for (long i = 0; i < nvmas; i++) {
			v[i] = mmap(NULL, PS, (i & 1) ? PROT_READ | PROT_WRITE : PROT_READ,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (v[i] == MAP_FAILED)
				return -1;
			if (i & 1)
				v[i][0] = 1;
			else
				(void)*(volatile char *)v[i];
		}
		last_traps = 0;
		t = now_ns();
		pid = fork();
		if (pid == 0)
			_exit(0);
		t = now_ns() - t;
		waitpid(pid, &status, 0);
		for (long i = 0; i < nvmas; i++)
			munmap(v[i], PS);
		free(v);
		return pid > 0 ? (double)t : -1;
	}
	}
	return -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int reps = 7, failed = 0, want[NR_OPS];
	double *res[NR_OPS];
	long *perm;

	for (int op = 0; op < NR_OPS; op++)
		want[op] = 1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--pages") && i + 1 < argc)
			npages = atol(argv[++i]);
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--vmas") && i + 1 < argc)
			nvmas = atol(argv[++i]);
		else if (!strcmp(argv[i], "--ops") && i + 1 < argc) {
			char *list = argv[++i], *tok;

			for (int op = 0; op < NR_OPS; op++)
				want[op] = 0;
			for (tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
				int op;

				for (op = 0; op < NR_OPS && strcmp(tok, op_name[op]); op++)
					;
				if (op == NR_OPS) {
					fprintf(stderr, "cowcost: unknown operation '%s'\n", tok);
					return 2;
				}
				want[op] = 1;
			}
		} else {
			fprintf(stderr, "usage: cowcost [--pages N] [--reps N] [--vmas N] [--ops NAME,...]\n");
			return 2;
		}
	}
	if (npages < 1 || reps < 1 || nvmas < 1) {
		fprintf(stderr, "cowcost: --pages, --reps and --vmas must be positive\n");
		return 2;
	}
	perm = malloc(npages * sizeof(*perm));
	if (!perm)
		return 1;
	srandom(1);
	for (long i = 0; i < npages; i++)
		perm[i] = i;
	for (long i = npages - 1; i > 0; i--) {
		long j = random() % (i + 1), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	for (int op = 0; op < NR_OPS; op++)
		res[op] = calloc(reps, sizeof(double));
	/* One warm-up round, then the operations interleaved rep by rep. */
	for (int op = 0; op < NR_OPS; op++)
		if (want[op])
			run_op(op, perm);
	for (int r = 0; r < reps; r++) {
		for (int op = 0; op < NR_OPS; op++) {
			if (!want[op])
				continue;
			res[op][r] = run_op(op, perm);
			if (res[op][r] < 0) {
				printf("cowcost op=%s rep=%d FAILED\n", op_name[op], r);
				failed = 1;
				continue;
			}
			printf("cowcost op=%s rep=%d per_op=%.3f traps=%ld", op_name[op], r,
			       res[op][r], last_traps);
			if (op == OP_COW_POPULATE || op == OP_ANON_POPULATE) {
				if (last_batch < 0)
					printf(" batch=-");
				else
					printf(" batch=%lld", last_batch);
			}
			printf("\n");
		}
	}
	for (int op = 0; op < NR_OPS; op++) {
		if (!want[op])
			continue;
		qsort(res[op], reps, sizeof(double), cmp_double);
		printf("cowcost-median op=%s per_op=%.3f min=%.3f max=%.3f\n", op_name[op],
		       reps & 1 ? res[op][reps / 2] : (res[op][reps / 2 - 1] + res[op][reps / 2]) / 2,
		       res[op][0], res[op][reps - 1]);
	}
	return failed;
}
