/* SPDX-License-Identifier: MIT */
/* -b, --backup-dir, --suffix, as rsync has them: what a transfer replaces
 * or deletes is kept, beside it as NAME~ or under a directory of the
 * destination. Everything goes through the receiver's jail. */
#ifndef FERRY_SESSION_BACKUP_H
#define FERRY_SESSION_BACKUP_H

#include "fs/jail.h"

struct backup {
	const struct jail *j;      /* the receiver's (narrowed) jail */
	const char *dir;           /* relative to the jail's root; NULL = beside the file */
	const char *suffix;        /* NULL = rsync's default: "~", or "" with a dir */
};

/* Keeps dirfd/name (wire path wpath) before it goes: move = 0 makes a hard
 * link (the name stays until the rename over it, so the replacement is still
 * atomic), move = 1 renames it away (deletion; directories too). A backup of
 * the same name made before is replaced, except that a directory merges
 * into an older backup directory (fs/merge.h). A backup that would be the
 * file itself is refused. 0, or <0 with err_msg(). */
int backup_keep(const struct backup *b, int dirfd, const char *name, const char *wpath, int move);
/* 1 if wpath (or `name` in its directory) is a backup this makes, or the
 * backup directory: --delete leaves them alone, as rsync's protect rule. */
int backup_is_ours(const struct backup *b, const char *wpath, const char *name);

#endif
