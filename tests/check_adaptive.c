/*
 * Adaptive repetitions against known answers: a fake measurement source of
 * known coefficient of variation drives the stopping rule, which must stop
 * on the target near the sample size theory predicts, with an interval that
 * is as tight as asked, and on its bounds when the target is out of reach.
 * Also the headline column of every workload and the noise readers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cowbench/adaptive.h>
#include <cowbench/clock.h>
#include <cowbench/compare.h>
#include <cowbench/noise.h>
#include <cowbench/report.h>
#include <cowbench/results.h>
#include <cowbench/repstats.h>
#include <cowbench/workload.h>

#include "testutil.h"

/* The fake source: normal values of a given mean and CV, each rep taking rep_ns on a fake clock. */
struct source {
	uint64_t st;
	double mean, cv;
	uint64_t now_ns, rep_ns;
};

static double uniform01(struct source *s)
{
	uint64_t z = (s->st += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

static double measure(struct source *s)
{
	double u1 = uniform01(s), u2 = uniform01(s);

	s->now_ns += s->rep_ns;
	return s->mean * (1 + s->cv * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2));
}

/* The loop the CLI runs: measure, then ask the rule. Returns the reps run. */
static size_t run_cell(const struct cb_adaptive *a, struct source *s, double *v, size_t cap, enum cb_stop *why)
{
	uint64_t start = s->now_ns;
	size_t n = 0;

	*why = CB_STOP_NO;
	while (n < cap && *why == CB_STOP_NO) {
		v[n] = measure(s);
		n++;
		*why = cb_adaptive_stop(a, v, n, n, s->now_ns - start);
	}
	return n;
}

START_TEST(test_stops_at_target_near_theory)
{
	/* CV 5 %, +-2 %: n = 1.96^2 * 0.05^2 / 0.02^2 = 24 for a mean; the Hodges-Lehmann interval needs pi/3 of that more. */
	struct cb_adaptive a = { .target = 0.02, .conf = 0.95, .min_reps = CB_ADAPTIVE_MIN_REPS, .max_reps = 1000 };
	size_t theory = cb_reps_needed(0.05, 0.02, 0.95), counts[400], covered = 0;
	double v[1000];

	ck_assert_uint_eq(theory, 25);
	for (int t = 0; t < 400; t++) {
		struct source s = { .st = 1000u + (uint64_t)t, .mean = 5000, .cv = 0.05, .rep_ns = 1 };
		struct cb_noise_verdict nv;
		struct cb_estimate e;
		enum cb_stop why;
		size_t n = run_cell(&a, &s, v, 1000, &why);

		ck_assert_int_eq(why, CB_STOP_TARGET);
		ck_assert_uint_ge(n, CB_ADAPTIVE_MIN_REPS);
		ck_assert_int_eq(cb_noise_judge(v, n, 0.02, 0.95, &nv), 0);
		ck_assert(nv.rel_half_width <= 0.02);
		/* One rep fewer was not enough: it stopped at the first n that met the target. */
		ck_assert_int_eq(cb_adaptive_stop(&a, v, n - 1, n - 1, 0), CB_STOP_NO);
		ck_assert_int_eq(cb_estimate(v, n, 0.95, &e), 0);
		covered += e.lo <= 5000 && 5000 <= e.hi;
		counts[t] = n;
	}
	/* The median stopping point is near theory (optional stopping stops a little early on lucky runs). */
	for (int i = 1; i < 400; i++)
		for (int j = i; j > 0 && counts[j - 1] > counts[j]; j--) {
			size_t x = counts[j];

			counts[j] = counts[j - 1];
			counts[j - 1] = x;
		}
	ck_assert_msg(counts[200] >= theory * 7 / 10 && counts[200] <= theory * 14 / 10,
		      "median stop %zu reps, theory %zu", counts[200], theory);
	/* Stopping on the data costs some coverage; it must stay near the nominal 95 %. */
	ck_assert_msg(covered >= 400 * 88 / 100, "interval covered the true mean in %zu of 400", covered);
}
END_TEST

/*
 * Ratios (matrix --baseline): the rounds both cells ran, compared with the
 * engine's ratio (as summarize --baseline prints it), so the rule stops near
 * the sample size theory gives for the two members' noise.
 */
static void ratio_source(struct source *s, double cv, double *num, double *den)
{
	s->mean = 4000;
	s->cv = cv;
	den[0] = measure(s);
	s->mean = 8000;
	num[0] = measure(s);
}

/* Sort counts[0..n) ascending and return the median. */
static size_t median_count(size_t *counts, size_t n)
{
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && counts[j - 1] > counts[j]; j--) {
			size_t x = counts[j];

			counts[j] = counts[j - 1];
			counts[j - 1] = x;
		}
	return counts[n / 2];
}

/* One cell against its baseline until the ratio's interval is within +-3 %; stalls: 1 rep in 15 held 15x. */
static size_t ratio_trial(uint64_t seed, bool stalls, bool *covers)
{
	struct source s = { .st = seed }, pick = { .st = seed ^ 0x5deece66dull };
	double num[400], den[400];
	int64_t round[400];
	size_t n = 0, pairs = 0;
	bool met = false;
	struct cb_change c;

	while (!met && n < 400) {
		struct cb_round_values a = { num, round, n + 1 }, b = { den, round, n + 1 };

		ratio_source(&s, 0.05, &num[n], &den[n]);
		if (stalls && uniform01(&pick) < 1.0 / 15)
			*(uniform01(&pick) < 0.5 ? &num[n] : &den[n]) *= 15;
		round[n] = (int64_t)n + 1;
		n++;
		met = cb_adaptive_ratio_met(&a, &b, 0.03, CB_ADAPTIVE_MIN_REPS, &pairs);
		ck_assert_uint_eq(pairs, n);
	}
	*covers = met && cb_estimate_change(den, n, num, n, 0.95, &c) == 0 && c.lo <= 2 && 2 <= c.hi &&
		  (c.est - c.lo) / c.est <= 0.03 && (c.hi - c.est) / c.est <= 0.03;
	return met ? n : SIZE_MAX;
}

START_TEST(test_ratio_stops_near_theory)
{
	/*
	 * Each member CV 5 %: a shift estimate's half-width is z s sqrt(2/n) over the
	 * efficiency 3/pi, so n = 2 (pi/3) 1.96^2 0.05^2 / 0.03^2 = 23 (cb_n_to_decide's rule).
	 */
	size_t theory = (size_t)ceil(2 * M_PI / 3 * 1.96 * 1.96 * 0.05 * 0.05 / (0.03 * 0.03)), counts[60], covered = 0;
	size_t median;

	for (int t = 0; t < 60; t++) {
		bool covers;

		counts[t] = ratio_trial(7000u + (uint64_t)t, false, &covers);
		ck_assert_msg(counts[t] != SIZE_MAX, "trial %d never met +-3 %% in 400 pairs", t);
		covered += covers;
	}
	median = median_count(counts, 60);
	ck_assert_msg(median >= theory * 6 / 10 && median <= theory * 15 / 10, "median stop %zu pairs, theory %zu",
		      median, theory);
	/* Stopping on the data costs some coverage; it must stay near the nominal 95 %. */
	ck_assert_msg(covered >= 60 * 85 / 100, "the interval covered the true ratio 2 in %zu of 60", covered);
}
END_TEST

/*
 * One rep in 15 stalled 15x (the host held the vCPU through a 6 us write), on
 * either side: the Hodges-Lehmann ratio, a median of pairwise ratios, barely
 * moves; the rule stops within a small factor of the stall-free theory and
 * still covers the true 2.
 */
START_TEST(test_ratio_shrugs_off_stalls)
{
	size_t clean[20], stalled[20], covered = 0;

	for (int t = 0; t < 20; t++) {
		bool covers, ignored;

		stalled[t] = ratio_trial(9000u + (uint64_t)t, true, &covers);
		clean[t] = ratio_trial(9000u + (uint64_t)t, false, &ignored);
		covered += covers;
	}
	ck_assert_msg(median_count(stalled, 20) <= 2 * median_count(clean, 20), "stalls: median stop %zu against %zu",
		      median_count(stalled, 20), median_count(clean, 20));
	ck_assert_msg(covered >= 20 * 85 / 100, "stalls: covered the true ratio 2 in %zu of 20", covered);
}
END_TEST

START_TEST(test_ratio_pairs_by_round_id)
{
	double num[8] = { 20, 22, 18, 20, 21, 19, 20, 20 }, den[8], rev[8];
	int64_t round[8], rround[8], dup[8];
	struct cb_round_values a = { num, round, 8 }, b = { den, round, 8 }, r = { rev, rround, 8 }, d = { den, dup, 8 };
	size_t pairs = 99;

	for (int i = 0; i < 8; i++) {
		den[i] = num[i] / 2;
		round[i] = 10 + 3 * i;
		rev[7 - i] = den[i];
		rround[7 - i] = round[i];
		dup[i] = i < 7 ? round[i] : round[0];
	}
	/* num is 18..22 and den half of it: the pairwise ratios spread 1.6..2.4, so +-25 % is met, +-1 % not. */
	ck_assert(cb_adaptive_ratio_met(&a, &b, 0.25, 5, &pairs));
	ck_assert_uint_eq(pairs, 8);
	ck_assert(!cb_adaptive_ratio_met(&a, &b, 0.01, 5, &pairs));
	ck_assert(cb_adaptive_ratio_met(&a, &r, 0.25, 5, &pairs)); /* the baseline's rows in another order */
	ck_assert_uint_eq(pairs, 8);
	ck_assert(!cb_adaptive_ratio_met(&a, &d, 0.5, 5, &pairs)); /* a round id twice: rows of two runs */
	ck_assert_uint_eq(pairs, 0);
	ck_assert(!cb_adaptive_ratio_met(&a, &b, 0.5, 9, &pairs)); /* fewer pairs than the least reps */
	ck_assert_uint_eq(pairs, 8);
	b.n = 3;
	ck_assert(!cb_adaptive_ratio_met(&a, &b, 0.5, 3, &pairs) || pairs == 3);
	ck_assert_uint_eq(pairs, 3);
	a.n = 0;
	ck_assert(!cb_adaptive_ratio_met(&a, &b, 0.5, 3, &pairs));
	ck_assert_uint_eq(pairs, 0);
}
END_TEST

START_TEST(test_never_before_min_reps)
{
	struct cb_adaptive a = { .target = 0.05, .conf = 0.95, .min_reps = CB_ADAPTIVE_MIN_REPS };
	struct source s = { .st = 7, .mean = 100, .cv = 0, .rep_ns = 1 };
	double v[64];
	enum cb_stop why;

	/* Identical values meet any target at once, but two or three agreeing values prove nothing. */
	ck_assert_uint_eq(run_cell(&a, &s, v, 64, &why), CB_ADAPTIVE_MIN_REPS);
	ck_assert_int_eq(why, CB_STOP_TARGET);
	a.min_reps = 1; /* clamped to 3: an interval needs a spread */
	ck_assert_uint_eq(run_cell(&a, &s, v, 64, &why), 3);
}
END_TEST

START_TEST(test_rep_bound)
{
	struct cb_adaptive a = { .target = 0.01, .conf = 0.95, .min_reps = 5, .max_reps = 10 };
	struct source s = { .st = 11, .mean = 100, .cv = 0.30, .rep_ns = 1 };
	double v[64];
	enum cb_stop why;

	ck_assert_uint_eq(run_cell(&a, &s, v, 64, &why), 10);
	ck_assert_int_eq(why, CB_STOP_MAX_REPS);
	ck_assert_str_eq(cb_stop_name(why), "max-reps");
	/* Failed reps count toward the bound: 4 good values out of 10 reps. */
	ck_assert_int_eq(cb_adaptive_stop(&a, v, 4, 10, 0), CB_STOP_MAX_REPS);
}
END_TEST

START_TEST(test_time_bound)
{
	struct cb_adaptive a = { .target = 0.01, .conf = 0.95, .min_reps = 3, .max_ns = 3500 };
	struct source s = { .st = 12, .mean = 100, .cv = 0.30, .rep_ns = 1000 };
	double v[64];
	enum cb_stop why;

	ck_assert_uint_eq(run_cell(&a, &s, v, 64, &why), 4);
	ck_assert_int_eq(why, CB_STOP_MAX_TIME);
	/* The least number of reps holds even past the time bound. */
	a.min_reps = 6;
	ck_assert_uint_eq(run_cell(&a, &s, v, 64, &why), 6);
	ck_assert_int_eq(why, CB_STOP_MAX_TIME);
	ck_assert_str_eq(cb_stop_name(why), "max-time");
}
END_TEST

START_TEST(test_target_wins_over_bound)
{
	struct cb_adaptive a = { .target = 0.05, .conf = 0.95, .min_reps = 5, .max_reps = 5, .max_ns = 1 };
	double v[5] = { 100, 101, 99, 100, 100 };

	ck_assert_int_eq(cb_adaptive_stop(&a, v, 5, 5, 10), CB_STOP_TARGET);
	ck_assert_str_eq(cb_stop_name(CB_STOP_TARGET), "target");
	ck_assert_str_eq(cb_stop_name(CB_STOP_NO), "");
}
END_TEST

START_TEST(test_headlines)
{
	for (size_t i = 0; i < cb_workload_count(); i++) {
		const struct cb_workload *w = cb_workload_at(i);
		const struct cb_column *c = cb_column_find(cb_workload_headline(w));

		ck_assert_msg(c && c->type != CB_COL_STR, "%s: headline %s", w->name, cb_workload_headline(w));
	}
	ck_assert_str_eq(cb_workload_headline(cb_workload_find("seq")), "lat_p50_ns");
	ck_assert_str_eq(cb_workload_headline(cb_workload_find("fork")), "fork_ns");
	ck_assert_str_eq(cb_workload_headline(cb_workload_find("snapshot")), "slowdown");
}
END_TEST

START_TEST(test_headline_of_a_row)
{
	struct cb_row row;
	double v;

	memset(&row, 0, sizeof(row));
	row.lat_p50_ns = NAN;
	ck_assert(!cb_row_headline(&row, cb_workload_find("seq"), &v)); /* a failed rep has none */
	row.lat_p50_ns = 3500.5;
	ck_assert(cb_row_headline(&row, cb_workload_find("seq"), &v));
	ck_assert(v == 3500.5);
}
END_TEST

START_TEST(test_proc_stat_reader)
{
	struct cb_sys_sample a, b;
	struct cb_row row;
	uint64_t busy[128];

	ck_assert_int_eq(cb_sys_sample_read(CB_FIXTURE_DIR "/proc_stat_2cpu.txt", &a), 0);
	ck_assert(a.ok);
	ck_assert_uint_eq(a.steal_ticks, 12468);
	ck_assert_int_eq(a.procs_running, 7);
	b = a;
	b.steal_ticks += 3;
	b.procs_running = 2;
	memset(&row, 0, sizeof(row));
	cb_sys_sample_fill_row(&a, &b, &row);
	ck_assert_int_eq(row.steal_ns, 3 * (1000000000 / sysconf(_SC_CLK_TCK)));
	ck_assert_int_eq(row.runq, 7);
	ck_assert_int_eq(cb_cpu_busy_ticks(CB_FIXTURE_DIR "/proc_stat_2cpu.txt", busy, 4), 2);
	ck_assert_uint_eq(busy[0], 300000u + 6000 + 120000 + 0 + 1500 + 6000);
	ck_assert_uint_eq(busy[2], UINT64_MAX);
	/* Just booted: the all-CPU line's user ticks (95) are not a CPU number. */
	ck_assert_int_eq(cb_cpu_busy_ticks(CB_FIXTURE_DIR "/proc_stat_fresh.txt", busy, 128), 2);
	ck_assert_uint_eq(busy[1], 45u + 15 + 0 + 0);
	ck_assert_uint_eq(busy[95], UINT64_MAX);
	/* This machine's own /proc/stat reads too. */
	ck_assert_int_eq(cb_sys_sample_read(NULL, &a), 0);
	ck_assert_int_ge(a.procs_running, 1);
}
END_TEST

/* A rep of workload WL on a quiet machine: ok, every noise column flat. */
static void quiet_row(struct cb_row *row, const char *wl, int rep)
{
	memset(row, 0, sizeof(*row));
	snprintf(row->workload, sizeof(row->workload), "%s", wl);
	snprintf(row->cell, sizeof(row->cell), "workload=%s", wl);
	snprintf(row->status, sizeof(row->status), "ok");
	row->rep = rep;
	row->runq = 2;
	row->writer_cpu = 1;
}

/* n reps of one seq cell of many writes each, rep i + 1 with per-write p50 p50[i], every noise column quiet. */
static void seq_p50_rows(struct cb_row *rows, int n, const double *p50)
{
	for (int i = 0; i < n; i++) {
		quiet_row(&rows[i], "seq", i + 1);
		rows[i].touched = 16384;
		rows[i].lat_p50_ns = p50[i];
	}
}

/* cb_noise_explain on rows of one cell: 1 cause, 0 none (buf says which). */
static int explain(const struct cb_row *rows, size_t n, const char *metric, char *buf, size_t len)
{
	struct cb_row_group *g;
	size_t ng;
	int found;

	ck_assert_int_eq(cb_group_rows(rows, n, &g, &ng), 0);
	ck_assert_uint_eq(ng, 1);
	found = cb_noise_explain(&g[0], g, ng, metric, buf, len);
	cb_row_groups_free(g, ng);
	return found;
}

static void spin_ms(long ms)
{
	uint64_t end = cb_monotonic_ns() + (uint64_t)ms * 1000000u;

	while (cb_monotonic_ns() < end)
		;
}

/*
 * Two busy processes pinned to one CPU for 300 ms of wall time: each
 * waits for the other about half of it, and run_delay must show it.
 */
START_TEST(test_run_delay_sees_a_co_runner)
{
	cpu_set_t one;
	int64_t before, after;
	pid_t pid;
	int cpu = sched_getcpu();

	before = cb_thread_run_delay_ns();
	if (before < 0 || cpu < 0) {
		fprintf(stderr, "skip: no /proc/thread-self/schedstat here\n");
		return;
	}
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	ck_assert_int_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		spin_ms(2000); /* outlives the parent's spin; killed below */
		_exit(0);
	}
	before = cb_thread_run_delay_ns();
	spin_ms(300);
	after = cb_thread_run_delay_ns();
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ck_assert_int_ge(after, before);
	ck_assert_msg(after - before >= 50 * 1000000LL, "waited only %lld ns for the CPU with a co-runner on it",
		      (long long)(after - before));
}
END_TEST

/* Two reps slowed by a co-runner: their wait for a CPU is the stated cause. */
START_TEST(test_wait_for_a_cpu_is_a_cause)
{
	struct cb_row rows[8];
	char buf[256];

	for (int i = 0; i < 8; i++) {
		bool slow = i == 2 || i == 5;

		quiet_row(&rows[i], "seq", i + 1);
		rows[i].elapsed_ns = slow ? 9000000 : 5000000 + 10000 * (i % 3);
		rows[i].run_delay_ns = slow ? 4000000 : 20000;
	}
	ck_assert_int_eq(explain(rows, 8, "elapsed_ns", buf, sizeof(buf)), 1);
	ck_assert_msg(strstr(buf, "the 2 outlying slow reps had 200.0x the wait for a CPU of the 6 others "
				  "(median 4 ms vs 0.02 ms run_delay_ns)"), "%s", buf);
}
END_TEST

/* One write per rep (the single workload): its p50 is one fault, and summarize says so. */
START_TEST(test_one_write_per_rep_is_a_cause)
{
	static const double p50[8] = { 380, 510, 400, 300, 450, 350, 420, 330 };
	struct cb_row rows[8];
	char buf[256];

	for (int i = 0; i < 8; i++) {
		quiet_row(&rows[i], "single", i + 1);
		rows[i].touched = 1;
		rows[i].lat_p50_ns = p50[i];
		rows[i].elapsed_ns = 2 * p50[i];
	}
	ck_assert_int_eq(explain(rows, 8, "lat_p50_ns", buf, sizeof(buf)), 1);
	ck_assert_msg(strstr(buf, "each rep timed 1 write: lat_p50_ns comes from 1 sample"), "%s", buf);
	ck_assert_int_eq(explain(rows, 8, "elapsed_ns", buf, sizeof(buf)), 1);
	ck_assert_msg(strstr(buf, "each rep timed 1 write: elapsed_ns comes from 1 sample"), "%s", buf);
	/* Not for a count, and not for many writes per rep. */
	ck_assert_int_eq(explain(rows, 8, "touched", buf, sizeof(buf)), 0);
	for (int i = 0; i < 8; i++)
		rows[i].touched = 4096;
	ck_assert_int_eq(explain(rows, 8, "lat_p50_ns", buf, sizeof(buf)), 0);
}
END_TEST

/* A p50 at the clock's resolution: 20.0 or 29.9 ns, nothing else (seq 64M without fork, measured). */
START_TEST(test_clock_ticks_are_a_cause)
{
	static const double p50[10] = { 20, 20, 29.9, 20, 20, 29.9, 20, 20, 29.9, 20 };
	struct cb_row rows[10];
	char buf[256];

	seq_p50_rows(rows, 10, p50);
	ck_assert_int_eq(explain(rows, 10, "lat_p50_ns", buf, sizeof(buf)), 1);
	ck_assert_msg(strstr(buf, "lat_p50_ns took only 2 distinct values over 10 reps (20 to 29.9)"), "%s", buf);
	/* Four levels are a spread. */
	rows[1].lat_p50_ns = 40;
	rows[4].lat_p50_ns = 50;
	ck_assert_int_eq(explain(rows, 10, "lat_p50_ns", buf, sizeof(buf)), 0);
}
END_TEST

START_TEST(test_clock_ticks_with_strays)
{
	struct cb_row rows[60];
	double p50[60];
	char buf[512];

	/* 57 reps on two ticks and one on a third, 2 far off: 58 of 60 on 3 values, 3 % stray. */
	for (int i = 0; i < 60; i++)
		p50[i] = i % 5 == 0 ? 29.9 : 20;
	seq_p50_rows(rows, 60, p50);
	rows[7].lat_p50_ns = 40.1;
	rows[11].lat_p50_ns = 130.4;
	rows[23].lat_p50_ns = 150.1;
	ck_assert_int_eq(explain(rows, 60, "lat_p50_ns", buf, sizeof(buf)), 1);
	ck_assert_msg(strstr(buf, "lat_p50_ns took one of 3 values (20 to 40.1) in 58 of 60 reps") &&
		      strstr(buf, "the 2 others stand alone (130.4 to 150.1)"), "%s", buf);
	/* 4 strays (6.7 %) are more than a few: no longer the clock's doing alone. */
	rows[31].lat_p50_ns = 90;
	rows[44].lat_p50_ns = 70;
	ck_assert_int_eq(explain(rows, 60, "lat_p50_ns", buf, sizeof(buf)), 0);
}
END_TEST

START_TEST(test_summarize_explains_noise)
{
	const char *argv[] = { "cowbench", "summarize", CB_FIXTURE_DIR "/noisy_cells.csv", "--metric=lat_p50_ns",
			       "--quiet", NULL };
	const char *csv[] = { "cowbench", "summarize", CB_FIXTURE_DIR "/noisy_cells.csv", "--metric=lat_p50_ns",
			      "--quiet", "--format=csv", NULL };
	struct cli_result r = tu_run_cli(argv);

	ck_assert_msg(r.status == 0, "%s", r.err);
	/* Cell 16M: reps 4 and 8 are slow and had 400 ms of steal against 10 ms. */
	ck_assert_msg(strstr(r.out, "size=16M lat_p50_ns (CV 50.2 %): the 2 outlying slow reps had 40.0x the steal "
			     "time of the 8 others (median 400 ms vs 10 ms steal_ns)"), "%s", r.out);
	/* Cell 64M: noisy, but every noise column is constant: no cause is made up. */
	ck_assert_msg(strstr(r.out, "size=64M lat_p50_ns (CV 26.7 %): no stated cause"), "%s", r.out);
	ck_assert_msg(strstr(r.out, "2 noisy (CV > 10 %), marked !; 1 with a stated cause, 1 without"), "%s", r.out);
	tu_free(&r);
	r = tu_run_cli(csv);
	ck_assert_int_eq(r.status, 0);
	ck_assert(strstr(r.out, ",reps_needed,noise_cause\n"));
	ck_assert(strstr(r.out, ",the 2 outlying slow reps had 40.0x the steal time"));
	tu_free(&r);
}
END_TEST

/* Rows of one cell whose metric drifts with the rep number, every noise column flat. */
START_TEST(test_drift_is_a_cause)
{
	struct cb_row rows[10];
	char buf[256];

	for (int i = 0; i < 10; i++) {
		quiet_row(&rows[i], "seq", i + 1);
		rows[i].lat_p50_ns = 3000 + 250.0 * i;
	}
	ck_assert_int_eq(explain(rows, 10, "lat_p50_ns", buf, sizeof(buf)), 1);
	ck_assert_msg(strstr(buf, "drift: the metric rose with the rep number (Spearman rho 1.00)"), "%s", buf);
}
END_TEST

/* 40 reps of seq, 11 of them slow (3700 against 2800 ns): at reps 12-22 when bunched, else every 4th rep. */
static void slow_stretch_rows(struct cb_row *rows, bool bunched)
{
	double p50[40];

	for (int i = 0; i < 40; i++) {
		int rep = i + 1;
		bool slow = bunched ? rep >= 12 && rep <= 22 : rep % 4 == 1 || rep == 40;

		p50[i] = (slow ? 3700 : 2800) + 5.0 * ((i * 37) % 7); /* jitter: no clock ticks */
	}
	seq_p50_rows(rows, 40, p50);
}

/* Slow reps that come in one stretch of time are explained by it; the same reps scattered are not. */
START_TEST(test_stretch_is_a_cause)
{
	struct cb_row rows[40];
	char buf[256];

	slow_stretch_rows(rows, true);
	ck_assert_int_eq(explain(rows, 40, "lat_p50_ns", buf, sizeof(buf)), 1);
	ck_assert_msg(strstr(buf, "the 11 odd reps bunched in time (reps 12-22): 3 runs along the rep order where "
				  "chance gives 16.9"), "%s", buf);
	/* The rows' order in the file is not the reps' order. */
	for (int i = 0; i < 20; i++) {
		struct cb_row t = rows[i];

		rows[i] = rows[39 - i];
		rows[39 - i] = t;
	}
	ck_assert_int_eq(explain(rows, 40, "lat_p50_ns", buf, sizeof(buf)), 1);
	ck_assert_msg(strstr(buf, "(reps 12-22)"), "%s", buf);
	slow_stretch_rows(rows, false);
	ck_assert_int_eq(explain(rows, 40, "lat_p50_ns", buf, sizeof(buf)), 0);
	ck_assert_msg(strstr(buf, "no stated cause") && strstr(buf, "nor did they bunch in time"), "%s", buf);
}
END_TEST

/* Without odd reps, a metric that stays above or below its median for stretches moved in stretches. */
START_TEST(test_slow_swings_are_a_cause)
{
	struct cb_row rows[40];
	double p50[40];
	char buf[256];

	/* Two slow swings of +-12 %, no gap between values, no drift over the whole run. */
	for (int i = 0; i < 40; i++)
		p50[i] = 3000 + 360 * sin(2 * M_PI * i / 20.0) + 3.0 * ((i * 37) % 7);
	seq_p50_rows(rows, 40, p50);
	ck_assert_int_eq(explain(rows, 40, "lat_p50_ns", buf, sizeof(buf)), 1);
	/* The cut between the modes (4 runs) tells the swings apart better than the median (5 runs). */
	ck_assert_msg(strstr(buf, "the metric moved in stretches of consecutive reps: its reps below and above 2953 (the "
				  "cut between its two modes) came in 4 runs") && strstr(buf, "two splits tried"),
		      "%s", buf);
	/* The same values in a scrambled rep order: nothing lasted, nothing is claimed. */
	for (int i = 0; i < 40; i++)
		rows[i].rep = (i * 17) % 40 + 1;
	ck_assert_int_eq(explain(rows, 40, "lat_p50_ns", buf, sizeof(buf)), 0);
	ck_assert_msg(strstr(buf, "nor did it move in stretches"), "%s", buf);
}
END_TEST

/*
 * Two modes, as a host that slows a whole rep gives: a tight fast one
 * (2.75-2.93 us) in three stretches of reps and a broad slow one
 * (3.19-3.73 us) whose values swing from rep to rep, so that the median,
 * which lies inside the slow mode, splits the reps into 14 runs (p 0.01).
 */
static void two_mode_rows(struct cb_row *rows, bool scrambled)
{
	static const int fast_from[3] = { 0, 15, 27 }, fast_len[3] = { 5, 4, 5 };
	double p50[40];

	for (int i = 0; i < 40; i++)
		p50[i] = (i % 2 ? 3470 : 3150) + 20.0 * ((i * 7) % 15);
	for (int k = 0; k < 3; k++)
		for (int j = 0; j < fast_len[k]; j++)
			p50[fast_from[k] + j] = 2750 + 12.0 * ((fast_from[k] + j) % 16);
	seq_p50_rows(rows, 40, p50);
	for (int i = 0; scrambled && i < 40; i++)
		rows[i].rep = (i * 17) % 40 + 1;
}

/* A bimodal metric whose modes came in stretches: found by the cut between the modes, not by the median. */
START_TEST(test_stretches_of_two_modes)
{
	struct cb_row rows[40];
	char buf[512];

	two_mode_rows(rows, false);
	ck_assert_int_eq(explain(rows, 40, "lat_p50_ns", buf, sizeof(buf)), 1);
	ck_assert_msg(strstr(buf, "the metric moved in stretches of consecutive reps: its reps below and above ") &&
			      strstr(buf, "(the cut between its two modes) came in 6 runs"),
		      "%s", buf);
	two_mode_rows(rows, true);
	ck_assert_int_eq(explain(rows, 40, "lat_p50_ns", buf, sizeof(buf)), 0);
	ck_assert_msg(strstr(buf, "nor did it move in stretches"), "%s", buf);
}
END_TEST

/* 30 snapshot reps: slowdown = writer_ns / baseline_ns, one of them steady, the other spread 20 %. */
static void quotient_rows(struct cb_row *rows, bool spread_in_baseline)
{
	for (int i = 0; i < 30; i++) {
		double spread = 1 + 0.2 * (((i * 11) % 30) - 15) / 15.0, steady = 1 + 0.01 * (i % 3);

		quiet_row(&rows[i], "snapshot", i + 1);
		rows[i].baseline_ns = (int64_t)(1e8 * (spread_in_baseline ? spread : steady));
		rows[i].writer_ns = (int64_t)(1.7e8 * (spread_in_baseline ? steady : spread));
		rows[i].slowdown = (double)rows[i].writer_ns / (double)rows[i].baseline_ns;
	}
}

/* A quotient's spread is placed in the part it came from. */
START_TEST(test_quotient_part_is_named)
{
	struct cb_row rows[30];
	char buf[512];

	quotient_rows(rows, true);
	ck_assert_int_eq(explain(rows, 30, "slowdown", buf, sizeof(buf)), 1);
	ck_assert_msg(strstr(buf, "slowdown is writer_ns / baseline_ns, and it fell as baseline_ns rose") &&
			      strstr(buf, "the spread is in baseline_ns, the same writers' time without a snapshot"),
		      "%s", buf);
	quotient_rows(rows, false);
	ck_assert_int_eq(explain(rows, 30, "slowdown", buf, sizeof(buf)), 1);
	ck_assert_msg(strstr(buf, "and it rose as writer_ns rose") && strstr(buf, "the spread is in writer_ns"), "%s", buf);
	/* writer_ns itself is no quotient: nothing to place. */
	ck_assert_int_eq(explain(rows, 30, "writer_ns", buf, sizeof(buf)), 0);
}
END_TEST

/*
 * A fork cell and its twin, 40 rounds each, rep i in round i + 1. The
 * machine's speed in round i scales the fork cell's p50 and the twin's
 * elapsed time alike; its order along the rounds is scrambled, so neither
 * cell drifts or moves in stretches. twin_round: the round each twin rep
 * ran in (the fork cell's rep i ran in round i + 1).
 */
static void shared_round_rows(struct cb_row *rows, const int *twin_round, const char *twin_boot)
{
	for (int i = 0; i < 40; i++) {
		double machine = 1 + 0.3 * ((i * 17) % 40) / 40.0, own = 1 + 0.02 * ((i * 7) % 5 - 2);
		struct cb_row *a = &rows[i], *b = &rows[40 + i];

		seq_p50_rows(a, 1, (double[]){ 3000 * machine * own });
		seq_p50_rows(b, 1, (double[]){ 40 });
		a->rep = b->rep = i + 1;
		a->fork = 1;
		snprintf(a->cell, sizeof(a->cell), "workload=seq fork=1");
		snprintf(b->cell, sizeof(b->cell), "workload=seq fork=0");
		snprintf(a->boot, sizeof(a->boot), "a");
		snprintf(b->boot, sizeof(b->boot), "%s", twin_boot);
		a->round = i + 1;
		b->round = twin_round ? twin_round[i] : i + 1;
		b->elapsed_ns = (int64_t)(200000 * machine / own);
	}
}

/* cb_noise_explain on the fork=1 cell of rows, beside its fork=0 twin. */
static int explain_fork_cell(const struct cb_row *rows, size_t n, char *buf, size_t len)
{
	struct cb_row_group *g;
	size_t ng, at = SIZE_MAX;
	int found;

	ck_assert_int_eq(cb_group_rows(rows, n, &g, &ng), 0);
	ck_assert_uint_eq(ng, 2);
	for (size_t i = 0; i < ng; i++)
		if (strstr(g[i].key, "fork=1"))
			at = i;
	ck_assert_uint_ne(at, SIZE_MAX);
	found = cb_noise_explain(&g[at], g, ng, "lat_p50_ns", buf, len);
	cb_row_groups_free(g, ng);
	return found;
}

/* A cell that rose and fell with the cell run in the same rounds: the machine's; not when the rounds differ. */
START_TEST(test_same_rounds_are_a_cause)
{
	struct cb_row rows[80];
	int shuffled[40];
	char buf[512];

	shared_round_rows(rows, NULL, "a");
	ck_assert_int_eq(explain_fork_cell(rows, 80, buf, sizeof(buf)), 1);
	ck_assert_msg(strstr(buf, "it rose and fell with the elapsed_ns of ") && strstr(buf, "fork=0 in the same rounds") &&
			      strstr(buf, "over 40 rounds") && strstr(buf, "Bonferroni over 2 tests"),
		      "%s", buf);
	/* The same values, but the twin's reps ran in other rounds: nothing shared. */
	for (int i = 0; i < 40; i++)
		shuffled[i] = (i * 13) % 40 + 1;
	shared_round_rows(rows, shuffled, "a");
	ck_assert_int_eq(explain_fork_cell(rows, 80, buf, sizeof(buf)), 0);
	ck_assert_msg(strstr(buf, "no stated cause") && strstr(buf, "the cells of the same rounds"), "%s", buf);
	/* Round numbers of another boot are other rounds. */
	shared_round_rows(rows, NULL, "b");
	ck_assert_int_eq(explain_fork_cell(rows, 80, buf, sizeof(buf)), 0);
}
END_TEST

/*
 * 30 reps, 3 of them slow. slow_ref: the slow reps' reference probe took
 * about 1.4x the others'; else theirs lies among the others' (or, with
 * one slow rep only, one probe cannot be told from chance).
 */
static void slow_machine_rows(struct cb_row *rows, int slow_ref, int nslow)
{
	for (int i = 0; i < 30; i++) {
		bool slow = i == 4 || (nslow > 1 && (i == 13 || i == 22));

		quiet_row(&rows[i], "fork", i + 1);
		rows[i].fork_ns = slow ? 7500000 : 5000000 + 10000 * (i % 7);
		rows[i].ref_ns = 1000000 + 2000 * ((i * 11) % 30);
		if (slow && slow_ref)
			rows[i].ref_ns = 1400000 + 1000 * i;
	}
}

START_TEST(test_slow_machine_is_a_cause)
{
	struct cb_row rows[30];
	char buf[320];

	slow_machine_rows(rows, 1, 3);
	ck_assert_int_eq(explain(rows, 30, "fork_ns", buf, sizeof(buf)), 1);
	/* Exact Mann-Whitney: the 3 slowest of 30 probes, p = 2 / C(30, 3). */
	ck_assert_msg(strstr(buf, "the machine itself ran slower: the 3 outlying slow reps' reference probe took "
				  "1.37x as long as the 27 others' (median 1.41 vs 1.03 ms ref_ns, Mann-Whitney p "
				  "0.00049)"), "%s", buf);
	/* Slow reps whose probe ran like the others', or one slow rep alone: no cause is made up. */
	slow_machine_rows(rows, 0, 3);
	ck_assert_int_eq(explain(rows, 30, "fork_ns", buf, sizeof(buf)), 0);
	ck_assert_msg(strstr(buf, "no stated cause: steal, context switches, migrations, run queue, wait for a CPU, "
				  "machine speed, CPU, rep order and the cells of the same rounds did not co-vary with "
				  "the odd reps"), "%s", buf);
	/* 1.4x, but from one rep: the smallest p of 1 against 29 is 2/30. */
	slow_machine_rows(rows, 1, 1);
	ck_assert_int_eq(explain(rows, 30, "fork_ns", buf, sizeof(buf)), 0);
	/* A probe that never ran (older files: empty) is no evidence either way. */
	slow_machine_rows(rows, 1, 3);
	rows[7].ref_ns = CB_NA;
	ck_assert_int_eq(explain(rows, 30, "fork_ns", buf, sizeof(buf)), 0);
}
END_TEST

/*
 * No odd reps, a metric that rises and falls with the probe across all 20
 * (rho 0.97), in an order unrelated to the rep number; then the same metric
 * with a probe in another order (rho -0.04): no cause.
 */
START_TEST(test_machine_speed_correlates)
{
	struct cb_row rows[20];
	char buf[320];

	for (int i = 0; i < 20; i++) {
		int speed = (i * 7) % 20;

		quiet_row(&rows[i], "random", i + 1);
		rows[i].elapsed_ns = 5000000 + 20000 * speed;
		rows[i].ref_ns = 1000000 + 1000 * speed + (i % 5 == 0 ? 3000 : 0);
	}
	ck_assert_int_eq(explain(rows, 20, "elapsed_ns", buf, sizeof(buf)), 1);
	ck_assert_msg(strstr(buf, "the machine's speed: the metric rose as the reference probe around each rep took "
				  "longer (ref_ns, Spearman rho 0.97 over 20 reps)"), "%s", buf);
	for (int i = 0; i < 20; i++)
		rows[i].ref_ns = 1000000 + 1000 * ((i * 9 + 3) % 20);
	ck_assert_int_eq(explain(rows, 20, "elapsed_ns", buf, sizeof(buf)), 0);
}
END_TEST

/*
 * The probe faults its buffer in once per process and never again: not on
 * a later call, not after a fork (the buffer is not shared with the child,
 * so the parent's pages stay its own), and a forked child gets a buffer of
 * its own. The calls' own time is not asserted.
 */
static int64_t last_probe_ns;

/*
 * After a fork every page of the caller is write-protected: write the
 * stack below this frame and the result variable first, so the window
 * counts the probe's own faults only.
 */
__attribute__((noinline)) static void touch_stack_and_result(void)
{
	volatile char pad[64 * 1024];

	for (size_t i = 0; i < sizeof(pad); i += 512)
		pad[i] = 0;
	last_probe_ns = 0;
}

static long minflt_of(void (*fn)(void))
{
	struct rusage r0, r1;

	touch_stack_and_result();
	getrusage(RUSAGE_SELF, &r0);
	getrusage(RUSAGE_SELF, &r1); /* both structs written once: their stack page is faulted in */
	getrusage(RUSAGE_SELF, &r0);
	fn();
	getrusage(RUSAGE_SELF, &r1);
	return r1.ru_minflt - r0.ru_minflt;
}

/*
 * AddressSanitizer faults in its own shadow memory around the calls (a few
 * pages); a probe that faulted would take one per page of its buffer.
 */
#ifdef __SANITIZE_ADDRESS__
#define PROBE_FAULT_SLACK 32
#else
#define PROBE_FAULT_SLACK 0
#endif

static void probe_once(void)
{
	last_probe_ns = cb_ref_probe_ns(); /* no assertion inside the counted window */
}

START_TEST(test_ref_probe_never_faults)
{
	int ws;
	pid_t pid;

	probe_once();
	ck_assert_int_gt(last_probe_ns, 0);
	ck_assert_int_le(minflt_of(probe_once), PROBE_FAULT_SLACK);
	ck_assert_int_gt(last_probe_ns, 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* A fresh process maps and faults a buffer of its own, then faults no more. */
		_exit(cb_ref_probe_ns() > 0 && minflt_of(probe_once) <= PROBE_FAULT_SLACK && last_probe_ns > 0 ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	ck_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	ck_assert_int_le(minflt_of(probe_once), PROBE_FAULT_SLACK);
	ck_assert_int_gt(last_probe_ns, 0);
}
END_TEST

static Suite *adaptive_suite(void)
{
	Suite *s = suite_create("adaptive");
	TCase *tc = tcase_create("rule");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_stops_at_target_near_theory);
	tcase_add_test(tc, test_never_before_min_reps);
	tcase_add_test(tc, test_ratio_stops_near_theory);
	tcase_add_test(tc, test_ratio_shrugs_off_stalls);
	tcase_add_test(tc, test_ratio_pairs_by_round_id);
	tcase_add_test(tc, test_rep_bound);
	tcase_add_test(tc, test_time_bound);
	tcase_add_test(tc, test_target_wins_over_bound);
	tcase_add_test(tc, test_headlines);
	tcase_add_test(tc, test_headline_of_a_row);
	tcase_add_test(tc, test_proc_stat_reader);
	tcase_add_test(tc, test_summarize_explains_noise);
	tcase_add_test(tc, test_drift_is_a_cause);
	tcase_add_test(tc, test_stretch_is_a_cause);
	tcase_add_test(tc, test_slow_swings_are_a_cause);
	tcase_add_test(tc, test_same_rounds_are_a_cause);
	tcase_add_test(tc, test_stretches_of_two_modes);
	tcase_add_test(tc, test_quotient_part_is_named);
	tcase_add_test(tc, test_run_delay_sees_a_co_runner);
	tcase_add_test(tc, test_wait_for_a_cpu_is_a_cause);
	tcase_add_test(tc, test_one_write_per_rep_is_a_cause);
	tcase_add_test(tc, test_clock_ticks_are_a_cause);
	tcase_add_test(tc, test_clock_ticks_with_strays);
	tcase_add_test(tc, test_slow_machine_is_a_cause);
	tcase_add_test(tc, test_machine_speed_correlates);
	tcase_add_test(tc, test_ref_probe_never_faults);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(adaptive_suite)
