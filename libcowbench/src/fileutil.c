#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "fileutil.h"

int cb_read_text_file(const char *path, char *buf, size_t len)
{
	size_t used = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
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
