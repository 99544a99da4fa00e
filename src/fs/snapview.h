/* SPDX-License-Identifier: MIT */
/* Reading an older snapshot: the entries it had under one path are linked
 * into a view, .ferry-history/view.PID, mirroring the module's paths, and the
 * ordinary sender reads the view. Linking costs one directory entry per file
 * of what is read (no data is copied, no inode made except for directories)
 * and never the whole history: each entry is looked up in the increments of
 * the pushes after the snapshot, newest last, by binary search in their
 * indexes (snapidx.h). The history must be locked (shared) while a view is
 * made; once made it needs no lock: every inode it links is immutable (a
 * push replaces files by renaming new ones over them). */
#ifndef FERRY_FS_SNAPVIEW_H
#define FERRY_FS_SNAPVIEW_H

#include <stddef.h>

#include "fs/jail.h"
#include "fs/snapstore.h"

/* Makes the view of snapshot list[k] (of a chain of n, oldest first:
 * snapstore_chain) at module path
 * `path` ("" = all of it) and opens *out as a jail on the view's root, in
 * which `path` names what it named in the snapshot. -ENOENT if the
 * snapshot had no `path`. */
int snapview_make(const struct jail *mod, int hist, int snaps, const struct snapinfo *list,
		  size_t n, size_t k, const char *path, struct jail *out);
/* Removes the views left by sessions that are gone (one whose session still
 * reads it is locked, and stays). */
void snapview_clean(int hist);
/* Whether this process made a view (its jail is then the view's root). */
int snapview_active(void);
/* Removes what is in this process's view: what a session does once its
 * client is gone, so that no client waits for it (the next view's
 * snapview_clean removes the empty root and its lock). At the session's own
 * priority: it holds its slot under `max connections` until it is done. */
int snapview_drop(void);

#endif
