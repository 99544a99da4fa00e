/* SPDX-License-Identifier: MIT */
/* Small files: create, write 4 KiB, fsync, close, one after the other. Each
 * fsync forces the file system's journal (and the device's cache flush), so
 * this is the rate at which a box can make small files durable: where SD
 * cards and cheap USB sticks fall off a cliff. (ferry itself syncs once per
 * session, DESIGN.md; --fsync is what this measures.) */
#include "bench/disk.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "util/err.h"

static int one_file(struct disk_ctx *c, uint64_t i)
{
	char name[32];
	uint8_t *p = c->buf + (i % (DISK_BLOCK / DISK_SMALL)) * DISK_SMALL;
	int fd, rc = 0;

	snprintf(name, sizeof name, "f%06llu", (unsigned long long)i);
	fd = openat(c->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return err_sys(-errno, "creating a small file");
	disk_stamp(c, p, DISK_SMALL);
	if (write(fd, p, DISK_SMALL) != (ssize_t)DISK_SMALL)
		rc = err_sys(-errno, "writing a small file");
	else if (fsync(fd) < 0)
		rc = err_sys(-errno, "fsync of a small file");
	close(fd);
	return rc;
}

int disk_small_files(struct disk_ctx *c, double budget, struct bench_stage *st)
{
	struct disk_window w = { 0 };
	struct bench_series s;
	/* An eighth of the test size in files, so that the run writes at most 2x it. */
	uint64_t goal = c->size / 8 / DISK_SMALL, i = 0;
	int rc = 0;

	snprintf(st->method, sizeof st->method, "4 KiB each, fsync each");
	disk_snap(c, &w.before);
	w.t0 = bench_now();
	bench_series_start(&s, w.t0);
	for (; i < goal && !disk_stopped(c) && bench_now() - w.t0 < budget; i++) {
		if ((rc = one_file(c, i)) < 0)
			break;
		if (bench_series_tick(&s, bench_now(), i + 1, (i + 1) * DISK_SMALL))
			disk_progress(c, st, &s, i + 1, goal);
	}
	bench_series_finish(&s, bench_now(), i, i * DISK_SMALL);
	/* The directory entries too, as a careful writer would. */
	w.sync_s = bench_now();
	if (rc == 0 && fsync(c->dirfd) < 0)
		rc = err_sys(-errno, "fsync of the bench directory");
	w.t1 = bench_now();
	w.sync_s = w.t1 - w.sync_s;
	disk_snap(c, &w.after);
	w.units = w.ops = i;
	w.bytes = i * DISK_SMALL;
	disk_finish(c, &w, &s, st);
	return rc < 0 ? rc : disk_stopped(c) ? -EINTR : 0;
}
