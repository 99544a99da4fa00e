/* SPDX-License-Identifier: MIT */
#include "fs/merge.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/dirlist.h"
#include "fs/meta.h"
#include "fs/quote.h"
#include "util/err.h"

static int move_at(int sdir, const char *sname, int ddir, const char *dname, int depth);

/* Both are directories: sname's entries go into dname, then sname. */
static int merge_dirs(int sdir, const char *sname, int ddir, const char *dname, int depth)
{
	char q[FS_QUOTE_BUF];
	struct dirlist l;
	int r = 0;

	if (depth >= FS_MERGE_DEPTH)
		return err_set(-ELOOP, "%s: more than %d levels to merge into an older one",
			       fs_quote(q, sname, strlen(sname)), FS_MERGE_DEPTH);
	int sfd = openat(sdir, sname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0)
		return err_sys(-errno, "open %s", fs_quote(q, sname, strlen(sname)));
	int dfd = openat(ddir, dname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		r = err_sys(-errno, "open %s", fs_quote(q, dname, strlen(dname)));
		close(sfd);
		return r;
	}
	/* A receiver that is not root writes only where the mode lets it: the
	 * directory emptied (it goes) and the one filled (its mode comes back)
	 * are opened u+wx when ours, as fs_remove_tree_force does. */
	struct stat sst, dst;
	int dmode = -1;
	if (fstat(sfd, &sst) == 0 && (sst.st_mode & 0300) != 0300 && sst.st_uid == geteuid())
		(void)fchmod(sfd, (sst.st_mode & 07777) | 0700);
	if (fstat(dfd, &dst) == 0 && (dst.st_mode & 0300) != 0300 && dst.st_uid == geteuid() &&
	    fchmod(dfd, (dst.st_mode & 07777) | 0700) == 0)
		dmode = (int)(dst.st_mode & 07777);
	r = dirlist_read(sfd, &l);
	for (size_t i = 0; r >= 0 && i < l.n; i++)
		r = move_at(sfd, l.ents[i].name, dfd, l.ents[i].name, depth + 1);
	dirlist_free(&l);
	if (dmode >= 0)
		(void)fchmod(dfd, (mode_t)dmode);
	close(dfd);
	close(sfd);
	if (r >= 0 && unlinkat(sdir, sname, AT_REMOVEDIR) < 0)
		r = err_sys(-errno, "remove directory %s", fs_quote(q, sname, strlen(sname)));
	return r < 0 ? r : 0;
}

static int move_at(int sdir, const char *sname, int ddir, const char *dname, int depth)
{
	char q[FS_QUOTE_BUF];
	struct stat ss, ds;
	int r;

	if (fstatat(sdir, sname, &ss, AT_SYMLINK_NOFOLLOW) < 0)
		return err_sys(-errno, "%s", fs_quote(q, sname, strlen(sname)));
	int have = fstatat(ddir, dname, &ds, AT_SYMLINK_NOFOLLOW) == 0;
	if (!have && errno != ENOENT)
		return err_sys(-errno, "%s", fs_quote(q, dname, strlen(dname)));
	if (have && S_ISDIR(ds.st_mode) && S_ISDIR(ss.st_mode))
		return merge_dirs(sdir, sname, ddir, dname, depth);
	/* two names of one file (a backup made by link whose rename failed, a
	 * tree copied with cp -al): rename(2) would do nothing */
	if (have && ss.st_dev == ds.st_dev && ss.st_ino == ds.st_ino) {
		if (unlinkat(sdir, sname, 0) < 0)
			return err_sys(-errno, "remove %s", fs_quote(q, sname, strlen(sname)));
		return 0;
	}
	/* rename(2) replaces a directory by a directory or a file by a file only */
	if (have && (S_ISDIR(ds.st_mode) || S_ISDIR(ss.st_mode)) &&
	    (r = fs_remove_tree(ddir, dname)) < 0)
		return r;
	/* two files (or nothing at dname): the rename replaces at once */
	if (renameat(sdir, sname, ddir, dname) == 0)
		return 0;
	/* a directory that changes parent needs write on itself (its ".."):
	 * one of ours is opened u+w for the move and given its mode back */
	if (errno == EACCES && S_ISDIR(ss.st_mode) && ss.st_uid == geteuid() &&
	    fchmodat(sdir, sname, (ss.st_mode & 07777) | 0200, 0) == 0) {
		if (renameat(sdir, sname, ddir, dname) == 0) {
			(void)fchmodat(ddir, dname, ss.st_mode & 07777, 0);
			return 0;
		}
		int e = errno;
		(void)fchmodat(sdir, sname, ss.st_mode & 07777, 0);
		errno = e;
	}
	return err_sys(-errno, "move %s", fs_quote(q, sname, strlen(sname)));
}

int fs_move_merge(int sdir, const char *sname, int ddir, const char *dname)
{
	return move_at(sdir, sname, ddir, dname, 0);
}
