/* The native projection model (cowbench/project.h): unit costs from rows, runtimes, bounds, errors. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include <cowbench/project.h>

#include "testutil.h"

#define MIB (1024 * 1024)

/* A timed, ok seq row of boot b: fork, break mode, elapsed over 256 written pages, break_ns. */
static struct cb_row unit_row(const char *boot, int fork, const char *brk, int64_t elapsed, int64_t break_ns)
{
	struct cb_row r;

	memset(&r, 0, sizeof(r));
	strcpy(r.status, "ok");
	strcpy(r.workload, "seq");
	strcpy(r.boot, boot);
	strcpy(r.break_mode, brk);
	strcpy(r.rep_kind, "timed");
	r.size_bytes = MIB;
	r.pages = r.touched = 256;
	r.fork = fork;
	r.elapsed_ns = elapsed;
	r.break_ns = break_ns;
	r.precopy = CB_NA;
	r.precopy_success = r.precopy_ns = r.wpcopy_count = r.cow_faults = CB_NA;
	r.memcpy_ns = 100;
	return r;
}

/* Units a, with write 10, fault 1000, populate 800 (900 on shared pages less 100 on private), copy 100 ns. */
static void units_rows(struct cb_row *rows, const char *boot)
{
	rows[0] = unit_row(boot, 0, "fault", 256 * 10, CB_NA);
	rows[1] = unit_row(boot, 1, "fault", 256 * 1000, CB_NA);
	rows[2] = unit_row(boot, 1, "fault", 256 * 1200, CB_NA); /* median of 1000, 1000, 1200 */
	rows[3] = unit_row(boot, 1, "", 256 * 1000, CB_NA);      /* a row from before --break: fault */
	rows[4] = unit_row(boot, 1, "populate", 256 * 950, 256 * 900);
	rows[5] = unit_row(boot, 0, "populate", 256 * 120, 256 * 100);
}

START_TEST(test_units_from_rows)
{
	struct cb_row rows[9];
	struct cb_units u;

	units_rows(rows, "A");
	rows[6] = unit_row("B", 1, "fault", 256 * 5000, CB_NA); /* another boot: left out */
	rows[7] = unit_row("A", 1, "fault", 256 * 9000, CB_NA);
	strcpy(rows[7].rep_kind, "evidence");                    /* its times carry probes: left out */
	rows[8] = unit_row("A", 1, "fault", 256 * 9000, CB_NA);
	rows[8].precopy = 2;                                     /* pre-copy on: not a unit */
	ck_assert_int_eq(cb_units_from_rows(rows, 9, "A", MIB, &u), 0);
	ck_assert_double_eq_tol(u.write_ns, 10, 1e-9);
	ck_assert_double_eq_tol(u.fault_ns, 1000, 1e-9);
	ck_assert_double_eq_tol(u.populate_ns, 800, 1e-9);
	ck_assert_double_eq_tol(u.copy_ns, 100, 1e-9);
	ck_assert_uint_eq(u.n_fault, 3);
	ck_assert(isnan(u.batch_ns)); /* nothing pre-copied in this boot */
	ck_assert_int_eq(cb_units_from_rows(rows, 9, "A", 2 * MIB, &u), -ENOENT); /* no row of that size */
	ck_assert_int_eq(cb_units_from_rows(rows, 9, "C", MIB, &u), -ENOENT);
}
END_TEST

START_TEST(test_batch_from_precopy_rows)
{
	struct cb_row rows[8];
	struct cb_units u;

	units_rows(rows, "A");
	rows[6] = unit_row("A", 1, "fault", 0, CB_NA);
	strcpy(rows[6].workload, "random");
	rows[6].precopy = 1, rows[6].precopy_success = 100, rows[6].precopy_ns = 30000;
	rows[7] = rows[6];
	rows[7].precopy_success = 300, rows[7].precopy_ns = 50000;
	ck_assert_int_eq(cb_units_from_rows(rows, 8, "A", MIB, &u), 0);
	ck_assert_double_eq_tol(u.batch_ns, 200, 1e-9); /* a ratio of sums: 80000 / 400 */
}
END_TEST

START_TEST(test_counts_and_model)
{
	struct cb_row a = unit_row("A", 1, "fault", 1000000, CB_NA), b = a, c = a;
	const struct cb_row *g[] = { &a, &b, &c };
	struct cb_units u = { .write_ns = 10, .fault_ns = 1000, .populate_ns = 800, .copy_ns = 100, .batch_ns = 400 };
	struct cb_counts k;

	a.wpcopy_count = 100, a.precopy_success = 150;
	b.wpcopy_count = CB_NA, b.cow_faults = 140, b.precopy_success = 110, b.elapsed_ns = 2000000; /* cow_faults stands in */
	strcpy(c.status, "child-killed:SIGKILL");                                                  /* left out */
	ck_assert_int_eq(cb_counts_from_rows(g, 3, &k), 0);
	ck_assert_uint_eq(k.reps, 2);
	/* An evidence rep gives its exact counts, never its (probed) runtime. */
	c = a;
	strcpy(c.rep_kind, "evidence");
	c.wpcopy_count = 130, c.precopy_success = 130, c.elapsed_ns = 90000000;
	ck_assert_int_eq(cb_counts_from_rows(g, 3, &k), 0);
	ck_assert_double_eq_tol(k.faults, 370.0 / 3, 1e-9);
	ck_assert_double_eq_tol(k.elapsed_ns, 1500000, 1e-9);
	strcpy(c.status, "child-killed:SIGKILL");
	ck_assert_int_eq(cb_counts_from_rows(g, 3, &k), 0);
	ck_assert_uint_eq(k.reps, 2);
	ck_assert_double_eq_tol(k.writes, 256, 1e-9);
	ck_assert_double_eq_tol(k.faults, 120, 1e-9);
	ck_assert_double_eq_tol(k.precopied, 130, 1e-9);
	ck_assert_double_eq_tol(k.elapsed_ns, 1500000, 1e-9);
	/* T = 256 * 10 + 120 * 990 + 130 * 400 */
	ck_assert_double_eq_tol(cb_project_ns(&u, &k, u.batch_ns), 2560 + 118800 + 52000, 1e-6);
	ck_assert_double_eq_tol(cb_project_error(&u, &k), (173360.0 - 1500000) / 1500000, 1e-12);
	ck_assert_int_eq(cb_counts_from_rows(g + 2, 1, &k), -ENOENT);
}
END_TEST

/*
 * The fixed term: rows that time their first write apart (first_ns) give the
 * steady units without it and the first write as its own unit; a one-write
 * cell is then priced at that first write alone, and a loop's faults are
 * capped at its writes (taskstats counts the whole child's COW copies).
 */
START_TEST(test_first_write_fixed_term)
{
	struct cb_row rows[4];
	struct cb_units u;
	struct cb_counts one = { .writes = 1, .faults = 2, .precopied = 0, .elapsed_ns = 60000, .reps = 5 };
	struct cb_counts many = { .writes = 256, .faults = 16, .precopied = 240, .elapsed_ns = 1, .reps = 5 };

	rows[0] = unit_row("A", 0, "fault", 10 + 255 * 10, CB_NA);
	rows[0].first_ns = 10; /* a private first write */
	rows[1] = unit_row("A", 1, "fault", 50000 + 255 * 1000, CB_NA);
	rows[1].first_ns = 50000;
	rows[2] = unit_row("A", 1, "fault", 70000 + 255 * 1000, CB_NA);
	rows[2].first_ns = 70000;
	rows[3] = unit_row("A", 1, "fault", 40000 + 255 * 1200, CB_NA);
	rows[3].first_ns = 40000;
	ck_assert_int_eq(cb_units_from_rows(rows, 4, "A", MIB, &u), 0);
	ck_assert_double_eq_tol(u.write_ns, 10, 1e-9);
	ck_assert_double_eq_tol(u.fault_ns, 1000, 1e-9); /* steady: the first write left out */
	ck_assert_double_eq_tol(u.first_ns, 50000, 1e-9); /* median of the fork=1 rows' first writes */
	ck_assert_uint_eq(u.n_first, 3);
	/* One write: the first write is the whole model, whatever the child faulted outside its loop. */
	ck_assert_double_eq_tol(cb_project_ns(&u, &one, 0), 50000, 1e-9);
	ck_assert_double_eq_tol(cb_project_error(&u, &one), (50000.0 - 60000) / 60000, 1e-12);
	/* Many: first + 255 writes + 15 further faults + the pre-copied pages. */
	ck_assert_double_eq_tol(cb_project_ns(&u, &many, 400), 50000 + 255 * 10 + 15 * 990 + 240 * 400, 1e-6);
	/* A fault row without first_ns (an older file mixed in): no fixed term, per-page units as before. */
	rows[3].first_ns = CB_NA;
	ck_assert_int_eq(cb_units_from_rows(rows, 4, "A", MIB, &u), 0);
	ck_assert(isnan(u.first_ns));
	ck_assert_double_eq_tol(cb_project_ns(&u, &one, 0), 10 + 1 * (u.fault_ns - 10), 1e-9); /* faults capped at 1 */
}
END_TEST

/* A fork=1 fault row of boot A whose first write took FIRST, then 255 steady 1000 ns faults, in CELL. */
static struct cb_row first_row(int64_t first, const char *cell)
{
	struct cb_row r = unit_row("A", 1, "fault", first + 255 * 1000, CB_NA);

	r.first_ns = first;
	snprintf(r.cell, sizeof(r.cell), "%s", cell);
	return r;
}

/* The fixed term of a cell comes from the unit rows run with its probes (they run just before the window). */
START_TEST(test_first_from_rows_with_the_same_probes)
{
	struct cb_row rows[5];
	double first;
	unsigned nf;

	rows[0] = unit_row("A", 0, "fault", 10 + 255 * 10, CB_NA);
	rows[0].first_ns = 10;
	rows[1] = first_row(40000, "workload=seq size=1M fork=1 probes=none");
	rows[2] = first_row(42000, "workload=seq size=1M fork=1 probes=none");
	rows[3] = first_row(64000, "workload=seq size=1M probes=taskstats precopy=0");
	rows[4] = first_row(60000, "kernel=k workload=seq size=1M probes=taskstats precopy=0");
	ck_assert_int_eq(cb_units_first_like(rows, 5, "A", MIB, "workload=single size=1M probes=taskstats precopy=2",
					     &first, &nf), 0);
	ck_assert_double_eq_tol(first, 62000, 1e-9);
	ck_assert_uint_eq(nf, 2);
	ck_assert_int_eq(cb_units_first_like(rows, 5, "A", MIB, "workload=single size=1M probes=none", &first, &nf), 0);
	ck_assert_double_eq_tol(first, 41000, 1e-9);
	/* "noprobes=none" is not the probes axis; no probes= at all is the default set, which no row ran. */
	ck_assert_int_eq(cb_units_first_like(rows, 5, "A", MIB, "workload=single noprobes=none", &first, &nf), -ENOENT);
	ck_assert(isnan(first));
	ck_assert_int_eq(cb_units_first_like(rows, 5, "B", MIB, "probes=none", &first, &nf), -ENOENT);
	/* A fault row of those probes without first_ns: no fixed term from them. */
	rows[2].first_ns = CB_NA;
	ck_assert_int_eq(cb_units_first_like(rows, 5, "A", MIB, "probes=none", &first, &nf), -ENOENT);
}
END_TEST

START_TEST(test_batch_bounds_and_guest_ratio)
{
	struct cb_units native = { .write_ns = 10, .fault_ns = 3000, .populate_ns = 2000, .copy_ns = 100 };
	struct cb_units guest = { .populate_ns = 20000, .batch_ns = 5000 };
	struct cb_range b;

	ck_assert_int_eq(cb_project_batch(&native, &guest, &b), 0);
	ck_assert_double_eq_tol(b.lo, 100, 1e-9);
	ck_assert_double_eq_tol(b.mid, 500, 1e-9); /* 2000 * 5000 / 20000 */
	ck_assert_double_eq_tol(b.hi, 2000, 1e-9);
	guest.batch_ns = 40000; /* dearer than populate in the guest: clamped to populate */
	ck_assert_int_eq(cb_project_batch(&native, &guest, &b), 0);
	ck_assert_double_eq_tol(b.mid, 2000, 1e-9);
	guest.batch_ns = 1; /* cheaper than a copy: clamped to the copy */
	ck_assert_int_eq(cb_project_batch(&native, &guest, &b), 0);
	ck_assert_double_eq_tol(b.mid, 100, 1e-9);
	guest.batch_ns = NAN; /* unknown: the populate path, the conservative end */
	ck_assert_int_eq(cb_project_batch(&native, &guest, &b), 0);
	ck_assert_double_eq_tol(b.mid, 2000, 1e-9);
	native.populate_ns = NAN;
	ck_assert_int_eq(cb_project_batch(&native, &guest, &b), -EINVAL);
}
END_TEST

START_TEST(test_change_against_off)
{
	struct cb_units native = { .write_ns = 10, .fault_ns = 3010, .populate_ns = 2000, .copy_ns = 100 };
	struct cb_units guest = { .populate_ns = 20000, .batch_ns = 10000 };
	/* Off: every page faults. Depth 1: half the pages fault, the other half are copied ahead. */
	struct cb_counts off = { .writes = 1000, .faults = 1000 }, mode = { .writes = 1000, .faults = 500, .precopied = 500 };
	struct cb_range ch, ns;

	ck_assert_int_eq(cb_project_change(&native, &guest, &mode, &off, &ch), 0);
	/* T(off) = 1000*10 + 1000*3000 = 3010000; T(mode, b) = 10000 + 1500000 + 500 b */
	ck_assert_double_eq_tol(ch.lo, (1510000.0 + 50000) / 3010000 - 1, 1e-12);
	ck_assert_double_eq_tol(ch.mid, (1510000.0 + 500000) / 3010000 - 1, 1e-12);
	ck_assert_double_eq_tol(ch.hi, (1510000.0 + 1000000) / 3010000 - 1, 1e-12);
	ck_assert(ch.lo <= ch.mid && ch.mid <= ch.hi);
	ck_assert_int_eq(cb_project_native(&native, &guest, &off, &ns), 0);
	ck_assert_double_eq_tol(ns.lo, ns.hi, 1e-9); /* nothing pre-copied: no bound to spread */
	/* The worst stall of a 16-page window: the fault, then 15 pages at the batch cost. */
	ck_assert_double_eq_tol(cb_project_stall_ns(&native, 1000, 16), 3000 + 15 * 1000, 1e-9);
	ck_assert(isnan(cb_project_stall_ns(&native, 1000, 0)));
}
END_TEST

START_TEST(test_hist_quantiles)
{
	const char *pages[] = { "1:900;16:90", "1:9;16:0;8:1", NULL, "x:1" }; /* NULL and malformed: nothing */
	const char *path[] = { "512:998;4096:1;inf:1" };
	const char *none[] = { "" };

	ck_assert_double_eq(cb_hist_text_quantile(pages, 4, 1), 16);
	ck_assert_double_eq(cb_hist_text_quantile(pages, 4, 0.5), 1);
	ck_assert_double_eq(cb_hist_text_quantile(pages, 4, 0.91), 8); /* 909 of 1000 below 8, 910 with it */
	ck_assert_double_eq(cb_hist_text_quantile(path, 1, 0.998), 512);
	ck_assert_double_eq(cb_hist_text_quantile(path, 1, 0.999), 4096);
	ck_assert(isinf(cb_hist_text_quantile(path, 1, 1)));
	ck_assert(isnan(cb_hist_text_quantile(none, 1, 1)));
}
END_TEST

static Suite *project_suite(void)
{
	Suite *s = suite_create("project");
	TCase *tc = tcase_create("model");

	tcase_add_test(tc, test_units_from_rows);
	tcase_add_test(tc, test_first_from_rows_with_the_same_probes);
	tcase_add_test(tc, test_batch_from_precopy_rows);
	tcase_add_test(tc, test_counts_and_model);
	tcase_add_test(tc, test_first_write_fixed_term);
	tcase_add_test(tc, test_batch_bounds_and_guest_ratio);
	tcase_add_test(tc, test_change_against_off);
	tcase_add_test(tc, test_hist_quantiles);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(project_suite)
