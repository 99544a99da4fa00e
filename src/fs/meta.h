/* SPDX-License-Identifier: MIT */
/* What the receiver does to entries other than file contents, always relative
 * to a directory fd and never through a symlink: mode and mtime, symlinks
 * (created atomically), and deletion of whole trees (--delete). */
#ifndef FERRY_FS_META_H
#define FERRY_FS_META_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define FS_TMP_PREFIX ".ferry-"   /* every temporary name starts with this */

/* Writes ".ferry-XXXXXXCCCC.<prefix of final>" (6 random letters or digits,
 * 4 that check them and the rest of the name; at most 255 bytes) into
 * out[256]. Returns 0, or -EINVAL if `final` is not a single name. */
int fs_tmp_name(char out[256], const char *final);
/* 1 if `name` is one fs_tmp_name made (its check letters agree): such a
 * name may be another session's file in progress. A user's own
 * ".ferry-backup.tar" is not one (1 in 62^4 of names of that form are). */
int fs_is_tmp_name(const char *name);
/* A new empty file of our own in dirfd, open for reading and writing, 0600:
 * unnamed (O_TMPFILE: never linked, so nothing anyone can see changes), or
 * -EOPNOTSUPP where the file system or the kernel has no such file; -errno. */
int fs_open_unnamed(int dirfd);
/* The same under a fresh fs_tmp_name(final), written into name (never an
 * existing name), for a file system without O_TMPFILE; the caller unlinks it.
 * An fd, or -errno. */
int fs_open_tmp(int dirfd, const char *final, char name[256]);

/* Sets mode (& 07777) and mtime (ns; NULL = leave) on dirfd/name. A symlink
 * is not followed: it gets only the mtime (Linux links have no mode). */
int fs_set_meta(int dirfd, const char *name, mode_t mode, const struct timespec *mtime);

/* Creates dirfd/name as a symlink to target: symlinkat to a temporary name,
 * then renameat over `name` (replacing a file or symlink, never a directory:
 * that is -EISDIR). mtime may be NULL. */
int fs_symlink_atomic(int dirfd, const char *name, const char *target,
		      const struct timespec *mtime);

/* Deletes dirfd/name, whatever it is; a directory with everything below it.
 * Never follows a symlink (a link is removed, not what it points to). Uses a
 * bounded number of fds at any depth. A missing name is not an error. */
int fs_remove_tree(int dirfd, const char *name);
/* The same, but what keep(ctx, path, is_dir) says to keep inside the
 * directory stays, and so do the directories holding it (rsync's "cannot
 * delete non-empty directory"); path is relative to dirfd. Returns 1 when
 * something was kept, 0 when all is gone, <0 on error. */
/* The same, making each directory inside writable by its owner first (the
 * snapshot history's: a version can hold a 0555 directory a daemon that is
 * not root could not empty otherwise; and --delete's, as rsync's). */
int fs_remove_tree_force(int dirfd, const char *name);
typedef int (*fs_keep_fn)(void *ctx, const char *path, int is_dir);
int fs_remove_tree_keep(int dirfd, const char *name, fs_keep_fn keep, void *ctx);
/* How many entries fs_remove_tree_keep(dirfd, name, keep, ctx) would take:
 * name and everything below it, less what keep() protects and the
 * directories holding it. The walk stops once past limit (the count
 * returned is then above limit, not exact). 0 for a missing name, <0 on
 * error. */
int64_t fs_count_tree(int dirfd, const char *name, fs_keep_fn keep, void *ctx, uint64_t limit);

#endif
