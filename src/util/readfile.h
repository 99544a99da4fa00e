/* SPDX-License-Identifier: MIT */
/* Reading a small file whole: a filter file, an "exclude from" list. */
#ifndef FERRY_UTIL_READFILE_H
#define FERRY_UTIL_READFILE_H

#include <stddef.h>

/* The whole of the open file fd, up to `max` bytes, into *data (owned by the
 * caller; a caller that allows max - 1 bytes can then say a file is too
 * large). Only a regular file is read (a FIFO would block): anything else is
 * -EINVAL. 0, or -ENOMEM / -errno; fd stays open. */
int read_regular_fd(int fd, size_t max, char **data, size_t *len);
/* The same for a file the user named on purpose, which may also be a pipe
 * or a terminal (`--exclude-from=-`, `<(...)`): read until its end (waiting
 * for it, also on a non-blocking fd), up to `max` bytes. */
int read_stream_fd(int fd, size_t max, char **data, size_t *len);

#endif
