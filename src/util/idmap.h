/* SPDX-License-Identifier: MIT */
/* Owners travel as an id and a name; the receiver maps the name back to its
 * own id (as rsync does without --numeric-ids). Lookups go through the
 * system's user and group databases, with the last few answers cached: a
 * tree's files mostly share one or two owners. */
#ifndef FERRY_UTIL_IDMAP_H
#define FERRY_UTIL_IDMAP_H

#include <stdint.h>

/* The name of uid (gid), or "" if it has none; valid until the next call. */
const char *idmap_user_name(uint32_t uid);
const char *idmap_group_name(uint32_t gid);
/* The local id named `name`, or `id` when name is "" or unknown here. */
uint32_t idmap_uid(const char *name, uint32_t id);
uint32_t idmap_gid(const char *name, uint32_t id);

/* Reads both databases whole (at most IDMAP_FREEZE_MAX entries each) and
 * answers from that copy from now on: a sandboxed session can open neither
 * /etc/passwd nor an NSS service. A name not in the copy (past the limit, or
 * from a directory service that does not list its users) maps as its number,
 * as rsync's does for a name it cannot find. */
#define IDMAP_FREEZE_MAX 4096
int idmap_freeze(void);

#endif
