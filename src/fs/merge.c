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
	r = dirlist_read(sfd, &l);
	for (size_t i = 0; r >= 0 && i < l.n; i++)
		r = move_at(sfd, l.ents[i].name, dfd, l.ents[i].name, depth + 1);
	dirlist_free(&l);
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
	if (fstatat(ddir, dname, &ds, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT)
			return err_sys(-errno, "%s", fs_quote(q, dname, strlen(dname)));
	} else if (S_ISDIR(ds.st_mode) && S_ISDIR(ss.st_mode)) {
		return merge_dirs(sdir, sname, ddir, dname, depth);
	} else if ((S_ISDIR(ds.st_mode) || S_ISDIR(ss.st_mode)) &&
		   (r = fs_remove_tree(ddir, dname)) < 0) {
		return r;   /* rename(2) replaces a directory by a directory or a file by a file only */
	}
	/* two files (or nothing at dname): the rename replaces at once */
	if (renameat(sdir, sname, ddir, dname) < 0)
		return err_sys(-errno, "move %s", fs_quote(q, sname, strlen(sname)));
	return 0;
}

int fs_move_merge(int sdir, const char *sname, int ddir, const char *dname)
{
	return move_at(sdir, sname, ddir, dname, 0);
}
