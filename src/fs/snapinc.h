/* SPDX-License-Identifier: MIT */
/* The increment a push is writing: before the receiver replaces, deletes or
 * changes the metadata of an entry in place, the entry's old state goes into
 * the history (snapstore.h), and a new entry is noted as added. Every record
 * is written to the push's log before the change it describes, so a push
 * that is killed is undone from its log by the next one (snapinc_recover):
 * a snapshot is all of a push or none of it. */
#ifndef FERRY_FS_SNAPINC_H
#define FERRY_FS_SNAPINC_H

#include <stdint.h>
#include <sys/stat.h>

#include "fs/jail.h"
#include "fs/snapstore.h"

struct snapinc {
	const struct jail *mod;   /* the module's jail: paths are relative to it */
	int hist, snaps, lock;    /* owned fds */
	int dir, obj, log;        /* the increment in progress: NAME.tmp, its o/, its log */
	int dirs;                 /* ... and the stats of the directories it changes */
	uint32_t ndirs;
	char parent[PATH_MAX_WIRE + 1];   /* the directory of the last change */
	int record;               /* 0 before the first snapshot: nothing to keep */
	uint32_t nobj;
	uint64_t files, bytes;    /* changes seen */
	uint64_t failed;          /* set before the commit: files the push did not bring */
	char last[SNAP_NAME_MAX]; /* the latest snapshot's name, "" if none */
	char client[SNAP_CLIENT_MAX + 1];
	/* a summary of the log for snapinc_changed_below: a bit per hash of
	 * each directory something below was logged in (owned, SNAPINC_BELOW_BITS;
	 * NULL: none, the log is read) */
	uint8_t *below;
	int committed;            /* snapinc_commit ran: made, name say what it did */
	int made;
	char name[SNAP_NAME_MAX];
};

/* Locks the history (waiting for another push), undoes a push that did not
 * finish, and starts a new increment. */
int snapinc_begin(struct snapinc *s, const struct jail *mod, const char *client);
/* Keeps the entry dirfd/name (module path `path`) as it is now: move = 1
 * renames it into the history (it is being deleted); move = 0 links it (a
 * non-directory about to be replaced by a rename over it). */
int snapinc_keep(struct snapinc *s, int dirfd, const char *name, const char *path, int move);
/* 1 if this push changed something below directory `path` already. */
int snapinc_changed_below(struct snapinc *s, const char *path);
/* Notes that `path`, absent before this push, is about to be created. */
int snapinc_added(struct snapinc *s, const char *path);
/* Keeps the mode, owner and mtime an entry had (`old`, its stat) before they
 * change in place. */
int snapinc_meta(struct snapinc *s, const struct stat *old, const char *path);
/* Counts a file written (its bytes), for the snapshot's info. */
void snapinc_count(struct snapinc *s, uint64_t bytes);
/* The push is complete: a snapshot named by the time now, if anything
 * changed (s->made = 1, s->name), else nothing. Unlocks. The receiver calls
 * it before it reports success, so that a client told "done" never finds
 * the push undone; on failure everything is undone. */
int snapinc_commit(struct snapinc *s);
/* The push failed: everything it changed is undone now. Unlocks. */
int snapinc_abort(struct snapinc *s);

/* With the history locked exclusively: a push that did not finish (killed,
 * or its undo cut short by a failing disk) is undone now. Every reader of
 * a snapshot calls it first: until it runs, the module's tree holds that
 * push's changes, which belong to no snapshot. 0 or <0. */
int snapinc_settle(const struct jail *mod, int snaps);

/* Undoes an unfinished push's increment `tmpname` in snaps (the lock held). */
int snapinc_recover(const struct jail *mod, int snaps, const char *tmpname);

#endif
