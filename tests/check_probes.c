/* The stock-kernel COW probes: taskstats, pagemap, smaps_rollup, perf, each against a real fork. */
#include "testutil.h"

#include <errno.h>
#include <sys/file.h>
#include <pwd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <ftw.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <cowbench/cowbench.h>
#include <cowbench/evidence.h>
#include <cowbench/instrumentation.h>

#define NPAGES 1024
#define SLACK 32 /* stack and libc pages the writer dirties besides the region */
#define LRU_BATCH 31 /* folios one CPU's LRU add batch holds (PAGEVEC_SIZE) */
#ifdef __SANITIZE_ADDRESS__
#define PERF_SLACK 96 /* and AddressSanitizer's own faults in its shadow memory, inside perf's window */
#else
#define PERF_SLACK SLACK
#endif

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/*
 * Root tests turn delay accounting on; the forked test process puts it back however it ends.
 * false (a skip) while another running cowbench holds the setting.
 */
static bool delayacct_on(void)
{
	if (tu_skip_if_delayacct_held("switching kernel.task_delayacct on"))
		return false;
	atexit(cb_sysctl_restore_all);
	ck_assert_int_eq(cb_delayacct_enable(), 0);
	ck_assert_int_eq(cb_delayacct_enabled(), 1);
	return true;
}

START_TEST(test_smaps_fixture)
{
	struct cb_smaps s;

	ck_assert_int_eq(cb_smaps_read_path(CB_FIXTURE_DIR "/smaps_rollup_sample.txt", &s), 0);
	ck_assert_int_eq(s.rss_kb, 67300);
	ck_assert_int_eq(s.shared_dirty_kb, 32768);
	ck_assert_int_eq(s.private_dirty_kb, 33000);
	ck_assert_int_eq(s.private_clean_kb, 332);
	ck_assert_int_eq(s.swap_kb, 12);
	ck_assert_int_eq(cb_smaps_parse("nothing: here\n", &s), CB_EFORMAT);
	ck_assert_int_eq(s.private_dirty_kb, -1);
	ck_assert_int_eq(cb_smaps_read_path(CB_FIXTURE_DIR "/no-such-file", &s), -ENOENT);
	/* smaps (per mapping) sums the same fields */
	ck_assert_int_eq(cb_smaps_parse("Private_Dirty: 4 kB\nRss: 8 kB\nPrivate_Dirty:  8 kB\n", &s), 0);
	ck_assert_int_eq(s.private_dirty_kb, 12);
	ck_assert_int_eq(s.shared_dirty_kb, -1);
	ck_assert_int_eq(s.private_hugetlb_kb, -1);
	ck_assert_int_eq(cb_smaps_parse("Shared_Hugetlb: 2048 kB\nPrivate_Hugetlb:    4096 kB\n", &s), 0);
	ck_assert_int_eq(s.private_hugetlb_kb, 4096);
}
END_TEST

START_TEST(test_smaps_self)
{
	struct cb_smaps s;

	ck_assert_int_eq(cb_smaps_read(0, &s), 0);
	ck_assert_int_gt(s.rss_kb, 0);
	ck_assert_int_ge(s.private_dirty_kb, 0);
}
END_TEST

#define PFN(x) (CB_PM_PRESENT | (x))

START_TEST(test_pagemap_classify)
{
	/* pages 0-1 copied, 2 reused, 3 not present after, 4-5 untouched and shared with the other side */
	uint64_t before[6] = { PFN(10), PFN(11), PFN(12), PFN(13), PFN(14), PFN(15) };
	uint64_t after[6] = { PFN(20), PFN(21), PFN(12), 0, PFN(14), PFN(15) };
	uint64_t other[6] = { PFN(10), PFN(11), 0, PFN(13), PFN(14), PFN(15) };
	size_t touched[] = { 0, 1, 1, 2, 3, 0 }; /* duplicates count once */
	struct cb_pagemap_diff d;

	ck_assert_int_eq(cb_pagemap_classify(before, after, other, 6, touched, 6, &d), 0);
	ck_assert_int_eq(d.copied, 2);
	ck_assert_int_eq(d.reused, 1);
	ck_assert_int_eq(d.not_present, 1);
	ck_assert_int_eq(d.shared, 2);
	ck_assert_int_eq(cb_pagemap_classify(before, after, NULL, 6, NULL, 0, &d), 0);
	ck_assert_int_eq(d.copied, 2);
	ck_assert_int_eq(d.reused, 3);
	ck_assert_int_eq(d.shared, -1);
	ck_assert_int_eq(d.copied_unwritten, 0); /* every page written: nothing unwritten to count */
}
END_TEST

/* Unwritten pages on a new frame are copies made ahead; absent or same-frame ones are not. */
START_TEST(test_pagemap_copied_unwritten)
{
	uint64_t before[8] = { PFN(10), PFN(11), PFN(12), PFN(13), PFN(14), PFN(15), PFN(16), 0 };
	uint64_t after[8] = { PFN(20), PFN(21), PFN(22), PFN(13), 0, PFN(25), PFN(16), PFN(27) };
	size_t touched[] = { 0, 2 };
	struct cb_pagemap_diff d;

	ck_assert_int_eq(cb_pagemap_classify(before, after, NULL, 8, touched, 2, &d), 0);
	ck_assert_int_eq(d.copied, 2);
	/* 1 and 5 moved without a write; 3 and 6 stayed, 4 went away, 7 was not there before. */
	ck_assert_int_eq(d.copied_unwritten, 2);
}
END_TEST

/* What an unprivileged reader sees (PFNs zeroed): no numbers, -EPERM; with PFNs: all reused. */
START_TEST(test_pagemap_fixtures)
{
	uint64_t a[16], b[16];
	struct cb_pagemap_diff d;

	ck_assert_int_eq(cb_pagemap_read_path(CB_FIXTURE_DIR "/pagemap_nopfn.bin", 0, 16, page_size(), a), 0);
	ck_assert_int_eq(cb_pagemap_classify(a, a, a, 16, NULL, 0, &d), -EPERM);
	ck_assert_int_eq(cb_pagemap_read_path(CB_FIXTURE_DIR "/pagemap_pfn.bin", 0, 16, page_size(), b), 0);
	ck_assert_int_eq(cb_pagemap_classify(b, b, NULL, 16, NULL, 0, &d), 0);
	ck_assert_int_eq(d.reused, 16);
	ck_assert_int_eq(d.copied, 0);
	ck_assert_int_eq(cb_pagemap_read_path(CB_FIXTURE_DIR "/pagemap_pfn.bin", 8 * page_size(), 16, page_size(), b),
			 -ENODATA);
}
END_TEST

/* Run seq, child writes, with the evidence hooks; the row says what the probes saw. */
static int touch_with_evidence_sig(enum cb_writer writer, bool fork, int sig, struct cb_row *row)
{
	static size_t order[NPAGES];
	struct cb_clock clk;
	struct cb_evidence ev;
	struct cb_touch_hooks hooks;
	struct cb_touch_result res;
	int err;

	for (size_t i = 0; i < NPAGES; i++)
		order[i] = i;
	ck_assert_int_eq(cb_clock_init(&clk, CB_CLOCK_MONOTONIC), 0);
	struct cb_touch_params p = {
		.size = NPAGES * page_size(), .page_size = page_size(), .writer = writer, .fork = fork,
		.cpu = -1, .clock = &clk, .order = order, .count = NPAGES, .hooks = &hooks,
		.inject_child_signal = sig,
	};
	memset(row, 0, sizeof(*row));
	cb_evidence_row_init(row);
	row->cow_copies = row->cow_reuses = row->cow_faults = row->cow_copy_ns = CB_NA;
	cb_evidence_init(&ev, page_size(), order, NPAGES);
	cb_evidence_hooks(&ev, &hooks);
	err = cb_touch_run(&p, &res);
	cb_evidence_fill_row(&ev, row);
	cb_evidence_free(&ev);
	cb_touch_result_free(&res);
	return err;
}

static int touch_with_evidence(enum cb_writer writer, bool fork, struct cb_row *row)
{
	return touch_with_evidence_sig(writer, fork, 0, row);
}

/* A writer killed after its release: the probes saw only the before side, so every cell stays empty. */
START_TEST(test_killed_writer_is_empty)
{
	struct cb_row row;

	ck_assert_int_eq(touch_with_evidence_sig(CB_WRITER_CHILD, true, SIGKILL, &row), CB_ECHILD);
	ck_assert_int_eq(row.wpcopy_count, CB_NA);
	ck_assert_int_eq(row.cow_copies, CB_NA);
	ck_assert_int_eq(row.cow_reuses, CB_NA);
	ck_assert_int_eq(row.private_dirty_kb, CB_NA);
	ck_assert_int_eq(row.perf_minflt, CB_NA);
	ck_assert(isnan(row.kernel_copy_ns_mean));
}
END_TEST

START_TEST(test_child_writes_copies)
{
	struct cb_row row;

	if (tu_skip_unless_root("taskstats and pagemap PFNs") || tu_skip_if_delayacct_held("taskstats and pagemap PFNs"))
		return;
	if (!delayacct_on())
		return;
	ck_assert_int_eq(touch_with_evidence(CB_WRITER_CHILD, true, &row), 0);
	ck_assert_msg(row.evidence_notes[0] == '\0', "notes: %s", row.evidence_notes);
	/* taskstats: the kernel counted one copy per page (plus a few stack/libc pages) */
	ck_assert_int_ge(row.wpcopy_count, NPAGES);
	ck_assert_int_le(row.wpcopy_count, NPAGES + SLACK);
	ck_assert_int_gt(row.wpcopy_ns, 0);
	ck_assert_str_eq(row.kernel_copy_source, "taskstats");
	/* pagemap: every written page got a new frame; nothing reused, nothing left shared */
	ck_assert_int_eq(row.cow_copies, NPAGES);
	ck_assert_int_eq(row.cow_reuses, 0);
	ck_assert_int_eq(row.cow_shared, 0);
	/* smaps: the copies became the writer's private dirty memory */
	ck_assert_int_ge(row.private_dirty_kb - row.private_dirty_kb_before, (int64_t)(NPAGES * page_size() / 1024));
	ck_assert_int_ne(row.snap_shared_dirty_kb, CB_NA);
	/* perf: at least one fault per page */
	ck_assert_int_ge(row.perf_minflt, NPAGES);
	ck_assert_int_le(row.perf_minflt, NPAGES + PERF_SLACK);
	ck_assert_int_eq(row.perf_majflt, 0);
	ck_assert_int_ge(row.perf_cs, 0);
}
END_TEST

/* Shared memory a forked measuring process fills in for the test to check. */
static void *shared_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	ck_assert_ptr_ne(p, MAP_FAILED);
	return p;
}

/* Run fn in a fresh process (born with delay accounting on, unlike this one); 0 when it exited 0. */
static int in_child(int (*fn)(void *), void *arg)
{
	pid_t pid = fork();
	int ws;

	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(fn(arg) == 0 ? 0 : 1);
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

static int parent_writer(void *row)
{
	return touch_with_evidence(CB_WRITER_PARENT, true, row);
}

START_TEST(test_parent_writes_copies)
{
	struct cb_row *row = shared_alloc(sizeof(*row)), here;

	if (tu_skip_unless_root("taskstats and pagemap PFNs") || tu_skip_if_delayacct_held("taskstats and pagemap PFNs"))
		return;
	if (!delayacct_on())
		return;
	ck_assert_int_eq(in_child(parent_writer, row), 0);
	ck_assert_msg(row->evidence_notes[0] == '\0', "notes: %s", row->evidence_notes);
	ck_assert_int_ge(row->wpcopy_count, NPAGES);
	ck_assert_int_le(row->wpcopy_count, NPAGES + SLACK);
	ck_assert_int_eq(row->cow_copies, NPAGES);
	ck_assert_int_eq(row->cow_reuses, 0);
	/* This process was born before accounting went on: its copies are not counted, and we say so. */
	if (tu_saved_delayacct != 0)
		return; /* it was already on (someone else's run): this process may well be counted */
	ck_assert_int_eq(touch_with_evidence(CB_WRITER_PARENT, true, &here), 0);
	ck_assert_int_eq(here.wpcopy_count, CB_NA);
	ck_assert_ptr_nonnull(strstr(here.evidence_notes, "taskstats:writer-predates-delayacct"));
	ck_assert_int_eq(here.cow_copies, NPAGES);
}
END_TEST

/* No fork: nothing is shared, so the kernel copies nothing; pagemap has no other side to compare. */
static int no_fork_writer(void *row)
{
	return touch_with_evidence(CB_WRITER_PARENT, false, row);
}

START_TEST(test_no_fork_no_copies)
{
	struct cb_row *row = shared_alloc(sizeof(*row));

	if (tu_skip_unless_root("taskstats") || tu_skip_if_delayacct_held("taskstats"))
		return;
	if (!delayacct_on())
		return;
	ck_assert_int_eq(in_child(no_fork_writer, row), 0);
	ck_assert_int_ne(row->wpcopy_count, CB_NA);
	ck_assert_int_le(row->wpcopy_count, SLACK);
	ck_assert_int_eq(row->cow_copies, CB_NA);
	ck_assert_ptr_nonnull(strstr(row->evidence_notes, "pagemap:not-supported"));
	ck_assert_int_ge(row->perf_minflt, 0);
}
END_TEST

/*
 * The snapshot side exited before the parent writes: each write still
 * faults (the page table entries stay write-protected) but the kernel
 * reuses the page in place: same frame, no copy.
 */
struct reuse_result {
	int err;
	struct cb_pagemap_diff d;
	uint64_t copies;
	long minflt;
	unsigned version;
	int missing_err;
};

static int reuse_measure(void *arg)
{
	struct reuse_result *r = arg;
	size_t ps = page_size(), len = NPAGES * ps;
	uint64_t *before = calloc(NPAGES, 8), *after = calloc(NPAGES, 8);
	struct cb_taskstats_sock *sock;
	struct cb_taskstats t0, t1;
	struct rusage r0, r1;
	pid_t tid = (pid_t)syscall(SYS_gettid), pid;
	char *region = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	r->err = -1;
	if (region == MAP_FAILED || !before || !after || cb_taskstats_open(&sock) < 0)
		return -1;
	madvise(region, len, MADV_NOHUGEPAGE);
	memset(region, 1, len);
	pid = fork();
	if (pid == 0)
		_exit(0);
	if (pid < 0 || waitpid(pid, NULL, 0) != pid)
		return -1;
	/* The snapshot is gone before the first write: every page has one owner again. */
	if ((r->err = cb_pagemap_read(0, region, NPAGES, ps, before)) ||
	    (r->err = cb_taskstats_query(sock, tid, false, &t0)))
		return r->err;
	getrusage(RUSAGE_THREAD, &r0);
	for (size_t i = 0; i < NPAGES; i++)
		((volatile char *)region)[i * ps] = 2;
	getrusage(RUSAGE_THREAD, &r1);
	if ((r->err = cb_taskstats_query(sock, tid, false, &t1)) ||
	    (r->err = cb_pagemap_read(0, region, NPAGES, ps, after)) ||
	    (r->err = cb_pagemap_classify(before, after, NULL, NPAGES, NULL, 0, &r->d)))
		return r->err;
	r->copies = t1.wpcopy_count - t0.wpcopy_count;
	r->minflt = r1.ru_minflt - r0.ru_minflt;
	r->err = cb_taskstats_query(sock, getpid(), true, &t1); /* thread group: same kernel, summed */
	r->version = t1.version;
	r->missing_err = cb_taskstats_query(sock, 0x3fffffff, false, &t0);
	r->err = r->err ? r->err : cb_taskstats_self_accounted(sock) == 1 ? 0 : -1;
	cb_taskstats_close(sock);
	return r->err;
}

/*
 * The snapshot side exited before the parent writes: each write still
 * faults (the page table entries stay write-protected) but the kernel
 * reuses the page in place: same frame, no copy.
 */
START_TEST(test_reuse_after_child_exit)
{
	struct reuse_result *r = shared_alloc(sizeof(*r));

	if (tu_skip_unless_root("taskstats and pagemap PFNs") || tu_skip_if_delayacct_held("taskstats and pagemap PFNs"))
		return;
	if (!delayacct_on())
		return;
	ck_assert_int_eq(in_child(reuse_measure, r), 0);
	ck_assert_int_eq(r->err, 0);
	/*
	 * Nearly all reused. A few may still be copied: a page waiting in another
	 * CPU's LRU batch holds an extra reference, and then the kernel copies;
	 * at most one batch a CPU (25-28 of 1024 pages in ~8 % of runs here).
	 */
	ck_assert_int_eq(r->d.reused + r->d.copied, NPAGES);
	ck_assert_int_le(r->d.copied, LRU_BATCH * sysconf(_SC_NPROCESSORS_CONF));
	ck_assert_int_ge(r->copies, r->d.copied); /* every new frame was a kernel copy */
	ck_assert_int_le(r->copies, r->d.copied + SLACK); /* and the rest were stack and libc pages */
	ck_assert_int_ge(r->minflt, NPAGES); /* yet every write faulted */
	ck_assert_int_ge(r->version, 13);
	ck_assert_int_eq(r->missing_err, -ESRCH);
}
END_TEST

/* Delay accounting off: the counts would all read 0, so the cells stay empty with a note. */
START_TEST(test_delayacct_off_is_empty)
{
	struct cb_row row;

	if (tu_skip_unless_root("changing kernel.task_delayacct") || tu_skip_if_delayacct_held("changing kernel.task_delayacct"))
		return;
	atexit(cb_sysctl_restore_all);
	/*
	 * A journal of its own: this test switches accounting off on purpose, which the shared
	 * journal refuses while another suite's cowbench run (ctest -j) holds it on.
	 */
	char jdir[] = "/tmp/cbtest-probesjXXXXXX";

	ck_assert_ptr_nonnull(mkdtemp(jdir));
	setenv("COWBENCH_RUN_DIR", jdir, 1);
	ck_assert_int_eq(cb_sysctl_override(CB_DELAYACCT_SYSCTL, 0), 0);
	ck_assert_int_eq(touch_with_evidence(CB_WRITER_CHILD, true, &row), 0);
	ck_assert_int_eq(row.wpcopy_count, CB_NA);
	ck_assert(isnan(row.kernel_copy_ns_mean));
	ck_assert_ptr_nonnull(strstr(row.evidence_notes, "taskstats:delayacct-off"));
	ck_assert_int_eq(row.cow_copies, NPAGES); /* the other probes are unaffected */
}
END_TEST

/*
 * Unprivileged: a forked child drops to nobody and measures. Probes that
 * need root leave empty cells and a note; nothing crashes, nothing lies.
 */
START_TEST(test_unprivileged_probes)
{
	struct cb_row *row = mmap(NULL, sizeof(*row), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct passwd *nobody = getpwnam("nobody");
	pid_t pid;
	int ws;

	if (tu_skip_unless_root("dropping to nobody"))
		return;
	ck_assert_ptr_nonnull(nobody);
	if (!delayacct_on())
		return;
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (setgid(nobody->pw_gid) < 0 || setuid(nobody->pw_uid) < 0)
			_exit(10);
		prctl(PR_SET_DUMPABLE, 1); /* like any user's process: its /proc files are its own */
		_exit(touch_with_evidence(CB_WRITER_CHILD, true, row) == 0 ? 0 : 11);
	}
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "status %d", ws);
	ck_assert_int_eq(row->wpcopy_count, CB_NA);
	ck_assert_int_eq(row->cow_copies, CB_NA);
	ck_assert_int_eq(row->cow_reuses, CB_NA);
	ck_assert_ptr_nonnull(strstr(row->evidence_notes, "taskstats:needs-root"));
	ck_assert_ptr_nonnull(strstr(row->evidence_notes, "pagemap:needs-root"));
	/* smaps of one's own processes needs no privilege */
	ck_assert_int_ne(row->private_dirty_kb, CB_NA);
	/* perf follows kernel.perf_event_paranoid: a number or an empty cell and a note */
	ck_assert(row->perf_minflt >= NPAGES || (row->perf_minflt == CB_NA &&
						  strstr(row->evidence_notes, "perf:not-permitted")));
	munmap(row, sizeof(*row));
}
END_TEST

/* cowbench info's self-description: what each probe can do for this process, and why not. */
START_TEST(test_probe_check)
{
	int *res = shared_alloc(4 * sizeof(int));
	char detail[160];
	pid_t pid;

	ck_assert_int_eq(cb_probe_check(CB_PROBE_SMAPS, detail, sizeof(detail)), 0);
	ck_assert_int_eq(cb_probe_check((enum cb_probe)99, detail, sizeof(detail)), -EINVAL);
	if (tu_skip_unless_root("the privileged answers"))
		return;
	ck_assert_int_eq(cb_probe_check(CB_PROBE_TASKSTATS, detail, sizeof(detail)), 0);
	ck_assert_ptr_nonnull(strstr(detail, "wpcopy"));
	ck_assert_int_eq(cb_probe_check(CB_PROBE_PAGEMAP, detail, sizeof(detail)), 0);
	ck_assert_int_eq(cb_probe_check(CB_PROBE_PERF, detail, sizeof(detail)), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct passwd *nobody = getpwnam("nobody");

		if (!nobody || setgid(nobody->pw_gid) < 0 || setuid(nobody->pw_uid) < 0)
			_exit(1);
		prctl(PR_SET_DUMPABLE, 1); /* like any user's process: its /proc files are its own */
		res[0] = cb_probe_check(CB_PROBE_TASKSTATS, detail, sizeof(detail));
		res[1] = cb_probe_check(CB_PROBE_PAGEMAP, detail, sizeof(detail));
		res[2] = cb_probe_check(CB_PROBE_SMAPS, detail, sizeof(detail));
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	ck_assert_int_eq(res[0], -EPERM);
	ck_assert_int_eq(res[1], CB_ENOPFN);
	ck_assert_int_eq(res[2], 0);
}
END_TEST

/* --probes words, and which probes each kind of rep runs. */
START_TEST(test_probe_sets_per_rep_kind)
{
	const unsigned perf = 1u << CB_PROBE_PERF, ts = 1u << CB_PROBE_TASKSTATS;
	unsigned p;

	ck_assert_int_eq(cb_probes_parse("inline", &p), 0);
	ck_assert_uint_eq(p, CB_PROBES_DEFAULT | CB_PROBES_INLINE);
	ck_assert_int_eq(cb_probes_parse("all,inline", &p), 0);
	ck_assert_uint_eq(p, CB_PROBES_ALL | CB_PROBES_INLINE);
	ck_assert_int_eq(cb_probes_parse("pagemap,default", &p), 0);
	ck_assert_uint_eq(p, CB_PROBES_DEFAULT);
	ck_assert_int_eq(cb_probes_parse("none,inline", &p), -EINVAL);
	ck_assert_int_eq(cb_probes_parse("perf,", &p), 0);
	ck_assert_int_eq(cb_probes_parse(",", &p), -EINVAL);
	/* perf counts every fault: never in a timed rep, unless inline; always in an evidence rep. */
	ck_assert_uint_eq(cb_probes_intrusive(perf) & perf, perf);
	ck_assert_uint_eq(cb_probes_for_rep(perf, CB_REP_TIMED), CB_PROBES_NONE);
	ck_assert_uint_eq(cb_probes_for_rep(CB_PROBES_ALL, CB_REP_TIMED) & perf, 0);
	ck_assert_uint_eq(cb_probes_for_rep(CB_PROBES_ALL, CB_REP_TIMED) & (1u << CB_PROBE_PAGEMAP),
			  1u << CB_PROBE_PAGEMAP);
	ck_assert_uint_eq(cb_probes_for_rep(perf | CB_PROBES_INLINE, CB_REP_TIMED) & perf, perf);
	ck_assert_uint_eq(cb_probes_for_rep(CB_PROBES_ALL, CB_REP_EVIDENCE), CB_PROBES_ALL);
	ck_assert_uint_eq(cb_probes_intrusive(CB_PROBES_NONE), 0);
	ck_assert_uint_eq(cb_probes_for_rep(CB_PROBES_NONE, CB_REP_EVIDENCE), CB_PROBES_NONE);
	/* taskstats: in timed reps exactly when delay accounting is already on. */
	if (tu_skip_unless_root("switching kernel.task_delayacct") || tu_skip_if_delayacct_held("switching kernel.task_delayacct"))
		return;
	/* Off: written directly only when no cowbench holds it (skipped above); on: through the journal. */
	ck_assert_int_eq(cb_sysctl_write_long(CB_DELAYACCT_SYSCTL, 0), 0);
	ck_assert_uint_eq(cb_probes_intrusive(0) & ts, ts);
	ck_assert_uint_eq(cb_probes_for_rep(0, CB_REP_TIMED) & ts, 0);
	if (!tu_delayacct_hold_on("switching kernel.task_delayacct"))
		return;
	ck_assert_uint_eq(cb_probes_intrusive(0), 0);
	ck_assert_uint_eq(cb_probes_for_rep(0, CB_REP_TIMED), CB_PROBES_DEFAULT);
	tu_delayacct_release();
}
END_TEST

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)type, (void)ftw;
	return remove(path);
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	fputs(text, fp);
	fclose(fp);
}

static void mkdirs(const char *root, const char *const *dirs, size_t n)
{
	char path[512];

	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
		ck_assert_int_eq(mkdir(path, 0755), 0);
	}
}

/* cowbench info's instrumentation lines, from a /proc and a tracefs laid out in a temporary directory. */
START_TEST(test_instrumentation_scan)
{
	static const char *const dirs[] = { "proc", "proc/sys", "proc/sys/kernel", "proc/4242", "proc/4242/fd",
					    "proc/77", "proc/77/fd", "tracing", "tracing/instances",
					    "tracing/instances/mine", "quiet" };
	char root[] = "/tmp/cbtest-instrXXXXXX", proc[64], tracing[64], quiet[64], path[128];
	struct cb_instrumentation in;

	ck_assert_ptr_nonnull(mkdtemp(root));
	mkdirs(root, dirs, sizeof(dirs) / sizeof(dirs[0]));
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(tracing, sizeof(tracing), "%s/tracing", root);
	snprintf(quiet, sizeof(quiet), "%s/quiet", root);
	put(proc, "sys/kernel/task_delayacct", "1\n");
	put(proc, "4242/comm", "perf\n");
	snprintf(path, sizeof(path), "%s/4242/fd/3", proc);
	ck_assert_int_eq(symlink("anon_inode:[perf_event]", path), 0);
	snprintf(path, sizeof(path), "%s/4242/fd/4", proc);
	ck_assert_int_eq(symlink("anon_inode:[perf_event]", path), 0);
	snprintf(path, sizeof(path), "%s/77/fd/0", proc);
	ck_assert_int_eq(symlink("/dev/null", path), 0);
	put(tracing, "current_tracer", "nop\n");
	put(tracing, "tracing_on", "1\n");
	put(tracing, "set_event", "exceptions:page_fault_user\n");
	put(tracing, "instances/mine/set_event", "kmem:mm_page_alloc\n");
	put(tracing, "kprobe_events", "");
	put(quiet, "current_tracer", "nop\n");
	put(quiet, "tracing_on", "1\n");
	put(quiet, "set_event", "");

	cb_instrumentation_scan(&in, proc, tracing);
	ck_assert_int_eq(in.delayacct, 1);
	ck_assert_int_eq(in.perf_fds, 2);
	ck_assert_int_eq(in.perf_procs, 1);
	ck_assert_int_eq(in.perf_pid[0], 4242);
	ck_assert_str_eq(in.perf_comm[0], "perf");
	ck_assert_str_eq(in.tracer, "nop");
	ck_assert_int_eq(in.trace_events, 2);
	ck_assert_str_eq(in.first_event, "exceptions:page_fault_user");
	ck_assert_int_eq(in.kprobes, 0);
	ck_assert(cb_instrumentation_tracing(&in));
	ck_assert(cb_instrumentation_any(&in));
	/* Tracing mounted but idle, accounting off, no perf holder: nothing taxes a fault. */
	put(proc, "sys/kernel/task_delayacct", "0\n");
	snprintf(path, sizeof(path), "%s/4242/fd/3", proc);
	unlink(path);
	snprintf(path, sizeof(path), "%s/4242/fd/4", proc);
	unlink(path);
	cb_instrumentation_scan(&in, proc, quiet);
	ck_assert_int_eq(in.delayacct, 0);
	ck_assert_int_eq(in.perf_fds, 0);
	ck_assert_str_eq(in.tracefs, quiet);
	ck_assert(!cb_instrumentation_tracing(&in));
	ck_assert(!cb_instrumentation_any(&in));
	ck_assert_int_eq(nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}
END_TEST

/* kernel_copy_ns_mean: taskstats first, the cowbench kernel's counters otherwise, empty with neither. */
START_TEST(test_copy_mean_sources)
{
	struct cb_row row;

	cb_evidence_row_init(&row);
	row.cow_faults = row.cow_copy_ns = row.cow_path_ns = CB_NA;
	cb_evidence_fill_copy_mean(&row);
	ck_assert(isnan(row.kernel_copy_ns_mean));
	ck_assert_str_eq(row.kernel_copy_source, "");
	row.cow_faults = 1000;
	row.cow_copy_ns = 500000; /* the copy alone: not the copy path */
	cb_evidence_fill_copy_mean(&row);
	ck_assert(isnan(row.kernel_copy_ns_mean));
	row.cow_path_ns = 1500000;
	cb_evidence_fill_copy_mean(&row);
	ck_assert_double_eq_tol(row.kernel_copy_ns_mean, 1500.0, 1e-9);
	ck_assert_str_eq(row.kernel_copy_source, "cow_stats");
	row.wpcopy_count = 2000;
	row.wpcopy_ns = 4000000;
	cb_evidence_fill_copy_mean(&row);
	ck_assert_double_eq_tol(row.kernel_copy_ns_mean, 2000.0, 1e-9);
	ck_assert_str_eq(row.kernel_copy_source, "taskstats");
}
END_TEST

static Suite *probes_suite(void)
{
	Suite *s = suite_create("probes");
	TCase *tc = tcase_create("probes");

	tcase_set_timeout(tc, 120);
	tcase_add_unchecked_fixture(tc, tu_save_delayacct, tu_restore_delayacct);
	tcase_add_test(tc, test_smaps_fixture);
	tcase_add_test(tc, test_smaps_self);
	tcase_add_test(tc, test_pagemap_classify);
	tcase_add_test(tc, test_pagemap_copied_unwritten);
	tcase_add_test(tc, test_pagemap_fixtures);
	tcase_add_test(tc, test_child_writes_copies);
	tcase_add_test(tc, test_parent_writes_copies);
	tcase_add_test(tc, test_no_fork_no_copies);
	tcase_add_test(tc, test_reuse_after_child_exit);
	tcase_add_test(tc, test_delayacct_off_is_empty);
	tcase_add_test(tc, test_probe_sets_per_rep_kind);
	tcase_add_test(tc, test_instrumentation_scan);
	tcase_add_test(tc, test_unprivileged_probes);
	tcase_add_test(tc, test_probe_check);
	tcase_add_test(tc, test_killed_writer_is_empty);
	tcase_add_test(tc, test_copy_mean_sources);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(probes_suite)
