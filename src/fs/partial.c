/* SPDX-License-Identifier: MIT */
#include "fs/partial.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fs/meta.h"
#include "util/err.h"

#define PRE (sizeof FS_PART_PREFIX - 1)
#define ID_LEN 20

/* FNV-1a: a cut name only has to differ from other cut names. */
static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 0x100000001b3ull;
	return h;
}

int fs_partial_name(char out[256], const char *final)
{
	size_t n = strlen(final);

	if (!n || n > 255 || strchr(final, '/') || !strcmp(final, ".") || !strcmp(final, ".."))
		return err_set(-EINVAL, "invalid file name for a partial");
	if (PRE + n <= 255) {
		memcpy(out, FS_PART_PREFIX, PRE);
		memcpy(out + PRE, final, n + 1);
		return 0;
	}
	/* cut: prefix, the first bytes of the name, "~" and 16 hex digits */
	size_t keep = 255 - PRE - 17;
	snprintf(out, 256, "%s%.*s~%016llx", FS_PART_PREFIX, (int)keep, final,
		 (unsigned long long)name_hash(final));
	return 0;
}

int fs_is_partial_name(const char *name)
{
	return !strncmp(name, FS_PART_PREFIX, PRE) && name[PRE];
}

int fs_partial_final(const char *partial, char out[256])
{
	size_t n = strlen(partial);

	if (!fs_is_partial_name(partial) || n == 255)   /* a cut name: not known */
		return 0;
	memcpy(out, partial + PRE, n - PRE + 1);
	return 1;
}

static void id_encode(uint8_t b[ID_LEN], const struct fs_part_id *id)
{
	uint64_t v[2] = { id->size, (uint64_t)id->mtime_s };

	for (int k = 0; k < 2; k++)
		for (int i = 0; i < 8; i++)
			b[k * 8 + i] = (uint8_t)(v[k] >> (56 - 8 * i));
	for (int i = 0; i < 4; i++)
		b[16 + i] = (uint8_t)(id->mtime_ns >> (24 - 8 * i));
}

int fs_partial_tag(int fd, const struct fs_part_id *id)
{
	uint8_t b[ID_LEN];

	id_encode(b, id);
	return fsetxattr(fd, FS_PART_XATTR, b, sizeof b, 0) < 0 ? -errno : 0;
}

void fs_partial_untag(int fd)
{
	fremovexattr(fd, FS_PART_XATTR);
}

static int no_xattrs(int err)
{
	return err == ENOTSUP || err == EOPNOTSUPP || err == ENOSYS;
}

/* 1 if the open fd carries a partial's tag, or no tag can be kept there. */
static int tagged(int fd)
{
	uint8_t got[ID_LEN + 1];
	ssize_t n = fgetxattr(fd, FS_PART_XATTR, got, sizeof got);

	return n == ID_LEN || (n < 0 && no_xattrs(errno));
}

int fs_partial_ours(int dirfd, const char *name)
{
	struct stat st;

	if (!fs_is_partial_name(name))
		return 0;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return 0;
	int ours = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && tagged(fd);
	close(fd);
	return ours;
}

/* 1: made for id; 0: made for another version (or unreadable); -1: no tag
 * can be kept here (no xattrs), so nothing is known; -2: no tag at all, so
 * not ferry's (a user's file of that name). */
static int id_matches(int fd, const struct fs_part_id *id)
{
	uint8_t want[ID_LEN], got[ID_LEN + 1];
	ssize_t n = fgetxattr(fd, FS_PART_XATTR, got, sizeof got);

	if (n < 0 && no_xattrs(errno))
		return -1;
	if (n < 0 && errno == ENODATA)
		return -2;
	id_encode(want, id);
	return n == ID_LEN && !memcmp(want, got, ID_LEN);
}

int fs_partial_open(int dirfd, const char *final, const struct fs_part_id *id, uint64_t *size,
		    int *discarded)
{
	char name[256];
	struct stat st;

	*discarded = 0;
	if (fs_partial_name(name, final) < 0)
		return -1;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	/* another session writing it holds the lock: leave it alone */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return -1;
	}
	int match = id_matches(fd, id);
	if (match == -2) {   /* a user's file: neither used nor removed */
		close(fd);
		return -1;
	}
	if (!match) {
		unlinkat(dirfd, name, 0);
		close(fd);
		*discarded = 1;
		return -1;
	}
	*size = (uint64_t)st.st_size;
	return fd;
}

/* renameat2(RENAME_NOREPLACE) by its syscall: musl before 1.2.5 has no
 * wrapper. -1 with errno as the syscall's. */
int fs_rename_noreplace(int dirfd, const char *from, const char *to)
{
	return (int)syscall(SYS_renameat2, dirfd, from, dirfd, to, 1u /* RENAME_NOREPLACE */);
}
