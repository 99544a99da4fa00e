/* SPDX-License-Identifier: MIT */
/* Moving a tree onto a place that may already hold an older one: what -b
 * and --backup-dir do with a directory that a transfer deletes or
 * replaces. rsync keeps a directory's files one by one, so an older backup
 * directory of the same path keeps whatever the new one does not hold;
 * a rename of the whole tree over it would lose that. */
#ifndef FERRY_FS_MERGE_H
#define FERRY_FS_MERGE_H

/* Moves sdir/sname to ddir/dname. Where both are directories, each entry
 * of sname is moved into dname by the same rule and sname is removed once
 * empty, so dname keeps what only it held; anything else at dname is
 * replaced (removed first, a tree whole). Symlinks are never followed.
 * Paths where both sides hold a directory deeper than FS_MERGE_DEPTH are
 * refused (-ELOOP) with what was not moved left in place: nothing is lost.
 * 0, or <0 with err_msg(). */
#define FS_MERGE_DEPTH 128
int fs_move_merge(int sdir, const char *sname, int ddir, const char *dname);

#endif
