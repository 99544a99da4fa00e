/* SPDX-License-Identifier: MIT */
/* The /proc/diskstats parser on a sample file (lines of three kernel
 * generations), and the mountinfo lookup that finds a directory's file
 * system and device. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "bench/blkdev.h"
#include "bench/diskstats.h"

/* 4.x (14 fields), 4.18+ (18, discards), 5.5+ (20, flushes), a bad line. */
static const char sample[] =
	"   7       0 loop0 53 0 2152 11 0 0 0 0 0 40 11 0 0 0 0\n"
	" 179       0 mmcblk0 9107 2283 755074 20376 18817 24345 1215096 224624 0 93700 245000\n"
	" 179       2 mmcblk0p2 8896 2283 745794 20100 18817 24345 1215096 224624 0 93200 244724 0 0 0 0 1202 3000\n"
	"   8       1 sda1 1 2 3\n"
	" 254       0 vda 128855 8986 53209010 281773 223942 1671104 186640592 4554902 0 451268 5264535 "
	"1239518 15 1228476608 343852 4105 84007";

static void test_parse_text(void **state)
{
	struct diskstat d;

	(void)state;
	assert_int_equal(diskstats_parse(sample, sizeof sample - 1, 179, 2, &d), 0);
	assert_string_equal(d.name, "mmcblk0p2");
	assert_int_equal(d.sectors_read, 745794);
	assert_int_equal(d.sectors_written, 1215096);
	assert_int_equal(d.reads, 8896);
	assert_int_equal(d.writes, 18817);
	/* The last line has no newline; 64-bit counters. */
	assert_int_equal(diskstats_parse(sample, sizeof sample - 1, 254, 0, &d), 0);
	assert_int_equal(d.sectors_written, 186640592ull);
	assert_int_equal(diskstats_parse(sample, sizeof sample - 1, 179, 0, &d), 0);
	assert_string_equal(d.name, "mmcblk0");
	assert_int_equal(diskstats_parse(sample, sizeof sample - 1, 8, 1, &d), -EINVAL);
	assert_int_equal(diskstats_parse(sample, sizeof sample - 1, 8, 0, &d), -ENOENT);
	assert_int_equal(diskstats_parse(sample, sizeof sample - 1, 17, 9, &d), -ENOENT);
	assert_int_equal(diskstats_parse("", 0, 7, 0, &d), -ENOENT);
}

static void test_read_file(void **state)
{
	char path[] = "/tmp/ferry-test-diskstats.XXXXXX";
	struct diskstat d;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, sample, sizeof sample - 1), (ssize_t)(sizeof sample - 1));
	close(fd);
	assert_int_equal(diskstats_read(path, 7, 0, &d), 0);
	assert_int_equal(d.sectors_read, 2152);
	assert_int_equal(d.sectors_written, 0);
	assert_int_equal(diskstats_read(path, 254, 0, &d), 0);
	assert_int_equal(d.sectors_read, 53209010ull);
	assert_int_equal(diskstats_read(path, 8, 1, &d), -EINVAL);
	assert_int_equal(diskstats_read(path, 1, 1, &d), -ENOENT);
	unlink(path);
	assert_int_equal(diskstats_read(path, 7, 0, &d), -ENOENT);
}

static const char mounts[] =
	"22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
	"25 22 0:21 / /dev/shm rw,nosuid,nodev shared:4 - tmpfs tmpfs rw,inode64\n"
	"40 22 0:35 /@home /home rw,relatime shared:20 master:3 - btrfs /dev/sda2 rw,space_cache\n"
	"41 22 8:17 / /mnt/usb\\040stick rw,noatime - vfat /dev/sdb1 rw,fmask=0022\n"
	"42 22 0:36 / /mnt/usb\\040stick/inner rw - tmpfs none rw\n"
	"garbage line\n"
	"43 22 7:0 / /mnt/loop rw - ext4 /dev/loop0 rw";

static void test_mountinfo(void **state)
{
	struct mount_entry m;
	size_t n = sizeof mounts - 1;

	(void)state;
	assert_int_equal(mountinfo_find(mounts, n, 0, 21, "/dev/shm/x", &m), 0);
	assert_string_equal(m.fstype, "tmpfs");
	assert_string_equal(m.point, "/dev/shm");
	/* Optional fields (shared:, master:) before the "-". */
	assert_int_equal(mountinfo_find(mounts, n, 0, 35, NULL, &m), 0);
	assert_string_equal(m.fstype, "btrfs");
	assert_string_equal(m.source, "/dev/sda2");
	/* Octal escapes in mount points. */
	assert_int_equal(mountinfo_find(mounts, n, 8, 17, NULL, &m), 0);
	assert_string_equal(m.point, "/mnt/usb stick");
	assert_string_equal(m.fstype, "vfat");
	assert_int_equal(mountinfo_find(mounts, n, 7, 0, NULL, &m), 0);
	assert_string_equal(m.source, "/dev/loop0");
	/* A device no line has (a nested btrfs subvolume): the longest mount
	 * point that covers the path, never a mere string prefix ("/homes"). */
	assert_int_equal(mountinfo_find(mounts, n, 0, 99, "/home/me/sub", &m), 0);
	assert_string_equal(m.fstype, "btrfs");
	assert_int_equal(mountinfo_find(mounts, n, 0, 99, "/homes", &m), 0);
	assert_string_equal(m.fstype, "ext4");
	assert_int_equal(mountinfo_find(mounts, n, 0, 99, "/mnt/usb stick/inner/a", &m), 0);
	assert_string_equal(m.fstype, "tmpfs");
	assert_int_equal(mountinfo_find(mounts, n, 0, 99, NULL, &m), -ENOENT);
	assert_int_equal(mountinfo_find("", 0, 0, 99, "/", &m), -ENOENT);
}

/* blkdev_probe on a real directory must not fail, whatever /proc and /sys
 * this machine has; the directory's file system type is known. */
static void test_probe_runs(void **state)
{
	struct blkdev d;
	int fd = open("/tmp", O_RDONLY | O_DIRECTORY);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(blkdev_probe(fd, &d), 0);
	assert_true(d.fstype[0] != '\0');
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_text),
		cmocka_unit_test(test_read_file),
		cmocka_unit_test(test_mountinfo),
		cmocka_unit_test(test_probe_runs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
