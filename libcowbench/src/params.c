#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cowbench/numa.h>
#include <cowbench/params.h>
#include <cowbench/report.h>
#include <cowbench/run.h>

void cb_wl_params_default(struct cb_wl_params *p)
{
	memset(p, 0, sizeof(*p));
	p->threads = 28;
	p->checkpointers = 4;
	p->batch = 2u << 20;
	p->snapshot = CB_SNAP_FORK;
	p->fork_method = CB_FORKM_FORK;
	p->children = 2;
	p->share = CB_SHARE_SPLIT;
	p->thp = CB_THP_NEVER;
}

static const char *const snapshot_names[] = { "fork", "uffd-wp", "memcpy", "none", "fork-wait" };
static const char *const fork_names[] = { "fork", "vfork", "posix_spawn", "clone-vm" };
static const char *const thp_names[] = { "never", "madvise", "always" };
static const char *const share_names[] = { "split", "all" };

#define N(a) (sizeof(a) / sizeof((a)[0]))

static int lookup(const char *const *names, size_t n, const char *s)
{
	for (size_t i = 0; s && i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return (int)i;
	return -EINVAL;
}

static const char *name_of(const char *const *names, size_t n, unsigned v)
{
	return v < n ? names[v] : "?";
}

const char *cb_snapshot_method_name(enum cb_snapshot_method m)
{
	return name_of(snapshot_names, N(snapshot_names), m);
}

int cb_snapshot_method_parse(const char *s, enum cb_snapshot_method *out)
{
	int i = lookup(snapshot_names, N(snapshot_names), s);

	if (i >= 0)
		*out = (enum cb_snapshot_method)i;
	return i < 0 ? i : 0;
}

const char *cb_fork_method_name(enum cb_fork_method m)
{
	return name_of(fork_names, N(fork_names), m);
}

int cb_fork_method_parse(const char *s, enum cb_fork_method *out)
{
	int i = lookup(fork_names, N(fork_names), s);

	if (i >= 0)
		*out = (enum cb_fork_method)i;
	return i < 0 ? i : 0;
}

const char *cb_thp_advice_name(enum cb_thp_advice a)
{
	return name_of(thp_names, N(thp_names), a);
}

int cb_thp_advice_parse(const char *s, enum cb_thp_advice *out)
{
	int i = lookup(thp_names, N(thp_names), s);

	if (i >= 0)
		*out = (enum cb_thp_advice)i;
	return i < 0 ? i : 0;
}

const char *cb_multi_share_name(enum cb_multi_share s)
{
	return name_of(share_names, N(share_names), s);
}

int cb_multi_share_parse(const char *s, enum cb_multi_share *out)
{
	int i = lookup(share_names, N(share_names), s);

	if (i >= 0)
		*out = (enum cb_multi_share)i;
	return i < 0 ? i : 0;
}

static int why_not(char *why, size_t len, const char *text)
{
	snprintf(why, len, "%s", text);
	return -EINVAL;
}

int cb_wl_params_check(const struct cb_wl_params *p, uint64_t size, size_t page_size, char *why,
		       size_t len)
{
	uint64_t pages = size / page_size;

	if (p->threads < 1)
		return why_not(why, len, "--threads must be at least 1");
	if (p->checkpointers < 1)
		return why_not(why, len, "--checkpointers must be at least 1");
	if (p->checkpointers > pages) {
		snprintf(why, len, "--checkpointers=%u is more than the %" PRIu64 " pages of --size",
			 p->checkpointers, pages);
		return -EINVAL;
	}
	if (p->batch < page_size || p->batch % page_size) {
		snprintf(why, len, "--batch=%" PRIu64 " is not a multiple of the page size (%zu)", p->batch,
			 page_size);
		return -EINVAL;
	}
	if (p->hugetlb && size % (2u << 20)) {
		snprintf(why, len, "--hugetlb needs --size to be a multiple of 2M, not %" PRIu64, size);
		return -EINVAL;
	}
	if (p->hugetlb && (p->dontfork || p->wipeonfork))
		return why_not(why, len, "--dontfork/--wipeonfork work on THP or 4K pages, not with --hugetlb");
	if (p->dontfork % page_size || p->wipeonfork % page_size)
		return why_not(why, len, "--dontfork and --wipeonfork must be multiples of the page size");
	if (p->dontfork > size || p->wipeonfork > size - p->dontfork)
		return why_not(why, len, "--dontfork plus --wipeonfork must not exceed --size");
	if (p->membind && p->interleave)
		return why_not(why, len, "--membind and --interleave exclude each other");
	if (p->children < 1)
		return why_not(why, len, "--children must be at least 1");
	return 0;
}

void cb_row_init_workload(struct cb_row *row, const struct cb_run_spec *spec)
{
	const struct cb_wl_params *p = &spec->params;
	int64_t *na[] = {
		&row->threads, &row->checkpointers, &row->batch_bytes, &row->children, &row->hugetlb,
		&row->huge_bytes, &row->dontfork_bytes, &row->wipeonfork_bytes, &row->numa_nodes,
		&row->writer_ns, &row->baseline_ns, &row->copy_ns, &row->reunite_ns, &row->user_ns,
		&row->sys_ns, &row->cow_copies, &row->cow_reuses, &row->wp_faults, &row->saved_pages,
		&row->verified, &row->fork_ns, &row->child_start_ns, &row->child_exit_ns, &row->wait_ns,
		&row->vm_pte_kb,
	};
	char nodes[32];
	size_t used;

	for (size_t i = 0; i < N(na); i++)
		*na[i] = CB_NA;
	row->slowdown = row->ms_per_gib = NAN;
	row->method[0] = row->thp_advice[0] = row->numa_policy[0] = '\0';
	row->pages_nodes[0] = row->copy_nodes[0] = '\0';
	if (!spec->workload || !spec->workload->run)
		return; /* page-order workloads keep their own thp column */
	snprintf(row->thp_advice, sizeof(row->thp_advice), "%s", cb_thp_advice_name(p->thp));
	row->hugetlb = p->hugetlb;
	row->numa_nodes = cb_numa_node_count();
	const struct { const char *name; uint64_t mask; } pol[] = {
		{ "bind", p->membind }, { "interleave", p->interleave }, { "cpu", p->cpunodebind },
		{ "child-bind", p->child_membind }, { "child-cpu", p->child_cpunodebind },
	};
	used = 0;
	for (size_t i = 0; i < N(pol); i++) {
		if (!pol[i].mask || used >= sizeof(row->numa_policy))
			continue;
		cb_nodes_format(pol[i].mask, nodes, sizeof(nodes));
		used += (size_t)snprintf(row->numa_policy + used, sizeof(row->numa_policy) - used, "%s%s:%s",
					 used ? " " : "", pol[i].name, nodes);
	}
}
