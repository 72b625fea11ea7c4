#define _GNU_SOURCE
#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/numa.h>
#include <cowbench/params.h>

int cb_numa_node_count(void)
{
	int max;

	if (numa_available() < 0)
		return 1;
	max = numa_max_node();
	return max < 0 ? 1 : max + 1;
}

/* One decimal node number; advances *p. */
static int parse_node(const char **p, unsigned *node)
{
	char *end;
	unsigned long v;

	if (**p < '0' || **p > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(*p, &end, 10);
	if (errno || v >= CB_MAX_NODES)
		return -ERANGE;
	*p = end;
	*node = (unsigned)v;
	return 0;
}

int cb_nodes_parse(const char *text, uint64_t *mask)
{
	const char *p = text;
	unsigned count = (unsigned)cb_numa_node_count();
	uint64_t m = 0;

	if (!text || !*text)
		return -EINVAL;
	for (;;) {
		unsigned lo, hi;
		int err = parse_node(&p, &lo);

		if (err)
			return err;
		hi = lo;
		if (*p == '-') {
			p++;
			err = parse_node(&p, &hi);
			if (err)
				return err;
			if (hi < lo)
				return -EINVAL;
		}
		if (hi >= count)
			return -ERANGE;
		for (unsigned n = lo; n <= hi; n++)
			m |= 1ull << n;
		if (*p == '\0')
			break;
		if (*p++ != ',')
			return -EINVAL;
	}
	*mask = m;
	return 0;
}

void cb_nodes_format(uint64_t mask, char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (unsigned n = 0; n < CB_MAX_NODES && used < len; n++) {
		unsigned end = n;

		if (!(mask >> n & 1))
			continue;
		while (end + 1 < CB_MAX_NODES && (mask >> (end + 1) & 1))
			end++;
		if (end == n)
			used += (size_t)snprintf(buf + used, len - used, "%s%u", used ? "," : "", n);
		else
			used += (size_t)snprintf(buf + used, len - used, "%s%u-%u", used ? "," : "", n, end);
		n = end;
	}
}

int cb_numa_place(void *addr, size_t len, uint64_t bind, uint64_t interleave)
{
	unsigned long mask;
	int mode;

	if (!bind && !interleave)
		return 0;
	if (numa_available() < 0)
		return -ENOTSUP;
	mode = bind ? MPOL_BIND : MPOL_INTERLEAVE;
	mask = (unsigned long)(bind ? bind : interleave);
	if (mbind(addr, len, mode, &mask, CB_MAX_NODES + 1, 0) < 0)
		return -errno;
	return 0;
}

int cb_numa_run_on(uint64_t nodes)
{
	struct bitmask *bm;
	int err = 0;

	if (!nodes)
		return 0;
	if (numa_available() < 0)
		return -ENOTSUP;
	bm = numa_allocate_nodemask();
	if (!bm)
		return -ENOMEM;
	for (unsigned n = 0; n < CB_MAX_NODES; n++)
		if (nodes >> n & 1)
			numa_bitmask_setbit(bm, n);
	if (numa_run_on_node_mask(bm) < 0)
		err = errno ? -errno : -EINVAL;
	numa_bitmask_free(bm);
	return err;
}

#define WHERE_CHUNK 512

int cb_numa_where(const void *addr, size_t len, size_t page_size, char *buf, size_t buflen)
{
	size_t counts[CB_MAX_NODES + 1] = { 0 }, used = 0; /* last slot: not present */
	void *pages[WHERE_CHUNK];
	int status[WHERE_CHUNK];

	buf[0] = '\0';
	for (size_t off = 0; off < len;) {
		unsigned long n = 0;

		for (; n < WHERE_CHUNK && off < len; n++, off += page_size)
			pages[n] = (char *)addr + off;
		/* nodes == NULL: only ask where each page is. */
		if (move_pages(0, n, pages, NULL, status, 0) < 0)
			return -errno;
		for (unsigned long i = 0; i < n; i++)
			counts[status[i] >= 0 && status[i] < CB_MAX_NODES ? status[i] : CB_MAX_NODES]++;
	}
	for (unsigned node = 0; node <= CB_MAX_NODES && used < buflen; node++) {
		if (!counts[node])
			continue;
		if (node < CB_MAX_NODES)
			used += (size_t)snprintf(buf + used, buflen - used, "%s%u:%zu", used ? " " : "", node,
						 counts[node]);
		else
			used += (size_t)snprintf(buf + used, buflen - used, "%s-:%zu", used ? " " : "",
						 counts[node]);
	}
	return 0;
}
