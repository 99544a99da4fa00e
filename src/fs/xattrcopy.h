/* SPDX-License-Identifier: MIT */
/* One entry's xattrs (and so its POSIX ACLs) made another's, between two
 * open fds: the snapshot history's own copies of an entry (a view's
 * directory, a file whose metadata changed later) must keep them. Plain
 * libc, no wire form (fs/xattr.h has that). */
#ifndef FERRY_FS_XATTRCOPY_H
#define FERRY_FS_XATTRCOPY_H

/* Makes dst's xattrs those of src: user.*, the ACLs, and as root trusted.*
 * and security.*; what dst has beyond them in those names goes. 0, or <0
 * with err_msg() naming the xattr. A file system without xattrs at src is
 * an empty set. The mark below is never copied nor removed. */
int fs_xattr_copy(int src, int dst);

/* The mark of a history object whose xattrs are its entry's as they were
 * (a metadata record made since ferry keeps them): one without it has
 * none recorded, and its entry's own stand. */
#define FS_XATTR_MARK "user.ferry.x"
int fs_xattr_mark(int fd);
int fs_xattr_marked(int fd);

/* The entry at dfd/leaf, a regular file or a directory, opened without
 * following links (read-only, no side effect on a FIFO or a device: those
 * are never opened). The fd, -1 with errno ENOENT/ELOOP/EINVAL (another
 * type), or -1 with errno from open. */
int fs_xattr_open(int dfd, const char *leaf);

/* fs_xattr_copy from the history object dir/obj to the entry dfd/leaf,
 * only when the object is marked: 1 if copied, 0 if it keeps none (or
 * either one is missing or of another type), <0 with err_msg(). */
int fs_xattr_restore(int dir, const char *obj, int dfd, const char *leaf);

#endif
