/* SPDX-License-Identifier: MIT */
#include "fs/jail.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fs/quote.h"
#include "util/err.h"

#ifndef SYS_openat2
#define SYS_openat2 437   /* the same number on every architecture */
#endif

int path_check(const char *path, size_t len)
{
	char q[FS_QUOTE_BUF];
	size_t start = 0;

	if (len > PATH_MAX_WIRE)
		return err_set(-EINVAL, "path %s: longer than %d bytes (%zu)",
			       fs_quote(q, path, len), PATH_MAX_WIRE, len);
	if (len == 0)
		return 0;   /* the module root */
	if (memchr(path, '\0', len))
		return err_set(-EINVAL, "path %s: contains a NUL byte", fs_quote(q, path, len));
	if (path[0] == '/')
		return err_set(-EINVAL, "path %s: absolute paths are not allowed",
			       fs_quote(q, path, len));
	for (size_t i = 0; i <= len; i++) {
		if (i < len && path[i] != '/')
			continue;
		size_t n = i - start;
		const char *c = path + start;
		if (n == 0)
			return err_set(-EINVAL, "path %s: empty component (\"//\" or trailing \"/\")",
				       fs_quote(q, path, len));
		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return err_set(-EINVAL, "path %s: \".\" and \"..\" components are not allowed",
				       fs_quote(q, path, len));
		if (n > NAME_MAX_WIRE)
			return err_set(-EINVAL, "path %s: a component is longer than %d bytes",
				       fs_quote(q, path, len), NAME_MAX_WIRE);
		start = i + 1;
	}
	return 0;
}

static int sys_openat2(int dirfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(unsigned)flags,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS,
	};
	long r;

	/* EAGAIN: a concurrent rename somewhere; the kernel asks us to retry. */
	for (int tries = 0; tries < 8; tries++) {
		r = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
		if (r >= 0 || errno != EAGAIN)
			break;
	}
	return r < 0 ? -errno : (int)r;
}

int jail_open(struct jail *j, const char *root)
{
	const char *env = getenv("FERRY_NO_OPENAT2");
	int fd;

	j->root_fd = -1;
	j->have_openat2 = 0;
	j->follow = 0;
	fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return err_sys(-errno, "module root %s", root);
	j->root_fd = fd;
	if (env && env[0] && strcmp(env, "0") != 0)
		return 0;   /* forced fallback (tests, odd seccomp filters) */
	/* Any failure on "." means openat2 is unusable here (ENOSYS on old
	 * kernels, EPERM from some container seccomp profiles). */
	fd = sys_openat2(j->root_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		j->have_openat2 = 1;
	}
	return 0;
}

int jail_open_at(struct jail *out, const struct jail *parent, const char *rel)
{
	int fd = jail_open_dir(parent, rel, O_PATH);

	out->root_fd = -1;
	out->have_openat2 = parent->have_openat2;
	out->follow = 0;
	if (fd < 0)
		return fd;
	out->root_fd = fd;
	return 0;
}

void jail_close(struct jail *j)
{
	if (j->root_fd >= 0)
		close(j->root_fd);
	j->root_fd = -1;
}

/* Explains why opening component `name` (the prefix `path[0..plen)` of the
 * request ends with it) failed with `e`, naming a symlink as such. */
static int walk_error(int dfd, const char *name, const char *path, size_t plen, int e)
{
	char q[FS_QUOTE_BUF];
	struct stat st;

	fs_quote(q, path, plen);
	if ((e == -ELOOP || e == -ENOTDIR) &&
	    fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode))
			return err_set(-ELOOP, "%s is a symlink (not followed)", q);
		if (!S_ISDIR(st.st_mode))
			return err_set(-ENOTDIR, "%s is not a directory", q);
	}
	return err_sys(e, "open %s", q);
}

/* The portable walk: one openat(O_NOFOLLOW | O_DIRECTORY) per component,
 * at most two fds open at a time. `path` has passed path_check. */
static int walk_open(int root_fd, const char *path, size_t len, int flags)
{
	char name[NAME_MAX_WIRE + 1];
	int cur = root_fd;
	size_t start = 0;

	if (len == 0) {
		int fd = openat(root_fd, ".", flags | O_DIRECTORY | O_CLOEXEC);
		return fd >= 0 ? fd : err_sys(-errno, "open module root");
	}
	while (start < len) {
		const char *slash = memchr(path + start, '/', len - start);
		size_t end = slash ? (size_t)(slash - path) : len;
		int last = end == len;
		int f = last ? flags : O_PATH;
		int nfd;

		memcpy(name, path + start, end - start);
		name[end - start] = '\0';
		nfd = openat(cur, name, f | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0) {
			int e = walk_error(cur, name, path, end, -errno);
			if (cur != root_fd)
				close(cur);
			return e;
		}
		if (cur != root_fd)
			close(cur);
		cur = nfd;
		start = end + 1;
	}
	return cur;
}

/* A following jail's open: the path as it is, symlinks and all. */
static int follow_open(int root_fd, const char *path, size_t len, int flags)
{
	char buf[PATH_MAX_WIRE + 1], q[FS_QUOTE_BUF];
	int fd;

	memcpy(buf, len ? path : ".", len ? len : 1);
	buf[len ? len : 1] = '\0';
	fd = openat(root_fd, buf, flags | O_DIRECTORY | O_CLOEXEC);
	return fd >= 0 ? fd : err_sys(-errno, "open %s", fs_quote(q, path, len));
}

/* Opens directory path[0..len) under the root; path_check first. */
static int jail_open_len(const struct jail *j, const char *path, size_t len, int flags)
{
	char buf[PATH_MAX_WIRE + 1];
	int r = path_check(path, len);

	if (r < 0)
		return r;
	if (j->follow)
		return follow_open(j->root_fd, path, len, flags);
	if (!j->have_openat2)
		return walk_open(j->root_fd, path, len, flags);
	if (len == 0) {
		buf[0] = '.';
		buf[1] = '\0';
	} else {
		memcpy(buf, path, len);
		buf[len] = '\0';
	}
	r = sys_openat2(j->root_fd, buf, flags | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (r >= 0)
		return r;
	if (r == -ELOOP || r == -ENOTDIR || r == -EXDEV) {
		/* openat2 does not say which component; the walk does, and
		 * refuses symlinks just the same. */
		int e = r;
		r = walk_open(j->root_fd, path, len, flags);
		if (r < 0)
			return r;
		close(r);   /* raced with a rename: report the original refusal */
		r = e;
	}
	char q[FS_QUOTE_BUF];
	return err_sys(r, "open %s", fs_quote(q, path, len));
}

int jail_open_dir(const struct jail *j, const char *rel, int flags)
{
	return jail_open_len(j, rel, strlen(rel), flags);
}

int jail_open_parent(const struct jail *j, const char *rel, const char **leaf)
{
	size_t len = strlen(rel);
	const char *slash;
	int r;

	if (len == 0)
		return err_set(-EINVAL, "the module root has no parent");
	r = path_check(rel, len);
	if (r < 0)
		return r;
	slash = strrchr(rel, '/');
	/* O_RDONLY rather than O_PATH: the caller may readdir or fsync it. */
	r = jail_open_len(j, rel, slash ? (size_t)(slash - rel) : 0, O_RDONLY);
	if (r < 0)
		return r;
	*leaf = slash ? slash + 1 : rel;
	return r;
}

int jail_link_may_be_dir(const struct jail *j, const char *rel)
{
	char target[PATH_MAX_WIRE + 1], via[2 * PATH_MAX_WIRE + 2];
	const char *leaf;
	struct stat st;
	ssize_t n = -1;
	int pfd = rel[0] ? jail_open_parent(j, rel, &leaf) : -1;

	if (pfd < 0)
		return 0;
	int link = fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
	if (link)
		n = readlinkat(pfd, leaf, target, sizeof target - 1);
	close(pfd);
	if (!link)
		return 0;
	if (n <= 0)
		return 1;
	target[n] = '\0';
	int dl = (int)(leaf - rel);   /* the link's directory, with its '/' */
	if (path_check(target, (size_t)n) < 0 ||
	    snprintf(via, sizeof via, "%.*s%s", dl, rel, target) >= (int)sizeof via)
		return 1;
	int fd = jail_open_dir(j, via, O_PATH);
	if (fd >= 0)
		close(fd);
	return !(fd == -ENOENT || fd == -ENOTDIR);
}

int jail_mkdir(const struct jail *j, const char *rel, mode_t mode)
{
	char q[FS_QUOTE_BUF];
	const char *leaf;
	struct stat st;
	int dfd = -1;
	int r = 0;

	if (rel[0] == '\0')
		return path_check(rel, 0);   /* the root always exists */
	dfd = jail_open_parent(j, rel, &leaf);
	if (dfd < 0)
		return dfd;
	if (mkdirat(dfd, leaf, mode) == 0)
		goto out;
	if (errno != EEXIST) {
		r = err_sys(-errno, "mkdir %s", fs_quote(q, rel, strlen(rel)));
		goto out;
	}
	if (fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		r = err_sys(-errno, "stat %s", fs_quote(q, rel, strlen(rel)));
		goto out;
	}
	if (S_ISLNK(st.st_mode))
		r = err_set(-ENOTDIR, "mkdir %s: exists as a symlink (not followed)",
			    fs_quote(q, rel, strlen(rel)));
	else if (!S_ISDIR(st.st_mode))
		r = err_set(-ENOTDIR, "mkdir %s: exists and is not a directory",
			    fs_quote(q, rel, strlen(rel)));
out:
	if (dfd >= 0)
		close(dfd);
	return r;
}
