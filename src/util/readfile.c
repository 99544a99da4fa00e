/* SPDX-License-Identifier: MIT */
#include "util/readfile.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int read_regular_fd(int fd, size_t max, char **data, size_t *len)
{
	struct stat st;
	size_t cap = max, n = 0;
	char *buf;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((size_t)st.st_size < cap)
		cap = (size_t)st.st_size + 1;   /* the size it has, and one byte to see the end */
	if (!(buf = malloc(cap)))
		return -ENOMEM;
	for (;;) {
		ssize_t k = read(fd, buf + n, cap - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int e = -errno;
			free(buf);
			return e;
		}
		n += (size_t)k;
		if (k == 0 || n == max)
			break;
		if (n == cap) {   /* it grew since fstat */
			size_t more = cap * 2 > max ? max : cap * 2;
			char *b = realloc(buf, more);
			if (!b) {
				free(buf);
				return -ENOMEM;
			}
			buf = b;
			cap = more;
		}
	}
	*data = buf;
	*len = n;
	return 0;
}

int read_stream_fd(int fd, size_t max, char **data, size_t *len)
{
	struct stat st;
	size_t cap = 4096, n = 0;
	char *buf;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISREG(st.st_mode))
		return read_regular_fd(fd, max, data, len);
	if (!S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode) && !S_ISSOCK(st.st_mode))
		return -EINVAL;
	if (cap > max)
		cap = max;
	if (!(buf = malloc(cap)))
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
