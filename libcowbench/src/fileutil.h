#ifndef COWBENCH_FILEUTIL_H
#define COWBENCH_FILEUTIL_H

#include <stddef.h>

/* Read a small text file whole into buf (NUL-terminated); -errno on failure, -EFBIG if it does not fit. */
int cb_read_text_file(const char *path, char *buf, size_t len);

#endif
