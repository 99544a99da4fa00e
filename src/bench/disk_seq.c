/* SPDX-License-Identifier: MIT */
/* Sequential write and read in DISK_BLOCK pieces, as fio's
 * --rw=write|read --bs=1M --direct=1 --end_fsync=1 does: the file is
 * preallocated (fio's default fallocate=native), written with O_DIRECT
 * where the file system allows it, and made durable by an fdatasync inside
 * the timed window; read back with the page cache bypassed. */
#include "bench/disk.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "util/err.h"

/* O_DIRECT where the file system takes it: some refuse the open, some only
 * the first write. */
static int open_seq(struct disk_ctx *c, int flags)
{
	const char *name = c->seq_name ? c->seq_name : DISK_SEQ_NAME;
	int fd = -1;

	if (c->seq_name)
		flags |= O_NOFOLLOW;   /* a module's file: never through a link */
	if (c->direct)
		fd = openat(c->dirfd, name, flags | O_DIRECT | O_CLOEXEC, 0600);
	if (fd < 0 && (!c->direct || errno == EINVAL)) {
		c->direct = 0;
		fd = openat(c->dirfd, name, flags | O_CLOEXEC, 0600);
	}
	if (fd < 0)
		return err_sys(-errno, "bench file");
	return fd;
}

/* Checks that an O_DIRECT write works (falling back to buffered I/O when it
 * does not), then preallocates, outside the timed window as fio does. */
static int prepare_write(struct disk_ctx *c)
{
	int fd = open_seq(c, O_WRONLY | O_CREAT | O_TRUNC);

	if (fd >= 0 && c->direct && pwrite(fd, c->buf, DISK_SMALL, 0) < 0 && errno == EINVAL) {
		close(fd);
		c->direct = 0;
		fd = open_seq(c, O_WRONLY | O_TRUNC);
	}
	if (fd < 0)
		return fd;
	if (fallocate(fd, 0, 0, (off_t)c->size) < 0 && errno == ENOSPC) {
		close(fd);
		return err_sys(-ENOSPC, "preallocating %llu MiB", (unsigned long long)(c->size >> 20));
	}
	return fd;
}

int disk_seq_write(struct disk_ctx *c, double budget, struct bench_stage *st)
{
	struct disk_window w = { 0 };
	struct bench_series s;
	uint64_t off = 0;
	int fd = prepare_write(c), rc = 0;

	if (fd < 0)
		return fd;
	disk_snap(c, &w.before);
	w.t0 = bench_now();
	bench_series_start(&s, w.t0);
	while (off < c->size && bench_now() - w.t0 < budget && !disk_stopped(c)) {
		disk_stamp(c, c->buf, DISK_BLOCK);
		ssize_t n = pwrite(fd, c->buf, DISK_BLOCK, (off_t)off);
		if (n != (ssize_t)DISK_BLOCK) {
			rc = err_sys(n < 0 ? -errno : -ENOSPC, "writing the bench file");
			break;
		}
		off += DISK_BLOCK;
		w.ops++;
		if (bench_series_tick(&s, bench_now(), off, off))
			disk_progress(c, st, &s, off, c->size);
	}
	bench_series_finish(&s, bench_now(), off, off);
	rc = disk_close_window(c, &w, fd, rc);
	c->seq_bytes = off;
	w.units = w.bytes = off;
	snprintf(st->method, sizeof st->method, "%s",
		 c->direct ? "O_DIRECT + fdatasync" : "buffered + fdatasync (no O_DIRECT)");
	disk_finish(c, &w, &s, st);
	return rc < 0 ? rc : disk_stopped(c) ? -EINTR : 0;
}

int disk_seq_read(struct disk_ctx *c, double budget, struct bench_stage *st)
{
	struct disk_window w = { .reading = 1 };
	struct bench_series s;
	uint64_t off = 0;
	int fd = open_seq(c, O_RDONLY), rc = 0;

	if (fd < 0)
		return fd;
	/* Without O_DIRECT, drop the (clean, fdatasync'ed) pages: no root needed. */
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	snprintf(st->method, sizeof st->method, "%s", c->direct ? "O_DIRECT" : "page cache dropped (fadvise)");
	disk_snap(c, &w.before);
	w.t0 = bench_now();
	bench_series_start(&s, w.t0);
	while (off < c->seq_bytes && bench_now() - w.t0 < budget && !disk_stopped(c)) {
		ssize_t n = pread(fd, c->buf, DISK_BLOCK, (off_t)off);
		if (n <= 0) {
			rc = err_sys(n < 0 ? -errno : -EIO, "reading the bench file");
			break;
		}
		off += (uint64_t)n;
		w.ops++;
		if (bench_series_tick(&s, bench_now(), off, off))
			disk_progress(c, st, &s, off, c->seq_bytes);
	}
	bench_series_finish(&s, bench_now(), off, off);
	w.t1 = bench_now();
	disk_snap(c, &w.after);
	close(fd);
	w.units = w.bytes = off;
	disk_finish(c, &w, &s, st);
	return rc < 0 ? rc : disk_stopped(c) ? -EINTR : 0;
}
