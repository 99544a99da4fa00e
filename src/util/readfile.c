/* SPDX-License-Identifier: MIT */
#include "util/readfile.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Reads fd to its end or to `max` bytes into a buffer that starts at `cap`
 * bytes and doubles as needed (a regular file that grew, a pipe); a
 * non-blocking fd with nothing yet is waited for. */
static int read_all(int fd, size_t cap, size_t max, char **data, size_t *len)
{
	size_t n = 0;
	char *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	while (n < max) {
		if (n == cap) {
			size_t more = cap * 2 > max ? max : cap * 2;
			char *b = realloc(buf, more);
			if (!b) {
				free(buf);
				return -ENOMEM;
			}
			buf = b;
			cap = more;
		}
		ssize_t k = read(fd, buf + n, cap - n);
		if (k < 0 && errno == EAGAIN) {
			struct pollfd p = { .fd = fd, .events = POLLIN };
			poll(&p, 1, -1);
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int e = -errno;
			free(buf);
			return e;
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	*data = buf;
	*len = n;
	return 0;
}

int read_regular_fd(int fd, size_t max, char **data, size_t *len)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	/* the size it has, and one byte to see the end */
	return read_all(fd, (size_t)st.st_size < max ? (size_t)st.st_size + 1 : max, max, data, len);
}

int read_stream_fd(int fd, size_t max, char **data, size_t *len)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISREG(st.st_mode))
		return read_regular_fd(fd, max, data, len);
	if (!S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode) && !S_ISSOCK(st.st_mode))
		return -EINVAL;
	return read_all(fd, max < 4096 ? max : 4096, max, data, len);
}
