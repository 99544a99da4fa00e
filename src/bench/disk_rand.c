/* SPDX-License-Identifier: MIT */
/* 4 KiB writes at random aligned offsets of the sequential stage's file,
 * one at a time (queue depth 1, like fio's default psync engine), then an
 * fdatasync inside the window: what a database or a swarm of small updates
 * does to an SD card, whose flash translation layer often manages only a few
 * hundred of these a second. */
#include "bench/disk.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "util/err.h"

static int open_rand(const struct disk_ctx *c)
{
	int fd = openat(c->dirfd, DISK_SEQ_NAME, O_WRONLY | O_CLOEXEC | (c->direct ? O_DIRECT : 0));

	return fd < 0 ? err_sys(-errno, "bench file") : fd;
}

int disk_rand_write(struct disk_ctx *c, double budget, struct bench_stage *st)
{
	struct disk_window w = { 0 };
	struct bench_series s;
	uint64_t blocks = c->seq_bytes / DISK_SMALL;
	/* Writes stay under half the test size: the run writes at most 2x it. */
	uint64_t goal = c->size / 2 / DISK_SMALL, i = 0;
	int fd, rc = 0;

	snprintf(st->method, sizeof st->method, "%s, queue depth 1",
		 c->direct ? "O_DIRECT + fdatasync" : "buffered + fdatasync");
	if (blocks == 0)
		return 0;
	if ((fd = open_rand(c)) < 0)
		return fd;
	disk_snap(c, &w.before);
	w.t0 = bench_now();
	bench_series_start(&s, w.t0);
	for (; i < goal && !disk_stopped(c); i++) {
		/* Checking the clock every 16 writes keeps it out of the figure. */
		if (i % 16 == 0 && bench_now() - w.t0 >= budget)
			break;
		uint8_t *p = c->buf + (i % (DISK_BLOCK / DISK_SMALL)) * DISK_SMALL;
		disk_stamp(c, p, DISK_SMALL);
		off_t off = (off_t)(disk_rng(c) % blocks * DISK_SMALL);
		if (pwrite(fd, p, DISK_SMALL, off) != (ssize_t)DISK_SMALL) {
			rc = err_sys(-errno, "random write to the bench file");
			break;
		}
		if (i % 16 == 0 && bench_series_tick(&s, bench_now(), i + 1, (i + 1) * DISK_SMALL))
			disk_progress(c, st, &s, i + 1, goal);
	}
	bench_series_finish(&s, bench_now(), i, i * DISK_SMALL);
	rc = disk_close_window(c, &w, fd, rc);
	w.units = w.ops = i;
	w.bytes = i * DISK_SMALL;
	disk_finish(c, &w, &s, st);
	return rc < 0 ? rc : disk_stopped(c) ? -EINTR : 0;
}
