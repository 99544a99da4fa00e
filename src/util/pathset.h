/* SPDX-License-Identifier: MIT */
/* rsync's --files-from list: the exact paths to send, relative to the source
 * directory, read as rsync reads them (an entry ends at a newline, a carriage
 * return or a NUL, or only at a NUL with --from0; blank entries and
 * whole-entry comments starting with '#' or ';' are ignored; leading slashes
 * are removed and ".." resolved away, so no entry rises above the source;
 * "dir/" also sends the directory's immediate contents). A walker asks of
 * each entry it meets whether the list wants it: listed, a directory on the
 * way to something listed (rsync's implied directories), in a "dir/" listed,
 * or below a listed directory with -r. The PC holds the list: sorted paths,
 * one array. */
#ifndef FERRY_UTIL_PATHSET_H
#define FERRY_UTIL_PATHSET_H

#include <stddef.h>

#define PATHSET_MAX_PATH 4096   /* bytes of one entry once resolved */

struct pathset_ent {
	char *path;        /* resolved, no leading or trailing '/'; "" = the source itself */
	unsigned contents; /* listed as "dir/": its immediate entries too */
	unsigned seen;     /* the walk met it (pathset_wants said so) */
	unsigned way_only; /* a symlink listed with paths below it: only the directory on
			      their way (pathset_link_on_way) */
};

struct pathset {
	struct pathset_ent *e;   /* owned, sorted by strcmp of path, no two equal */
	size_t n;
	char *arena;             /* owned: the paths */
	int recursive;           /* -r: everything below a listed directory too */
	const char *origin;      /* how a missing entry is said: "listed in --files-from" or
				    NULL (-R's sources); not owned */
};

/* Parses `len` bytes of a list (nul_sep: --from0). `what` names it in an
 * error ("--files-from list.txt"): an entry longer than PATHSET_MAX_PATH is
 * -ENAMETOOLONG, naming its number. 0, or -errno with err_set(); on error
 * nothing is left allocated. */
int pathset_parse(struct pathset *ps, const char *data, size_t len, int nul_sep, const char *what);
void pathset_free(struct pathset *ps);

/* What the list says of `path` (relative to the source, not ""), a
 * directory or not; a listed path is marked seen. */
enum pathset_want {
	PATHSET_NO = 0,      /* not sent */
	PATHSET_LISTED,      /* listed itself */
	PATHSET_LISTED_DIR,  /* listed as "dir/" (or "dir/."): with its immediate entries */
	PATHSET_WITHIN,      /* in a "dir/" listed, or below a listed one with -r */
	PATHSET_IMPLIED,     /* only a directory on the way to something listed: as in
				rsync, the filter rules do not apply to it */
};
enum pathset_want pathset_wants(struct pathset *ps, const char *path, int is_dir);
/* Whether the directory `path` ("" = the source) is sent whole, all its
 * entries listed (so --delete may mirror it, as rsync's does where a
 * directory's contents are sent): listed as "dir/", or with -r listed or
 * below a listed one. Not a directory on the way. Marks nothing seen. */
int pathset_complete(const struct pathset *ps, const char *path);
/* The walk met `path`, listed, as a symlink to a directory: when paths
 * listed below it go through it, the directory on their way wins, as in
 * rsync (the link is not sent, and the directory holds only what is listed
 * below it): 1, and the entry counts as a directory on the way from now on.
 * Else 0: the link is sent as a link. */
int pathset_link_on_way(struct pathset *ps, const char *path);
/* Whether path[0..n) is listed itself (-x: each listed path is a source of
 * its own, whose file system the walk keeps to below it). */
int pathset_is_listed(const struct pathset *ps, const char *path, size_t n);
/* Every entry not seen again (a walk that only counted has been). */
void pathset_unsee(struct pathset *ps);
/* The entry for the source itself (".", "/", "x/.."), or NULL. */
const struct pathset_ent *pathset_root(const struct pathset *ps);

#endif
