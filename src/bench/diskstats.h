/* SPDX-License-Identifier: MIT */
/* Internal: /proc/diskstats, the kernel's count of what each block device
 * really read and wrote. A stage whose device did less than it wrote was
 * absorbed by a cache and is not the disk's speed. */
#ifndef FERRY_BENCH_DISKSTATS_H
#define FERRY_BENCH_DISKSTATS_H

#include <stddef.h>
#include <stdint.h>

#define DISKSTATS_FILE "/proc/diskstats"

struct diskstat {
	char name[32];
	uint64_t sectors_read, sectors_written;   /* always 512-byte units */
	uint64_t reads, writes;                   /* requests completed */
};

/* Finds the line for major:minor in the text of /proc/diskstats (len bytes,
 * need not end in a newline). 0, -ENOENT when no line has that device,
 * -EINVAL when that line is malformed. Pure, for the unit test. */
int diskstats_parse(const char *text, size_t len, unsigned major, unsigned minor,
		    struct diskstat *out);
/* The same from a file (DISKSTATS_FILE, or a sample in a test). */
int diskstats_read(const char *file, unsigned major, unsigned minor, struct diskstat *out);

#endif
