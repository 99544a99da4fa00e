/* SPDX-License-Identifier: MIT */
/* How finely a file system keeps a modification time: FAT to 2 s, ext3 and
 * ext4 with 128-byte inodes to 1 s, exFAT to 10 ms, NTFS to 100 ns, most
 * others to the nanosecond. A receiver compares the sender's mtime as its
 * file system would keep it; else every file on a USB stick formatted FAT
 * looks changed on every run, and is read and written again. */
#ifndef FERRY_FS_TGRAN_H
#define FERRY_FS_TGRAN_H

#include <stdint.h>
#include <time.h>

struct tgran {
	uint32_t ns;    /* nanoseconds are kept to a multiple of this: 1, 10, ... 1e9 */
	uint32_t sec;   /* seconds to a multiple of this: 1, or 2 (FAT) */
};
#define TGRAN_EXACT ((struct tgran){ .ns = 1, .sec = 1 })

/* Sets an unnamed file's mtime (O_TMPFILE in the directory dirfd, never
 * linked: nothing anyone can see changes, not even dirfd's own times) to a
 * probing time and reads it back. 0, or -errno with *g exact (-EOPNOTSUPP:
 * a file system without O_TMPFILE; -EINVAL: the time read back is not a
 * truncation of the one set). */
int tgran_probe(int dirfd, struct tgran *g);
/* The same through a named temporary file made in dirfd and removed
 * (dirfd's mtime then changes): for a file system without O_TMPFILE. */
int tgran_probe_file(int dirfd, struct tgran *g);
/* Without writing: the precision of the file systems whose type says it
 * (FAT, exFAT, NTFS, none of which has O_TMPFILE); 0, or -ENOENT with *g
 * exact. */
int tgran_guess(int fd, struct tgran *g);
/* What a probe that set sec.ns and read *got back concludes (tgran_probe's
 * arithmetic, for its tests). */
int tgran_from(int64_t sec, uint32_t ns, const struct timespec *got, struct tgran *g);
/* sec.ns as kept at g's precision (truncated, as Linux's file systems do). */
struct timespec tgran_trunc(const struct tgran *g, int64_t sec, uint32_t ns);

#endif
