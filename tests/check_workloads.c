/* The self-driven workloads (snapshot, fork, multi) at small sizes: what always holds. */
#include <errno.h>
#include <sys/wait.h>

#include <cowbench/error.h>
#include <cowbench/hugepage.h>
#include <cowbench/params.h>
#include <cowbench/run.h>
#include <cowbench/sysctl.h>

#include "testutil.h"

static struct cb_clock clk;

/* Set a workload option through its table, as the CLI does. */
static void set(struct cb_run_spec *s, const char *name, const char *value)
{
	char why[256] = "";

	ck_assert_msg(cb_run_spec_set_option(s, name, value, why, sizeof(why)) == 0, "%s", why);
}

static struct cb_run_spec spec_for(const char *name, uint64_t size)
{
	struct cb_run_spec s = {
		.workload = cb_workload_find(name), .size = size, .page_size = (size_t)sysconf(_SC_PAGESIZE),
		.writer = CB_WRITER_CHILD, .fork = true, .cpu = -1, .seed = 1, .clock = &clk,
	};

	ck_assert_ptr_nonnull(s.workload);
	ck_assert_int_eq(cb_clock_init(&clk, CB_CLOCK_MONOTONIC), 0);
	cb_wl_params_default(&s.params);
	cb_run_spec_set_workload(&s, s.workload);
	if (strcmp(name, "snapshot") == 0) {
		set(&s, "threads", "3"); /* 2 vCPUs: few threads, several per CPU */
		set(&s, "checkpointers", "2");
		set(&s, "batch", "64K");
	}
	return s;
}

static void assert_no_children(void)
{
	errno = 0;
	ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
	ck_assert_int_eq(errno, ECHILD);
}

static bool unsupported(const struct cb_row *row)
{
	return strncmp(row->status, "unsupported:", 12) == 0 || strncmp(row->status, "no-resource:", 12) == 0;
}

static const char *const methods[] = { "fork", "uffd-wp", "memcpy", "none", "fork-wait" };

/* The checkpoint equals the array at snapshot time and every writer's element landed. */
START_TEST(test_snapshot_checkpoint_and_writes)
{
	struct cb_run_spec s = spec_for("snapshot", 4u << 20);
	struct cb_row row;
	int err;

	set(&s, "snapshot", methods[_i]);
	err = cb_run_rep(&s, 1, &row);
	assert_no_children();
	if (strcmp(methods[_i], "uffd-wp") == 0 && unsupported(&row)) {
		tu_skip("uffd-wp: %s", row.status); /* e.g. vm.unprivileged_userfaultfd=0 without root */
		return;
	}
	ck_assert_msg(err == 0, "%s: %s", methods[_i], row.status);
	ck_assert_str_eq(row.status, "ok");
	ck_assert_int_eq(row.verified, 1);
	ck_assert_int_gt(row.ref_ns, 0);
	ck_assert_str_eq(row.method, methods[_i]);
	ck_assert_int_gt(row.writer_ns, 0);
	ck_assert_int_gt(row.baseline_ns, 0);
	ck_assert(row.slowdown > 0);
	if (strcmp(methods[_i], "none") != 0)
		ck_assert_int_eq(row.saved_pages, row.pages); /* uffd-wp: each page exactly once */
	else
		ck_assert_int_eq(row.saved_pages, CB_NA);
	if (strncmp(methods[_i], "fork", 4) == 0)
		ck_assert_int_ge(row.reunite_ns, 0);
	if (row.cow_copies != CB_NA) /* PFNs: root only */
		ck_assert_int_eq(row.cow_copies + row.cow_reuses, row.pages);
	/* Nothing forked, or the child gone before the first write: no page is copied. */
	if (strcmp(methods[_i], "fork") != 0)
		ck_assert(row.cow_copies == CB_NA || row.cow_copies == 0);
}
END_TEST

/* A batch that is not a whole number of checkpointer rounds, and one copier per page. */
START_TEST(test_snapshot_uneven_batches)
{
	struct cb_run_spec s = spec_for("snapshot", 5 * 4096);
	struct cb_row row;

	set(&s, "snapshot", methods[_i]);
	set(&s, "batch", "8K");
	set(&s, "checkpointers", "5");
	set(&s, "threads", "2");
	cb_run_rep(&s, 1, &row);
	assert_no_children();
	if (unsupported(&row))
		return;
	ck_assert_str_eq(row.status, "ok");
	ck_assert_int_eq(row.verified, 1);
}
END_TEST

static const char *const fork_methods[] = { "fork", "vfork", "posix_spawn", "clone-vm" };

START_TEST(test_fork_methods)
{
	struct cb_run_spec s = spec_for("fork", 1u << 20);
	struct cb_row row;

	set(&s, "method", fork_methods[_i]);
	ck_assert_int_eq(cb_run_rep(&s, 1, &row), 0);
	assert_no_children();
	ck_assert_str_eq(row.status, "ok");
	ck_assert_int_ge(row.fork_ns, 0);
	ck_assert_int_ge(row.wait_ns, 0);
	ck_assert_int_gt(row.ref_ns, 0);
	ck_assert(row.ms_per_gib >= 0);
	if (strcmp(fork_methods[_i], "posix_spawn") == 0) {
		ck_assert_int_eq(row.child_start_ns, CB_NA);
	} else {
		ck_assert_int_ge(row.child_start_ns, 0);
		ck_assert_int_ge(row.child_exit_ns, 0);
	}
}
END_TEST

/* What fork copies grows with the populated size: the page tables (VmPTE), not noisy time. */
START_TEST(test_fork_page_tables_grow)
{
	struct cb_run_spec small = spec_for("fork", 1u << 20), big = spec_for("fork", 128u << 20);
	struct cb_row a, b;

	ck_assert_int_eq(cb_run_rep(&small, 1, &a), 0);
	ck_assert_int_eq(cb_run_rep(&big, 1, &b), 0);
	ck_assert_int_ne(a.vm_pte_kb, CB_NA);
	/* 128 MiB more of 4 KiB pages is 32768 more PTEs: 256 KiB of page tables. */
	ck_assert_int_ge(b.vm_pte_kb - a.vm_pte_kb, 200);
}
END_TEST

START_TEST(test_fork_dontfork_wipeonfork)
{
	struct cb_run_spec s = spec_for("fork", 8u << 20);
	struct cb_row row;

	set(&s, "dontfork", "4M");
	set(&s, "wipeonfork", "2M");
	ck_assert_int_eq(cb_run_rep(&s, 1, &row), 0);
	ck_assert_str_eq(row.status, "ok");
	ck_assert_int_eq(row.dontfork_bytes, 4u << 20);
	ck_assert_int_eq(row.wipeonfork_bytes, 2u << 20);
}
END_TEST

/*
 * A page-order rep with the machine-speed probe around it, the writer in
 * the probing process or in its child: the probe ran (ref_ns), and the
 * rep still wrote every page, one fault each at least. That the probe
 * itself never faults is check_adaptive's test_ref_probe_never_faults.
 */
START_TEST(test_seq_rep_carries_ref_ns)
{
	struct cb_run_spec s = spec_for("seq", 1u << 20);
	struct cb_row row;

	s.writer = _i ? CB_WRITER_PARENT : CB_WRITER_CHILD;
	for (int rep = 1; rep <= 2; rep++) {
		ck_assert_int_eq(cb_run_rep(&s, rep, &row), 0);
		assert_no_children();
		ck_assert_str_eq(row.status, "ok");
		ck_assert_int_gt(row.ref_ns, 0);
		ck_assert_int_eq(row.touched, row.pages);
		ck_assert_int_ge(row.faults, row.touched);
	}
}
END_TEST

/* Every child sees the fork-time data, writes its pages, and the parent keeps its own. */
START_TEST(test_multi_children_see_original)
{
	struct cb_run_spec s = spec_for("multi", 2u << 20);
	struct cb_row row;
	int64_t pages = (int64_t)(s.size / s.page_size);

	set(&s, "children", "3");
	set(&s, "share", _i ? "all" : "split");
	ck_assert_int_eq(cb_run_rep(&s, 1, &row), 0);
	assert_no_children();
	ck_assert_str_eq(row.status, "ok");
	ck_assert_int_eq(row.verified, 1);
	ck_assert_int_eq(row.children, 3);
	ck_assert_int_eq(row.touched, _i ? 3 * pages : pages);
	ck_assert_int_ge(row.faults, 1);
	ck_assert(row.lat_p50_ns > 0);
}
END_TEST

/* THP advice: the run works whatever the system mode; 4K pages report no huge bytes. */
START_TEST(test_thp_advice)
{
	struct cb_run_spec s = spec_for("multi", 4u << 20);
	struct cb_row row;

	s.params.thp = (enum cb_thp_advice)_i;
	set(&s, "children", "1");
	set(&s, "share", "all");
	ck_assert_int_eq(cb_run_rep(&s, 1, &row), 0);
	ck_assert_str_eq(row.status, "ok");
	ck_assert_str_eq(row.thp_advice, cb_thp_advice_name((enum cb_thp_advice)_i));
	if (_i == CB_THP_NEVER)
		ck_assert_int_eq(row.huge_bytes, 0);
}
END_TEST

/* hugetlb: works (root) or says why, and vm.nr_hugepages is put back. */
START_TEST(test_hugetlb_restores)
{
	struct cb_run_spec s = spec_for("multi", 4u << 20);
	struct cb_row row;
	long before = -1, after = -2;

	if (cb_sysctl_read_long(CB_NR_HUGEPAGES_SYSCTL, &before) < 0) {
		tu_skip("no hugetlb in this kernel");
		return;
	}
	s.params.hugetlb = true;
	set(&s, "children", "1");
	set(&s, "share", "all");
	cb_run_rep(&s, 1, &row);
	assert_no_children();
	cb_sysctl_restore_all();
	ck_assert_int_eq(cb_sysctl_read_long(CB_NR_HUGEPAGES_SYSCTL, &after), 0);
	ck_assert_int_eq(after, before);
	if (unsupported(&row))
		return;
	ck_assert_str_eq(row.status, "ok");
	ck_assert_int_eq(row.verified, 1);
	ck_assert_int_eq(row.huge_bytes, 4u << 20);
	/* One COW fault copies a whole 2 MiB page: far fewer faults than 4K pages written. */
	ck_assert_int_lt(row.faults, row.touched / 4);
}
END_TEST

static const char *const bad[][2][12] = {
	{ { "run", "--workload=snapshot", "--size=64K", "--checkpointers=32" }, { "checkpointers" } },
	{ { "run", "--workload=snapshot", "--size=1M", "--batch=5000" }, { "multiple of the page size" } },
	{ { "run", "--workload=snapshot", "--snapshot=rsync" }, { "--snapshot" } },
	{ { "run", "--workload=fork", "--method=spork" }, { "--method" } },
	{ { "run", "--workload=fork", "--membind=7" }, { "out of range" } },
	{ { "run", "--workload=fork", "--interleave=0-9" }, { "out of range" } },
	{ { "run", "--workload=fork", "--cpunodebind=a" }, { "node list" } },
	{ { "run", "--workload=fork", "--thp=sometimes" }, { "--thp" } },
	{ { "run", "--workload=multi", "--children=0" }, { "--children" } },
	{ { "run", "--workload=multi", "--share=half" }, { "--share" } },
	{ { "run", "--workload=fork", "--size=1M", "--dontfork=2M" }, { "--dontfork" } },
	{ { "run", "--workload=snapshot", "--threads=0" }, { "--threads" } },
	{ { "run", "--workload=fork", "--hugetlb", "--size=3M" }, { "2M" } },
	{ { "run", "--workload=fork", "--membind=0", "--interleave=0" }, { "exclude" } },
};

START_TEST(test_bad_options_exit_2)
{
	const char *argv[14] = { CB_CLI_PATH };

	for (int i = 0; bad[_i][0][i]; i++)
		argv[i + 1] = bad[_i][0][i];
	tu_assert_usage_error(argv, bad[_i][1][0]);
}
END_TEST

/* replay --gaps: three writes recorded 0, 100 and 300 ms after the first are played that far apart; without
 * --gaps back to back. Each write's latency is its own, never the wait. */
static long long json_num(const char *out, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(out, pat);
	ck_assert_msg(p != NULL, "%s not in %s", key, out);
	return strtoll(p + strlen(pat), NULL, 10);
}

START_TEST(test_replay_gaps)
{
	char dir[] = "/tmp/cbtest-gaps.XXXXXX", trace[96], opt[128];
	FILE *fp;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(trace, sizeof(trace), "%s/g.trace", dir);
	snprintf(opt, sizeof(opt), "--trace=%s", trace);
	fp = fopen(trace, "w");
	ck_assert_ptr_nonnull(fp);
	fputs("# cowbench-trace 1\n# source: t\n# kernel: k\n# command: c\nt_ns,fork,side,pid,map,kind,map_pages,page,"
	      "class\n5000000,1,child,7,0,heap,32,3,copy\n1005000000,1,child,7,0,heap,32,4,copy\n"
	      "2005000000,1,child,7,0,heap,32,9,copy\n# end records=3 lost=0 complete\n", fp);
	ck_assert_int_eq(fclose(fp), 0);
	for (int gaps = 0; gaps <= 1; gaps++) {
		const char *argv[] = { CB_CLI_PATH, "run", "--workload=replay", opt, "--writer=child", "--size=128K",
				       "--reps=1", "--warmup=0", "--format=json", gaps ? "--gaps" : NULL, NULL };
		struct cli_result r = tu_run_cli(argv);
		long long elapsed;

		ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
		ck_assert_int_eq(json_num(r.out, "touched"), 3);
		elapsed = json_num(r.out, "elapsed_ns");
		/*
		 * Gaps of 1 s: what a load can add to three page writes stays far below one (the gaps were 100 and
		 * 200 ms, and "elapsed < 100 ms without --gaps" a wall-clock bound a loaded machine can break).
		 * With --gaps the span is a floor; the ceiling only catches a wrong unit (ten times the span).
		 */
		if (gaps) {
			ck_assert_msg(elapsed >= 2000000000LL && elapsed < 20000000000LL, "--gaps elapsed %lld ns", elapsed);
			ck_assert_ptr_nonnull(strstr(r.out, "gaps=1"));
		} else {
			ck_assert_msg(elapsed < 1000000000LL, "elapsed %lld ns without --gaps", elapsed);
		}
		ck_assert_msg(json_num(r.out, "lat_max_ns") < 1000000000LL, "a latency holds a wait: %s", r.out);
		tu_free(&r);
	}
	unlink(trace);
	rmdir(dir);
}
END_TEST

/*
 * replay without --size: the region is the trace's mappings (here one of 16,400 pages, more than the usual
 * 64M), in run and in every matrix cell; an explicit --size below that is refused naming it, above it is kept.
 */
START_TEST(test_replay_size_from_trace)
{
	char dir[] = "/tmp/cbtest-rsize.XXXXXX", trace[96], opt[128];
	const long long need = 16400LL * 4096;
	struct {
		const char *cmd, *size;
		long long bytes; /* size_bytes of the row; 0: refused */
	} cases[] = {
		{ "run", NULL, need }, { "matrix", NULL, need }, { "run", "--size=65600K", need },
		{ "run", "--size=80M", 80LL << 20 }, { "run", "--size=65596K", 0 }, { "matrix", "--size=64M", 0 },
	};
	FILE *fp;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(trace, sizeof(trace), "%s/s.trace", dir);
	snprintf(opt, sizeof(opt), "--trace=%s", trace);
	fp = fopen(trace, "w");
	ck_assert_ptr_nonnull(fp);
	fputs("# cowbench-trace 1\n# source: t\n# kernel: k\n# command: c\nt_ns,fork,side,pid,map,kind,map_pages,page,"
	      "class\n5000,1,child,7,0,heap,16400,3,copy\n6000,1,child,7,0,heap,16400,16399,copy\n"
	      "# end records=2 lost=0 complete\n", fp);
	ck_assert_int_eq(fclose(fp), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *argv[] = { CB_CLI_PATH, cases[i].cmd, "--workload=replay", opt, "--writer=child", "--reps=1",
				       "--warmup=0", "--probes=none", "--format=json", cases[i].size, NULL };
		struct cli_result r = tu_run_cli(argv);

		if (cases[i].bytes) {
			ck_assert_msg(r.status == 0, "%s %s: exit %d: %s", cases[i].cmd, cases[i].size, r.status, r.err);
			ck_assert_int_eq(json_num(r.out, "size_bytes"), cases[i].bytes);
			ck_assert_int_eq(json_num(r.out, "touched"), 2);
		} else {
			ck_assert_msg(r.status == 2, "%s %s: exit %d", cases[i].cmd, cases[i].size, r.status);
			ck_assert_msg(strstr(r.err, "--size=65600K") != NULL, "%s", r.err);
			ck_assert_str_eq(r.out, "");
		}
		tu_free(&r);
	}
	unlink(trace);
	rmdir(dir);
}
END_TEST

/* With one node the placement options still parse, and the rows say how many nodes there are. */
START_TEST(test_cli_numa_and_thp_alias)
{
	const char *argv[] = { CB_CLI_PATH, "run", "--workload=fork", "--size=1M", "--reps=1", "--warmup=0",
			       "--membind=0", "--cpunodebind=0", "--thp", "--format=json", NULL };
	struct cli_result r = tu_run_cli(argv);

	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "\"numa_policy\":\"bind:0 cpu:0\""));
	ck_assert_ptr_nonnull(strstr(r.out, "\"thp_advice\":\"madvise\""));
	ck_assert_ptr_null(strstr(r.out, "\"numa_nodes\":null"));
	tu_free(&r);
}
END_TEST

/* The children's side: they re-bind and move, and the row says where their copies landed. */
START_TEST(test_cli_child_numa)
{
	const char *argv[] = { CB_CLI_PATH, "run", "--workload=multi", "--size=1M", "--reps=1", "--warmup=0",
			       "--child-membind=0", "--child-cpunodebind=0", "--format=json", NULL };
	struct cli_result r = tu_run_cli(argv);

	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "\"numa_policy\":\"child-bind:0 child-cpu:0\""));
	ck_assert_ptr_nonnull(strstr(r.out, "\"status\":\"ok\""));
	tu_free(&r);
}
END_TEST

static Suite *workloads_suite(void)
{
	Suite *s = suite_create("workloads");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_snapshot_checkpoint_and_writes, 0, 5);
	tcase_add_loop_test(tc, test_snapshot_uneven_batches, 0, 3);
	tcase_add_loop_test(tc, test_fork_methods, 0, 4);
	tcase_add_test(tc, test_fork_page_tables_grow);
	tcase_add_test(tc, test_fork_dontfork_wipeonfork);
	tcase_add_loop_test(tc, test_multi_children_see_original, 0, 2);
	tcase_add_loop_test(tc, test_seq_rep_carries_ref_ns, 0, 2);
	tcase_add_loop_test(tc, test_thp_advice, 0, 3);
	tcase_add_test(tc, test_hugetlb_restores);
	tcase_add_loop_test(tc, test_bad_options_exit_2, 0, (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, test_cli_numa_and_thp_alias);
	tcase_add_test(tc, test_cli_child_numa);
	tcase_add_test(tc, test_replay_gaps);
	tcase_add_test(tc, test_replay_size_from_trace);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(workloads_suite)
