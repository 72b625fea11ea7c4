#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

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
