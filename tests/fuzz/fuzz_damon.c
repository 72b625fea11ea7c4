/*
 * cowbench info's DAMON reader (cli/info/info_damon.c) on a fake /sys and /proc
 * tree whose files hold the input, split at '|': whatever they say, the
 * report is printable ASCII (nothing from the files is echoed raw).
 */
#include "fuzz.h"

#include <errno.h>
#include <ftw.h>
#include <sys/stat.h>

#include "info_damon.h"

#define KD "/sys/kernel/mm/damon/admin/kdamonds"
#define CTX KD "/0/contexts/0"
#define MOD "/sys/module/damon_reclaim/parameters"

static const char *const files[] = {
	KD "/nr_kdamonds", KD "/0/state", KD "/0/pid", KD "/0/contexts/nr_contexts", CTX "/operations",
	CTX "/monitoring_attrs/intervals/sample_us", CTX "/monitoring_attrs/intervals/aggr_us",
	CTX "/schemes/nr_schemes", CTX "/schemes/0/action", "/proc/77/comm", "/proc/77/schedstat",
	"/proc/77/stat", MOD "/enabled", MOD "/kdamond_pid", MOD "/sample_interval",
};
#define NFILES (sizeof(files) / sizeof(files[0]))

static char root[64];

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static void rm_root(void)
{
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void mkdirs(const char *path)
{
	char dir[512];

	snprintf(dir, sizeof(dir), "%s", path);
	for (char *s = strchr(dir + strlen(root) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(dir, 0700) != 0 && errno != EEXIST)
			abort();
		*s = '/';
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct damon_info d;
	const uint8_t *p = data, *end = data + size;
	bool done = false;
	char path[512], *out = NULL;
	size_t len = 0;
	FILE *fp;

	if (!root[0]) {
		snprintf(root, sizeof(root), "/tmp/cbfuzz-damon-XXXXXX");
		if (!mkdtemp(root))
			abort();
		atexit(rm_root);
	}
	for (size_t i = 0; i < NFILES; i++) {
		const uint8_t *bar = !done && p < end ? memchr(p, '|', (size_t)(end - p)) : NULL;

		snprintf(path, sizeof(path), "%s%s", root, files[i]);
		mkdirs(path);
		if (done) { /* input used up: the file is absent */
			unlink(path);
			continue;
		}
		if (!bar) {
			bar = end;
			done = true;
		}
		fp = fopen(path, "w");
		if (!fp || fwrite(p, 1, (size_t)(bar - p), fp) != (size_t)(bar - p))
			abort();
		fclose(fp);
		p = done ? end : bar + 1;
	}
	damon_read(root, &d);
	damon_sample_end(root, &d);
	fp = open_memstream(&out, &len);
	if (!fp)
		abort();
	damon_print(fp, &d);
	fclose(fp);
	for (size_t i = 0; i < len; i++)
		if ((out[i] < ' ' || out[i] > '~') && out[i] != '\n')
			abort();
	free(out);
	return 0;
}
