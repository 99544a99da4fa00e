/* SPDX-License-Identifier: MIT */
/* Filter rules in a transfer (docs/FILTERS.md): the rule list of
 * util/filter.h, the tree its dir-merge files are read from (through the
 * jail, never through a symlink), and the walk's place in it. The sender
 * asks before it lists an entry (excluded: not sent, a directory not
 * entered); the receiver asks before --delete removes one (excluded:
 * protected). The rules travel once, after the REQUEST, in FILTER records. */
#ifndef FERRY_SESSION_XFILTER_H
#define FERRY_SESSION_XFILTER_H

#include <stddef.h>
#include <stdint.h>

#include "fs/jail.h"
#include "session/conn.h"
#include "util/filter.h"

struct xfilter {
	struct filter_list *fl;       /* owned */
	const struct jail *jail;      /* where dir-merge files are read (borrowed) */
	char root[4097];              /* the transfer root inside it */
	char at[4097];                /* the directory entered last ("" = the root) */
	int entered;                  /* the root is entered */
	int local_merge;              /* merge files by their own names: the client's */
};

/* An empty list; local_merge: the client's, whose merge and -from files are
 * the user's own (read as named). */
int xfilter_init(struct xfilter *x, int local_merge, int delete_excluded);
void xfilter_free(struct xfilter *x);
/* Where dir-merge files are read from from now on: root inside j. */
void xfilter_place(struct xfilter *x, const struct jail *j, const char *root);
/* Enters and leaves directories until `dir` (relative to the transfer
 * root) is the one entered last, reading its dir-merge files. On failure
 * (err_msg() names the file and rule) `dir` is not entered: nothing in it
 * may be sent or deleted. */
int xfilter_goto(struct xfilter *x, const char *dir);
/* Leaves every directory (between two walks of the same list). */
void xfilter_leave_all(struct xfilter *x);
/* 1 if `path` (relative to the transfer root) is excluded for `side`; the
 * directory holding it must be the one entered last. NULL x: never. */
int xfilter_excluded(const struct xfilter *x, enum filter_side side, const char *path, int is_dir);

/* The module's own list (ferry.conf "exclude"), whose paths are the
 * module's: 1 if prefix/path (prefix: the transfer root inside the module)
 * or any directory above it is excluded (rsyncd's daemon excludes: an
 * excluded directory hides all below it). NULL fl: never. */
int xfilter_module_excluded(const struct filter_list *fl, const char *prefix, const char *path,
			    int is_dir);

/* A file of the client's own (--exclude-from, a merge rule's file): the
 * path as the user wrote it, "-" = standard input. *data is malloc'd. */
int xfilter_read_local(const char *path, char **data, size_t *len);

/* The client: FILTER records for the list (after REQUEST with REQ_FILTER). */
int xfilter_send(struct conn *c, const struct xfilter *x);
/* The server: the FILTER records after a REQUEST with REQ_FILTER, decoded
 * into x (made with xfilter_init(x, 0, 0)). -EBADMSG for records out of
 * order; the decoder's error (-EINVAL, -E2BIG, -EPROTO) for a bad list. */
int xfilter_recv(struct conn *c, struct xfilter *x);

#endif
