/* SPDX-License-Identifier: MIT */
/* Deleting snapshots from a module's history (snapstore.h), the history
 * locked exclusively. A deletion first renames the snapshot's directory to
 * NAME.h: that is its commit, no reader lists it again. What it held is then
 * folded away by snapprune_settle:
 *   - entries before the oldest snapshot left are removed whole, and that
 *     snapshot's own increment too (nothing older reads it): rm -rf;
 *   - a deleted snapshot between two others is merged into the next entry:
 *     its increment (what the snapshot before it had) and the next one's
 *     (what it had itself) become one, and the versions only it had are
 *     freed. The merge is written beside the next entry's increment
 *     (inc.new) with a journal of every rename, and takes its place once
 *     complete ("done"): a merge interrupted at any point is rolled back
 *     from its journal, or forward once done, by the next settle.
 * Settling is idempotent and runs before every push and prune. */
#ifndef FERRY_FS_SNAPPRUNE_H
#define FERRY_FS_SNAPPRUNE_H

#include "fs/jail.h"

/* Deletes snapshot `name` (never the latest: that is the module's tree) and
 * settles. -ENOENT if there is no such snapshot. */
int snapprune_delete(const struct jail *mod, int snaps, const char *name);
/* Finishes whatever deletions are pending (see above). */
int snapprune_settle(const struct jail *mod, int snaps);

#endif
