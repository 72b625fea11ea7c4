// SPDX-License-Identifier: GPL-2.0
/*
 * cow_isolation: parent and child (and, every other round, a grandchild)
 * write the memory they share after fork() from several threads each,
 * interleaved and in random order, across 2 MiB boundaries, with
 * MADV_DONTNEED and mprotect() in between, and check after every phase that
 * each process sees exactly its own writes: never a write of another
 * process, never a lost write of its own.
 *
 *   cow_isolation [--threads N] [--rounds N] [--pages N] [--thp 0|1] [--phases N] [--first-kind 0|1|2]
 *
 * Reports one KTAP result (ktap.h): exits 0 when no process saw a wrong word,
 * 1 when one did.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "cowtest.h"
#include "ktap.h"

#define WORDS 512
#define SLOTS 4
static const int slot_word[SLOTS] = { 0, 100, 301, 511 };

static int nthreads = 3, rounds = 4, nphases = 4, first_kind, thp;
static long npages = 1536;
static uint64_t *mem;			/* npages * WORDS */
static uint64_t (*shadow)[SLOTS];	/* expected slot values */
static long *perm;
static pthread_barrier_t barrier;
static volatile long mismatches;
static uint32_t side;			/* who we are: pid-derived */
static int cur_round, cur_phase;

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33; x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

static uint64_t base_val(long p, int w)
{
	return 0xB5ull << 56 | (uint64_t)p << 16 | (uint64_t)w;
}

static uint64_t write_val(long p, int slot)
{
	return 0xC0ull << 56 | (uint64_t)(side & 0xffffff) << 32 | (uint64_t)(cur_round & 0xff) << 24 |
	       (uint64_t)(cur_phase & 0xff) << 16 | (uint64_t)(p & 0x3fff) << 2 | (uint64_t)slot;
}

static void fill_page(long p)
{
	for (int w = 0; w < WORDS; w++)
		mem[p * WORDS + w] = base_val(p, w);
	for (int j = 0; j < SLOTS; j++)
		shadow[p][j] = base_val(p, slot_word[j]);
}

static void verify_page(long p)
{
	int j = 0;

	for (int w = 0; w < WORDS; w++) {
		uint64_t want = base_val(p, w), got = mem[p * WORDS + w];

		if (j < SLOTS && slot_word[j] == w)
			want = shadow[p][j++];
		if (got != want) {
			long m = __sync_add_and_fetch(&mismatches, 1);

			if (m <= 10)
				printf("# MISMATCH side=%x round=%d phase=%d page=%ld word=%d want=%016llx got=%016llx%s\n",
				       side, cur_round, cur_phase, p, w, (unsigned long long)want,
				       (unsigned long long)got,
				       (got >> 56) == 0xC0 && ((got >> 32) & 0xffffff) != (side & 0xffffff) ?
				       " (another process's write)" : "");
		}
	}
}

static void *writer(void *arg)
{
	long t = (long)arg;

	long chunk = (npages + nthreads - 1) / nthreads;

	for (long i = t; i < npages; i += nthreads) {
		/*
		 * Phase 0, 3, ...: interleaved ascending; 1, 4, ...: random
		 * order; 2, 5, ...: each thread writes every page of its own
		 * contiguous chunk in order (sequential streams).
		 */
		int kind = (cur_phase + first_kind) % 3;
		long p = kind == 1 ? perm[i] : i;
		uint64_t h;

		if (kind == 2) {
			p = t * chunk + i / nthreads;
			if (p >= npages)
				break;
		}
		h = mix((uint64_t)side << 40 ^ (uint64_t)cur_round << 32 ^ (uint64_t)cur_phase << 24 ^ p);
		if ((h & 1) && kind != 2)
			continue;
		for (int k = 0; k < 1 + (int)((h >> 1) & 1); k++) {
			int j = (h >> (2 + 2 * k)) % SLOTS;
			uint64_t v = write_val(p, j);

			mem[p * WORDS + slot_word[j]] = v;
			shadow[p][j] = v;
		}
	}
	pthread_barrier_wait(&barrier);
	/* Verify a different partition than the one written. */
	for (long i = (t + 1) % nthreads; i < npages; i += nthreads)
		verify_page(i);
	pthread_barrier_wait(&barrier);
	return NULL;
}

static void maintenance(void)
{
	uint64_t h = mix((uint64_t)side << 32 ^ (uint64_t)cur_round << 8 ^ cur_phase);
	long a = h % (npages - 40), b = (h >> 20) % (npages - 40);
	long len = 8 + (h >> 40) % 24;

	/* Throw away a range: it reads back as zero, refill it. */
	if (madvise(mem + a * WORDS, len * 4096, MADV_DONTNEED))
		perror("madvise(DONTNEED)");
	for (long p = a; p < a + len; p++) {
		for (int w = 0; w < WORDS; w++)
			if (mem[p * WORDS + w]) {
				printf("# MISMATCH side=%x page=%ld not zero after MADV_DONTNEED\n", side, p);
				mismatches++;
				break;
			}
		fill_page(p);
	}
	/* Write-protect and unprotect another range (splits the VMA). */
	if (mprotect(mem + b * WORDS, len * 4096, PROT_READ) ||
	    mprotect(mem + b * WORDS, len * 4096, PROT_READ | PROT_WRITE))
		perror("mprotect");
}

static void run_phases(void)
{
	pthread_t th[64];

	for (cur_phase = 0; cur_phase < nphases; cur_phase++) {
		pthread_barrier_init(&barrier, NULL, nthreads);
		for (long t = 0; t < nthreads; t++)
			pthread_create(&th[t], NULL, writer, (void *)t);
		for (long t = 0; t < nthreads; t++)
			pthread_join(th[t], NULL);
		pthread_barrier_destroy(&barrier);
		maintenance();
	}
	for (long p = 0; p < npages; p++)
		verify_page(p);
}

static int child_process(int depth)
{
	pid_t gc = -1;
	int status = 0, ok;

	side = (uint32_t)getpid() << 4 | (uint32_t)depth;
	if (depth == 1 && (cur_round & 1)) {
		gc = fork();
		if (gc == 0)
			return child_process(2);
	}
	run_phases();
	ok = mismatches == 0;
	if (gc > 0) {
		waitpid(gc, &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			printf("# grandchild of round %d failed (status %x)\n", cur_round, status);
			ok = 0;
		}
	}
	fflush(stdout);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	uintptr_t raw;
	int failed = 0;
	char desc[128];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			nthreads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--pages") && i + 1 < argc)
			npages = atol(argv[++i]);
		else if (!strcmp(argv[i], "--phases") && i + 1 < argc)
			nphases = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--first-kind") && i + 1 < argc)
			first_kind = atoi(argv[++i]) % 3; /* 2: start with sequential streams */
		else if (!strcmp(argv[i], "--thp") && i + 1 < argc)
			thp = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: %s [--threads N] [--rounds N] [--pages N] [--thp 0|1] [--phases N]\n",
				argv[0]);
			return 2;
		}
	}
	if (nthreads < 1 || nthreads > 64 || npages < 64)
		return 2;
	/* 2 MiB aligned with THP, 3 pages off alignment without. */
	raw = (uintptr_t)mmap(NULL, npages * 4096 + (4 << 20), PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if ((void *)raw == MAP_FAILED)
		return 2;
	mem = (uint64_t *)(((raw + (2 << 20) - 1) & ~(uintptr_t)((2 << 20) - 1)) + (thp ? 0 : 3 * 4096));
	if (madvise(mem, npages * 4096, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE))
		perror("madvise(THP)");
	shadow = calloc(npages, sizeof(*shadow));
	perm = malloc(npages * sizeof(long));
	if (!shadow || !perm)
		return 2;
	for (long p = 0; p < npages; p++) {
		perm[p] = p;
		fill_page(p);
	}
	ktap_header();	/* before fork: the children print diagnostics only */
	side = (uint32_t)getpid() << 4;
	for (cur_round = 0; cur_round < rounds; cur_round++) {
		int status = 0;
		pid_t pid;

		for (long k = npages - 1; k > 0; k--) {
			long j = mix(cur_round * 7919 + k) % (k + 1), t = perm[k];

			perm[k] = perm[j];
			perm[j] = t;
		}
		fflush(stdout);
		pid = fork();
		if (pid == 0)
			_exit(child_process(1));
		run_phases();
		waitpid(pid, &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			printf("# child of round %d failed (status %x)\n", cur_round, status);
			failed = 1;
		}
		if (mismatches)
			failed = 1;
	}
	snprintf(desc, sizeof(desc), "isolation threads=%d rounds=%d pages=%ld thp=%d phases=%d",
		 nthreads, rounds, npages, thp, nphases);
	if (failed)
		ktap_fail(desc, "parent mismatches %ld", mismatches);
	else
		ktap_ok(desc);
	return ktap_finish();
}
