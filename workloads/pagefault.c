/*
 * pagefault: will-it-scale's page_fault loops, one pass per rep: map --size of
 * fresh memory, write one word per page (every write faults: order-0 faults
 * that never fork), unmap. anon: an anonymous private first touch
 * (do_anonymous_page); file: a MAP_PRIVATE mapping of a file already in the
 * page cache, written (do_cow_fault: the page is read from the cache and
 * copied). A COW patch must leave both as they were when its pre-copy is off.
 */
#include "wlutil.h"

#include <stdlib.h>

enum pf_kind { PF_ANON = 0, PF_FILE };

static const char *const pf_kinds[] = { "anon", "file", NULL };

struct pf_opts {
	unsigned kind; /* enum pf_kind */
};

static const struct cb_option pf_options[] = {
	{ .name = "fault", .type = CB_OPT_ENUM, .offset = offsetof(struct pf_opts, kind), .names = pf_kinds,
	  .help = "anon: first touch of anonymous memory; file: write to a MAP_PRIVATE file mapping (COW from the page cache)" },
	{ 0 },
};

#define OPTS(spec) CB_WL_OPTS(&(spec)->opts, struct pf_opts)

/* An unlinked file of size bytes, every page written through write(): all in the page cache. */
static int cached_file(size_t size, size_t page)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	char *buf = malloc(page);
	int fd;

	if (!buf)
		return -ENOMEM;
	memset(buf, 0x5a, page);
	snprintf(path, sizeof(path), "%s/cowbench-pagefault.XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	if (fd < 0) {
		free(buf);
		return -errno;
	}
	unlink(path);
	for (size_t off = 0; off < size; off += page)
		if (write(fd, buf, page) != (ssize_t)page) {
			int err = errno ? -errno : -ENOSPC;

			close(fd);
			free(buf);
			return err;
		}
	free(buf);
	return fd;
}

static void *map_fresh(const struct cb_run_spec *spec, int fd)
{
	void *p = fd >= 0 ? mmap(NULL, spec->size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0)
			  : mmap(NULL, spec->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (fd < 0)
		(void)madvise(p, spec->size, MADV_NOHUGEPAGE); /* order-0 faults, whatever the THP mode */
	return p;
}

/* The timed loop: one write per page, each a fault. */
static void touch_pages(char *base, size_t size, size_t page, struct cb_row *row)
{
	struct rusage r0, r1;
	uint64_t t0, t1;

	getrusage(RUSAGE_SELF, &r0);
	t0 = wl_now();
	for (size_t off = 0; off < size; off += page)
		*(volatile uint64_t *)(base + off) = off | 1;
	t1 = wl_now();
	getrusage(RUSAGE_SELF, &r1);
	row->elapsed_ns = (int64_t)(t1 - t0);
	row->touched = (int64_t)(size / page);
	row->ns_per_page = (double)row->elapsed_ns / (double)row->touched;
	row->faults = r1.ru_minflt - r0.ru_minflt;
}

static int pf_run(const struct cb_run_spec *spec, struct cb_row *row)
{
	int fd = -1, err = 0;
	char *base;

	if (OPTS(spec)->kind == PF_FILE && (fd = cached_file(spec->size, spec->page_size)) < 0) {
		wl_status(row, "no-resource:file:%s", cb_strerror(fd));
		return fd;
	}
	base = map_fresh(spec, fd);
	if (!base) {
		err = -errno;
		wl_status(row, "error:mmap:%s", cb_strerror(err));
	} else {
		touch_pages(base, spec->size, spec->page_size, row);
		munmap(base, spec->size);
		wl_status(row, "ok");
	}
	if (fd >= 0)
		close(fd);
	return err;
}

static int pf_check(const struct cb_run_spec *spec, char *why, size_t len)
{
	if (spec->params.hugetlb || spec->params.thp != CB_THP_NEVER) {
		snprintf(why, len, "pagefault measures order-0 faults: no --hugetlb or --thp");
		return -EINVAL;
	}
	return 0;
}

const struct cb_workload cb_workload_pagefault = {
	.abi = CB_WORKLOAD_ABI,
	.name = "pagefault",
	.help = "order-0 faults without fork: first touch of anonymous memory or a write to a private file mapping (--fault)",
	.run = pf_run,
	.check = pf_check,
	.options = pf_options,
	.options_size = sizeof(struct pf_opts),
};
