/* SPDX-License-Identifier: MIT */
/* The disk of a module nobody may write to: the sequential read stage of
 * `ferry bench disk`, run on the largest file already there. The walk that
 * finds it is bounded (a module may hold millions of files) and follows no
 * link; the file is only read. */
#include "bench/disk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/err.h"

#define WALK_MAX_ENTRIES 20000
#define WALK_MAX_DEPTH 16
#define MIN_FILE DISK_BLOCK

struct best {
	int dirfd;                 /* the largest file's directory, -1 = none yet */
	char name[256];
	uint64_t size;
	unsigned seen;
};

static void consider(struct best *b, int dirfd, const char *name, uint64_t size)
{
	if (size <= b->size)
		return;
	int fd = dup(dirfd);
	if (fd < 0)
		return;
	if (b->dirfd >= 0)
		close(b->dirfd);
	b->dirfd = fd;
	snprintf(b->name, sizeof b->name, "%s", name);
	b->size = size;
}

/* dirfd is this function's: closed before it returns. */
static void walk(struct best *b, int dirfd, int depth)
{
	DIR *d = fdopendir(dirfd);
	struct dirent *de;

	if (!d) {
		close(dirfd);
		return;
	}
	while ((de = readdir(d)) && b->seen < WALK_MAX_ENTRIES) {
		struct stat st;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strncmp(de->d_name, ".ferry-", 7))
			continue;
		b->seen++;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISREG(st.st_mode)) {
			consider(b, dirfd, de->d_name, (uint64_t)st.st_size);
		} else if (S_ISDIR(st.st_mode) && depth < WALK_MAX_DEPTH) {
			int sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					 O_CLOEXEC);
			if (sub >= 0)
				walk(b, sub, depth + 1);
		}
	}
	closedir(d);
}

int bench_disk_read_existing_at(int dirfd, const char *shown, const struct bench_opts *o,
				struct bench_report *r)
{
	struct disk_ctx c = { .o = o, .direct = 1 };
	struct best b = { .dirfd = -1 };
	int rc, top = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	r->kind = BENCH_DISK;
	r->seconds_limit = o->seconds > 0 ? o->seconds : BENCH_DISK_SECONDS;
	if (top < 0)
		return err_sys(-errno, "%s", shown);
	walk(&b, top, 0);
	if (b.dirfd < 0 || b.size < MIN_FILE) {
		if (b.dirfd >= 0)
			close(b.dirfd);
		return err_set(-ENOENT, "a read-only module without a file of 1 MiB or more to "
			       "read: the disk is not measured");
	}
	if ((rc = blkdev_probe(b.dirfd, &c.dev)) < 0) {
		close(b.dirfd);
		return err_wrap(rc, "%s", shown);
	}
	uint64_t want = o->size ? o->size : BENCH_DEFAULT_SIZE;
	c.dirfd = b.dirfd;
	c.seq_name = b.name;
	c.seq_bytes = (b.size < want ? b.size : want) / DISK_BLOCK * DISK_BLOCK;
	c.size = c.seq_bytes;
	disk_fill_target(&c, shown, &r->target);
	r->target.size = c.size;
	void *buf = NULL;
	if (posix_memalign(&buf, 4096, DISK_BLOCK) != 0) {
		close(b.dirfd);
		return err_set(-ENOMEM, "out of memory for the I/O buffer");
	}
	c.buf = buf;
	struct bench_stage *st = bench_stage_add(r, "seq_read", "sequential read", BENCH_MBPS);
	double t0 = bench_now();
	rc = st ? disk_seq_read(&c, r->seconds_limit, st) : err_set(-ENOBUFS, "too many stages");
	r->elapsed = bench_now() - t0;
	if (st && rc == 0) {   /* what was read, before the device's remark */
		char dev[sizeof st->note];
		snprintf(dev, sizeof dev, "%s", st->note);
		snprintf(st->note, sizeof st->note, "an existing file of %llu MiB (read-only module)%s%.60s",
			 (unsigned long long)(b.size >> 20), dev[0] ? "; " : "", dev);
	}
	free(c.buf);
	close(b.dirfd);
	return rc;
}
