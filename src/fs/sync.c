/* SPDX-License-Identifier: MIT */
#include "fs/sync.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "util/err.h"

int fs_syncfs(int fd)
{
	int rfd = -1;
	int r = 0;

	if (syncfs(fd) == 0)
		return 0;
	if (errno != EBADF)
		return err_sys(-errno, "syncfs");
	/* The kernel refuses O_PATH fds here; a directory can be reopened. */
	rfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return err_sys(-EBADF, "syncfs");
	if (syncfs(rfd) < 0)
		r = err_sys(-errno, "syncfs");
	close(rfd);
	return r;
}
