/* SPDX-License-Identifier: MIT */
/* An entry's extended attributes (and so its POSIX ACLs, which Linux keeps
 * in system.posix_acl_*) read into and applied from XMETA's wire form
 * (proto/msg.h): sorted by name, one set per entry. An entry is named by an
 * open fd, or by a directory fd and a name that is never followed when it is
 * a symlink (through /proc/self/fd, as Linux has no *xattrat before 6.13). */
#ifndef FERRY_FS_XATTR_H
#define FERRY_FS_XATTR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Which names a set covers. */
#define XA_USER 0x01u   /* user.* */
#define XA_SYS  0x02u   /* trusted.* and security.* (root only) */
#define XA_ACL  0x04u   /* system.posix_acl_access and _default */
/* rsync's fake super: trusted.* and security.* are kept as user.rsync.*, and
 * user.rsync.%... (the stored stat) is never part of the set. */
#define XA_FAKE 0x08u
/* security.capability is left alone (neither set nor removed): a daemon
 * gives a client's file no capabilities, as it gives it no setuid bit. */
#define XA_NOCAPS 0x10u

/* The name under which fake super keeps an entry's owner, type and mode
 * ("%o %u,%u %u:%u": mode, device major,minor, uid:gid), as rsync does. */
#define XA_FAKE_STAT "user.rsync.%stat"

struct xattr_buf {
	uint8_t *p;          /* owned, XMETA_MAX_XATTR_BYTES */
	size_t len;
	unsigned count;
};

/* Where an entry is: fd >= 0, else dirfd/name (not followed). */
struct xa_at {
	int fd, dirfd;
	const char *name;
	int follow;   /* reading dirfd/name: its symlink's target's (push -L) */
};

void xattr_buf_free(struct xattr_buf *b);
/* Reads the entry's set of `ns` into b (allocating b->p once). -E2BIG (with
 * err_msg naming the xattr) when it does not fit XMETA; a file system without
 * xattrs gives an empty set. */
int fs_xattr_read(const struct xa_at *at, unsigned ns, struct xattr_buf *b);
/* Makes the entry's set of `ns` equal to `list` (bytes, XMETA's form):
 * removes what is not in it, sets what differs. Returns how many it changed,
 * or <0: -ENOTSUP when the file system has no xattrs (err_msg says so).
 * dry: changes nothing, only counts. */
int fs_xattr_apply(const struct xa_at *at, unsigned ns, const uint8_t *list, size_t bytes,
		   int dry);

/* One xattr of the entry, by its real name, into out (cap bytes): the length,
 * -ENODATA if absent. */
ssize_t fs_xattr_get(const struct xa_at *at, const char *name, void *out, size_t cap);
int fs_xattr_set(const struct xa_at *at, const char *name, const void *val, size_t len);

int fs_xattr_remove(const struct xa_at *at, const char *name);

#endif
