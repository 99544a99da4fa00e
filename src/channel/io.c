/* SPDX-License-Identifier: MIT */
#include "channel/io.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util/err.h"

int64_t io_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t io_deadline(int timeout_ms)
{
	return timeout_ms > 0 ? io_now_ms() + timeout_ms : 0;
}

int io_remaining(int64_t deadline)
{
	int64_t left;

	if (deadline == 0)
		return -1;
	left = deadline - io_now_ms();
	return left <= 0 ? 0 : left > 0x7fffffff ? 0x7fffffff : (int)left;
}

int io_wait(int fd, short events, int64_t deadline, short *revents, const char *what)
{
	struct pollfd p = { .fd = fd, .events = events };

	for (;;) {
		int ms = io_remaining(deadline);
		int n = poll(&p, 1, ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return err_sys(-errno, "poll");
		if (n == 0)
			return err_set(-ETIMEDOUT, "%s: timed out waiting for the peer", what);
		/* POLLHUP/POLLERR: the next read or write reports what happened. */
		*revents = p.revents;
		return 0;
	}
}

ssize_t io_send(int fd, const void *buf, size_t len)
{
	for (;;) {
		ssize_t n = send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == ENOTSOCK)
			n = write(fd, buf, len);
		if (n >= 0)
			return n;
		if (errno == EINTR)
			continue;
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	}
}

ssize_t io_recv(int fd, void *buf, size_t len)
{
	for (;;) {
		ssize_t n = recv(fd, buf, len, MSG_DONTWAIT);
		if (n < 0 && errno == ENOTSOCK)
			n = read(fd, buf, len);
		if (n >= 0)
			return n;
		if (errno == EINTR)
			continue;
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	}
}

int io_read_exact(int fd, void *buf, size_t len, int64_t deadline, const char *what)
{
	char *p = buf;
	short rev;
	int rc;

	while (len) {
		ssize_t n = io_recv(fd, p, len);
		if (n == 0)
			return err_set(-EPIPE, "%s: connection closed by the peer", what);
		if (n == -EAGAIN) {
			if ((rc = io_wait(fd, POLLIN, deadline, &rev, what)) < 0)
				return rc;
			continue;
		}
		if (n < 0)
			return err_sys((int)n, "%s: read failed", what);
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int io_write_all(int fd, const void *buf, size_t len, int64_t deadline, const char *what)
{
	const char *p = buf;
	short rev;
	int rc;

	while (len) {
		ssize_t n = io_send(fd, p, len);
		if (n == -EAGAIN) {
			if ((rc = io_wait(fd, POLLOUT, deadline, &rev, what)) < 0)
				return rc;
			continue;
		}
		if (n < 0)
			return err_sys((int)n, "%s: write failed", what);
		p += n;
		len -= (size_t)n;
	}
	return 0;
}
