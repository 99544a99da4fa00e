/* SPDX-License-Identifier: MIT */
/* Internal: what the disk stages (disk_seq.c, disk_rand.c, disk_small.c)
 * share. Each stage runs in the run's private directory, within a time
 * budget, and fills one struct bench_stage. */
#ifndef FERRY_BENCH_DISK_H
#define FERRY_BENCH_DISK_H

#include <stdint.h>

#include "bench/bench.h"
#include "bench/blkdev.h"
#include "bench/diskstats.h"
#include "bench/series.h"

#define DISK_BLOCK (1u << 20)    /* sequential I/O size */
#define DISK_SMALL 4096u         /* random writes and small files */
#define DISK_SEQ_NAME "seq"

struct disk_ctx {
	int dirfd;                   /* the run's private directory */
	const char *seq_name;        /* NULL: DISK_SEQ_NAME; else an existing file read in place */
	const struct bench_opts *o;
	struct blkdev dev;
	uint8_t *buf;                /* DISK_BLOCK bytes, page-aligned (O_DIRECT), random */
	uint64_t size;               /* the test size */
	uint64_t seq_bytes;          /* bytes of DISK_SEQ_NAME written, for read and rand */
	int direct;                  /* O_DIRECT worked for DISK_SEQ_NAME */
	uint64_t stamp;              /* makes every block written unlike the ones before */
	uint64_t rng[4];
};

/* The device's counters at one moment (ok = 0 when there is no device). */
struct disk_snap { int ok; struct diskstat ds; };

/* The stages: 0, -EINTR when stopped, or <0 with err_msg() set. */
typedef int disk_stage_fn(struct disk_ctx *c, double budget, struct bench_stage *st);
int disk_seq_write(struct disk_ctx *c, double budget, struct bench_stage *st);
int disk_seq_read(struct disk_ctx *c, double budget, struct bench_stage *st);
int disk_rand_write(struct disk_ctx *c, double budget, struct bench_stage *st);
int disk_small_files(struct disk_ctx *c, double budget, struct bench_stage *st);

/* The report's description of what was measured (path, file system, device). */
void disk_fill_target(const struct disk_ctx *c, const char *shown, struct bench_target *t);

void disk_rng_seed(struct disk_ctx *c);
uint64_t disk_rng(struct disk_ctx *c);
/* Writes a fresh counter into every 4 KiB of p[0..len): a device or file
 * system that compresses or deduplicates gets nothing out of it, at the cost
 * of one store per 4 KiB (regenerating random bytes would cost a router's
 * CPU more than its USB disk's time). */
void disk_stamp(struct disk_ctx *c, uint8_t *p, size_t len);

void disk_snap(const struct disk_ctx *c, struct disk_snap *s);
int disk_stopped(const struct disk_ctx *c);
/* Calls the progress callback with the stage's state. */
void disk_progress(const struct disk_ctx *c, const struct bench_stage *st,
		   const struct bench_series *s, uint64_t done, uint64_t goal);

/* What a stage hands to disk_finish. */
struct disk_window {
	double t0, t1;               /* the timed window */
	double sync_s;               /* the final fdatasync's part of it */
	uint64_t units, bytes, ops;  /* units: the stage's (bytes, ops or files) */
	struct disk_snap before, after;
	int reading;
};
/* Fills rate, seconds, counts, samples, cliff and the device verdict. */
/* The end of a timed write window: fdatasync inside it (unless rc already
 * failed), its time in sync_s, the device counters after it, the file closed.
 * Returns rc, or the fdatasync's error. */
int disk_close_window(const struct disk_ctx *c, struct disk_window *w, int fd, int rc);
void disk_finish(const struct disk_ctx *c, const struct disk_window *w,
		 const struct bench_series *s, struct bench_stage *st);

#endif
