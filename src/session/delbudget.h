/* SPDX-License-Identifier: MIT */
/* --max-delete=NUM, as rsync's: a run deletes at most NUM entries of those
 * --delete finds extraneous, each file, link and directory inside a deleted
 * directory counted (so one stray `rm -rf` of a top directory on the source
 * is not one deletion). An entry that would pass the limit is left whole,
 * with all below it, and so is every one after it, counted as skipped; the
 * client says how many and exits 25. What makes room for an entry of
 * another type is not counted, as in rsync. */
#ifndef FERRY_SESSION_DELBUDGET_H
#define FERRY_SESSION_DELBUDGET_H

#include <stdint.h>

#include "fs/meta.h"

struct del_budget {
	int on;              /* a limit was asked for */
	uint32_t limit;
	uint64_t used;       /* entries deleted (or, with -n, that would be) */
	uint64_t skipped;    /* entries left because of the limit */
};

/* May dirfd/name (a directory when is_dir; keep() says what its deletion
 * keeps inside) be deleted within the budget? 1 (and counted), 0 (counted
 * as skipped), <0 when it cannot be counted. */
int del_budget_take(struct del_budget *b, int dirfd, const char *name, int is_dir,
		    fs_keep_fn keep, void *ctx);

#endif
