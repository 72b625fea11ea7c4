#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cowbench/sysinfo.h>

#include "common/diag.h"
#include "common/outfile.h"
#include "common/paths.h"

/*
 * Which files a command writes, checked against what it reads before
 * anything is opened for writing: no command may write over one of its
 * inputs, whatever name either goes by (a symlink, "./a.csv", a hard
 * link). An existing output is compared by device and inode; one that
 * does not exist yet by its directory's real path and its name.
 */

/* PATH as an absolute name with its directory resolved (the file itself need not exist); false if unknown. */
static bool resolve_name(const char *path, char *out, size_t len)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;

	if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
	if (!realpath(dir, real))
		return false;
	return (size_t)snprintf(out, len, "%s/%s", strcmp(real, "/") ? real : "", base) < len;
}

bool cli_same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	char ra[PATH_MAX + 2], rb[PATH_MAX + 2];
	bool ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;

	if (ea && eb)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	if (ea != eb)
		return false;
	/* Neither exists yet: the same name once both directories are resolved. */
	return resolve_name(a, ra, sizeof(ra)) && resolve_name(b, rb, sizeof(rb)) && strcmp(ra, rb) == 0;
}

int cli_output_not_input(const char *option, const char *output, char *const *inputs, int n)
{
	if (!output)
		return 0;
	for (int i = 0; i < n; i++)
		if (inputs[i] && cli_same_file(output, inputs[i])) {
			cli_error("%s %s is the same file as the input %s: refusing to write over it", option, output,
				  inputs[i]);
			return -1;
		}
	return 0;
}

int cli_output_path_check(const char *option, const char *path)
{
	char resolved[PATH_MAX + 2];

	/*
	 * /dev/stdout, /dev/fd/N, /proc/self/fd/N and /dev/null are not files
	 * to replace: the temporary file would be renamed over the link.
	 */
	if (!strncmp(path, "/dev/", 5) || !strncmp(path, "/proc/", 6) ||
	    (resolve_name(path, resolved, sizeof(resolved)) &&
	     (!strncmp(resolved, "/dev/", 5) || !strncmp(resolved, "/proc/", 6)))) {
		cli_error("%s %s: not a regular file (leave out %s to write to standard output)", option, path,
			  option);
		return -1;
	}
	return 0;
}

/* Whether INPUT is a file plot writes: DIR/report.md, a PNG or SVG in DIR, a .dat in DIR/data. */
static bool written_by_plot(const char *dir, const char *input)
{
	static const char *const kinds[] = { ".png", ".svg", ".dat" };
	const char *base = strrchr(input, '/') ? strrchr(input, '/') + 1 : input, *dot = strrchr(base, '.');
	char in_dir[4096], in_data[4096];

	snprintf(in_dir, sizeof(in_dir), "%s/%s", dir, base);
	snprintf(in_data, sizeof(in_data), "%s/data/%s", dir, base);
	if (strcmp(base, "report.md") == 0 && cli_same_file(input, in_dir))
		return true;
	for (size_t k = 0; dot && k < sizeof(kinds) / sizeof(kinds[0]); k++)
		if (strcmp(dot, kinds[k]) == 0 && (cli_same_file(input, in_dir) || cli_same_file(input, in_data)))
			return true;
	return false;
}

int cli_plot_dir_not_input(const char *dir, char *const *inputs, int n)
{
	for (int i = 0; i < n; i++)
		if (written_by_plot(dir, inputs[i])) {
			cli_error("--out %s would write over the input %s: choose another directory", dir, inputs[i]);
			return -1;
		}
	return 0;
}

const char *cli_find_dir(const char *env_var, const char *source_dir, const char *marker, const char *install_dir)
{
	const char *env = getenv(env_var);
	char probe[PATH_MAX];

	if (env && *env)
		return env;
	snprintf(probe, sizeof(probe), "%s/%s", source_dir, marker);
	if (cb_path_exists(probe))
		return source_dir; /* running from a build tree */
	return install_dir;
}

const char *cli_kernel_dir(void)
{
	return cli_find_dir("COWBENCH_KERNEL_DIR", COWBENCH_KERNEL_SOURCE_DIR, "vm-run.sh", COWBENCH_KERNEL_INSTALL_DIR);
}

/* A copy of a regular file as it is now (TO is created, never replaced); 0 or -errno, TO removed on failure. */
int cli_copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK), out = -1, err = 0; /* a FIFO: refused below */
	struct stat st;
	char buf[65536];
	ssize_t got;

	if (in < 0)
		return -errno;
	if (fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(in);
		return -EINVAL;
	}
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0) {
		err = -errno;
		close(in);
		return err;
	}
	while (!err && ((got = read(in, buf, sizeof(buf))) != 0)) {
		if (got < 0) {
			err = errno == EINTR ? 0 : -errno;
			continue;
		}
		for (ssize_t off = 0; !err && off < got;) {
			ssize_t w = write(out, buf + off, (size_t)(got - off));

			if (w < 0 && errno != EINTR)
				err = -errno;
			off += w > 0 ? w : 0;
		}
	}
	close(in);
	if (close(out) != 0 && !err)
		err = -errno;
	if (err)
		unlink(to);
	return err;
}

/*
 * Every file a command reads that a user or the environment names: opened without waiting (a
 * FIFO, a device), refused unless a regular file (errno EINVAL), then blocking again.
 */
FILE *cli_fopen_input(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK), flags;
	struct stat st;
	FILE *fp;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	if ((flags = fcntl(fd, F_GETFL)) >= 0)
		fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	if (!(fp = fdopen(fd, "re")))
		close(fd);
	return fp;
}
