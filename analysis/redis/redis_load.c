/*
 * redis_load: SET traffic against a Redis server while it takes BGSAVE snapshots, for the
 * kernel study's Redis section (analysis/redis/redis-study.sh runs it inside the QEMU guests).
 *
 * N client threads, one blocking hiredis connection each, one SET in flight per connection
 * (no pipelining: every request's latency is the stall a client sees, and a fork or a COW fault
 * storm shows up in it). Keys: "random" overwrites uniformly drawn keys of the populated key
 * space; "seq" overwrites them in key order, each connection walking its own contiguous slice
 * (the append/log-style writer whose pages pre-copy can anticipate); "gauss" draws keys from a
 * normal distribution centred on the key space (memtier_benchmark's --key-pattern=G:G, the load
 * Redis's maintainers test with; the same default standard deviation, a sixth of the key space,
 * and the same redraw of keys that fall outside it). A control connection triggers each BGSAVE
 * and polls INFO persistence until the save is reaped.
 *
 * --cycle-sets DURING,AFTER makes each save a counted save cycle instead (kernel/tests/redis-mech.sh):
 * BGSAVE, DURING SETs started with it, wait until the save is reaped, AFTER more SETs; per cycle
 * one row in --cycles-out with the server's minor faults (its write traps), its COW copies
 * (taskstats), the /proc/vmstat events of the patched kernel over the whole cycle and Redis's
 * fork time and COW size. Counts, not seconds, fix the write mix, so a mode that slows the
 * emulated guest does not change how many SETs fall inside the save.
 *
 * Per request it records the start time (CLOCK_MONOTONIC, ns since boot, the same clock as the
 * save's marks) and the latency; per save the marks of the save window and of the probe reads,
 * Redis's own latest_fork_usec / rdb_last_cow_size / current_cow_peak, and the kernel's counts:
 * the parent's COW copies (taskstats wpcopy_count of the server's thread group, both kernels),
 * /proc/cow_stats deltas over the window (patched kernel: system-wide faults, pre-copied pages,
 * judged windows), and the parent's Private_Clean from smaps_rollup before the fork and after
 * the save (kept raw; the series maps pre-copied pages dirty, so it does not tell pages copied
 * ahead for nothing: analysis/redis/redis-report.py says so).
 *
 * It is a tool of its own rather than a cowbench workload: the workload contract runs a writer in
 * cowbench's own process and forks it; here the process that forks is redis-server, and the
 * measurement is its clients' view, so the harness's fork/rep loop does not apply.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include <cowbench/cowstats.h>
#include <cowbench/smaps.h>
#include <cowbench/sysctl.h>
#include <cowbench/taskstats.h>

#define MAX_CONNS 64
#define MAX_SETS 8
#define MAX_VALUE 65536
#define POLL_NS 10000000LL /* INFO persistence every 10 ms while a save runs */
#define NA INT64_MIN

enum pattern { PAT_RANDOM, PAT_SEQ, PAT_GAUSS };

struct config {
	const char *socket, *label, *requests_path, *saves_path, *cycles_path;
	enum pattern pattern;
	double sigma; /* gauss: standard deviation as a fraction of the key space */
	bool sigma_set;
	long conns, keys, value_size, saves, round;
	long during_sets, after_sets; /* --cycle-sets; 0,0: the timed saves */
	double before_s, after_s, save_timeout_s, timeout_s;
	const char *sets[MAX_SETS];
	int nsets;
	char **command; /* --saves 0 -- COMMAND: run it while the settings are held */
};

struct request { int64_t t_ns, lat_ns; };

/* Nearest-rank quantiles of the latencies of one class of requests. */
struct lat_stats { int64_t n, p50, p99, p999, max; };

struct client {
	pthread_t thread;
	const struct config *cfg;
	int id;
	struct request *req;
	size_t n, cap;
	int error;
	uint64_t rng;  /* the key stream goes on from phase to phase of a save cycle */
	long next;     /* seq: the next key of this connection's slice */
	long quota;    /* SETs to make before returning; 0: until stop_clients */
	double spare;  /* gauss: the second normal deviate of a Box-Muller pair, if have_spare */
	bool have_spare;
};

/* What one save measured; NA where the kernel or Redis does not say. */
struct save {
	int64_t t_bgsave, t_forked, t_end, pre0, pre1, post0, post1;
	int64_t fork_usec, last_cow_size, cow_peak, parent_wpcopy;
	int64_t cow_faults, precopy_success, judged_pages, judged_written;
	int64_t clean_pre_kb, clean_post_kb;
	struct lat_stats in, out; /* requests inside this save's window / outside every window */
};

static atomic_bool stop_clients;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_ns(int64_t ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: redis_load --socket PATH --saves-out FILE [--requests FILE] [options]\n"
		"  --socket PATH     the server's unix socket\n"
		"  --label NAME      the mode's name in the output (letters, digits, -_.; default run)\n"
		"  --pattern P       random (uniform keys), seq (key order, a slice per connection)\n"
		"                    or gauss (normal around the middle key, redrawn outside the key space)\n"
		"  --sigma F         gauss: standard deviation as a fraction of the key space (0.001..10;\n"
		"                    default 1/6, memtier_benchmark's --key-pattern=G:G)\n"
		"  --conns N         client connections, one SET in flight each (1..64, default 4)\n"
		"  --keys N          key space key:0 .. key:N-1 (as DEBUG POPULATE N key; default 100000)\n"
		"  --value-size B    bytes per value (1..65536, default 256)\n"
		"  --saves N         BGSAVEs to trigger (0..1000, default 1; 0: only apply --set)\n"
		"  --before SEC      load before each save (default 1)\n"
		"  --after SEC       load after the last save (default 1)\n"
		"  --round N         a number carried into every row (the study's round; default 0)\n"
		"  --set LIST        hold sysctls while it runs: NAME=VALUE[,NAME=VALUE...], e.g.\n"
		"                    vm.cow_precopy=1,vm.cow_precopy_depth=16 (repeatable); only those\n"
		"                    cowbench changes, through its settings journal, once the server\n"
		"                    answers; put back at exit (the journal's last owner restores)\n"
		"  --save-timeout S  a BGSAVE not done after S seconds is an error (default 600)\n"
		"  --timeout S       connecting, and each reply, may take S seconds (default 30)\n"
		"  with --saves 0: -- COMMAND [ARGS] runs COMMAND while the --set values are held\n"
		"                    (without --socket: no server needed; stop signals go to COMMAND)\n"
		"  --saves-out FILE  per-save rows are appended here (CSV), with each save's latency\n"
		"                    quantiles inside its window and the run's outside every window\n"
		"  --cycle-sets D,A  each save is a counted cycle instead: BGSAVE, D SETs, wait until the\n"
		"                    save is reaped, A SETs (0..100000000 each, D+A > 0; no --before/--after)\n"
		"  --cycles-out FILE with --cycle-sets (and instead of --saves-out): per-cycle rows (CSV)\n"
		"  --requests FILE   also every request (start, latency) is appended here (CSV)\n");
}

static int bad(const char *what, const char *value)
{
	fprintf(stderr, "redis_load: invalid %s: '%s'\n", what, value);
	return -1;
}

static int parse_long(const char *s, long lo, long hi, const char *what, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return bad(what, s);
	*out = v;
	return 0;
}

static int parse_seconds(const char *s, const char *what, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0 && v <= 3600))
		return bad(what, s);
	*out = v;
	return 0;
}

static int parse_sigma(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0.001 && v <= 10))
		return bad("--sigma (0.001 to 10)", s);
	*out = v;
	return 0;
}

/* D,A: two counts of SETs, at least one of them non-zero. */
static int parse_cycle_sets(const char *s, long *during, long *after)
{
	char buf[64], *comma;

	if (strlen(s) >= sizeof(buf) || !(comma = strchr(strcpy(buf, s), ',')))
		return bad("--cycle-sets (want DURING,AFTER)", s);
	*comma = 0;
	if (parse_long(buf, 0, 100000000L, "--cycle-sets DURING", during) < 0 ||
	    parse_long(comma + 1, 0, 100000000L, "--cycle-sets AFTER", after) < 0)
		return -1;
	return *during + *after > 0 ? 0 : bad("--cycle-sets (both 0)", s);
}

static bool is_name(const char *s, const char *extra)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr(extra, *s)))
			return false;
	return true;
}

/* vm.cow_precopy -> /proc/sys/vm/cow_precopy */
static const char *sysctl_path(const char *name, char *path, size_t len)
{
	snprintf(path, len, "/proc/sys/%s", name);
	for (size_t i = strlen("/proc/sys/"); path[i]; i++)
		if (path[i] == '.')
			path[i] = '/';
	return path;
}

/* NAME=VALUE: a sysctl the settings journal knows (cb_sysctl_known) and a decimal integer. */
static int check_one_set(const char *s, size_t len)
{
	char item[160], path[192], *eq, *end;
	long v;

	if (len >= sizeof(item))
		return bad("--set item (too long)", s);
	memcpy(item, s, len);
	item[len] = 0;
	eq = strchr(item, '=');
	if (!eq || eq == item)
		return bad("--set item (want NAME=VALUE)", item);
	*eq = 0;
	if (!is_name(item, "._") || strstr(item, "..") || item[0] == '.')
		return bad("--set sysctl name", item);
	errno = 0;
	v = strtol(eq + 1, &end, 10);
	(void)v;
	if (errno || end == eq + 1 || *end)
		return bad("--set value", eq + 1);
	if (!cb_sysctl_known(sysctl_path(item, path, sizeof(path))))
		return bad("--set sysctl (not one cowbench changes)", item);
	return 0;
}

/* A comma-separated list of NAME=VALUE (the mode table's one field). */
static int check_set(const char *s)
{
	for (;;) {
		const char *comma = strchr(s, ',');
		size_t len = comma ? (size_t)(comma - s) : strlen(s);

		if (check_one_set(s, len) < 0)
			return -1;
		if (!comma)
			return 0;
		s = comma + 1;
	}
}

static int parse_args(int argc, char **argv, struct config *c)
{
	static const struct option opts[] = {
		{ "socket", required_argument, 0, 's' }, { "label", required_argument, 0, 'l' },
		{ "pattern", required_argument, 0, 'p' }, { "conns", required_argument, 0, 'c' },
		{ "keys", required_argument, 0, 'k' }, { "value-size", required_argument, 0, 'v' },
		{ "saves", required_argument, 0, 'n' }, { "before", required_argument, 0, 'b' },
		{ "after", required_argument, 0, 'a' }, { "round", required_argument, 0, 'r' },
		{ "set", required_argument, 0, 'S' }, { "requests", required_argument, 0, 'R' },
		{ "saves-out", required_argument, 0, 'O' }, { "help", no_argument, 0, 'h' },
		{ "save-timeout", required_argument, 0, 'T' }, { "timeout", required_argument, 0, 't' },
		{ "sigma", required_argument, 0, 'g' }, { "cycle-sets", required_argument, 0, 'C' },
		{ "cycles-out", required_argument, 0, 'Y' }, { 0, 0, 0, 0 },
	};
	int o, rc = 0;
	bool timed = false; /* --before or --after given */

	*c = (struct config){ .label = "run", .conns = 4, .keys = 100000, .value_size = 256, .saves = 1,
			      .before_s = 1, .after_s = 1, .save_timeout_s = 600,
			      .timeout_s = 30, .sigma = 1.0 / 6 };
	opterr = 0;
	while (rc == 0 && (o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 's': c->socket = optarg; break;
		case 'l':
			c->label = optarg;
			rc = is_name(optarg, "-_.") && strlen(optarg) < 64 ? 0 : bad("--label", optarg);
			break;
		case 'p':
			if (!strcmp(optarg, "random"))
				c->pattern = PAT_RANDOM;
			else if (!strcmp(optarg, "seq"))
				c->pattern = PAT_SEQ;
			else if (!strcmp(optarg, "gauss"))
				c->pattern = PAT_GAUSS;
			else
				rc = bad("--pattern (random, seq or gauss)", optarg);
			break;
		case 'g':
			rc = parse_sigma(optarg, &c->sigma);
			c->sigma_set = true;
			break;
		case 'C': rc = parse_cycle_sets(optarg, &c->during_sets, &c->after_sets); break;
		case 'Y': c->cycles_path = optarg; break;
		case 'c': rc = parse_long(optarg, 1, MAX_CONNS, "--conns", &c->conns); break;
		case 'k': rc = parse_long(optarg, 1, 1000000000L, "--keys", &c->keys); break;
		case 'v': rc = parse_long(optarg, 1, MAX_VALUE, "--value-size", &c->value_size); break;
		case 'n': rc = parse_long(optarg, 0, 1000, "--saves", &c->saves); break;
		case 'r': rc = parse_long(optarg, 0, 1000000, "--round", &c->round); break;
		case 'b': rc = parse_seconds(optarg, "--before", &c->before_s), timed = true; break;
		case 'a': rc = parse_seconds(optarg, "--after", &c->after_s), timed = true; break;
		case 'T':
			rc = parse_seconds(optarg, "--save-timeout", &c->save_timeout_s);
			if (rc == 0 && c->save_timeout_s <= 0)
				rc = bad("--save-timeout (more than 0)", optarg);
			break;
		case 't':
			rc = parse_seconds(optarg, "--timeout", &c->timeout_s);
			if (rc == 0 && (c->timeout_s < 0.001 || c->timeout_s > 86400))
				rc = bad("--timeout (0.001 to 86400 s)", optarg);
			break;
		case 'S':
			if (c->nsets == MAX_SETS)
				rc = bad("--set (at most 8)", optarg);
			else if ((rc = check_set(optarg)) == 0)
				c->sets[c->nsets++] = optarg;
			break;
		case 'R': c->requests_path = optarg; break;
		case 'O': c->saves_path = optarg; break;
		case 'h': usage(stdout); exit(0);
		default:
			fprintf(stderr, "redis_load: unknown or incomplete option: '%s'\n", argv[optind - 1]);
			rc = -1;
		}
	}
	if (rc == 0 && optind < argc && optind > 1 && !strcmp(argv[optind - 1], "--") && c->saves == 0)
		c->command = argv + optind;
	else if (rc == 0 && optind < argc)
		rc = bad("argument (a COMMAND goes after --, with --saves 0)", argv[optind]);
	if (rc == 0 && c->sigma_set && c->pattern != PAT_GAUSS)
	{
		fprintf(stderr, "redis_load: --sigma goes only with --pattern gauss\n");
		rc = -1;
	}
	if (rc == 0 && c->during_sets + c->after_sets > 0) { /* the counted save cycles */
		if (timed || c->saves_path || c->requests_path || c->command || !c->cycles_path || !c->socket ||
		    c->saves == 0) {
			fprintf(stderr, "redis_load: --cycle-sets needs --socket, --cycles-out and --saves N > 0, "
					"and takes no --before, --after, --saves-out, --requests or COMMAND\n");
			rc = -1;
		}
	} else if (rc == 0 && c->cycles_path) {
		fprintf(stderr, "redis_load: --cycles-out needs --cycle-sets\n");
		rc = -1;
	} else if (rc == 0 && !c->command && (!c->socket || !c->saves_path)) {
		fprintf(stderr, "redis_load: --socket and --saves-out are required (or --saves 0 -- COMMAND)\n");
		rc = -1;
	}
	return rc;
}

/* Each item of a checked list held through the settings journal (put back by cb_sysctl_restore_all). */
static int apply_set(const char *s)
{
	while (*s) {
		const char *eq = strchr(s, '='), *comma = strchr(s, ',');
		char name[160], path[192];
		int err;

		snprintf(name, sizeof(name), "%.*s", (int)(eq - s), s);
		if ((err = cb_sysctl_override(sysctl_path(name, path, sizeof(path)), strtol(eq + 1, NULL, 10))) < 0) {
			fprintf(stderr, "redis_load: cannot set %s: %s\n", name,
				err == -EBUSY ? "another cowbench holds it at another value" : strerror(-err));
			return -1;
		}
		s = comma ? comma + 1 : eq + strlen(eq);
	}
	return 0;
}

/* A stop signal puts the settings back before dying of it (the journal's restore is async-signal-safe). */
static volatile sig_atomic_t command_pid; /* COMMAND while it runs: a stop signal is passed on to it */

static void on_stop(int sig)
{
	if (command_pid > 0) { /* it ends, then main puts the settings back */
		kill((pid_t)command_pid, sig);
		return;
	}
	cb_sysctl_restore_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* COMMAND with the settings held: its exit status (128+N for a signal), 1 if it cannot run. */
static int run_command(char **argv)
{
	pid_t pid = fork();
	int ws;

	if (pid < 0)
		return 1;
	if (pid == 0) {
		signal(SIGPIPE, SIG_DFL);
		execvp(argv[0], argv);
		fprintf(stderr, "redis_load: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	command_pid = pid;
	while (waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR) {
			command_pid = 0;
			return 1;
		}
	command_pid = 0;
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

/* A server that stalls longer than --timeout on a connect or a reply is gone for our purposes. */
static redisContext *connect_server(const char *socket, double timeout_s)
{
	const struct timeval tv = { (time_t)timeout_s, (suseconds_t)((timeout_s - (double)(time_t)timeout_s) * 1e6) };
	redisContext *ctx = redisConnectUnixWithTimeout(socket, tv);

	if (ctx && !ctx->err && redisSetTimeout(ctx, tv) != REDIS_OK)
		ctx->err = REDIS_ERR_IO;
	if (!ctx || ctx->err) {
		fprintf(stderr, "redis_load: cannot connect to %s: %s\n", socket, ctx ? ctx->errstr : "no memory");
		if (ctx)
			redisFree(ctx);
		return NULL;
	}
	return ctx;
}

/* An integer field "name:value" of an INFO reply, or NA. */
static int64_t info_field(const char *info, const char *name)
{
	size_t n = strlen(name);
	const char *p = info;

	while ((p = strstr(p, name)) != NULL) {
		if ((p == info || p[-1] == '\n') && p[n] == ':')
			return strtoll(p + n + 1, NULL, 10);
		p += n;
	}
	return NA;
}

static int64_t info_get(redisContext *ctl, const char *section, const char *name)
{
	redisReply *r = redisCommand(ctl, "INFO %s", section);
	int64_t v = NA;

	if (r && r->type == REDIS_REPLY_STRING)
		v = info_field(r->str, name);
	if (r)
		freeReplyObject(r);
	return v;
}

static int record(struct client *cl, int64_t t, int64_t lat)
{
	if (cl->n == cl->cap) {
		size_t cap = cl->cap ? 2 * cl->cap : 65536;
		struct request *r = realloc(cl->req, cap * sizeof(*r));

		if (!r)
			return -1;
		cl->req = r;
		cl->cap = cap;
	}
	cl->req[cl->n++] = (struct request){ t, lat };
	return 0;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A uniform double in (0, 1): 53 random bits, never 0 (log() below). */
static double uniform01(uint64_t *s)
{
	return ((double)(xorshift(s) >> 11) + 0.5) / 9007199254740992.0;
}

/* A standard normal deviate (Box-Muller; the pair's second one is kept for the next call). */
static double normal(struct client *cl)
{
	double r, a;

	if (cl->have_spare) {
		cl->have_spare = false;
		return cl->spare;
	}
	r = sqrt(-2 * log(uniform01(&cl->rng)));
	a = 2 * M_PI * uniform01(&cl->rng);
	cl->spare = r * sin(a);
	cl->have_spare = true;
	return r * cos(a);
}

static long next_key(struct client *cl)
{
	const struct config *c = cl->cfg;
	long raw = c->keys / c->conns, slice = raw > 0 ? raw : 1;
	double mid = (double)c->keys / 2, sd = c->sigma * (double)c->keys, k;

	switch (c->pattern) {
	case PAT_SEQ:
		return (cl->id * raw + cl->next++ % slice) % c->keys;
	case PAT_GAUSS: /* as memtier_benchmark: a key outside the key space is drawn again */
		do
			k = floor(mid + sd * normal(cl));
		while (k < 0 || k >= (double)c->keys);
		return (long)k;
	default:
		return (long)(xorshift(&cl->rng) % (uint64_t)c->keys);
	}
}

static void *client_main(void *arg)
{
	struct client *cl = arg;
	const struct config *c = cl->cfg;
	redisContext *ctx = connect_server(c->socket, c->timeout_s);
	char *value = malloc((size_t)c->value_size);
	long done = 0;

	if (!ctx || !value) {
		cl->error = 1;
		goto out;
	}
	memset(value, 'a' + cl->id % 26, (size_t)c->value_size);
	while (cl->quota ? done++ < cl->quota : !atomic_load(&stop_clients)) {
		long key = next_key(cl);
		int64_t t0, t1;
		redisReply *r;

		value[0] = (char)('0' + key % 10); /* a new value each time, same size */
		t0 = now_ns();
		r = redisCommand(ctx, "SET key:%ld %b", key, value, (size_t)c->value_size);
		t1 = now_ns();
		if (!r || r->type == REDIS_REPLY_ERROR) {
			fprintf(stderr, "redis_load: SET failed: %s\n", r ? r->str : ctx->errstr);
			cl->error = 1;
			if (r)
				freeReplyObject(r);
			break;
		}
		freeReplyObject(r);
		if (!cl->quota && record(cl, t0, t1 - t0) < 0) { /* a counted phase keeps no latencies */
			cl->error = 1;
			break;
		}
	}
out:
	free(value);
	if (ctx)
		redisFree(ctx);
	return NULL;
}

static int64_t cowstat(const struct cb_cowstats *a, const struct cb_cowstats *b, bool ok, const char *key)
{
	uint64_t d;

	return ok && cb_cowstats_delta(a, b, key, &d) ? (int64_t)d : NA;
}

static int64_t parent_wpcopy(struct cb_taskstats_sock *ts, pid_t pid)
{
	struct cb_taskstats t;

	return ts && cb_taskstats_query(ts, pid, true, &t) == 0 ? (int64_t)t.wpcopy_count : NA;
}

static int64_t private_clean_kb(pid_t pid)
{
	struct cb_smaps s;

	return cb_smaps_read(pid, &s) == 0 ? s.private_clean_kb : NA;
}

/* Counts read around the save window; the probe times are kept so their stalls can be set apart. */
struct probe {
	int64_t t0, t1, wpcopy, clean_kb;
	struct cb_cowstats cs;
	bool cs_ok;
};

static void read_probe(struct probe *p, struct cb_taskstats_sock *ts, pid_t pid)
{
	p->t0 = now_ns();
	p->clean_kb = private_clean_kb(pid);
	p->wpcopy = parent_wpcopy(ts, pid);
	p->cs_ok = cb_cowstats_read(NULL, &p->cs) == 0;
	p->t1 = now_ns();
}

static int one_save(redisContext *ctl, struct cb_taskstats_sock *ts, pid_t pid, struct save *s, double save_timeout_s)
{
	struct probe pre, post;
	redisReply *r;
	int64_t peak = NA, inprog;

	read_probe(&pre, ts, pid);
	s->t_bgsave = now_ns();
	r = redisCommand(ctl, "BGSAVE");
	s->t_forked = now_ns();
	if (!r || r->type == REDIS_REPLY_ERROR) {
		fprintf(stderr, "redis_load: BGSAVE failed: %s\n", r ? r->str : ctl->errstr);
		if (r)
			freeReplyObject(r);
		return -1;
	}
	freeReplyObject(r);
	do { /* until the parent has reaped the child (serverCron, every 1/hz s) */
		int64_t p;

		sleep_ns(POLL_NS);
		inprog = info_get(ctl, "persistence", "rdb_bgsave_in_progress");
		p = info_get(ctl, "persistence", "current_cow_peak");
		if (p != NA && (peak == NA || p > peak))
			peak = p;
		if (inprog == 1 && now_ns() - s->t_bgsave > (int64_t)(save_timeout_s * 1e9)) {
			fprintf(stderr, "redis_load: the BGSAVE did not finish within %g s\n", save_timeout_s);
			return -1;
		}
	} while (inprog == 1);
	s->t_end = now_ns();
	if (inprog == NA) {
		fprintf(stderr, "redis_load: INFO persistence has no rdb_bgsave_in_progress\n");
		return -1;
	}
	read_probe(&post, ts, pid);
	s->pre0 = pre.t0, s->pre1 = pre.t1, s->post0 = post.t0, s->post1 = post.t1;
	s->fork_usec = info_get(ctl, "stats", "latest_fork_usec");
	s->last_cow_size = info_get(ctl, "persistence", "rdb_last_cow_size");
	s->cow_peak = peak;
	s->parent_wpcopy = pre.wpcopy != NA && post.wpcopy != NA ? post.wpcopy - pre.wpcopy : NA;
	s->cow_faults = cowstat(&pre.cs, &post.cs, pre.cs_ok && post.cs_ok, "faults");
	s->precopy_success = cowstat(&pre.cs, &post.cs, pre.cs_ok && post.cs_ok, "precopy_success");
	s->judged_pages = cowstat(&pre.cs, &post.cs, pre.cs_ok && post.cs_ok, "precopy_judged_pages");
	s->judged_written = cowstat(&pre.cs, &post.cs, pre.cs_ok && post.cs_ok, "precopy_judged_written");
	s->clean_pre_kb = pre.clean_kb;
	s->clean_post_kb = post.clean_kb;
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int64_t nearest_rank(const int64_t *sorted, int64_t n, double q)
{
	int64_t k = (int64_t)ceil(q * (double)n) - 1;

	return sorted[k < 0 ? 0 : k >= n ? n - 1 : k];
}

static void lat_summary(int64_t *lat, int64_t n, struct lat_stats *st)
{
	*st = (struct lat_stats){ .n = n, .p50 = NA, .p99 = NA, .p999 = NA, .max = NA };
	if (n == 0)
		return;
	qsort(lat, (size_t)n, sizeof(*lat), cmp_i64);
	st->p50 = nearest_rank(lat, n, 0.5);
	st->p99 = nearest_rank(lat, n, 0.99);
	st->p999 = nearest_rank(lat, n, 0.999);
	st->max = lat[n - 1];
}

static bool overlaps(const struct request *r, int64_t a, int64_t b) { return r->t_ns <= b && r->t_ns + r->lat_ns >= a; }

/* -1: overlaps a probe read (set apart), i >= 0: inside save i's window, n: outside every window. */
static long request_class(const struct request *r, const struct save *sv, long n)
{
	for (long i = 0; i < n; i++)
		if (overlaps(r, sv[i].t_bgsave, sv[i].t_end))
			return i;
	for (long i = 0; i < n; i++)
		if (overlaps(r, sv[i].pre0, sv[i].pre1) || overlaps(r, sv[i].post0, sv[i].post1))
			return -1;
	return n;
}

/* Per save: the latencies inside its window; for all: those outside every window and probe read. */
static int latency_stats(const struct config *c, const struct client *cl, struct save *sv)
{
	size_t total = 0;
	int64_t *buf;
	struct lat_stats out;

	for (long k = 0; k < c->conns; k++)
		total += cl[k].n;
	if (!(buf = malloc((total ? total : 1) * sizeof(*buf))))
		return -1;
	for (long i = 0; i <= c->saves; i++) {
		int64_t n = 0;

		for (long k = 0; k < c->conns; k++)
			for (size_t j = 0; j < cl[k].n; j++)
				if (request_class(&cl[k].req[j], sv, c->saves) == i)
					buf[n++] = cl[k].req[j].lat_ns;
		if (i < c->saves)
			lat_summary(buf, n, &sv[i].in);
		else
			lat_summary(buf, n, &out);
	}
	for (long i = 0; i < c->saves; i++)
		sv[i].out = out;
	free(buf);
	return 0;
}

/* Append to path, with the header when the file is new or empty. */
static FILE *open_rows(const char *path, const char *header)
{
	FILE *f = fopen(path, "a");

	if (!f) {
		fprintf(stderr, "redis_load: cannot open %s: %s\n", path, strerror(errno));
		return NULL;
	}
	if (ftell(f) == 0)
		fprintf(f, "%s\n", header);
	return f;
}

static void put(FILE *f, int64_t v)
{
	if (v == NA)
		fputs(",", f);
	else
		fprintf(f, ",%" PRId64, v);
}

static const char *pattern_name(enum pattern p) { return p == PAT_SEQ ? "seq" : p == PAT_GAUSS ? "gauss" : "random"; }

static void sets_text(const struct config *c, char *buf, size_t n)
{
	size_t used = 0;

	buf[0] = 0;
	for (int i = 0; i < c->nsets && used < n; i++)
		used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ";" : "", c->sets[i]);
	for (char *p = buf; *p; p++) /* one CSV field: items joined by ';' */
		if (*p == ',')
			*p = ';';
}

#define SAVES_HEADER                                                                                     \
	"label,pattern,round,save,sysctls,conns,keys,value_size,server_pid,t_bgsave_ns,t_forked_ns,"      \
	"t_end_ns,probe_pre_start_ns,probe_pre_end_ns,probe_post_start_ns,probe_post_end_ns,"              \
	"latest_fork_usec,rdb_last_cow_size,current_cow_peak,parent_wpcopy,cow_faults,precopy_success,"   \
	"precopy_judged_pages,precopy_judged_written,private_clean_pre_kb,private_clean_post_kb,"         \
	"in_requests,in_p50_ns,in_p99_ns,in_p999_ns,in_max_ns,out_requests,out_p50_ns,out_p99_ns,"         \
	"out_p999_ns,out_max_ns"

static int write_saves(const struct config *c, pid_t pid, const struct save *sv, long n)
{
	FILE *f = open_rows(c->saves_path, SAVES_HEADER);
	char sets[512];

	if (!f)
		return -1;
	sets_text(c, sets, sizeof(sets));
	for (long i = 0; i < n; i++) {
		const struct save *s = &sv[i];

		fprintf(f, "%s,%s,%ld,%ld,%s,%ld,%ld,%ld,%d", c->label, pattern_name(c->pattern), c->round, i,
			sets, c->conns, c->keys, c->value_size, (int)pid);
		int64_t v[] = { s->t_bgsave, s->t_forked, s->t_end, s->pre0, s->pre1, s->post0, s->post1,
				s->fork_usec, s->last_cow_size, s->cow_peak, s->parent_wpcopy, s->cow_faults,
				s->precopy_success, s->judged_pages, s->judged_written, s->clean_pre_kb,
				s->clean_post_kb, s->in.n, s->in.p50, s->in.p99, s->in.p999, s->in.max,
				s->out.n, s->out.p50, s->out.p99, s->out.p999, s->out.max };
		for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++)
			put(f, v[k]);
		fputc('\n', f);
	}
	return fclose(f) == 0 ? 0 : -1;
}

static int write_requests(const struct config *c, const struct client *cl)
{
	FILE *f;

	if (!c->requests_path)
		return 0;
	if (!(f = open_rows(c->requests_path, "label,pattern,round,conn,t_ns,lat_ns")))
		return -1;
	for (long k = 0; k < c->conns; k++)
		for (size_t i = 0; i < cl[k].n; i++)
			fprintf(f, "%s,%s,%ld,%ld,%" PRId64 ",%" PRId64 "\n", c->label, pattern_name(c->pattern),
				c->round, k, cl[k].req[i].t_ns, cl[k].req[i].lat_ns);
	return fclose(f) == 0 ? 0 : -1;
}

static uint64_t client_seed(const struct config *c, long k)
{
	return 0x9e3779b97f4a7c15ULL * (uint64_t)(k + 1) + (uint64_t)c->round;
}

static int run(const struct config *c, struct client *cl, struct save *sv, pid_t pid, redisContext *ctl,
	       struct cb_taskstats_sock *ts)
{
	int rc = 0;

	for (long k = 0; k < c->conns; k++) {
		cl[k] = (struct client){ .cfg = c, .id = (int)k, .rng = client_seed(c, k) };
		if (pthread_create(&cl[k].thread, NULL, client_main, &cl[k]) != 0) {
			fprintf(stderr, "redis_load: cannot start client %ld\n", k);
			atomic_store(&stop_clients, true);
			for (long j = 0; j < k; j++)
				pthread_join(cl[j].thread, NULL);
			return -1;
		}
	}
	for (long i = 0; i < c->saves && rc == 0; i++) {
		sleep_ns((int64_t)(c->before_s * 1e9));
		rc = one_save(ctl, ts, pid, &sv[i], c->save_timeout_s);
	}
	if (rc == 0)
		sleep_ns((int64_t)(c->after_s * 1e9));
	atomic_store(&stop_clients, true);
	for (long k = 0; k < c->conns; k++) {
		pthread_join(cl[k].thread, NULL);
		if (cl[k].error)
			rc = -1;
	}
	return rc;
}

/* The server's minor faults (every thread): field 10 of /proc/PID/stat, after "comm)". */
static int64_t server_minflt(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return NA;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!p || !(p = strrchr(buf, ')')) ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %llu", &v) != 1)
		return NA;
	return (int64_t)v;
}

/* The /proc/vmstat events of a cycle; a kernel without one (stock) leaves its column empty. */
static const char *const cycle_events[] = { "cow_fault", "cow_precopy", "cow_reuse_around",
					    "cow_reuse_around_pages", "pgreuse" };
#define NEVENTS (sizeof(cycle_events) / sizeof(cycle_events[0]))

static void read_events(int64_t *ev)
{
	char line[256];
	FILE *f = fopen("/proc/vmstat", "re");

	for (size_t i = 0; i < NEVENTS; i++)
		ev[i] = NA;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *sp = strchr(line, ' ');

		if (!sp)
			continue;
		*sp = 0;
		for (size_t i = 0; i < NEVENTS; i++)
			if (!strcmp(line, cycle_events[i]))
				ev[i] = strtoll(sp + 1, NULL, 10);
	}
	fclose(f);
}

/* N SETs split over the connections (the first N % conns make one more), all in flight together. */
static int load_sets(struct client *cl, long conns, long n)
{
	int rc = 0;

	for (long k = 0; k < conns; k++) {
		cl[k].quota = n / conns + (k < n % conns);
		if (!cl[k].quota)
			continue;
		if (pthread_create(&cl[k].thread, NULL, client_main, &cl[k]) != 0) {
			fprintf(stderr, "redis_load: cannot start client %ld\n", k);
			cl[k].quota = 0;
			rc = -1;
			break;
		}
	}
	for (long k = 0; k < conns; k++) {
		if (!cl[k].quota)
			continue;
		pthread_join(cl[k].thread, NULL);
		cl[k].quota = 0;
		if (cl[k].error)
			rc = -1;
	}
	return rc;
}

struct cycle {
	int64_t minflt, wpcopy, ev[NEVENTS], fork_usec, cow_size, cow_peak;
	int64_t bgsave_ns, during_ns, save_ns, cycle_ns, outlasted;
};

/* Polls until the parent has reaped the save; the highest current_cow_peak seen goes to *peak. */
static int wait_save(redisContext *ctl, int64_t t_bgsave, double timeout_s, int64_t *peak)
{
	int64_t inprog;

	do {
		int64_t p;

		inprog = info_get(ctl, "persistence", "rdb_bgsave_in_progress");
		p = info_get(ctl, "persistence", "current_cow_peak");
		if (p != NA && (*peak == NA || p > *peak))
			*peak = p;
		if (inprog == 1 && now_ns() - t_bgsave > (int64_t)(timeout_s * 1e9)) {
			fprintf(stderr, "redis_load: the BGSAVE did not finish within %g s\n", timeout_s);
			return -1;
		}
		if (inprog == 1)
			sleep_ns(POLL_NS);
	} while (inprog == 1);
	if (inprog == NA) {
		fprintf(stderr, "redis_load: INFO persistence has no rdb_bgsave_in_progress\n");
		return -1;
	}
	return 0;
}

static int64_t delta(int64_t a, int64_t b) { return a != NA && b != NA ? b - a : NA; }

/* One counted cycle; every count is a difference over the whole cycle, the save's end included. */
static int one_cycle(const struct config *c, struct client *cl, redisContext *ctl, struct cb_taskstats_sock *ts,
		     pid_t pid, struct cycle *y)
{
	int64_t f0, w0, e0[NEVENTS], e1[NEVENTS], t0, t1, t2, t3, ignored = NA;
	redisReply *r;

	*y = (struct cycle){ .cow_peak = NA };
	if (wait_save(ctl, now_ns(), c->save_timeout_s, &ignored) < 0) /* a save of someone else's first */
		return -1;
	read_events(e0);
	w0 = parent_wpcopy(ts, pid);
	f0 = server_minflt(pid);
	t0 = now_ns();
	r = redisCommand(ctl, "BGSAVE");
	y->bgsave_ns = now_ns() - t0;
	if (!r || r->type == REDIS_REPLY_ERROR) {
		fprintf(stderr, "redis_load: BGSAVE failed: %s\n", r ? r->str : ctl->errstr);
		if (r)
			freeReplyObject(r);
		return -1;
	}
	freeReplyObject(r);
	if (load_sets(cl, c->conns, c->during_sets) < 0)
		return -1;
	t1 = now_ns();
	y->outlasted = info_get(ctl, "persistence", "rdb_bgsave_in_progress");
	if (wait_save(ctl, t0, c->save_timeout_s, &y->cow_peak) < 0)
		return -1;
	t2 = now_ns();
	if (load_sets(cl, c->conns, c->after_sets) < 0)
		return -1;
	t3 = now_ns();
	y->minflt = delta(f0, server_minflt(pid));
	y->wpcopy = delta(w0, parent_wpcopy(ts, pid));
	read_events(e1);
	for (size_t i = 0; i < NEVENTS; i++)
		y->ev[i] = delta(e0[i], e1[i]);
	y->fork_usec = info_get(ctl, "stats", "latest_fork_usec");
	y->cow_size = info_get(ctl, "persistence", "rdb_last_cow_size");
	y->during_ns = t1 - t0;
	y->save_ns = t2 - t0;
	y->cycle_ns = t3 - t0;
	return 0;
}

#define CYCLES_HEADER                                                                                    \
	"label,pattern,sigma,round,cycle,sysctls,conns,keys,value_size,server_pid,during_sets,after_sets," \
	"parent_minflt,parent_wpcopy,cow_fault,cow_precopy,cow_reuse_around,cow_reuse_around_pages,"       \
	"pgreuse,latest_fork_usec,rdb_last_cow_size,current_cow_peak,bgsave_ns,during_ns,save_ns,"       \
	"cycle_ns,save_outlasted"

/* --cycle-sets: --saves counted cycles, a row each; the rows are written once all are done. */
static int run_cycles(const struct config *c, struct client *cl, pid_t pid, redisContext *ctl,
		      struct cb_taskstats_sock *ts)
{
	struct cycle *y = calloc((size_t)c->saves, sizeof(*y));
	char sets[512], sigma[32] = "";
	FILE *f = NULL;
	int rc = -1;

	if (!y)
		return -1;
	for (long k = 0; k < c->conns; k++)
		cl[k] = (struct client){ .cfg = c, .id = (int)k, .rng = client_seed(c, k) };
	for (long i = 0; i < c->saves; i++)
		if (one_cycle(c, cl, ctl, ts, pid, &y[i]) < 0)
			goto out;
	if (!(f = open_rows(c->cycles_path, CYCLES_HEADER)))
		goto out;
	sets_text(c, sets, sizeof(sets));
	if (c->pattern == PAT_GAUSS)
		snprintf(sigma, sizeof(sigma), "%.6g", c->sigma);
	for (long i = 0; i < c->saves; i++) {
		fprintf(f, "%s,%s,%s,%ld,%ld,%s,%ld,%ld,%ld,%d,%ld,%ld", c->label, pattern_name(c->pattern), sigma,
			c->round, i, sets, c->conns, c->keys, c->value_size, (int)pid, c->during_sets, c->after_sets);
		int64_t v[] = { y[i].minflt, y[i].wpcopy, y[i].ev[0], y[i].ev[1], y[i].ev[2], y[i].ev[3],
				y[i].ev[4], y[i].fork_usec, y[i].cow_size, y[i].cow_peak, y[i].bgsave_ns,
				y[i].during_ns, y[i].save_ns, y[i].cycle_ns, y[i].outlasted };
		for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++)
			put(f, v[k]);
		fputc('\n', f);
	}
	rc = fclose(f) == 0 ? 0 : -1;
out:
	free(y);
	return rc;
}

int main(int argc, char **argv)
{
	struct config c;
	struct client *cl = NULL;
	struct save *sv = NULL;
	struct cb_taskstats_sock *ts = NULL;
	redisContext *ctl = NULL;
	int64_t pid;
	int rc = 1;

	if (parse_args(argc, argv, &c) < 0)
		return 2; /* one line said why; nothing written */
	signal(SIGPIPE, SIG_IGN); /* a server that goes away is an error reply, not our death */
	if (!c.socket) { /* --saves 0 -- COMMAND alone: hold the settings while it runs (redis-guest.sh) */
		signal(SIGINT, on_stop);
		signal(SIGTERM, on_stop);
		signal(SIGHUP, on_stop);
		for (int i = 0; i < c.nsets; i++)
			if (apply_set(c.sets[i]) < 0)
				goto out;
		rc = run_command(c.command);
		goto out;
	}
	if (!(ctl = connect_server(c.socket, c.timeout_s)))
		return 1;
	pid = info_get(ctl, "server", "process_id");
	if (pid == NA || pid <= 0) {
		fprintf(stderr, "redis_load: INFO server gave no process_id\n");
		goto out;
	}
	/* only now, with a server that answers: held for this process's lifetime, put back at exit */
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	signal(SIGHUP, on_stop);
	for (int i = 0; i < c.nsets; i++)
		if (apply_set(c.sets[i]) < 0)
			goto out;
	if (c.saves == 0) {
		rc = c.command ? run_command(c.command) : 0;
		goto out;
	}
	if (cb_taskstats_open(&ts) < 0)
		ts = NULL; /* no per-process COW count: the column stays empty */
	cl = calloc((size_t)c.conns, sizeof(*cl));
	if (cl && c.cycles_path) {
		rc = run_cycles(&c, cl, (pid_t)pid, ctl, ts) == 0 ? 0 : 1;
		goto out;
	}
	sv = calloc((size_t)c.saves, sizeof(*sv));
	if (!cl || !sv)
		goto out;
	if (run(&c, cl, sv, (pid_t)pid, ctl, ts) == 0 && latency_stats(&c, cl, sv) == 0 &&
	    write_saves(&c, (pid_t)pid, sv, c.saves) == 0 && write_requests(&c, cl) == 0)
		rc = 0;
out:
	if (cl)
		for (long k = 0; k < c.conns; k++)
			free(cl[k].req);
	free(cl);
	free(sv);
	if (ts)
		cb_taskstats_close(ts);
	redisFree(ctl);
	cb_sysctl_restore_all();
	return rc;
}
