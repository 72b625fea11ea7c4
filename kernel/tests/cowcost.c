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
 *   cowcost [--pages N] [--reps N] [--vmas N] [--ops NAME,NAME...] [--thp] [--counts]
 *           [--mark]
 *
 * Prints "cowcost op=NAME rep=R per_op=X traps=T" per repetition (X: ns per
 * page, or per fork, with 3 decimals; T: the minor faults the writing process
 * took for the whole range; GUP's faults for a populate count too), for the
 * populate operations followed by " batch=B" (the cow_populate_batch_pages
 * events of /proc/vmstat during the call, "-" without that event), and
 * "cowcost-median op=NAME per_op=X".
 *
 * The anonymous regions are MADV_NOHUGEPAGE (order-0 pages), unless --thp:
 * then they are 2 MiB aligned and MADV_HUGEPAGE, so that what
 * /sys/kernel/mm/transparent_hugepage/ allows (THP "always", an mTHP size)
 * backs them.  --counts adds to each repetition's line the deltas, over the
 * whole operation (fill, fork, writes, exit), of the /proc/vmstat events a
 * COW change moves (cow_fault, cow_precopy, cow_reuse_around(_pages),
 * thp_fault_alloc, thp_split_pmd, ...; absent ones are left out), of
 * precopy_skip_large in /proc/cow_stats, of every anonymous mTHP size's
 * stats/anon_fault_alloc and stats/split, and the AnonHugePages of the
 * filled region (kB, /proc/self/smaps_rollup, PMD-mapped THP only).
 * --mark calls sync() right before and after each measured loop of writes
 * (or populate): the marks of kcount-compare.sh, which counts the kernel's
 * instructions between them function by function (the loop's times then
 * include a sync(), so compare them only with --mark runs).
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
static int thp, counts, mark;
/* AnonHugePages (kB) of this process right after the last filled() region was written. */
static long anon_huge_kb = -1;

#define HPAGE (2L << 20)

/*
 * A private anonymous region of @n pages: order-0 pages (MADV_NOHUGEPAGE),
 * or with --thp 2 MiB aligned and MADV_HUGEPAGE.
 */
static char *anon_region(long n)
{
	size_t len = n * PS;
	char *m, *a;

	if (!thp) {
		m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		madvise(m, len, MADV_NOHUGEPAGE);
		return m;
	}
	m = mmap(NULL, len + HPAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	a = (char *)(((uintptr_t)m + HPAGE - 1) & ~(uintptr_t)(HPAGE - 1));
	if (a > m)
		munmap(m, a - m);
	munmap(a + len, m + HPAGE - a);
	madvise(a, len, MADV_HUGEPAGE);
	return a;
}

/* The "KEY: N kB" value of @key in /proc/self/smaps_rollup, or -1. */
static long rollup_kb(const char *key)
{
	static char b[4096];
	char *p;

	if (read_file("/proc/self/smaps_rollup", b, sizeof(b)))
		return -1;
	p = strstr(b, key);
	return p ? atol(p + strlen(key)) : -1;
}

static void note_filled(void);

static char *filled(long n)
{
	char *m = anon_region(n);

	if (!m)
		return NULL;
	for (long i = 0; i < n; i++)
		memset(m + i * PS, 0x5a, PS);
	if (counts) {
		anon_huge_kb = rollup_kb("AnonHugePages:");
		note_filled();
	}
	return m;
}

/* ---- --counts: event deltas over one operation ---------------------------------------- */
static const char * const vm_keys[] = {
	"cow_fault", "cow_precopy", "cow_reuse_around", "cow_reuse_around_pages",
	"thp_fault_alloc", "thp_fault_fallback", "thp_split_pmd", "thp_deferred_split_page",
	"pgreuse",
};
#define NR_VM_KEYS (sizeof(vm_keys) / sizeof(vm_keys[0]))
#define MAX_MTHP 16
#define THP_DIR "/sys/kernel/mm/transparent_hugepage"

struct counts {
	long long vm[NR_VM_KEYS];
	long long skip_large;
	long long mthp_alloc[MAX_MTHP], mthp_split[MAX_MTHP], mthp_deferred[MAX_MTHP];
	long long mthp_nr_anon[MAX_MTHP];	/* a gauge: the size's anon folios now */
};

static int nr_mthp;
static char mthp_size[MAX_MTHP][24];	/* "64kB" ... */
/* stats/nr_anon of each size right after the last filled() region was written. */
static long long mthp_nr_anon_filled[MAX_MTHP];

static long long file_ll(const char *path)
{
	char b[64];

	return read_file(path, b, sizeof(b)) ? -1 : atoll(b);
}

/* The anonymous mTHP sizes this kernel offers: hugepages-<N>kB with stats/anon_fault_alloc. */
static void find_mthp_sizes(void)
{
	for (long kb = 8; kb <= 2048 && nr_mthp < MAX_MTHP; kb *= 2) {
		char path[512];

		snprintf(path, sizeof(path), THP_DIR "/hugepages-%ldkB/stats/anon_fault_alloc", kb);
		if (!access(path, R_OK))
			snprintf(mthp_size[nr_mthp++], sizeof(mthp_size[0]), "%ldkB", kb);
	}
}

static void note_filled(void)
{
	for (int i = 0; i < nr_mthp; i++) {
		char path[512];

		snprintf(path, sizeof(path), THP_DIR "/hugepages-%s/stats/nr_anon", mthp_size[i]);
		mthp_nr_anon_filled[i] = file_ll(path);
	}
}

static void read_counts(struct counts *c)
{
	static char b[32768];
	static struct cow_stats cs;

	memset(c, -1, sizeof(*c));
	if (!read_all("/proc/vmstat", b, sizeof(b)))
		for (char *p = b; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
			for (size_t k = 0; k < NR_VM_KEYS; k++) {
				size_t kl = strlen(vm_keys[k]);

				if (!strncmp(p, vm_keys[k], kl) && p[kl] == ' ')
					c->vm[k] = atoll(p + kl + 1);
			}
	if (!cow_stats_read(&cs) && cow_has_stat(&cs, "precopy_skip_large"))
		c->skip_large = cow_stat(&cs, "precopy_skip_large");
	for (int i = 0; i < nr_mthp; i++) {
		char path[512];

		snprintf(path, sizeof(path), THP_DIR "/hugepages-%s/stats/anon_fault_alloc", mthp_size[i]);
		c->mthp_alloc[i] = file_ll(path);
		snprintf(path, sizeof(path), THP_DIR "/hugepages-%s/stats/split", mthp_size[i]);
		c->mthp_split[i] = file_ll(path);
		snprintf(path, sizeof(path), THP_DIR "/hugepages-%s/stats/split_deferred", mthp_size[i]);
		c->mthp_deferred[i] = file_ll(path);
		snprintf(path, sizeof(path), THP_DIR "/hugepages-%s/stats/nr_anon", mthp_size[i]);
		c->mthp_nr_anon[i] = file_ll(path);
	}
}

/* " key=+N" for every count both snapshots have; mTHP sizes only where one moved. */
static void print_counts(const struct counts *a, const struct counts *b)
{
	for (size_t k = 0; k < NR_VM_KEYS; k++)
		if (a->vm[k] >= 0 && b->vm[k] >= 0)
			printf(" %s=%lld", vm_keys[k], b->vm[k] - a->vm[k]);
	if (a->skip_large >= 0 && b->skip_large >= 0)
		printf(" precopy_skip_large=%lld", b->skip_large - a->skip_large);
	for (int i = 0; i < nr_mthp; i++) {
		if (a->mthp_alloc[i] >= 0 && b->mthp_alloc[i] > a->mthp_alloc[i])
			printf(" mthp_%s_anon_fault_alloc=%lld", mthp_size[i],
			       b->mthp_alloc[i] - a->mthp_alloc[i]);
		if (a->mthp_split[i] >= 0 && b->mthp_split[i] > a->mthp_split[i])
			printf(" mthp_%s_split=%lld", mthp_size[i], b->mthp_split[i] - a->mthp_split[i]);
		if (a->mthp_deferred[i] >= 0 && b->mthp_deferred[i] > a->mthp_deferred[i])
			printf(" mthp_%s_split_deferred=%lld", mthp_size[i],
			       b->mthp_deferred[i] - a->mthp_deferred[i]);
		/* Folios of this size the filled region was made of (another task may add some). */
		if (a->mthp_nr_anon[i] >= 0 && mthp_nr_anon_filled[i] > a->mthp_nr_anon[i])
			printf(" mthp_%s_filled_folios=%lld", mthp_size[i],
			       mthp_nr_anon_filled[i] - a->mthp_nr_anon[i]);
	}
	if (anon_huge_kb >= 0)
		printf(" anon_huge_kb=%ld", anon_huge_kb);
}

/* Write one byte to each page of @m in the order of @perm (or in order). */
static uint64_t write_pages(char *m, long n, const long *perm)
{
	long long b0 = perm == (const long *)-1L ? vmstat_event("cow_populate_batch_pages") : -1;
	long f0 = minflt();
	uint64_t t0;

	if (mark)
		sync();	/* --mark: the window starts (kcount-compare.sh) */
	t0 = now_ns();

	if (perm == (const long *)-1L) {	/* one MADV_POPULATE_WRITE */
		if (madvise(m, n * PS, MADV_POPULATE_WRITE))
			return 0;
	} else {
		for (long i = 0; i < n; i++)
			((volatile char *)m)[(perm ? perm[i] : i) * PS] = 1;
	}
	t0 = now_ns() - t0;
	if (mark)
		sync();	/* --mark: the window ends */
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
		m = anon_region(npages);
		if (!m)
			return -1;
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
		else if (!strcmp(argv[i], "--thp"))
			thp = 1;
		else if (!strcmp(argv[i], "--counts"))
			counts = 1;
		else if (!strcmp(argv[i], "--mark"))
			mark = 1;
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
			fprintf(stderr, "usage: cowcost [--pages N] [--reps N] [--vmas N] [--ops NAME,...] "
				"[--thp] [--counts] [--mark]\n");
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
	if (counts)
		find_mthp_sizes();
	for (int r = 0; r < reps; r++) {
		for (int op = 0; op < NR_OPS; op++) {
			struct counts c0, c1;

			if (!want[op])
				continue;
			anon_huge_kb = -1;
			memset(mthp_nr_anon_filled, -1, sizeof(mthp_nr_anon_filled));
			if (counts)
				read_counts(&c0);
			res[op][r] = run_op(op, perm);
			if (counts)
				read_counts(&c1);
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
			if (counts)
				print_counts(&c0, &c1);
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
