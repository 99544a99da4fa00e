/* SPDX-License-Identifier: MIT */
#include "session/resume.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/log.h"

static int open_old(int dirfd, const char *name, uint64_t *size)
{
	struct stat st;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	*size = (uint64_t)st.st_size;
	return fd;
}

int resume_open(struct basis *b, int dirfd, const char *leaf, int old, int part,
		const struct fs_part_id *id)
{
	int discarded = 0;

	basis_init(b);
	if (old)
		b->fd[0] = open_old(dirfd, leaf, &b->size[0]);
	if (part) {
		b->fd[1] = fs_partial_open(dirfd, leaf, id, &b->size[1], &discarded);
		if (discarded)
			log_info("%s: the partial file is of an older version; removed", leaf);
		if (b->fd[1] >= 0 && (off_t)b->size[1] < RESUME_MIN) {
			close(b->fd[1]);
			b->fd[1] = -1;
		}
	}
	return (b->fd[0] >= 0) + (b->fd[1] >= 0);
}

void resume_begin(const struct basis *b, int dirfd, const char *leaf)
{
	char name[256];

	/* The name goes now, the data stays readable through the basis's fd:
	 * the new partial takes the name and, written from the start in file
	 * order, holds all of the old one's data again a moment later. Moving
	 * it aside instead left a temporary behind whenever the receiver was
	 * killed in between. */
	if (b->fd[1] >= 0 && fs_partial_name(name, leaf) == 0)
		unlinkat(dirfd, name, 0);
}

void resume_drop(int dirfd, const char *leaf)
{
	char name[256];

	if (fs_partial_name(name, leaf) < 0 || !fs_partial_ours(dirfd, name))
		return;   /* an untagged one is a user's file of that name */
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)   /* nobody writing it */
		unlinkat(dirfd, name, 0);
	close(fd);
}
