#ifndef COWBENCH_FILEUTIL_H
#define COWBENCH_FILEUTIL_H

#include <stddef.h>

#include <stdio.h>

/*
 * Every file the library reads is opened with this: O_NONBLOCK, so that a FIFO
 * (or a device) named by a path or an environment variable is never waited on,
 * then refused unless it is a regular file (/proc and /sys files are); the
 * descriptor is blocking again when returned. -errno, or -EINVAL for a file
 * that is not regular.
 */
int cb_open_regular(const char *path);
/* The same as a stdio stream ("re"); NULL with errno set. */
FILE *cb_fopen_regular(const char *path);

/* Read a small text file whole into buf (NUL-terminated); -errno on failure, -EFBIG if it does not fit. */
int cb_read_text_file(const char *path, char *buf, size_t len);

#endif
