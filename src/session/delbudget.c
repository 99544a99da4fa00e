/* SPDX-License-Identifier: MIT */
#include "session/delbudget.h"

int del_budget_take(struct del_budget *b, int dirfd, const char *name, int is_dir,
		    fs_keep_fn keep, void *ctx)
{
	if (!b->on)
		return 1;
	/* once one is skipped, every later one is (rsync's "all further
	 * deletions"), though a smaller one might still fit */
	uint64_t left = b->skipped ? 0 : b->used < b->limit ? b->limit - b->used : 0;
	int64_t n = is_dir ? fs_count_tree(dirfd, name, keep, ctx, left) : 1;

	if (n < 0)
		return (int)n;
	if ((uint64_t)n > left) {
		/* past the limit the walk stopped: count the rest, for the report */
		if (is_dir)
			n = fs_count_tree(dirfd, name, keep, ctx, UINT64_MAX);
		b->skipped += n > 0 ? (uint64_t)n : 1;
		return 0;
	}
	b->used += (uint64_t)n;
	return 1;
}
