/* SPDX-License-Identifier: MIT */
#include "fs/spool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs/meta.h"

/* A record: kind (1 byte), the path's length (2 bytes, little-endian), the
 * path (no NUL). */

/* a named temporary, unlinked at once: as unnamed, where O_TMPFILE is not */
static int open_named(int dirfd)
{
	char name[256];
	int fd = fs_open_tmp(dirfd, "spool", name);

	if (fd >= 0 && unlinkat(dirfd, name, 0) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

static int open_unnamed(int dirfd)
{
#ifdef FERRY_TEST_HOOKS
	if (getenv("FERRY_TEST_NO_TMPFILE"))   /* test builds: as on vfat */
		return -EOPNOTSUPP;
#endif
	return fs_open_unnamed(dirfd);
}

int spool_open(struct spool *s, int dirfd, enum spool_how how)
{
	*s = (struct spool){ 0 };
	int fd = how == SPOOL_NAMED ? -EOPNOTSUPP : open_unnamed(dirfd);
	if (fd == -EOPNOTSUPP && how != SPOOL_UNNAMED)
		fd = open_named(dirfd);
	if (fd < 0)
		return fd;
	if (!(s->f = fdopen(fd, "w+"))) {
		int e = -errno;
		close(fd);
		return e;
	}
	return 0;
}

int spool_open_tmp(struct spool *s)
{
	*s = (struct spool){ 0 };
	return (s->f = tmpfile()) ? 0 : -errno;
}

int spool_add(struct spool *s, uint8_t kind, const char *path)
{
	size_t len = strlen(path);
	uint8_t head[3] = { kind, (uint8_t)(len & 0xff), (uint8_t)(len >> 8) };

	if (s->reading || s->failed || len > SPOOL_MAX_PATH)
		return -EINVAL;
	errno = 0;
	if (fwrite(head, 1, sizeof head, s->f) != sizeof head || fwrite(path, 1, len, s->f) != len) {
		s->failed = 1;
		return errno ? -errno : -EIO;
	}
	s->n++;
	return 0;
}

int spool_each(struct spool *s, int (*fn)(void *arg, uint8_t kind, const char *path), void *arg)
{
	char path[SPOOL_MAX_PATH + 1];
	uint8_t head[3];

	s->reading = 1;
	if (s->failed)
		return -EIO;
	if (fflush(s->f) != 0 || fseeko(s->f, 0, SEEK_SET) != 0)
		return -errno;
	for (uint64_t i = 0; i < s->n; i++) {
		if (fread(head, 1, sizeof head, s->f) != sizeof head)
			return ferror(s->f) ? -EIO : -EBADMSG;
		size_t len = head[1] | (size_t)head[2] << 8;
		if (len > SPOOL_MAX_PATH || fread(path, 1, len, s->f) != len)
			return ferror(s->f) ? -EIO : -EBADMSG;
		path[len] = '\0';
		if (memchr(path, '\0', len))
			return -EBADMSG;
		int rc = fn(arg, head[0], path);
		if (rc < 0)
			return rc;
	}
	return 0;
}

void spool_close(struct spool *s)
{
	if (s->f)
		fclose(s->f);
	*s = (struct spool){ 0 };
}
