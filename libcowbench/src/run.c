#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <cowbench/version.h>

#include <cowbench/costs.h>
#include <cowbench/cowstats.h>
#include <cowbench/error.h>
#include <cowbench/evidence.h>
#include <cowbench/hugepage.h>
#include <cowbench/noise.h>
#include <cowbench/run.h>
#include <cowbench/stats.h>
#include <cowbench/sysinfo.h>

#include "fileutil.h"

/* Pages whose copy time makes the memcpy baseline: enough to leave the caches, bounded in cost. */
#define MEMCPY_SAMPLE_PAGES 4096

static void set_str(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

/* Facts that do not change during a process's life, read once. */
static struct {
	bool done;
	char kernel[65], host[64], cpu_model[64], boot[40];
} machine;

/* The kernel's random boot_id: rows measured in one boot (one QEMU guest run) share it. */
static void read_boot_id(char *buf, size_t len)
{
	FILE *fp = fopen("/proc/sys/kernel/random/boot_id", "re");

	buf[0] = '\0';
	if (!fp)
		return;
	if (!fgets(buf, (int)len, fp))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(fp);
}

static void load_machine(void)
{
	if (machine.done)
		return;
	if (cb_kernel_release(machine.kernel, sizeof(machine.kernel)) < 0)
		machine.kernel[0] = '\0';
	if (gethostname(machine.host, sizeof(machine.host)) < 0)
		machine.host[0] = '\0';
	machine.host[sizeof(machine.host) - 1] = '\0';
	if (cb_cpu_model(machine.cpu_model, sizeof(machine.cpu_model)) < 0)
		machine.cpu_model[0] = '\0';
	read_boot_id(machine.boot, sizeof(machine.boot));
	machine.done = true;
}

static void stamp_row(struct cb_row *row)
{
	time_t now = time(NULL);
	struct tm tm;
	char text[32], *mode;
	size_t len;
	long v;

	gmtime_r(&now, &tm);
	strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
	cb_row_put(row, &row->timestamp, text);
	mode = cb_row_room(row, &row->thp_mode, &len);
	if (!mode || cb_thp_mode(mode, len) < 0)
		row->thp_mode = NULL;
	row->precopy = cb_sysctl_read_long(CB_PRECOPY_SYSCTL, &v) == 0 ? v : CB_NA;
	row->precopy_depth = cb_sysctl_read_long(CB_PRECOPY_DEPTH_SYSCTL, &v) == 0 ? v : CB_NA;
}

void cb_row_init(struct cb_row *row, const struct cb_run_spec *spec, int rep)
{
	memset(row, 0, sizeof(*row));
	row->schema = CB_SCHEMA_VERSION;
	set_str(row->workload, sizeof(row->workload), spec->workload->name);
	row->size_bytes = (int64_t)spec->size;
	row->pages = (int64_t)(spec->size / spec->page_size);
	row->touched = CB_NA;
	row->prefault = spec->prefault ? 1 : CB_NA;
	/* writer and fork describe the fork-and-touch primitive; self-driven workloads have neither. */
	if (spec->workload->page_order) {
		set_str(row->writer, sizeof(row->writer), cb_writer_name(spec->writer));
		row->fork = spec->fork;
		/* Only the non-default mode is named: the keys of every fault-breaking row stay as they were. */
		set_str(row->break_mode, sizeof(row->break_mode), spec->brk == CB_BREAK_FAULT ? "" : cb_break_name(spec->brk));
	} else {
		row->writer[0] = '\0';
		row->fork = CB_NA;
		row->break_mode[0] = '\0';
	}
	row->break_ns = CB_NA;
	row->first_ns = CB_NA;
	row->rep = rep;
	set_str(row->status, sizeof(row->status), "not-run");
	row->elapsed_ns = CB_NA;
	row->ns_per_page = NAN;
	row->faults = CB_NA;
	row->lat_min_ns = row->lat_mean_ns = row->lat_p50_ns = row->lat_p90_ns = NAN;
	row->lat_p99_ns = row->lat_p999_ns = row->lat_max_ns = NAN;
	row->memcpy_ns = NAN;
	row->memcpy_cold_ns = NAN;
	row->cow_faults = CB_NA;
	row->cow_copy_ns = CB_NA;
	row->precopy_attempts = CB_NA;
	row->precopy_success = CB_NA;
	row->cow_path_ns = CB_NA;
	row->precopy_ns = CB_NA;
	row->precopy = CB_NA;
	set_str(row->thp, sizeof(row->thp), spec->thp ? "on" : "off");
	/* An automatic choice is not part of the configuration (writer_cpu shows where it ran). */
	row->cpu = spec->cpu >= 0 && !spec->cpu_auto ? spec->cpu : CB_NA;
	row->seed = (spec->workload->flags & CB_WL_USES_SEED) ? (int64_t)spec->seed : CB_NA;
	set_str(row->clock, sizeof(row->clock), cb_clock_name(spec->clock->kind));
	load_machine();
	set_str(row->kernel, sizeof(row->kernel), machine.kernel);
	cb_row_put(row, &row->host, machine.host);
	set_str(row->cpu_model, sizeof(row->cpu_model), machine.cpu_model);
	set_str(row->boot, sizeof(row->boot), machine.boot);
	set_str(row->version, sizeof(row->version), cb_version());
	cb_row_put(row, &row->git_revision, cb_git_revision());
	row->precopy_depth = CB_NA;
	row->nivcsw = row->steal_ns = row->runq = row->migrations = row->writer_cpu = row->run_delay_ns = CB_NA;
	row->round = CB_NA; /* set by an interleaved matrix (cowbench/order.h) */
	row->ref_ns = CB_NA;
	{
		size_t len;
		char *room = cb_row_room(row, &row->options, &len);

		if (room)
			cb_options_format(spec->workload, &spec->opts, room, len);
	}
	set_str(row->rep_kind, sizeof(row->rep_kind), cb_rep_kind_name(spec->rep_kind));
	cb_row_init_workload(row, spec);
	cb_evidence_row_init(row);
	cb_costs_row_init(row);
	stamp_row(row);
}

void cb_row_set_latency(struct cb_row *row, const struct cb_lat_stats *st)
{
	row->lat_min_ns = st->min;
	row->lat_mean_ns = st->mean;
	row->lat_p50_ns = st->p50;
	row->lat_p90_ns = st->p90;
	row->lat_p99_ns = st->p99;
	row->lat_p999_ns = st->p999;
	row->lat_max_ns = st->max;
}

static void fill_latency(struct cb_row *row, const struct cb_touch_result *res)
{
	struct cb_lat_stats st;

	row->touched = (int64_t)res->count;
	row->elapsed_ns = (int64_t)res->elapsed_ns;
	row->ns_per_page = (double)res->elapsed_ns / (double)res->count;
	row->faults = res->minflt;
	row->nivcsw = res->nivcsw;
	row->writer_cpu = res->cpu >= 0 ? res->cpu : CB_NA;
	row->migrations = res->migrations >= 0 ? res->migrations : CB_NA;
	row->run_delay_ns = res->run_delay_ns >= 0 ? res->run_delay_ns : CB_NA;
	cb_costs_fill_hist(row, res->lat_ns, res->count); /* an empty cell says it did not fit */
	if (cb_lat_stats_compute(res->lat_ns, res->count, &st) == 0)
		cb_row_set_latency(row, &st);
}

/* One /proc/cow_stats histogram's growth into its cell (CB_COL_REF: the rep's own buffer); empty where none. */
static void hist_delta(struct cb_row *row, const struct cb_cowstats *before, const struct cb_cowstats *after,
		       const char *prefix, const char **field)
{
	size_t len;
	char *room = cb_row_room(row, field, &len);

	if (!room || cb_cowstats_hist_delta(before, after, prefix, room, len) < 0 || !room[0])
		*field = NULL;
}

/* Kernel-side counters of cowbench's patch: deltas only where the file exists before and after. */
static void fill_cowstats(struct cb_row *row, const struct cb_cowstats *before, const struct cb_cowstats *after)
{
	uint64_t d;

	if (cb_cowstats_delta(before, after, "faults", &d))
		row->cow_faults = (int64_t)d;
	if (cb_cowstats_delta(before, after, "copy_ns_total", &d))
		row->cow_copy_ns = (int64_t)d;
	if (cb_cowstats_delta(before, after, "precopy_attempts", &d))
		row->precopy_attempts = (int64_t)d;
	if (cb_cowstats_delta(before, after, "precopy_success", &d))
		row->precopy_success = (int64_t)d;
	if (cb_cowstats_delta(before, after, "path_ns_total", &d))
		row->cow_path_ns = (int64_t)d;
	if (cb_cowstats_delta(before, after, "precopy_ns_total", &d))
		row->precopy_ns = (int64_t)d;
	/* Per-fault stalls: histograms grow, so their growth is this rep's (older kernels print none). */
	hist_delta(row, before, after, "precopy_fault_pages_", &row->fault_pages_hist);
	hist_delta(row, before, after, "precopy_fault_hist_", &row->fault_path_hist);
}

static int run_page_order(const struct cb_run_spec *spec, struct cb_row *row)
{
	struct cb_order_ctx ctx = {
		.npages = spec->size / spec->page_size, .seed = spec->seed, .opts = &spec->opts,
		.writer = (int)spec->writer,
	};
	struct cb_cowstats before, after;
	struct cb_touch_result res;
	struct cb_evidence ev;
	struct cb_touch_hooks hooks;
	bool have_stats, paced = false;
	long count;
	size_t *order = malloc(ctx.npages * sizeof(*order));
	uint64_t *at_ns = malloc(ctx.npages * sizeof(*at_ns));
	/* Room for the workload's own populate ranges; it may leave them unused (the whole region). */
	struct cb_page_run *runs = spec->brk == CB_BREAK_POPULATE ? malloc(ctx.npages * sizeof(*runs)) : NULL;
	size_t nruns = 0;
	int err;

	ctx.at_ns = at_ns;
	ctx.paced = &paced;
	ctx.break_runs = runs;
	ctx.break_nruns = runs ? &nruns : NULL;
	if (!order || !at_ns || (spec->brk == CB_BREAK_POPULATE && !runs)) {
		free(order);
		free(at_ns);
		free(runs);
		set_str(row->status, sizeof(row->status), "error:out-of-memory");
		return -ENOMEM;
	}
	/* hugetlb: the region, and with a fork one copy of it for the written side. */
	err = spec->params.hugetlb ? cb_hugetlb_reserve(spec->size / CB_HUGETLB_SIZE * (spec->fork ? 2 : 1)) : 0;
	if (err) {
		cb_region_status(err, true, row->status, sizeof(row->status));
		free(order);
		free(at_ns);
		free(runs);
		return err;
	}
	count = spec->workload->page_order(&ctx, order);
	if (count <= 0 || (size_t)count > ctx.npages || nruns > ctx.npages) {
		snprintf(row->status, sizeof(row->status), "error:page-order:%ld", count);
		free(order);
		free(at_ns);
		free(runs);
		return count < 0 ? (int)count : -EINVAL;
	}
	struct cb_touch_params tp = {
		.size = spec->size, .page_size = spec->page_size, .writer = spec->writer,
		.fork = spec->fork, .brk = spec->brk, .region = &spec->params, .cpu = spec->cpu, .clock = spec->clock,
		.order = order, .count = (size_t)count, .at_ns = paced ? at_ns : NULL,
		.break_runs = nruns ? runs : NULL, .break_nruns = nruns,
		.inject_child_signal = spec->inject_child_signal,
		.hooks = &hooks,
	};
	/* Stock-kernel probes read around the loop, never inside it (cowbench/evidence.h). */
	cb_evidence_init(&ev, spec->page_size, order, (size_t)count);
	cb_evidence_select(&ev, cb_probes_for_rep(spec->probes, spec->rep_kind));
	cb_evidence_hooks(&ev, &hooks);
	have_stats = cb_cowstats_read(NULL, &before) == 0;
	err = cb_touch_run(&tp, &res);
	if (have_stats && cb_cowstats_read(NULL, &after) == 0)
		fill_cowstats(row, &before, &after);
	cb_evidence_fill_row(&ev, row);
	cb_costs_fill_row(&ev, row);
	cb_evidence_free(&ev);
	set_str(row->status, sizeof(row->status), res.status);
	row->huge_bytes = res.huge_bytes >= 0 ? res.huge_bytes : CB_NA;
	row->break_ns = res.break_ns >= 0 && res.lat_ns ? res.break_ns : CB_NA;
	row->first_ns = res.first_ns >= 0 && res.lat_ns ? res.first_ns : CB_NA;
	if (res.lat_ns && spec->samples)
		spec->samples->fn(spec->samples->arg, (int)row->rep, order, res.lat_ns, res.count);
	if (res.lat_ns)
		fill_latency(row, &res); /* sorts lat_ns: after the samples */
	cb_touch_result_free(&res);
	free(order);
	free(at_ns);
	free(runs);
	if (err == 0 || err == CB_ECHILD) {
		struct cb_memcpy_cost mc;

		if (cb_memcpy_page_cost(spec->clock, spec->page_size,
					ctx.npages < MEMCPY_SAMPLE_PAGES ? ctx.npages : MEMCPY_SAMPLE_PAGES, &mc) == 0) {
			row->memcpy_ns = mc.warm_ns;
			row->memcpy_cold_ns = mc.cold_ns;
		}
	}
	return err;
}

void cb_run_spec_set_workload(struct cb_run_spec *spec, const struct cb_workload *w)
{
	spec->workload = w;
	cb_options_default(w, &spec->opts);
}

int cb_run_spec_set_option(struct cb_run_spec *spec, const char *name, const char *value, char *why, size_t len)
{
	const struct cb_option *o = cb_option_find(spec->workload, name);
	size_t n = cb_option_count(spec->workload), used;

	if (o)
		return cb_option_parse(o, value, &spec->opts, why, len);
	used = (size_t)snprintf(why, len, "--%s is not an option of workload %s (%s", name, spec->workload->name,
				n ? "its options:" : "it has none");
	for (size_t i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(why + used, len - used, " --%s", spec->workload->options[i].name);
	if (used < len)
		snprintf(why + used, len - used, ")");
	return -ENOENT;
}

int cb_run_spec_check(const struct cb_run_spec *spec, char *why, size_t len)
{
	const struct cb_workload *w = spec->workload;
	int err = cb_wl_params_check(&spec->params, spec->size, spec->page_size, why, len);

	if (!err && w->check)
		err = w->check(spec, why, len);
	return err;
}

/* The kernel's count of OOM kills so far (/proc/vmstat oom_kill); -1 when unknown. */
static long oom_kills(void)
{
	char buf[16384];
	const char *p;

	if (cb_read_text_file("/proc/vmstat", buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "\noom_kill ");
	return p ? strtol(p + 10, NULL, 10) : -1;
}

/* A child killed with SIGKILL while the OOM killer acted: say so in the row. */
static void note_oom(struct cb_row *row, long before)
{
	long after = oom_kills();
	size_t len = strlen(row->evidence_notes);

	if (before < 0 || after <= before || !strstr(row->status, "KILL"))
		return;
	snprintf(row->evidence_notes + len, sizeof(row->evidence_notes) - len, "%soom-kill", len ? "," : "");
}

static long involuntary_switches(void)
{
	struct rusage self, children;

	if (getrusage(RUSAGE_SELF, &self) < 0 || getrusage(RUSAGE_CHILDREN, &children) < 0)
		return -1;
	return self.ru_nivcsw + children.ru_nivcsw;
}

/*
 * A self-driven workload's threads and children are its writers: their
 * involuntary switches over the whole rep (children counted once reaped).
 * The wait for a CPU is the calling thread's only (schedstat is per
 * thread, and exited threads take theirs with them).
 */
static int run_self_driven(const struct cb_run_spec *spec, struct cb_row *row)
{
	long before = involuntary_switches(), after;
	int64_t wait0 = cb_thread_run_delay_ns(), wait1;
	int err = spec->workload->run(spec, row), cpu = sched_getcpu();

	after = involuntary_switches();
	wait1 = cb_thread_run_delay_ns();
	if (before >= 0 && after >= before)
		row->nivcsw = after - before;
	if (row->run_delay_ns == CB_NA && wait0 >= 0 && wait1 >= wait0) /* unless its writers gave theirs */
		row->run_delay_ns = wait1 - wait0;
	row->writer_cpu = cpu >= 0 ? cpu : CB_NA;
	return err;
}

/*
 * How fast the machine ran around the rep: the reference probe just before
 * and just after it (never during: the rep's timed windows see no probe),
 * averaged, as the rep may fall anywhere between the two.
 */
static void fill_ref(struct cb_row *row, int64_t before, int64_t after)
{
	if (before >= 0 && after >= 0)
		row->ref_ns = (before + after) / 2;
}

/*
 * --prefault: where the host backs guest memory lazily, the first write to
 * a guest frame traps into the host, and a COW copy writes a fresh frame.
 * Writing and freeing fresh memory first leaves touched frames on the free
 * lists that the region and its copies then take (twice the size: the
 * region's own pages come from the same lists). Outside every timed window.
 */
static void prefault_frames(uint64_t size, size_t page)
{
	size_t len = (size_t)size * 2;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	madvise(p, len, MADV_NOHUGEPAGE); /* base pages, as the copies are */
	for (size_t off = 0; off < len; off += page)
		((volatile char *)p)[off] = 1;
	munmap(p, len);
}

int cb_run_rep(const struct cb_run_spec *spec, int rep, struct cb_row *row)
{
	struct cb_sys_sample before, after;
	long ooms = oom_kills();
	int64_t ref0, ref1;
	int err;

	cb_row_init(row, spec, rep);
	ref0 = cb_ref_probe_ns();
	if (spec->prefault)
		prefault_frames(spec->size, spec->page_size);
	cb_sys_sample_read(NULL, &before);
	if (spec->workload->page_order)
		err = run_page_order(spec, row);
	else
		err = run_self_driven(spec, row);
	note_oom(row, ooms);
	cb_sys_sample_read(NULL, &after);
	ref1 = cb_ref_probe_ns();
	cb_sys_sample_fill_row(&before, &after, row);
	fill_ref(row, ref0, ref1);
	stamp_row(row);
	return err;
}
