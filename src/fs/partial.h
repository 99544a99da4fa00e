/* SPDX-License-Identifier: MIT */
/* Resume: what an interrupted transfer leaves. A receiver writes a file of
 * any size under its partial name, ".ferry-part.<name>" in the destination
 * directory, locked (flock) while it writes, tagged with the identity of the
 * source version it came from (size and mtime, in the xattr user.ferry.src).
 * A complete file is renamed into place as before; an interrupted one stays
 * under that name, and the next transfer of the same file uses it as a
 * second basis (every block of it verified, as any basis). Listings never
 * show partial names, --delete never removes them, the daemon's sweep removes
 * them after `stale partials` (docs/DESIGN.md, "Resume"). */
#ifndef FERRY_FS_PARTIAL_H
#define FERRY_FS_PARTIAL_H

#include <stdint.h>

#define FS_PART_PREFIX ".ferry-part."
#define FS_PART_XATTR "user.ferry.src"

/* Which source version a partial holds the beginning of. */
struct fs_part_id {
	uint64_t size;
	int64_t mtime_s;
	uint32_t mtime_ns;
};

/* ".ferry-part.<final>"; a long final name is cut and ends in a hash of the
 * whole name (a collision only costs the resume: blocks are verified). */
int fs_partial_name(char out[256], const char *final);
int fs_is_partial_name(const char *name);
/* 1 if dirfd/name is a partial ferry made: a regular file with a partial's
 * name and its tag (or on a file system without xattrs, where no tag can be:
 * the name alone). A user's own ".ferry-part.notes" is not one: it is sent,
 * never swept, never discarded. */
int fs_partial_ours(int dirfd, const char *name);
/* The name `final` a partial name stands for, when it is not cut (1), else 0. */
int fs_partial_final(const char *partial, char out[256]);

/* Opens the partial of `final` in dirfd to read as a basis: a regular file
 * nobody is writing (the lock is taken and held by the returned fd) whose
 * identity is `id`. A partial of another source version, or a tagged one
 * that cannot be read back, is removed (*discarded = 1). Where the file
 * system has no xattrs a partial carries no identity and is used as it is:
 * its blocks are still verified. Returns the fd (size in *size) or -1. */
int fs_partial_open(int dirfd, const char *final, const struct fs_part_id *id, uint64_t *size,
		    int *discarded);

/* renameat2(RENAME_NOREPLACE) within dirfd; -1 with errno. */
int fs_rename_noreplace(int dirfd, const char *from, const char *to);

/* Tags an open file with id (best effort: 0, or -ENOTSUP and friends). */
int fs_partial_tag(int fd, const struct fs_part_id *id);
void fs_partial_untag(int fd);

#endif
