/* SPDX-License-Identifier: MIT */
/* A private spool of short records (a kind byte and a path) on disk, not in
 * memory: --delete-delay's deletions, found while a tree streams in and done
 * at its end, may be a million names on a box with 64 MB. The file has no
 * name (O_TMPFILE; where a file system lacks it, a temporary unlinked as soon
 * as it is open), so no one else sees or changes it, and a session that dies
 * leaves nothing behind. */
#ifndef FERRY_FS_SPOOL_H
#define FERRY_FS_SPOOL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SPOOL_MAX_PATH 4096   /* a record's path, at most (PATH_MAX_WIRE) */

struct spool {
	FILE *f;
	uint64_t n;          /* records written */
	int reading;
	int failed;          /* a write failed: what stdio held may be lost, so none is read */
};

enum spool_how {
	SPOOL_UNNAMED,   /* O_TMPFILE only (a dry run: it makes nothing anyone could see) */
	SPOOL_ANY,       /* O_TMPFILE, else a named temporary unlinked at once */
	SPOOL_NAMED,     /* the named way only (its tests) */
};

/* Opens an empty spool in the directory dirfd. 0, or -errno (-EOPNOTSUPP:
 * SPOOL_UNNAMED on a file system without O_TMPFILE). Test builds take
 * FERRY_TEST_NO_TMPFILE=1 as a file system without it. */
int spool_open(struct spool *s, int dirfd, enum spool_how how);
/* The same in the process's temporary directory (tmpfile(3)): where the
 * destination has no room for one; a box's sandbox keeps it out of /tmp. */
int spool_open_tmp(struct spool *s);
/* Appends one record; the spool must not have been read yet. */
int spool_add(struct spool *s, uint8_t kind, const char *path);
/* Reads the records back in order: each calls fn(arg, kind, path) until it
 * returns < 0 (which is returned). 0, or -errno (-EIO, and no record read,
 * after a write that failed), or -EBADMSG for a record that is not one
 * spool_add wrote (a truncated or damaged spool). */
int spool_each(struct spool *s, int (*fn)(void *arg, uint8_t kind, const char *path), void *arg);
void spool_close(struct spool *s);

#endif
