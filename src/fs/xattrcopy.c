/* SPDX-License-Identifier: MIT */
#include "fs/xattrcopy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "util/err.h"

#define VALUE_MAX 65536   /* Linux's largest xattr value (XATTR_SIZE_MAX) */

/* The names a copy covers: what a daemon may read back and set. */
static int copied(const char *name)
{
	if (!strcmp(name, FS_XATTR_MARK))
		return 0;
	if (!strncmp(name, "user.", 5) || !strcmp(name, "system.posix_acl_access") ||
	    !strcmp(name, "system.posix_acl_default"))
		return 1;
	return geteuid() == 0 && (!strncmp(name, "trusted.", 8) || !strncmp(name, "security.", 9));
}

/* fd's names, NUL-separated, into *out (owned): the length, 0 for none
 * (or no xattrs on this file system), <0 on error. */
static ssize_t names_of(int fd, char **out)
{
	*out = NULL;
	for (;;) {
		ssize_t n = flistxattr(fd, NULL, 0);
		if (n < 0)
			return errno == ENOTSUP ? 0 : -errno;
		if (n == 0)
			return 0;
		char *b = malloc((size_t)n);
		if (!b)
			return -ENOMEM;
		ssize_t got = flistxattr(fd, b, (size_t)n);
		if (got >= 0) {
			*out = b;
			return got;
		}
		free(b);
		if (errno != ERANGE)   /* ERANGE: one was added in between */
			return -errno;
	}
}

static int has_name(const char *list, ssize_t len, const char *name)
{
	for (ssize_t i = 0; i < len; i += (ssize_t)strlen(list + i) + 1)
		if (!strcmp(list + i, name))
			return 1;
	return 0;
}

static int copy_one(int src, int dst, const char *name, char *val, size_t cap)
{
	ssize_t n = fgetxattr(src, name, val, cap);
	if (n < 0)
		return errno == ENODATA ? 0 : err_sys(-errno, "reading xattr %s", name);
	if (fsetxattr(dst, name, val, (size_t)n, 0) < 0)
		return err_sys(-errno, "setting xattr %s", name);
	return 0;
}

int fs_xattr_copy(int src, int dst)
{
	char *have = NULL, *want = NULL, *val = malloc(VALUE_MAX);
	ssize_t nh, nw = names_of(src, &want);
	int rc = nw < 0 ? err_sys((int)nw, "listing xattrs") : 0;

	if (!val)
		rc = err_set(-ENOMEM, "out of memory for xattrs");
	nh = rc == 0 ? names_of(dst, &have) : 0;
	if (nh < 0)
		rc = err_sys((int)nh, "listing xattrs");
	/* what dst has that src lacks (an inherited default ACL) goes first */
	for (ssize_t i = 0; rc == 0 && i < nh; i += (ssize_t)strlen(have + i) + 1)
		if (copied(have + i) && !has_name(want, nw, have + i) &&
		    fremovexattr(dst, have + i) < 0 && errno != ENODATA)
			rc = err_sys(-errno, "removing xattr %s", have + i);
	for (ssize_t i = 0; rc == 0 && i < nw; i += (ssize_t)strlen(want + i) + 1)
		if (copied(want + i))
			rc = copy_one(src, dst, want + i, val, VALUE_MAX);
	free(have);
	free(want);
	free(val);
	return rc;
}

int fs_xattr_mark(int fd)
{
	return fsetxattr(fd, FS_XATTR_MARK, "1", 1, 0) < 0 ? err_sys(-errno, "marking xattrs kept") : 0;
}

int fs_xattr_marked(int fd)
{
	char v;
	return fgetxattr(fd, FS_XATTR_MARK, &v, 1) == 1;
}

int fs_xattr_open(int dfd, const char *leaf)
{
	struct stat st;

	if (fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -1;
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	int fd = openat(dfd, leaf, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd >= 0 && (fstat(fd, &st) < 0 || (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)))) {
		close(fd);   /* replaced in between */
		errno = EINVAL;
		return -1;
	}
	return fd;
}

int fs_xattr_restore(int dir, const char *obj, int dfd, const char *leaf)
{
	int from = fs_xattr_open(dir, obj);
	int to = from < 0 || !fs_xattr_marked(from) ? -1 : fs_xattr_open(dfd, leaf);
	int rc = to < 0 ? 0 : fs_xattr_copy(from, to);

	if (to >= 0)
		close(to);
	if (from >= 0)
		close(from);
	return rc < 0 ? rc : to >= 0;
}
