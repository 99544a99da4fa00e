/* SPDX-License-Identifier: MIT */
/* The stale-temporary sweep: a session that was killed (power cut, SIGKILL,
 * OOM) leaves its ".ferry-XXXXXX.<name>" temporary behind; the daemon walks
 * each module now and then and removes the ones nobody has touched for long.
 * The walk is iterative (a stack of paths on the heap), holds one directory
 * fd at a time, opens every directory through the jail (never through a
 * symlink) and removes only names of the exact form fs_tmp_name makes, and
 * at a module's root the disk-test directories of `ferry bench`
 * (".ferry-bench-" + 6 hex digits, holding regular files only). */
#ifndef FERRY_FS_SWEEP_H
#define FERRY_FS_SWEEP_H

#include "fs/jail.h"

struct sweep_stats {
	unsigned long dirs;      /* directories read */
	unsigned long removed;   /* temporaries removed */
	unsigned long partials;  /* partials (resume) removed */
	unsigned long skipped;   /* directories that could not be read, or too deep */
};

/* Removes, below the jail's root, every regular file or symlink whose name
 * fs_is_tmp_name accepts and whose mtime and ctime are both more than
 * max_age seconds old (ctime too: a temporary gets the source's mtime just
 * before its rename, so an old mtime alone can be a file about to land).
 * Partials that an interrupted transfer kept for resume (fs/partial.h) go
 * the same way after part_age (0: never), unless a session is writing one
 * (its lock). Unreadable directories are counted and skipped, not fatal. 0, or -errno
 * (out of memory, the root unreadable) with err_msg() set. */
int fs_sweep_stale(const struct jail *j, long max_age, long part_age, struct sweep_stats *st);

#endif
