#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cowbench/pagemap.h>

static int read_entries(int fd, uintptr_t first_page, size_t npages, uint64_t *out)
{
	size_t done = 0, want = npages * sizeof(uint64_t);

	while (done < want) {
		ssize_t n = pread(fd, (char *)out + done, want - done,
				  (off_t)(first_page * sizeof(uint64_t) + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENODATA; /* beyond the file: the range is not there */
		done += (size_t)n;
	}
	return 0;
}

int cb_pagemap_read_fd(int fd, uintptr_t addr, size_t npages, size_t page_size, uint64_t *out)
{
	return read_entries(fd, addr / page_size, npages, out);
}

int cb_pagemap_read_path(const char *path, uintptr_t addr, size_t npages, size_t page_size, uint64_t *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int err;

	if (fd < 0)
		return -errno;
	err = read_entries(fd, addr / page_size, npages, out);
	close(fd);
	return err;
}

int cb_pagemap_read(pid_t pid, const void *addr, size_t npages, size_t page_size, uint64_t *out)
{
	char path[64];

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/pagemap");
	return cb_pagemap_read_path(path, (uintptr_t)addr, npages, page_size, out);
}

static bool any_pfn(const uint64_t *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((e[i] & CB_PM_PRESENT) && !(e[i] & CB_PM_SWAPPED) && (e[i] & CB_PM_PFN_MASK))
			return true;
	return false;
}

static bool present(uint64_t e)
{
	return (e & CB_PM_PRESENT) && !(e & CB_PM_SWAPPED);
}

static void classify_page(uint64_t before, uint64_t after, struct cb_pagemap_diff *out)
{
	if (!present(before) || !present(after))
		out->not_present++;
	else if ((before & CB_PM_PFN_MASK) != (after & CB_PM_PFN_MASK))
		out->copied++;
	else
		out->reused++;
}

/* The region's pages not in touched (seen: their bitmap) that moved to a new frame. */
static int64_t count_copied_unwritten(const uint64_t *before, const uint64_t *after, size_t n,
				      const unsigned char *seen)
{
	int64_t copied = 0;

	for (size_t i = 0; i < n; i++)
		if (!(seen[i / 8] & (1u << (i % 8))) && present(before[i]) && present(after[i]) &&
		    (before[i] & CB_PM_PFN_MASK) != (after[i] & CB_PM_PFN_MASK))
			copied++;
	return copied;
}

int cb_pagemap_classify(const uint64_t *before, const uint64_t *after, const uint64_t *other, size_t n,
			const size_t *touched, size_t ntouched, struct cb_pagemap_diff *out)
{
	memset(out, 0, sizeof(*out));
	if (!any_pfn(before, n) && !any_pfn(after, n))
		return -EPERM;
	if (!touched) {
		for (size_t i = 0; i < n; i++)
			classify_page(before[i], after[i], out);
	} else {
		/* One bit per page so a page written twice is classified once. */
		unsigned char *seen = calloc((n + 7) / 8, 1);

		if (!seen)
			return -ENOMEM;
		for (size_t k = 0; k < ntouched; k++) {
			size_t i = touched[k];

			if (i >= n || (seen[i / 8] & (1u << (i % 8))))
				continue;
			seen[i / 8] |= (unsigned char)(1u << (i % 8));
			classify_page(before[i], after[i], out);
		}
		out->copied_unwritten = count_copied_unwritten(before, after, n, seen);
		free(seen);
	}
	out->shared = other ? 0 : -1;
	for (size_t i = 0; other && i < n; i++)
		if (present(after[i]) && present(other[i]) &&
		    (after[i] & CB_PM_PFN_MASK) == (other[i] & CB_PM_PFN_MASK))
			out->shared++;
	return 0;
}
