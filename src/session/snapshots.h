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

#endif
