/* SPDX-License-Identifier: MIT */
/* A server's side of snapshots (docs/DESIGN.md, "Snapshots"): what
 * HOST:MODULE@SNAP means in a request, the list `ferry ls HOST:MODULE@` gets,
 * and a push made into a snapshot. The store itself is fs/snap*.c. */
#ifndef FERRY_SESSION_SNAPSHOTS_H
#define FERRY_SESSION_SNAPSHOTS_H

#include <stdint.h>

#include "fs/jail.h"
#include "fs/snapinc.h"
#include "session/conn.h"

/* Splits "MODULE@SEL" in place: module becomes "MODULE", sel (of at least
 * SNAP_NAME_MAX bytes) gets SEL. 1 if there was an '@', 0 if not, <0 (with
 * a message) if SEL is not a snapshot selector. */
int snap_split(char *module, char *sel);

/* The name a client's key has in snapshot names: 8 characters of its
 * fingerprint, file-name safe. */
void snap_client_of(const char *fingerprint, char out[SNAP_CLIENT_MAX + 1]);

/* Replaces *j (the module's jail) by one on snapshot `sel`'s view of `path`
 * (the module itself when sel is the latest). -ENOENT when there is no such
 * snapshot or path. */
int snap_open(struct jail *j, const char *sel, const char *path);

/* ls HOST:MODULE@: every snapshot (SNAP), END, then the client's DECIDED
 * and RESULT, as a listing ends. */
int snap_list_send(struct conn *c, const struct jail *mod);

/* Retention, applied on the box (util/retention.h) to the server's own
 * receive times: fn(ctx, snapshot, why) for each (why 0: it goes); unless
 * dry, those not kept are deleted, oldest first, each one under the lock on
 * its own, so that a push waits for one deletion at most. The number
 * deleted, or <0. */
struct retention;
typedef void (*snap_report_fn)(void *ctx, const struct snapinfo *s, unsigned why);
int snap_prune(const struct jail *mod, const struct retention *r, int dry, snap_report_fn fn,
	       void *ctx);
/* Deletes one snapshot by name (fs/snapprune.h). */
int snap_delete(const struct jail *mod, const char *name);
/* The module's snapshots, oldest first (*list owned), after settling. */
int snap_list(const struct jail *mod, struct snapinfo **list, size_t *n);

#endif
