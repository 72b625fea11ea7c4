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
	p->thp = CB_THP_NEVER;
}

static const char *const thp_names[] = { "never", "madvise", "always" };

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

static int why_not(char *why, size_t len, const char *text)
{
	snprintf(why, len, "%s", text);
	return -EINVAL;
}

int cb_wl_params_check(const struct cb_wl_params *p, uint64_t size, size_t page_size, char *why,
		       size_t len)
{
	if (p->hugetlb && size % (2u << 20)) {
		snprintf(why, len, "--hugetlb needs --size to be a multiple of 2M, not %" PRIu64, size);
		return -EINVAL;
	}
	(void)page_size;
	if (p->membind && p->interleave)
		return why_not(why, len, "--membind and --interleave exclude each other");
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
	char nodes[32], *policy;
	size_t used, len;

	for (size_t i = 0; i < N(na); i++)
		*na[i] = CB_NA;
	row->slowdown = row->ms_per_gib = NAN;
	row->method[0] = row->thp_advice[0] = '\0';
	row->numa_policy = row->pages_nodes = row->copy_nodes = NULL;
	if (!spec->workload)
		return;
	snprintf(row->thp_advice, sizeof(row->thp_advice), "%s", cb_thp_advice_name(p->thp));
	row->hugetlb = p->hugetlb;
	row->numa_nodes = cb_numa_node_count();
	const struct { const char *name; uint64_t mask; } pol[] = {
		{ "bind", p->membind }, { "interleave", p->interleave }, { "cpu", p->cpunodebind },
		{ "child-bind", p->child_membind }, { "child-cpu", p->child_cpunodebind },
	};
	policy = cb_row_room(row, &row->numa_policy, &len); /* the rep's own buffer (CB_COL_REF) */
	used = 0;
	for (size_t i = 0; policy && i < N(pol); i++) {
		if (!pol[i].mask || used >= len)
			continue;
		cb_nodes_format(pol[i].mask, nodes, sizeof(nodes));
		used += (size_t)snprintf(policy + used, len - used, "%s%s:%s", used ? " " : "", pol[i].name, nodes);
	}
}
