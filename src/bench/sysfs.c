/* SPDX-License-Identifier: MIT */
#include "bench/sysfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void squeeze(char *s, size_t n)
{
	size_t w = 0;

	for (size_t r = 0; r < n; r++) {
		char c = s[r];
		int space = c == '\0' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
		if (space) {
			if (w && s[w - 1] != ' ')
				s[w++] = ' ';
		} else {
			s[w++] = c;
		}
	}
	if (w && s[w - 1] == ' ')
		w--;
	s[w] = '\0';
}

int sysfs_read(char *out, size_t cap, const char *fmt, ...)
{
	char path[512];
	va_list ap;
	ssize_t n;
	int fd;

	out[0] = '\0';
	va_start(ap, fmt);
	vsnprintf(path, sizeof path, fmt, ap);
	va_end(ap);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	n = read(fd, out, cap - 1);
	close(fd);
	if (n < 0)
		return -errno;
	squeeze(out, (size_t)n);
	return out[0] ? 0 : -ENODATA;
}

char *sysfs_slurp(const char *path, size_t max, size_t *len)
{
	size_t cap = 16384, n = 0;
	char *buf = malloc(cap + 1), *bigger;
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || !buf) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return NULL;
	}
	/* /proc files have no size: read until EOF, growing the buffer. */
	while ((got = read(fd, buf + n, cap - n)) > 0) {
		n += (size_t)got;
		if (n == cap && cap < max) {
			cap = cap * 2 < max ? cap * 2 : max;
			if (!(bigger = realloc(buf, cap + 1)))
				break;
			buf = bigger;
		} else if (n == cap) {
			break;
		}
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
}
