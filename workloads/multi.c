/*
 * multi: N children forked from the same parent write at once, each its
 * 1/N share of the pages (--share=split) or every page (--share=all):
 * COW with more than two sharers. Each child checks that it sees the
 * data of fork time before its first write to a page, and times that
 * write; afterwards the parent checks its own copy is untouched. With
 * --thp or --hugetlb the fault counts and latencies show the trade-off:
 * fewer faults, bigger copies.
 */
#include "wlutil.h"

#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cowbench/stats.h>
#include <cowbench/sysinfo.h>

/** How the children share the writes. */
enum multi_share {
	SHARE_SPLIT = 0, /* each child writes its 1/N of the pages */
	SHARE_ALL,       /* every child writes every page */
};

static const char *const shares[] = { "split", "all", NULL };

struct multi_opts {
	unsigned children; /* forked from one parent */
	unsigned share;    /* enum multi_share */
};

static const struct cb_option multi_options[] = {
	{ .name = "children", .type = CB_OPT_UINT, .offset = offsetof(struct multi_opts, children),
	  .min = 1, .max = 1024, .def = 2, .help = "children forked from the parent" },
	{ .name = "share", .type = CB_OPT_ENUM, .offset = offsetof(struct multi_opts, share),
	  .names = shares, .help = "each child writes its share of the pages (split), or all of them" },
	{ 0 },
};

#define OPTS(spec) CB_WL_OPTS(&(spec)->opts, struct multi_opts)

struct child_result {
	uint64_t count, elapsed_ns;
	int64_t minflt;
	int ok;                 /* every page showed the fork-time data */
	char nodes[64];         /* where the child's copies landed (child 0) */
};

/* MAP_SHARED between parent and children. */
struct multi_shared {
	volatile int go;
	struct child_result res[]; /* children entries, then the latencies */
};

static void page_range(const struct cb_run_spec *spec, unsigned k, size_t *first, size_t *end)
{
	size_t np = spec->size / spec->page_size, n = OPTS(spec)->children;

	if (OPTS(spec)->share == SHARE_ALL) {
		*first = 0;
		*end = np;
	} else {
		*first = np * k / n;
		*end = np * (k + 1) / n;
	}
}

static __attribute__((noreturn)) void child(const struct cb_run_spec *spec, char *base, unsigned k,
					    struct multi_shared *sh, double *lat)
{
	struct child_result *res = &sh->res[k];
	const struct cb_clock *clk = spec->clock;
	struct rusage ru0, ru1;
	size_t first, end;
	uint64_t t0;
	int ok = 1;

	page_range(spec, k, &first, &end);
	if (wl_child_numa(spec, base, spec->size) < 0)
		_exit(4);
	while (!sh->go)
		sched_yield();
	getrusage(RUSAGE_SELF, &ru0);
	t0 = wl_now();
	for (size_t p = first; p < end; p++) {
		volatile uint64_t *w = (uint64_t *)(base + p * spec->page_size);
		uint64_t a, b;

		ok &= *w == wl_pattern(p);
		a = cb_clock_read(clk);
		*w = ~wl_pattern(p);
		b = cb_clock_read(clk);
		lat[p - first] = cb_clock_ns(clk, b - a);
	}
	res->elapsed_ns = wl_now() - t0;
	getrusage(RUSAGE_SELF, &ru1);
	res->minflt = ru1.ru_minflt - ru0.ru_minflt;
	res->count = end - first;
	res->ok = ok;
	if (k == 0 && cb_numa_where(base + first * spec->page_size, (end - first) * spec->page_size,
				    spec->page_size, res->nodes, sizeof(res->nodes)) < 0)
		res->nodes[0] = '\0';
	_exit(0);
}

static bool parent_intact(const struct cb_run_spec *spec, const char *base)
{
	for (size_t p = 0; p < spec->size / spec->page_size; p++)
		if (*(const uint64_t *)(base + p * spec->page_size) != wl_pattern(p))
			return false;
	return true;
}

/* Fork every child, start them together, reap them all; the status names the first failure. */
static int run_children(const struct cb_run_spec *spec, char *base, struct multi_shared *sh, double *lat,
			size_t per_child, struct cb_row *row)
{
	unsigned n = OPTS(spec)->children, made = 0;
	pid_t *pid = calloc(n, sizeof(*pid));
	int err = 0;

	if (!pid)
		return -ENOMEM;
	for (; made < n; made++) {
		pid[made] = fork();
		if (pid[made] == 0)
			child(spec, base, made, sh, lat + made * per_child);
		if (pid[made] < 0) {
			err = -errno;
			wl_status(row, "error:fork:%s", cb_strerror(err));
			break;
		}
	}
	sh->go = 1;
	for (unsigned i = 0; i < made; i++) {
		int ws = 0;

		if (err)
			kill(pid[i], SIGKILL);
		(void)cb_wait_status(pid[i], &ws);
		if (!err)
			err = cb_status_from_wait(ws, row->status, sizeof(row->status));
	}
	free(pid);
	return err;
}

static void fill_row(const struct cb_run_spec *spec, const struct multi_shared *sh, double *lat,
		     size_t per_child, struct cb_row *row)
{
	struct cb_lat_stats st;
	uint64_t touched = 0, elapsed = 0;
	int64_t faults = 0;
	int ok = 1;

	for (unsigned k = 0; k < OPTS(spec)->children; k++) {
		const struct child_result *r = &sh->res[k];

		/* Pack the latencies so one summary covers every child. */
		memmove(lat + touched, lat + k * per_child, r->count * sizeof(*lat));
		touched += r->count;
		elapsed = r->elapsed_ns > elapsed ? r->elapsed_ns : elapsed;
		faults += r->minflt;
		ok &= r->ok;
	}
	row->touched = (int64_t)touched;
	row->elapsed_ns = (int64_t)elapsed;
	row->faults = faults;
	row->verified = ok;
	cb_row_put(row, &row->copy_nodes, sh->res[0].nodes);
	if (touched && cb_lat_stats_compute(lat, touched, &st) == 0) {
		row->ns_per_page = st.mean;
		cb_row_set_latency(row, &st);
	}
}

static int multi_run(const struct cb_run_spec *spec, struct cb_row *row)
{
	const struct cb_wl_params *p = &spec->params;
	const struct multi_opts *o = OPTS(spec);
	size_t np = spec->size / spec->page_size;
	size_t per_child = o->share == SHARE_ALL ? np : (np + o->children - 1) / o->children;
	size_t head = sizeof(struct multi_shared) + o->children * sizeof(struct child_result);
	size_t len = head + o->children * per_child * sizeof(double);
	struct multi_shared *sh;
	struct cb_region r;
	int err;

	snprintf(row->method, sizeof(row->method), "%s", shares[o->share]);
	row->children = o->children;
	err = cb_numa_run_on(p->cpunodebind);
	if (err) {
		wl_status(row, "error:cpunodebind:%s", cb_strerror(err));
		return err;
	}
	err = wl_region_prepare(spec, row, &r, o->share == SHARE_ALL ? o->children : 1);
	if (err)
		return err;
	head = (head + 7) & ~(size_t)7;
	sh = wl_shared_map(head + o->children * per_child * sizeof(double));
	if (!sh) {
		err = -errno;
		wl_status(row, "error:mmap:%s", cb_strerror(err));
		cb_region_unmap(&r);
		return err;
	}
	len = head + o->children * per_child * sizeof(double);
	err = run_children(spec, r.addr, sh, (double *)((char *)sh + head), per_child, row);
	if (!err) {
		fill_row(spec, sh, (double *)((char *)sh + head), per_child, row);
		if (!parent_intact(spec, r.addr))
			row->verified = 0;
		if (row->verified == 1)
			wl_status(row, "ok");
		else
			wl_status(row, "error:verify:a child or the parent saw changed data");
		err = row->verified == 1 ? 0 : CB_ECHILD;
	}
	munmap(sh, len);
	cb_region_unmap(&r);
	return err;
}

static int multi_check(const struct cb_run_spec *spec, char *why, size_t len)
{
	const struct multi_opts *o = OPTS(spec);
	uint64_t pages = spec->size / spec->page_size, avail, need;

	if (o->share == SHARE_SPLIT && o->children > pages) {
		snprintf(why, len, "--children=%u is more than the %llu pages of --size (with --share=split)",
			 o->children, (unsigned long long)pages);
		return -EINVAL;
	}
	/* The region, and a copy of every page each child writes. */
	need = spec->size * (o->share == SHARE_ALL ? o->children + 1 : 2);
	if (cb_mem_available(&avail) == 0 && need > avail) {
		snprintf(why, len, "multi needs %llu MiB (region plus the children's copies) but MemAvailable is %llu MiB",
			 (unsigned long long)(need >> 20), (unsigned long long)(avail >> 20));
		return -ENOMEM;
	}
	return 0;
}

const struct cb_workload cb_workload_multi = {
	.abi = CB_WORKLOAD_ABI,
	.name = "multi",
	.help = "N children forked from one parent write their share or all pages (--children, --share)",
	.run = multi_run,
	.check = multi_check,
	.options = multi_options,
	.options_size = sizeof(struct multi_opts),
	.headline = "ns_per_page",
};
