/* SPDX-License-Identifier: MIT */
#include "session/backup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/merge.h"
#include "fs/meta.h"
#include "fs/quote.h"
#include "util/err.h"

static const char *suffix_of(const struct backup *b)
{
	return b->suffix ? b->suffix : b->dir ? "" : "~";
}

/* mkdir -p of `dir` inside the jail. */
static int mkdirs(const struct jail *j, const char *dir)
{
	char part[PATH_MAX_WIRE + 1];

	for (const char *p = dir; *p; p++) {
		if (p[1] != '/' && p[1] != '\0')
			continue;
		snprintf(part, sizeof part, "%.*s", (int)(p - dir + 1), dir);
		int rc = jail_mkdir(j, part, 0755);
		if (rc < 0 && rc != -EEXIST)
			return rc;
	}
	return 0;
}

/* The directory the backup of wpath goes into, open, and the backup's name. */
static int target(const struct backup *b, int dirfd, const char *name, const char *wpath,
		  char *bname, size_t cap)
{
	char path[PATH_MAX_WIRE + 1], q[FS_QUOTE_BUF];
	int rc;

	if ((size_t)snprintf(bname, cap, "%s%s", name, suffix_of(b)) >= cap || strlen(bname) > 255)
		return err_set(-ENAMETOOLONG, "%s: the backup's name is too long",
			       fs_quote(q, wpath, strlen(wpath)));
	if (!b->dir) {
		int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
		return fd < 0 ? err_sys(-errno, "dup") : fd;
	}
	const char *slash = strrchr(wpath, '/');
	int n = slash ? snprintf(path, sizeof path, "%s/%.*s", b->dir, (int)(slash - wpath), wpath)
		      : snprintf(path, sizeof path, "%s", b->dir);
	if ((size_t)n >= sizeof path)
		return err_set(-ENAMETOOLONG, "%s: backup path too long",
			       fs_quote(q, wpath, strlen(wpath)));
	if ((rc = mkdirs(b->j, path)) < 0)
		return rc;
	return jail_open_dir(b->j, path, O_RDONLY);
}

/* 1 if bfd/bname is dirfd/name itself (an empty suffix without a
 * directory, or a backup directory that is the file's own). */
static int is_itself(int dirfd, const char *name, int bfd, const char *bname)
{
	struct stat a, b;

	return !strcmp(name, bname) && fstat(dirfd, &a) == 0 && fstat(bfd, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int backup_keep(const struct backup *b, int dirfd, const char *name, const char *wpath, int move)
{
	char bname[512], q[FS_QUOTE_BUF];
	int bfd = target(b, dirfd, name, wpath, bname, sizeof bname), rc = 0;

	if (bfd < 0)
		return bfd;
	if (is_itself(dirfd, name, bfd, bname))
		rc = err_set(-EINVAL, "backup of %s: the backup would be the file itself",
			     fs_quote(q, wpath, strlen(wpath)));
	/* a deleted directory merges into an older backup of the same path, as
	 * rsync's file by file backups do; a file replaces the older one */
	else if (move && fs_move_merge(dirfd, name, bfd, bname) < 0)
		rc = err_wrap(-EIO, "backup of %s", fs_quote(q, wpath, strlen(wpath)));
	else if (!move && fs_remove_tree(bfd, bname) < 0)
		rc = err_wrap(-EIO, "backup of %s", fs_quote(q, wpath, strlen(wpath)));
	else if (!move && linkat(dirfd, name, bfd, bname, 0) < 0)
		rc = err_sys(-errno, "backup of %s", fs_quote(q, wpath, strlen(wpath)));
	close(bfd);
	return rc;
}

int backup_is_ours(const struct backup *b, const char *wpath, const char *name)
{
	const char *sfx = suffix_of(b);
	size_t n = strlen(name), s = strlen(sfx);

	if (b->dir)
		return !strcmp(wpath, b->dir);
	return s && n > s && !strcmp(name + n - s, sfx);
}
