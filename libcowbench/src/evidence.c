#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cowbench/error.h>
#include <cowbench/evidence.h>
#include <cowbench/sysctl.h>

static const char *const probe_names[CB_NPROBES] = { "taskstats", "pagemap", "smaps", "perf" };

const char *cb_probe_name(enum cb_probe p)
{
	return (unsigned)p < CB_NPROBES ? probe_names[p] : "?";
}

const char *cb_probe_reason(enum cb_probe p, int err)
{
	switch (err) {
	case 0:
		return "ok";
	case CB_EDELAYACCT:
		return "delayacct-off";
	case CB_EPREDATES:
		return "writer-predates-delayacct";
	case CB_ENOPFN:
	case -EPERM:
	case -EACCES:
		return p == CB_PROBE_PERF ? "not-permitted" : "needs-root";
	case -ENOENT:
	case -ENOTSUP:
	case -ENOSYS:
		return "not-supported";
	case -ESRCH:
		return "process-gone";
	case -ECANCELED:
		return "disabled";
	case -EAGAIN:
		return "not-run";
	default:
		return "failed";
	}
}

void cb_evidence_init(struct cb_evidence *ev, size_t page_size, const size_t *touched, size_t ntouched)
{
	memset(ev, 0, sizeof(*ev));
	ev->page_size = page_size;
	ev->touched = touched;
	ev->ntouched = ntouched;
	for (int i = 0; i < CB_NPROBES; i++)
		ev->err[i] = -EAGAIN; /* until a hook ran */
	for (int i = 0; i < CB_PERF_NCOUNTERS; i++)
		ev->perfc.fd[i] = -1;
	/* Now, while this process is small: finding out makes a fork. */
	ev->self_accounted = -1;
	if (cb_delayacct_enabled() == 1 && cb_taskstats_open(&ev->ts_sock) == 0) {
		ev->self_accounted = cb_taskstats_self_accounted(ev->ts_sock);
		cb_taskstats_close(ev->ts_sock);
		ev->ts_sock = NULL;
	}
}

/* Delay accounting off means every count reads 0: that is "not measured", never "no copies". */
static void taskstats_before(struct cb_evidence *ev, const struct cb_touch_sides *s)
{
	int on = cb_delayacct_enabled();

	if (on == 0) {
		ev->err[CB_PROBE_TASKSTATS] = CB_EDELAYACCT;
		return;
	}
	/* A child writer is born after accounting went on; this process may not have been. */
	if (s->writer_tid == gettid() && ev->self_accounted == 0) {
		ev->err[CB_PROBE_TASKSTATS] = CB_EPREDATES;
		return;
	}
	ev->err[CB_PROBE_TASKSTATS] = on < 0 ? on : cb_taskstats_open(&ev->ts_sock);
	if (ev->err[CB_PROBE_TASKSTATS] == 0)
		ev->err[CB_PROBE_TASKSTATS] = cb_taskstats_query(ev->ts_sock, s->writer_tid, false, &ev->ts_before);
}

static void taskstats_after(struct cb_evidence *ev, const struct cb_touch_sides *s)
{
	if (ev->err[CB_PROBE_TASKSTATS] == 0)
		ev->err[CB_PROBE_TASKSTATS] = cb_taskstats_query(ev->ts_sock, s->writer_tid, false, &ev->ts_after);
	if (ev->err[CB_PROBE_TASKSTATS] == 0 && cb_delayacct_enabled() != 1)
		ev->err[CB_PROBE_TASKSTATS] = CB_EDELAYACCT; /* switched off meanwhile: counts incomplete */
	cb_taskstats_close(ev->ts_sock);
	ev->ts_sock = NULL;
}

static void pagemap_before(struct cb_evidence *ev, const struct cb_touch_sides *s)
{
	if (!s->region || !s->snapshot) {
		ev->err[CB_PROBE_PAGEMAP] = -ENOTSUP; /* no fork, nothing shared to compare */
		return;
	}
	ev->pm_pages = s->pages;
	ev->pm_before = malloc(s->pages * sizeof(uint64_t));
	if (!ev->pm_before) {
		ev->err[CB_PROBE_PAGEMAP] = -ENOMEM;
		return;
	}
	ev->err[CB_PROBE_PAGEMAP] = cb_pagemap_read(s->writer, s->region, s->pages, ev->page_size, ev->pm_before);
}

static void pagemap_after(struct cb_evidence *ev, const struct cb_touch_sides *s)
{
	uint64_t *after, *other;
	int err;

	if (ev->err[CB_PROBE_PAGEMAP] != 0)
		return;
	after = malloc(ev->pm_pages * sizeof(uint64_t));
	other = malloc(ev->pm_pages * sizeof(uint64_t));
	err = after && other ? 0 : -ENOMEM;
	if (err == 0)
		err = cb_pagemap_read(s->writer, s->region, ev->pm_pages, ev->page_size, after);
	if (err == 0)
		err = cb_pagemap_read(s->snapshot, s->region, ev->pm_pages, ev->page_size, other);
	if (err == 0)
		err = cb_pagemap_classify(ev->pm_before, after, other, ev->pm_pages, ev->touched, ev->ntouched,
					  &ev->pm);
	ev->err[CB_PROBE_PAGEMAP] = err == -EPERM ? CB_ENOPFN : err;
	free(after);
	free(other);
}

static void smaps_read_sides(struct cb_evidence *ev, const struct cb_touch_sides *s, struct cb_smaps *w,
			     struct cb_smaps *snap)
{
	int err = cb_smaps_read(s->writer, w);

	if (err == 0 && s->snapshot)
		err = cb_smaps_read(s->snapshot, snap);
	ev->have_snapshot_smaps = s->snapshot != 0;
	ev->err[CB_PROBE_SMAPS] = err;
}

static void perf_before(struct cb_evidence *ev, const struct cb_touch_sides *s)
{
	/* Counting the writer thread itself: 0 would mean the calling thread, the same when it writes. */
	ev->err[CB_PROBE_PERF] = cb_perfcount_open(&ev->perfc, s->writer_tid);
	ev->perf_open = ev->err[CB_PROBE_PERF] == 0;
}

static void perf_after(struct cb_evidence *ev)
{
	if (ev->perf_open)
		ev->err[CB_PROBE_PERF] = cb_perfcount_read(&ev->perfc, ev->perf);
	cb_perfcount_close(&ev->perfc);
	ev->perf_open = false;
}

static void hook_before(void *arg, const struct cb_touch_sides *s)
{
	struct cb_evidence *ev = arg;

	if (!ev->disabled[CB_PROBE_PAGEMAP])
		pagemap_before(ev, s);
	if (!ev->disabled[CB_PROBE_SMAPS])
		smaps_read_sides(ev, s, &ev->w_before, &ev->s_before);
	if (!ev->disabled[CB_PROBE_TASKSTATS])
		taskstats_before(ev, s);
	/* Last, so the counters see as little of the probing as possible. */
	if (!ev->disabled[CB_PROBE_PERF])
		perf_before(ev, s);
}

static void hook_after(void *arg, const struct cb_touch_sides *s)
{
	struct cb_evidence *ev = arg;

	ev->after_ran = true;

	if (!ev->disabled[CB_PROBE_PERF])
		perf_after(ev);
	if (!ev->disabled[CB_PROBE_TASKSTATS])
		taskstats_after(ev, s);
	if (!ev->disabled[CB_PROBE_PAGEMAP])
		pagemap_after(ev, s);
	if (!ev->disabled[CB_PROBE_SMAPS] && ev->err[CB_PROBE_SMAPS] == 0)
		smaps_read_sides(ev, s, &ev->w_after, &ev->s_after);
}

void cb_evidence_select(struct cb_evidence *ev, unsigned probes)
{
	if (probes == 0)
		probes = CB_PROBES_DEFAULT;
	for (int i = 0; i < CB_NPROBES; i++)
		ev->disabled[i] = !(probes & (1u << i));
}

/* One word of a --probes list: a probe, a set, or the inline modifier. */
static int probe_word(const char *tok, unsigned *bits)
{
	if (strcmp(tok, "all") == 0)
		*bits |= CB_PROBES_ALL;
	else if (strcmp(tok, "default") == 0)
		*bits |= CB_PROBES_DEFAULT;
	else if (strcmp(tok, "inline") == 0)
		*bits |= CB_PROBES_INLINE;
	else {
		int i = 0;

		while (i < CB_NPROBES && strcmp(tok, probe_names[i]) != 0)
			i++;
		if (i == CB_NPROBES)
			return -EINVAL;
		*bits |= 1u << i;
	}
	return 0;
}

int cb_probes_parse(const char *text, unsigned *out)
{
	char buf[128], *save, *tok;

	if (strcmp(text, "none") == 0) {
		*out = CB_PROBES_NONE;
		return 0;
	}
	if (snprintf(buf, sizeof(buf), "%s", text) >= (int)sizeof(buf) || !*text)
		return -EINVAL;
	*out = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (probe_word(tok, out) < 0)
			return -EINVAL;
	if (*out == CB_PROBES_INLINE)
		*out |= CB_PROBES_DEFAULT; /* "inline" alone: today's default set, in the timed reps */
	return *out ? 0 : -EINVAL;
}

unsigned cb_probes_intrusive(unsigned probes)
{
	unsigned p = probes ? probes : CB_PROBES_DEFAULT, in = 0;

	if (p & CB_PROBES_NONE)
		return 0;
	if (p & (1u << CB_PROBE_PERF))
		in |= 1u << CB_PROBE_PERF;
	if ((p & (1u << CB_PROBE_TASKSTATS)) && cb_delayacct_enabled() != 1)
		in |= 1u << CB_PROBE_TASKSTATS;
	return in;
}

unsigned cb_probes_for_rep(unsigned probes, enum cb_rep_kind kind)
{
	unsigned p = probes ? probes : CB_PROBES_DEFAULT;

	if ((p & CB_PROBES_NONE) || kind == CB_REP_EVIDENCE || (p & CB_PROBES_INLINE))
		return p;
	p &= ~cb_probes_intrusive(p);
	return p & CB_PROBES_ALL ? p : CB_PROBES_NONE;
}

void cb_evidence_hooks(struct cb_evidence *ev, struct cb_touch_hooks *hooks)
{
	for (int i = 0; i < CB_NPROBES; i++)
		if (ev->disabled[i])
			ev->err[i] = -ECANCELED;
	hooks->before = hook_before;
	hooks->after = hook_after;
	hooks->arg = ev;
}

void cb_evidence_free(struct cb_evidence *ev)
{
	cb_taskstats_close(ev->ts_sock);
	ev->ts_sock = NULL;
	cb_perfcount_close(&ev->perfc);
	free(ev->pm_before);
	ev->pm_before = NULL;
}

void cb_evidence_row_init(struct cb_row *row)
{
	int64_t *na[] = {
		&row->cow_copies, &row->cow_reuses, &row->cow_shared, &row->wpcopy_count, &row->wpcopy_ns,
		&row->private_dirty_kb_before, &row->private_dirty_kb, &row->shared_dirty_kb_before,
		&row->shared_dirty_kb, &row->snap_private_dirty_kb_before, &row->snap_private_dirty_kb,
		&row->snap_shared_dirty_kb_before, &row->snap_shared_dirty_kb,
		&row->perf_minflt, &row->perf_majflt, &row->perf_cs, &row->perf_migrations,
	};

	for (size_t i = 0; i < sizeof(na) / sizeof(na[0]); i++)
		*na[i] = CB_NA;
	row->kernel_copy_ns_mean = NAN;
	row->kernel_copy_source[0] = '\0';
	row->evidence_notes[0] = '\0';
}

static int64_t kb_or_na(int64_t v)
{
	return v < 0 ? CB_NA : v;
}

/* "taskstats:needs-root pagemap:needs-root": one word per probe that did not measure. */
static void write_notes(const struct cb_evidence *ev, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < CB_NPROBES; i++) {
		int n;

		if (ev->err[i] == 0 || ev->err[i] == -ECANCELED)
			continue;
		n = snprintf(buf + used, len - used, "%s%s:%s", used ? " " : "", cb_probe_name((enum cb_probe)i),
			     cb_probe_reason((enum cb_probe)i, ev->err[i]));
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
}

static void fill_taskstats(const struct cb_evidence *ev, struct cb_row *row)
{
	const struct cb_taskstats *a = &ev->ts_after, *b = &ev->ts_before;

	if (ev->err[CB_PROBE_TASKSTATS] != 0 || a->wpcopy_count < b->wpcopy_count ||
	    a->wpcopy_delay_ns < b->wpcopy_delay_ns)
		return;
	row->wpcopy_count = (int64_t)(a->wpcopy_count - b->wpcopy_count);
	row->wpcopy_ns = (int64_t)(a->wpcopy_delay_ns - b->wpcopy_delay_ns);
}

void cb_evidence_fill_row(const struct cb_evidence *ev, struct cb_row *row)
{
	struct cb_evidence whole;

	/* The writer died before it was looked at: a before without an after measures nothing. */
	if (!ev->after_ran) {
		whole = *ev;
		for (int i = 0; i < CB_NPROBES; i++)
			if (whole.err[i] == 0)
				whole.err[i] = -ESRCH;
		ev = &whole;
	}
	if (ev->err[CB_PROBE_PAGEMAP] == 0) {
		row->cow_copies = ev->pm.copied;
		row->cow_reuses = ev->pm.reused;
		row->cow_shared = ev->pm.shared < 0 ? CB_NA : ev->pm.shared;
	}
	fill_taskstats(ev, row);
	if (ev->err[CB_PROBE_SMAPS] == 0) {
		row->private_dirty_kb_before = kb_or_na(ev->w_before.private_dirty_kb);
		row->private_dirty_kb = kb_or_na(ev->w_after.private_dirty_kb);
		row->shared_dirty_kb_before = kb_or_na(ev->w_before.shared_dirty_kb);
		row->shared_dirty_kb = kb_or_na(ev->w_after.shared_dirty_kb);
		if (ev->have_snapshot_smaps) {
			row->snap_private_dirty_kb_before = kb_or_na(ev->s_before.private_dirty_kb);
			row->snap_private_dirty_kb = kb_or_na(ev->s_after.private_dirty_kb);
			row->snap_shared_dirty_kb_before = kb_or_na(ev->s_before.shared_dirty_kb);
			row->snap_shared_dirty_kb = kb_or_na(ev->s_after.shared_dirty_kb);
		}
	}
	if (ev->err[CB_PROBE_PERF] == 0) {
		row->perf_minflt = ev->perf[CB_PERF_MINFLT];
		row->perf_majflt = ev->perf[CB_PERF_MAJFLT];
		row->perf_cs = ev->perf[CB_PERF_CS];
		row->perf_migrations = ev->perf[CB_PERF_MIGRATIONS];
	}
	cb_evidence_fill_copy_mean(row);
	write_notes(ev, row->evidence_notes, sizeof(row->evidence_notes));
}

void cb_evidence_fill_copy_mean(struct cb_row *row)
{
	if (row->wpcopy_count != CB_NA && row->wpcopy_count > 0) {
		row->kernel_copy_ns_mean = (double)row->wpcopy_ns / (double)row->wpcopy_count;
		snprintf(row->kernel_copy_source, sizeof(row->kernel_copy_source), "taskstats");
	} else if (row->cow_faults != CB_NA && row->cow_faults > 0 && row->cow_path_ns != CB_NA) {
		/* The copy path (wp_page_copy), as taskstats measures it; cow_copy_ns is only the copy. */
		row->kernel_copy_ns_mean = (double)row->cow_path_ns / (double)row->cow_faults;
		snprintf(row->kernel_copy_source, sizeof(row->kernel_copy_source), "cow_stats");
	}
}

static int check_taskstats(char *detail, size_t len)
{
	struct cb_taskstats_sock *s;
	struct cb_taskstats t;
	int on = cb_delayacct_enabled();
	int err = cb_taskstats_open(&s);

	if (err == 0) {
		err = cb_taskstats_query(s, gettid(), false, &t);
		cb_taskstats_close(s);
	}
	if (err < 0) {
		snprintf(detail, len, "%s (%s)", cb_probe_reason(CB_PROBE_TASKSTATS, err),
			 err == -EPERM ? "CAP_NET_ADMIN" : cb_strerror(err));
		return err;
	}
	snprintf(detail, len, "yes (wpcopy counts, version %u; kernel.task_delayacct=%d%s)", t.version, on,
		 on == 1 ? "" : ": as root, cowbench run switches it on for its evidence reps, stat for its run");
	return 0;
}

static int check_pagemap(char *detail, size_t len)
{
	volatile char page[1] = { 1 };
	uint64_t e = 0;
	int err = cb_pagemap_read(0, (const void *)page, 1, (size_t)sysconf(_SC_PAGESIZE), &e);

	if (err == 0 && !(e & CB_PM_PFN_MASK))
		err = CB_ENOPFN; /* present, frame hidden: not privileged */
	snprintf(detail, len, "%s", err == 0 ? "yes (page frame numbers visible)" :
		 err == CB_ENOPFN ? "needs-root (frame numbers read as 0)" : cb_strerror(err));
	return err;
}

static int check_perf(char *detail, size_t len)
{
	struct cb_perfcount pc;
	long paranoid = -1;
	int err = cb_perfcount_open(&pc, 0);

	cb_sysctl_read_long("/proc/sys/kernel/perf_event_paranoid", &paranoid);
	if (err == 0)
		cb_perfcount_close(&pc);
	snprintf(detail, len, "%s (kernel.perf_event_paranoid=%ld; opt-in: --probes=all)",
		 err == 0 ? "yes" : cb_probe_reason(CB_PROBE_PERF, err), paranoid);
	return err;
}

int cb_probe_check(enum cb_probe p, char *detail, size_t len)
{
	struct cb_smaps sm;
	int err;

	switch (p) {
	case CB_PROBE_TASKSTATS:
		return check_taskstats(detail, len);
	case CB_PROBE_PAGEMAP:
		return check_pagemap(detail, len);
	case CB_PROBE_PERF:
		return check_perf(detail, len);
	case CB_PROBE_SMAPS:
		err = cb_smaps_read(0, &sm);
		snprintf(detail, len, "%s", err == 0 ? "yes" : cb_strerror(err));
		return err;
	default:
		snprintf(detail, len, "unknown probe");
		return -EINVAL;
	}
}
