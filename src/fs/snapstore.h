/* SPDX-License-Identifier: MIT */
/* A module's snapshot history (docs/DESIGN.md, "Snapshots"): reverse
 * increments. The module's tree is always the latest snapshot, a plain tree;
 * each push that changes it moves what it replaces or deletes into the
 * history, so an older snapshot is the latest tree with the newer pushes'
 * increments undone. The history lives in the module, hidden from its tree:
 *
 *   .ferry-history/lock            flock: a push holds it exclusively,
 *                                  a snapshot read shared
 *   .ferry-history/snaps/NAME/     one per snapshot: "info", and in inc/ the
 *                                  increment of the push that made it:
 *                                  idx.N (snapidx.h) and o/OBJ (the entries
 *                                  it replaced, as they were)
 *   .ferry-history/snaps/new.tmp/  the push in progress (its "log")
 *   .ferry-history/snaps/NAME.h/   a snapshot being deleted (snapprune.h)
 *   .ferry-history/view.PID/       a snapshot being read (snapview.h)
 *
 * An increment holds what the one before it had: reading snapshot K means
 * undoing, newest last, the increments of every later entry (chain order,
 * by name). The oldest snapshot's own increment is never read.
 *
 * NAME is the server's UTC time of the push and the client's key,
 * "2026-12-03T091245Z-1a2b3c4d", strictly increasing. */
#ifndef FERRY_FS_SNAPSTORE_H
#define FERRY_FS_SNAPSTORE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define SNAP_DIR ".ferry-history"
#define SNAP_NAME_MAX 64
#define SNAP_CLIENT_MAX 16

struct snapinfo {
	char name[SNAP_NAME_MAX];
	int64_t time;              /* the server's, when the push committed */
	char client[SNAP_CLIENT_MAX + 1];
	uint64_t files, bytes;     /* entries the push changed, bytes it wrote */
	uint64_t failed;           /* files the push could not bring (a partial snapshot), 0 = none */
	int hidden;                /* NAME.h: being deleted (in a chain only) */
};

/* Opens (creating with create = 1) the module's history: *hist and
 * *snaps become O_DIRECTORY fds. -ENOENT when absent and create = 0. */
int snapstore_open(int module_fd, int create, int *hist, int *snaps);
/* flock on the history's lock file: exclusive (a push) or shared (a read).
 * Returns the fd holding it. */
int snapstore_lock(int hist, int exclusive);

/* The committed snapshots, oldest first (*out owned, *n of them). Each one's
 * info is read; a snapshot whose info cannot be read is an error naming it.
 * snapstore_chain also has those being deleted (hidden = 1), in place. */
int snapstore_list(int snaps, struct snapinfo **out, size_t *n);
int snapstore_chain(int snaps, struct snapinfo **out, size_t *n);
/* The directory name of a chain entry (NAME or NAME.h), into out. */
const char *snapinfo_dir(const struct snapinfo *si, char out[SNAP_NAME_MAX + 2]);
int snapinfo_read(int snaps, const char *name, struct snapinfo *si);
int snapinfo_write(int dirfd, const struct snapinfo *si);

/* A new snapshot's name for time `now` and client `client`, later than
 * `last` (NULL: none). */
void snapstore_name(char out[SNAP_NAME_MAX], int64_t now, const char *client,
		    const char *last);
/* 1 if `name` is one snapstore_name makes. */
int snapstore_name_ok(const char *name);
/* Which of the n snapshots `sel` means: "" or "latest", a name, "-N" (N
 * pushes before the latest), or a prefix of a name's time ("2026-11-30",
 * "2026-11-30T12"): the newest at or before it. The index, or -ENOENT
 * (with a message naming sel). */
int snapstore_select(const struct snapinfo *s, size_t n, const char *sel);

/* An entry's mode, owner and mtime as the history's undo files keep them
 * (an increment's "dirs", a merge's "stats"): SNAPSTAT_LEN bytes, native
 * order (the box reads what the box wrote). */
#define SNAPSTAT_LEN 24
struct stat;
void snapstat_put(uint8_t b[SNAPSTAT_LEN], const struct stat *st);
void snapstat_get(const uint8_t b[SNAPSTAT_LEN], struct stat *st);
/* Sets st's owner (where the daemon may), mode (not on a symlink) and mtime
 * on dfd/leaf, never following a link; leaf NULL: on dfd itself. */
void snapstat_apply(int dfd, const char *leaf, const struct stat *st);

/* What a snapshot module's receiver records on every file it writes, for
 * verify: the xattr user.ferry.h, the xxh3-128 of the file's bytes (16,
 * canonical) and the time it was written (8, big-endian). Names under
 * user.ferry. are ferry's own: never sent or removed by -X. */
#define SNAP_HASH_XATTR "user.ferry.h"
int snaphash_put(int fd, const uint8_t hash[16], int64_t when);
/* 1 and the hash and time, 0 if the file has none, <0 on error. */
int snaphash_get(int fd, uint8_t hash[16], int64_t *when);

#endif
