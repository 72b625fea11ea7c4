#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ctype.h>

#include <cowbench/error.h>
#include <cowbench/sysctl.h>

#include "fileutil.h"

#define MAX_OVERRIDES 16

/* Saved as text so restoring needs no formatting inside a signal handler. */
static struct {
	char path[128];
	char old[32];
} saved[MAX_OVERRIDES];
static volatile int nsaved;

int cb_sysctl_read_long(const char *path, long *value)
{
	char buf[64], *end;
	long v;
	int err = cb_read_text_file(path, buf, sizeof(buf));

	if (err < 0)
		return err;
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno || end == buf)
		return CB_EFORMAT;
	while (isspace((unsigned char)*end))
		end++;
	if (*end)
		return CB_EFORMAT;
	*value = v;
	return 0;
}

static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	size_t len = strlen(text);

	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	return (size_t)n == len ? 0 : -EIO;
}

int cb_sysctl_write_long(const char *path, long value)
{
	char text[32];

	snprintf(text, sizeof(text), "%ld\n", value);
	return write_text(path, text);
}

int cb_sysctl_override(const char *path, long value)
{
	long old;
	int i, err = cb_sysctl_read_long(path, &old);

	if (err < 0)
		return err;
	for (i = 0; i < nsaved; i++)
		if (strcmp(saved[i].path, path) == 0)
			break;
	if (i == nsaved) {
		if (nsaved == MAX_OVERRIDES || strlen(path) >= sizeof(saved[0].path))
			return -ENOSPC;
		snprintf(saved[i].path, sizeof(saved[i].path), "%s", path);
		snprintf(saved[i].old, sizeof(saved[i].old), "%ld\n", old);
	}
	err = cb_sysctl_write_long(path, value);
	if (err == 0 && i == nsaved)
		nsaved = i + 1; /* remember only what we really changed */
	return err;
}

void cb_sysctl_restore_all(void)
{
	while (nsaved > 0) {
		int i = nsaved - 1;

		(void)write_text(saved[i].path, saved[i].old);
		nsaved = i;
	}
}
