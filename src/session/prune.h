/* SPDX-License-Identifier: MIT */
/* rsync's -m/--prune-empty-dirs on a PC's push: a directory is sent only
 * when something that is not a directory is sent somewhere below it. The
 * sender asks before it lists a subdirectory; this looks ahead, depth first,
 * and stops at the first such entry. What it learns is kept, so that the
 * walk below does not look again: the last entry found (each directory above
 * it holds something) and the last directories found empty. */
#ifndef FERRY_SESSION_PRUNE_H
#define FERRY_SESSION_PRUNE_H

#include <sys/stat.h>

#include "fs/dirlist.h"

#define PRUNE_EMPTY_KEPT 64

/* Lists the directory wpath as the walk would send it: what the filters,
 * the list (-R, --files-from) or -x leave out and what is never sent are
 * not in *l. st: the directory's own. 0, or -errno. */
typedef int (*prune_list_fn)(void *ctx, const char *wpath, struct dirlist *l, struct stat *st);

struct prune {
	prune_list_fn list;
	void *ctx;
	char found[PATH_MAX_WIRE + 1];    /* the last entry found that is sent ("": none) */
	char *empty[PRUNE_EMPTY_KEPT];    /* a ring of directories found empty, owned */
	size_t next;
};

void prune_init(struct prune *p, prune_list_fn list, void *ctx);
void prune_free(struct prune *p);
/* 1 when something that is not a directory is sent below wpath, else 0. A
 * directory that cannot be read counts as holding something: the walk then
 * says why it cannot. */
int prune_has_file(struct prune *p, const char *wpath);

#endif
