/* SPDX-License-Identifier: MIT */
/* Giving up root for good: the daemon after it has bound its port and read
 * its host key ("user =" in [global]), a session before it touches its
 * module ("uid =" / "gid =" in the module). */
#ifndef FERRY_UTIL_PRIVDROP_H
#define FERRY_UTIL_PRIVDROP_H

#include <sys/types.h>

/* A user by name or number: its uid and primary group. A number without a
 * passwd entry has no primary group: *gid is (gid_t)-1 then. -ENOENT with
 * err_msg() naming it when there is no such user. */
int priv_user(const char *s, uid_t *uid, gid_t *gid);
/* A group by name or number. -ENOENT when there is no such group. */
int priv_group(const char *s, gid_t *gid);
/* Becomes uid:gid with no supplementary groups, and checks that there is no
 * way back (setuid(0) must fail, every saved id must be the new one). A
 * process already running as exactly uid:gid has nothing to do; any other
 * that is not root cannot switch and gets -EPERM. */
int priv_drop(uid_t uid, gid_t gid);

#endif
