/* SPDX-License-Identifier: MIT */
/* Durability for a whole transfer: one syncfs() at the end is far cheaper on
 * flash than an fsync per file, and still guarantees everything is down. */
#ifndef FERRY_FS_SYNC_H
#define FERRY_FS_SYNC_H

/* syncfs(2) on the file system holding fd. An O_PATH directory fd (such as
 * jail.root_fd) is accepted: it is reopened read-only for the call.
 * Returns 0 or -errno (which includes earlier writeback errors). */
int fs_syncfs(int fd);

#endif
