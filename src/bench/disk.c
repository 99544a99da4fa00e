/* SPDX-License-Identifier: MIT */
/* ferry bench disk: the four stages in a private directory below PATH, each
 * within its share of the time limit, then everything removed again. */
#include "bench/disk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "util/err.h"

/* Order matters: read and random write use the sequential stage's file. */
static const struct disk_stage {
	const char *name, *label;
	enum bench_unit unit;
	double share;            /* of the time limit */
	disk_stage_fn *fn;
} stages[] = {
	{ "seq_write", "sequential write", BENCH_MBPS, 0.35, disk_seq_write },
	{ "seq_read", "sequential read", BENCH_MBPS, 0.25, disk_seq_read },
	{ "rand_write_4k", "4 KiB random write", BENCH_IOPS, 0.20, disk_rand_write },
	{ "small_files", "small files + fsync", BENCH_FILES, 0.15, disk_small_files },
};
#define MIN_STAGE_S 0.5
#define MIN_SIZE (8ull << 20)

/* The default size: 256 MiB, or a quarter of the free space when that is
 * less, so a nearly full stick is not filled up by a benchmark. */
static int choose_size(int dirfd, const char *shown, uint64_t asked, struct bench_target *t)
{
	struct statvfs vf;

	if (fstatvfs(dirfd, &vf) < 0)
		return err_sys(-errno, "%s", shown);
	t->free_bytes = (uint64_t)vf.f_bavail * vf.f_frsize;
	if (asked) {
		t->size = (asked + DISK_BLOCK - 1) / DISK_BLOCK * DISK_BLOCK;
		/* The sequential file and the small files (size / 8) at once. */
		if (t->size + t->size / 8 > t->free_bytes)
			return err_set(-ENOSPC, "%s: --size %llu MiB does not fit in the %llu MiB free",
				       shown, (unsigned long long)(t->size >> 20),
				       (unsigned long long)(t->free_bytes >> 20));
		return 0;
	}
	t->size = t->free_bytes / 4 < BENCH_DEFAULT_SIZE ? t->free_bytes / 4 : BENCH_DEFAULT_SIZE;
	t->size = t->size / DISK_BLOCK * DISK_BLOCK;
	if (t->size < MIN_SIZE)
		return err_set(-ENOSPC, "%s: only %llu MiB free, ferry bench needs %llu", shown,
			       (unsigned long long)(t->free_bytes >> 20),
			       (unsigned long long)(4 * MIN_SIZE >> 20));
	return 0;
}

/* A fresh ".ferry-bench-XXXXXX" below dirfd; its fd, and its name in name. */
static int make_dir(struct disk_ctx *c, int dirfd, const char *shown, char name[32])
{
	for (int tries = 0; tries < 20; tries++) {
		snprintf(name, 32, ".ferry-bench-%06llx", (unsigned long long)(disk_rng(c) & 0xffffff));
		if (mkdirat(dirfd, name, 0700) == 0) {
			int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0)
				return fd;
			unlinkat(dirfd, name, AT_REMOVEDIR);
			break;
		}
		if (errno != EEXIST)
			break;
	}
	return err_sys(-errno, "%s: cannot create a directory for the test", shown);
}

/* Removes everything in the private directory (only this run put anything
 * there), then the directory. */
static void remove_dir(int parent, const char *name, int fd)
{
	int dup_fd = dup(fd);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct dirent *de;

	if (!d && dup_fd >= 0)
		close(dup_fd);
	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(fd, de->d_name, 0);
	if (d)
		closedir(d);
	close(fd);
	unlinkat(parent, name, AT_REMOVEDIR);
}

void disk_fill_target(const struct disk_ctx *c, const char *shown, struct bench_target *t)
{
	snprintf(t->path, sizeof t->path, "%s", shown);
	snprintf(t->fstype, sizeof t->fstype, "%s", c->dev.fstype);
	snprintf(t->device, sizeof t->device, "%s", c->dev.has ? c->dev.name : "");
	snprintf(t->model, sizeof t->model, "%s", c->dev.model);
	snprintf(t->usb, sizeof t->usb, "%s", c->dev.usb);
	t->memory = c->dev.memory;
	t->has_dev = c->dev.has;
}

/* A stage's budget: its share, less whatever earlier stages overran, but
 * never under MIN_STAGE_S. */
static double budget(double limit, double start, size_t i)
{
	double rest = 0, left = limit - (bench_now() - start), want = stages[i].share * limit;

	for (size_t j = i + 1; j < sizeof stages / sizeof stages[0]; j++)
		rest += MIN_STAGE_S;
	if (want > left - rest)
		want = left - rest;
	return want < MIN_STAGE_S ? MIN_STAGE_S : want;
}

static int run_stages(struct disk_ctx *c, struct bench_report *r)
{
	double start = bench_now();
	int rc = 0;

	for (size_t i = 0; i < sizeof stages / sizeof stages[0] && rc == 0; i++) {
		struct bench_stage *st = bench_stage_add(r, stages[i].name, stages[i].label,
							 stages[i].unit);
		if (!st)
			return err_set(-ENOBUFS, "too many stages");
		rc = stages[i].fn(c, budget(r->seconds_limit, start, i), st);
	}
	r->elapsed = bench_now() - start;
	return rc;
}

int bench_disk_run_at(int dirfd, const char *shown, const struct bench_opts *o,
		      struct bench_report *r)
{
	struct disk_ctx c = { .o = o, .direct = 1 };
	char name[32];
	int rc;

	r->kind = BENCH_DISK;
	r->seconds_limit = o->seconds > 0 ? o->seconds : BENCH_DISK_SECONDS;
	disk_rng_seed(&c);
	if ((rc = blkdev_probe(dirfd, &c.dev)) < 0)
		return err_wrap(rc, "%s", shown);
	disk_fill_target(&c, shown, &r->target);
	if ((rc = choose_size(dirfd, shown, o->size, &r->target)) < 0)
		return rc;
	c.size = r->target.size;
	void *buf = NULL;
	if (posix_memalign(&buf, 4096, DISK_BLOCK) != 0)   /* O_DIRECT wants it page-aligned */
		return err_set(-ENOMEM, "out of memory for the I/O buffer");
	c.buf = buf;
	for (size_t i = 0; i < DISK_BLOCK / sizeof(uint64_t); i++)
		((uint64_t *)c.buf)[i] = disk_rng(&c);
	if ((c.dirfd = make_dir(&c, dirfd, shown, name)) < 0) {
		free(c.buf);
		return c.dirfd;
	}
	rc = run_stages(&c, r);
	remove_dir(dirfd, name, c.dirfd);
	free(c.buf);
	return rc;
}

int bench_disk_run(const char *path, const struct bench_opts *o, struct bench_report *r)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;

	if (fd < 0)
		return err_sys(-errno, "%s", path);
	rc = bench_disk_run_at(fd, path, o, r);
	close(fd);
	return rc;
}
