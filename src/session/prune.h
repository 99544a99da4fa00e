/* SPDX-License-Identifier: MIT */
/* rsync's -m/--prune-empty-dirs on a PC's push: a directory is sent only
 * when something that is not a directory is sent somewhere below it. The
 * sender asks before it lists a subdirectory; this looks ahead, depth first,
 * and stops at the first such entry. What it learns is kept, so that the
 * walk below does not look again: the last entries found and the deepest one
 * (each directory above one holds something), and the last directories
 * found empty. */
#ifndef FERRY_SESSION_PRUNE_H
#define FERRY_SESSION_PRUNE_H

#include <sys/stat.h>

#include "fs/dirlist.h"

#define PRUNE_EMPTY_KEPT 64
#define PRUNE_FOUND_KEPT 8

/* Lists the directory wpath as the walk would send it: what the filters,
 * the list (-R, --files-from) or -x leave out are not in *l. parent: the
 * stat of the directory it is in, or NULL for a source itself (-x). st:
 * its own. 0, or -errno. */
typedef int (*prune_list_fn)(void *ctx, const char *wpath, const struct stat *parent,
			     struct dirlist *l, struct stat *st);

struct prune {
	prune_list_fn list;
	void *ctx;
	char *found[PRUNE_FOUND_KEPT];    /* a ring of the last entries found, owned */
	char *deepest;                    /* the longest found, owned */
	char *empty[PRUNE_EMPTY_KEPT];    /* a ring of directories found empty, owned */
	size_t next_found, next_empty;
};

void prune_init(struct prune *p, prune_list_fn list, void *ctx);
/* Forgets what is known (another source's paths are other directories). */
void prune_forget(struct prune *p);
void prune_free(struct prune *p);
/* 1 when something that is not a directory is sent below wpath, else 0 (an
 * entry the walk would refuse with an error counts as sent: the walk then
 * says it). A directory that cannot be read, or a symlink loop, counts as
 * holding something: the walk says why. parent: as for the list. */
int prune_has_file(struct prune *p, const char *wpath, const struct stat *parent);

#endif
