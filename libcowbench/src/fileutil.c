#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileutil.h"

int cb_open_regular(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY), flags;
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if ((flags = fcntl(fd, F_GETFL)) >= 0)
		fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	return fd;
}

FILE *cb_fopen_regular(const char *path)
{
	int fd = cb_open_regular(path);
	FILE *fp;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	if (!(fp = fdopen(fd, "re")))
		close(fd);
	return fp;
}

int cb_read_text_file(const char *path, char *buf, size_t len)
{
	size_t used = 0;
	int fd = cb_open_regular(path);

	if (fd < 0)
		return fd;
	for (;;) {
		ssize_t n = read(fd, buf + used, len - 1 - used);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return (int)n;
		}
		if (n == 0)
			break;
		used += (size_t)n;
		if (used == len - 1) {
			char extra;

			if (read(fd, &extra, 1) > 0) {
				close(fd);
				return -EFBIG;
			}
			break;
		}
	}
	close(fd);
	buf[used] = '\0';
	return (int)used;
}
