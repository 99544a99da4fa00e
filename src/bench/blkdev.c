/* SPDX-License-Identifier: MIT */
/* The device below a directory, found through the kernel's own tables:
 * st_dev (or, for btrfs's anonymous devices, the mount's /dev source), then
 * /sys/dev/block/MAJ:MIN for its name, model, loop backing file and the USB
 * port it hangs on. */
#include "bench/blkdev.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "bench/diskstats.h"
#include "bench/sysfs.h"
#include "util/err.h"

#define TMPFS_MAGIC_ 0x01021994ul
#define RAMFS_MAGIC_ 0x858458f6ul

static void find_mount(int dirfd, const struct stat *st, struct blkdev *d)
{
	char link[64], path[PATH_MAX];
	struct mount_entry m;
	size_t len;
	ssize_t n;
	char *text = sysfs_slurp(MOUNTINFO_FILE, 8u << 20, &len);

	snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
	n = readlink(link, path, sizeof path - 1);
	path[n > 0 ? n : 0] = '\0';
	if (text && mountinfo_find(text, len, major(st->st_dev), minor(st->st_dev),
				   n > 0 ? path : NULL, &m) == 0) {
		snprintf(d->fstype, sizeof d->fstype, "%s", m.fstype);
		snprintf(d->source, sizeof d->source, "%s", m.source);
	}
	free(text);
}

/* The block device: st_dev itself, or the mount's source for file systems
 * that report an anonymous device (btrfs). */
static int find_dev(const struct stat *st, struct blkdev *d)
{
	struct stat bs;

	if (major(st->st_dev) != 0) {
		d->major = major(st->st_dev);
		d->minor = minor(st->st_dev);
		return 0;
	}
	if (strncmp(d->source, "/dev/", 5) == 0 && stat(d->source, &bs) == 0 && S_ISBLK(bs.st_mode)) {
		d->major = major(bs.st_rdev);
		d->minor = minor(bs.st_rdev);
		return 0;
	}
	return -ENODEV;
}

/* "USB 480 Mb/s" when an ancestor in sysfs is a USB device (it has idVendor
 * and speed). */
static void find_usb(const char *sys, struct blkdev *d)
{
	char real[PATH_MAX], speed[16], vendor[16];
	char *slash;

	if (!realpath(sys, real))
		return;
	while ((slash = strrchr(real, '/')) && slash != real && strcmp(real, "/sys/devices") != 0) {
		if (sysfs_read(vendor, sizeof vendor, "%s/idVendor", real) == 0 &&
		    sysfs_read(speed, sizeof speed, "%s/speed", real) == 0) {
			snprintf(d->usb, sizeof d->usb, "USB %s Mb/s", speed);
			return;
		}
		*slash = '\0';
	}
}

/* Model for people: SCSI vendor + model (also USB sticks), an SD card's
 * type and name, or a loop device's backing file. Partitions keep these on
 * their parent disk. */
static void find_model(const char *sys, struct blkdev *d)
{
	char a[40], b[48], file[72], dio[8];
	const char *up[] = { "", "/.." };

	for (size_t i = 0; i < 2 && !d->model[0]; i++) {
		if (sysfs_read(file, sizeof file, "%s%s/loop/backing_file", sys, up[i]) == 0) {
			/* Without direct I/O the loop device writes into the page cache
			 * of its backing file: fast until something flushes it. */
			sysfs_read(dio, sizeof dio, "%s%s/loop/dio", sys, up[i]);
			snprintf(d->model, sizeof d->model, "loop on %s%s", file,
				 strcmp(dio, "0") == 0 ? ", buffered" : "");
		} else if (sysfs_read(b, sizeof b, "%s%s/device/model", sys, up[i]) == 0) {
			sysfs_read(a, sizeof a, "%s%s/device/vendor", sys, up[i]);
			snprintf(d->model, sizeof d->model, "%s%s%s", a, a[0] ? " " : "", b);
		} else if (sysfs_read(b, sizeof b, "%s%s/device/name", sys, up[i]) == 0) {
			sysfs_read(a, sizeof a, "%s%s/device/type", sys, up[i]);
			snprintf(d->model, sizeof d->model, "%s%s%s", a, a[0] ? " " : "", b);
		}
	}
}

static int is_memory(const struct blkdev *d, unsigned long magic)
{
	static const char *const fs[] = { "tmpfs", "ramfs", "devtmpfs", "hugetlbfs" };

	if (magic == TMPFS_MAGIC_ || magic == RAMFS_MAGIC_)
		return 1;
	for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
		if (strcmp(d->fstype, fs[i]) == 0)
			return 1;
	/* zram and the brd RAM disk are block devices made of memory. */
	return d->has && (strncmp(d->name, "zram", 4) == 0 || strncmp(d->name, "ram", 3) == 0);
}

int blkdev_probe(int dirfd, struct blkdev *d)
{
	char sys[96], real[PATH_MAX];
	struct diskstat ds;
	struct statfs sf;
	struct stat st;
	unsigned long magic = 0;

	memset(d, 0, sizeof *d);
	if (fstat(dirfd, &st) < 0)
		return err_sys(-errno, "stat");
	if (fstatfs(dirfd, &sf) == 0)
		magic = (unsigned long)sf.f_type & 0xfffffffful;   /* int on 32-bit glibc */
	find_mount(dirfd, &st, d);
	if (!d->fstype[0] && (magic == TMPFS_MAGIC_ || magic == RAMFS_MAGIC_))
		snprintf(d->fstype, sizeof d->fstype, "%s", magic == TMPFS_MAGIC_ ? "tmpfs" : "ramfs");
	if (find_dev(&st, d) == 0) {
		snprintf(sys, sizeof sys, "/sys/dev/block/%u:%u", d->major, d->minor);
		if (realpath(sys, real))
			snprintf(d->name, sizeof d->name, "%s", strrchr(real, '/') + 1);
		d->has = diskstats_read(DISKSTATS_FILE, d->major, d->minor, &ds) == 0;
		if (d->has && !d->name[0])
			snprintf(d->name, sizeof d->name, "%s", ds.name);
		find_model(sys, d);
		find_usb(sys, d);
	}
	d->memory = is_memory(d, magic);
	err_clear();   /* the probes' misses are expected, not errors to show */
	return 0;
}
