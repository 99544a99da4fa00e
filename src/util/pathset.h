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
};

struct pathset {
	struct pathset_ent *e;   /* owned, sorted by strcmp of path, no two equal */
	size_t n;
	char *arena;             /* owned: the paths */
	int recursive;           /* -r: everything below a listed directory too */
};

/* Parses `len` bytes of a list (nul_sep: --from0). `what` names it in an
 * error ("--files-from list.txt"): an entry longer than PATHSET_MAX_PATH is
 * -ENAMETOOLONG, naming its number. 0, or -errno with err_set(); on error
 * nothing is left allocated. */
int pathset_parse(struct pathset *ps, const char *data, size_t len, int nul_sep, const char *what);
void pathset_free(struct pathset *ps);

/* 1 if the walk should send `path` (relative to the source, not ""), which
 * is a directory or not; marks a listed path seen. */
int pathset_wants(struct pathset *ps, const char *path, int is_dir);

#endif
