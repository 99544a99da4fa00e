/* SPDX-License-Identifier: MIT */
/* Internal: which file system and block device hold a directory, and what
 * the kernel says about that device (USB speed, model, loop backing file).
 * The mountinfo parser is pure, for the unit test. */
#ifndef FERRY_BENCH_BLKDEV_H
#define FERRY_BENCH_BLKDEV_H

#include <stddef.h>

#define MOUNTINFO_FILE "/proc/self/mountinfo"

struct blkdev {
	int has;                /* major:minor is a line of /proc/diskstats */
	unsigned major, minor;
	char name[32];          /* "sda1" */
	char fstype[32];
	char source[128];       /* the mount's source: "/dev/sda1", "tmpfs" */
	char model[96];
	char usb[48];           /* "USB 480 Mb/s" */
	int memory;             /* tmpfs, ramfs, zram, brd: nothing slower than RAM below */
};

struct mount_entry {
	unsigned major, minor;
	char point[256];
	char fstype[32];
	char source[128];
};

/* The mountinfo entry of the file system with device major:minor, else the
 * one whose mount point is the longest prefix of path (btrfs subvolumes
 * have devices of their own). text is the whole file. 0 or -ENOENT. */
int mountinfo_find(const char *text, size_t len, unsigned major, unsigned minor,
		   const char *path, struct mount_entry *out);

/* Fills d for the directory open as dirfd. Never fails for want of /proc or
 * /sys (the fields stay empty); <0 only when dirfd cannot be stat'ed. */
int blkdev_probe(int dirfd, struct blkdev *d);

#endif
