/*
 * cowbench stat --where on Redis during BGSAVE under a write load: the
 * copies are in the allocator's anonymous arenas, the per-mapping totals
 * agree with plain stat's count, and with Redis's own rdb_last_cow_size
 * (the child's Private_Dirty, which has no zero-page copies). Needs root,
 * the tracepoint and Debian's redis-server/redis-tools: skipped (ctest
 * skip code) without them. Redis listens on loopback only and is stopped
 * at the end; its data directory is removed.
 */
#include "where_util.h"

#include <poll.h>

#define REDIS_SERVER "/usr/bin/redis-server"
#define REDIS_CLI "/usr/bin/redis-cli"
#define REDIS_BENCH "/usr/bin/redis-benchmark"
#define KEYS "30000"

static char port[16], dir[64];

/* Run argv without a shell, its output into buf (NUL-terminated); the exit status. */
static int run_capture(const char *const *argv, char *buf, size_t len)
{
	int fds[2], ws;
	size_t n = 0;
	pid_t pid;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(fds[1], 1);
		dup2(null, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		ssize_t k = read(fds[0], buf + n, len - 1 - n);

		if (k <= 0)
			break;
		n += (size_t)k;
		if (n == len - 1) { /* keep draining so the child can finish */
			char sink[4096];

			while (read(fds[0], sink, sizeof(sink)) > 0)
				;
			break;
		}
	}
	buf[n] = '\0';
	close(fds[0]);
	waitpid(pid, &ws, 0);
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

static void cli(const char *a, const char *b, const char *c, char *buf, size_t len)
{
	const char *argv[] = { REDIS_CLI, "-h", "127.0.0.1", "-p", port, a, b, c, NULL };

	ck_assert_int_eq(run_capture(argv, buf, len), 0);
}

static pid_t start_redis(void)
{
	char buf[256];
	pid_t pid;

	snprintf(port, sizeof(port), "%d", 20000 + getpid() % 20000);
	snprintf(dir, sizeof(dir), "/tmp/cbtest-redisXXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execl(REDIS_SERVER, REDIS_SERVER, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly",
		      "no", "--dir", dir, "--daemonize", "no", "--rdb-key-save-delay", "10", (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 100; i++) { /* up within 5 s */
		const char *ping[] = { REDIS_CLI, "-h", "127.0.0.1", "-p", port, "ping", NULL };

		if (run_capture(ping, buf, sizeof(buf)) == 0 && strncmp(buf, "PONG", 4) == 0)
			return pid;
		usleep(50000);
	}
	kill(pid, SIGKILL);
	ck_abort_msg("redis-server did not answer on port %s", port);
	return -1;
}

static void stop_redis(pid_t pid)
{
	char path[128];

	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	snprintf(path, sizeof(path), "%s/dump.rdb", dir);
	unlink(path);
	rmdir(dir);
}

static void bench(const char *requests, const char *pipeline, const char *clients)
{
	const char *argv[] = { REDIS_BENCH, "-h", "127.0.0.1", "-p", port, "-t", "set", "-n", requests, "-r", KEYS,
			       "-d", "256", "-P", pipeline, "-c", clients, "-q", NULL };
	char buf[4096];

	ck_assert_int_eq(run_capture(argv, buf, sizeof(buf)), 0);
}

/* INFO persistence's value of key (a number), or -1. */
static long long info_num(const char *key)
{
	char buf[8192], pat[64];
	const char *p;

	cli("info", "persistence", NULL, buf, sizeof(buf));
	snprintf(pat, sizeof(pat), "%s:", key);
	p = strstr(buf, pat);
	return p ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

START_TEST(test_where_redis_bgsave)
{
	char outp[] = "/tmp/cbtest-outXXXXXX", pidtext[16], buf[256], line[2048], path[256];
	int ofd = mkstemp(outp), ws;
	long long total, cow_size, copied = 0, zero = 0, arena = 0, unclassified;
	const char *cur = NULL;
	pid_t redis, st;
	char *out;

	if (!tu_delayacct_hold_on("redis-server's copies")) { /* before Redis is born; through the journal */
		unlink(outp);
		return;
	}
	redis = start_redis();
	bench("60000", "32", "4"); /* the dataset: up to 30000 keys of 256 bytes */
	snprintf(pidtext, sizeof(pidtext), "%d", (int)redis);
	st = fork();
	ck_assert_int_ge(st, 0);
	if (st == 0) {
		dup2(ofd, 1);
		execl(CB_CLI_PATH, CB_CLI_PATH, "stat", "--where", "-p", pidtext, "--interval=0.2", "--format=json",
		      "--top=100000", (char *)NULL);
		_exit(127);
	}
	usleep(600000); /* stat has looked at the loaded dataset */
	cli("bgsave", NULL, NULL, buf, sizeof(buf));
	bench("20000", "1", "4"); /* writes while the child saves */
	for (int i = 0; i < 600 && info_num("rdb_bgsave_in_progress") != 0; i++)
		usleep(100000);
	ck_assert_int_eq(info_num("rdb_bgsave_in_progress"), 0);
	usleep(500000);
	kill(st, SIGTERM);
	ck_assert_int_eq(waitpid(st, &ws, 0), st);
	cow_size = info_num("rdb_last_cow_size");
	stop_redis(redis);
	out = tu_slurp(outp, NULL);
	close(ofd);
	unlink(outp);
	ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "stat status %d", ws);

	ck_assert_ptr_nonnull(wu_next(out, &cur, "{\"line\":\"total\"", line, sizeof(line)));
	total = wu_copies(line);
	while (wu_next(out, &cur, "{\"where\":\"maps\"", line, sizeof(line))) {
		long long c = wu_num(line, "copied");

		copied += c;
		zero += wu_num(line, "zero_fill");
		wu_str(line, "path", path, sizeof(path));
		if (!path[0] || strcmp(path, "[heap]") == 0)
			arena += c;
	}
	cur = NULL;
	ck_assert_ptr_nonnull(wu_next(out, &cur, "{\"where\":\"maps-total\"", line, sizeof(line)));
	unclassified = wu_num(line, "unclassified");
	printf("redis: stat %lld copies [taskstats]; where %lld copied + %lld zero-page + %lld unclassified, %lld in "
	       "arenas; rdb_last_cow_size %lld B = %lld pages\n", total, copied, zero, unclassified, arena, cow_size,
	       cow_size / 4096);
	if (getenv("CB_WHERE_DUMP"))
		fputs(out, stdout);
	ck_assert_int_ge(copied, 1000);
	/* the copies are in the allocator's anonymous arenas (jemalloc) */
	ck_assert_msg(arena * 10 >= copied * 9, "arenas %lld of %lld", arena, copied);
	/* per-mapping totals agree with plain stat's */
	ck_assert_msg(llabs(copied + zero + unclassified - total) * 20 <= total, "where %lld vs stat %lld",
		      copied + zero + unclassified, total);
	/* and with Redis's own count, which has no zero-page copies */
	ck_assert_msg(llabs((copied + unclassified) * 4096 - cow_size) * 20 <= cow_size, "where %lld vs redis %lld pages",
		      copied + unclassified, cow_size / 4096);
	/* the saving child reads the whole dataset: no MADV_DONTFORK advice for the arenas */
	ck_assert_ptr_null(strstr(out, "\"advice\":\"dontfork\""));
	ck_assert_ptr_nonnull(strstr(out, "\"advice\":\"snapshot\""));
	free(out);
	tu_delayacct_release();
}
END_TEST

static Suite *redis_suite(void)
{
	Suite *s = suite_create("where_redis");
	TCase *tc = tcase_create("where_redis");

	tcase_set_timeout(tc, 90);
	tcase_add_unchecked_fixture(tc, tu_save_delayacct, tu_restore_delayacct);
	tcase_add_test(tc, test_where_redis_bgsave);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	if (access(REDIS_SERVER, X_OK) || access(REDIS_CLI, X_OK) || access(REDIS_BENCH, X_OK)) {
		printf("SKIP: needs Debian's redis-server and redis-tools\n");
		return CTEST_SKIP;
	}
	return wu_main_needing_tracepoint(redis_suite);
}
