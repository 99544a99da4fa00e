/* SPDX-License-Identifier: MIT */
/* One snapshot increment's records: what a push changed, as the paths of the
 * module it touched and what each was before (docs/DESIGN.md, "Snapshots").
 * A record is KIND (one byte), OBJ (8 hex digits) and the path, ended by a
 * NUL; no NUL before the path, so a record's start is found from anywhere.
 * While a push runs they are appended to a log; at commit they are sorted in
 * runs of at most SNAPIDX_RUN bytes (bounded memory whatever the change) so
 * that a directory's descendants follow it: '/' sorts before every byte. */
#ifndef FERRY_FS_SNAPIDX_H
#define FERRY_FS_SNAPIDX_H

#include <stddef.h>
#include <stdint.h>

#define SNAPIDX_HEAD 9                 /* kind + 8 hex digits */
#define SNAPIDX_RUN (1024 * 1024)      /* bytes of records sorted at once */
#define SNAPIDX_NEVER ".ferry-history" /* no record names it or what is in it */

enum snap_kind {
	SNAP_ADDED = 'A',   /* absent before the push */
	SNAP_OLD = 'O',     /* its old version, whole, is object OBJ */
	SNAP_META = 'M',    /* the same entry, whose old mode, owner and mtime object OBJ has */
	SNAP_PARENT = 'P',  /* log only: the directory holding it, as it was (entry OBJ of
			     * the log's "dirs"), for undoing a push; never indexed */
};

struct snaprec {
	char kind;
	uint32_t obj;
	const char *path;   /* into the index's mapping (or the caller's buffer) */
};

/* <0, 0, >0 as a sorts before, with, after b: bytewise, '/' lowest. */
int snapidx_cmp(const char *a, const char *b);

/* Encodes a record into buf (at least SNAPIDX_HEAD + strlen(path) + 1 bytes);
 * returns its length. */
size_t snapidx_encode(char *buf, char kind, uint32_t obj, const char *path);
/* Decodes the record at buf[0..len) (kind A, O, M or P); 0 or -EBADMSG. */
int snapidx_decode(const char *buf, size_t len, struct snaprec *out);
/* 1 if some record of the log (fd) has a path below `dir` (0 if not, <0 on
 * error): read from the start, for what only a misordered stream needs. */
int snapidx_log_has_below(int fd, const char *dir);
/* The same with the kinds `kinds` allows (a journal's, snapprune.c). */
int snapidx_decode_kinds(const char *buf, size_t len, const char *kinds, struct snaprec *out);

/* Sorts the records of the open log into dirfd/idx.0 ... idx.N-1 (*runs = N),
 * each run sorted, equal paths within a run keeping the first. P records
 * are left out. */
int snapidx_build(int dirfd, int logfd, unsigned *runs);

/* An increment's runs, mapped read-only (pages are read as looked at). */
struct snapidx {
	unsigned n;
	struct { const char *map; size_t len; } *run;   /* owned */
};

/* Maps dirfd/idx.0, idx.1, ... (as many as there are). */
int snapidx_open(struct snapidx *x, int dirfd);
void snapidx_close(struct snapidx *x);
/* The first record of `path` (earlier runs first): 1 and *out, or 0. */
int snapidx_find(const struct snapidx *x, const char *path, struct snaprec *out);
/* Calls fn(ctx, name, len) for the name of each direct child of `dir` ("" =
 * the top) that has a record of its own or below it; a name can come more
 * than once (once per run). Stops at fn's first nonzero return. */
typedef int (*snapidx_child_fn)(void *ctx, const char *name, size_t len);
int snapidx_children(const struct snapidx *x, const char *dir, snapidx_child_fn fn, void *ctx);

/* Every record of every run, run by run (a path may come once per run). */
typedef int (*snapidx_rec_fn)(void *ctx, const struct snaprec *r);
int snapidx_each(const struct snapidx *x, snapidx_rec_fn fn, void *ctx);
/* The records of a log (fd), last first, of the kinds `kinds`, each with
 * the offset it starts at: a record cut by a kill at the end is left out (it
 * was never acted on). */
typedef int (*snapidx_log_fn)(void *ctx, const struct snaprec *r, long long at);
int snapidx_log_reverse(int fd, const char *kinds, snapidx_log_fn fn, void *ctx);
/* Appends a record to a log; 0 or <0. */
int snapidx_log_append(int fd, char kind, uint32_t obj, const char *path);

#endif
