/* SPDX-License-Identifier: MIT */
/* Internal: socket I/O with deadlines for the channel. Every wait goes
 * through poll(2), so a blocking socket never blocks past a deadline, and
 * sends use MSG_NOSIGNAL (a closed peer is an error, not SIGPIPE). */
#ifndef FERRY_CHANNEL_IO_H
#define FERRY_CHANNEL_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Monotonic milliseconds. */
int64_t io_now_ms(void);
/* An absolute deadline timeout_ms from now; 0 (none) when timeout_ms <= 0. */
int64_t io_deadline(int timeout_ms);
/* Milliseconds left before `deadline` for poll(): -1 for none, 0 if passed. */
int io_remaining(int64_t deadline);

/* Waits for `events` on fd until `deadline` (0 = forever); *revents gets
 * poll's answer. 0, -ETIMEDOUT (err_msg set, naming `what`), or <0. */
int io_wait(int fd, short events, int64_t deadline, short *revents, const char *what);

/* One non-blocking attempt (MSG_DONTWAIT; plain read/write for non-sockets):
 * bytes moved, 0 at EOF (recv), or -errno (-EAGAIN: try after io_wait). */
ssize_t io_send(int fd, const void *buf, size_t len);
ssize_t io_recv(int fd, void *buf, size_t len);

/* Exactly len bytes by `deadline`. -EPIPE at EOF. Messages name `what`. */
int io_read_exact(int fd, void *buf, size_t len, int64_t deadline, const char *what);
int io_write_all(int fd, const void *buf, size_t len, int64_t deadline, const char *what);

#endif
