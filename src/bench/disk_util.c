/* SPDX-License-Identifier: MIT */
/* The disk stages' common parts: filler data, the device's counters and
 * the verdict drawn from them, the progress callback. */
#include "bench/disk.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "util/err.h"

void disk_rng_seed(struct disk_ctx *c)
{
	if (getrandom(c->rng, sizeof c->rng, GRND_NONBLOCK) != (ssize_t)sizeof c->rng) {
		/* Filler data, not a secret: the clock will do. */
		c->rng[0] = (uint64_t)time(NULL) ^ 0x9e3779b97f4a7c15ull;
		c->rng[1] = (uint64_t)getpid() * 0xbf58476d1ce4e5b9ull;
		c->rng[2] = (uint64_t)(uintptr_t)c;
		c->rng[3] = 0x94d049bb133111ebull;
	}
	if (!(c->rng[0] | c->rng[1] | c->rng[2] | c->rng[3]))
		c->rng[0] = 1;
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256** (Blackman and Vigna): fast filler bytes and offsets, not
 * cryptography. */
uint64_t disk_rng(struct disk_ctx *c)
{
	uint64_t *s = c->rng, r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return r;
}

void disk_stamp(struct disk_ctx *c, uint8_t *p, size_t len)
{
	for (size_t off = 0; off + sizeof c->stamp <= len; off += DISK_SMALL) {
		c->stamp++;
		memcpy(p + off, &c->stamp, sizeof c->stamp);
	}
}

void disk_snap(const struct disk_ctx *c, struct disk_snap *s)
{
	memset(s, 0, sizeof *s);
	if (c->dev.has && !c->dev.memory)
		s->ok = diskstats_read(DISKSTATS_FILE, c->dev.major, c->dev.minor, &s->ds) == 0;
}

int disk_stopped(const struct disk_ctx *c)
{
	return c->o->stop && *c->o->stop;
}

void disk_progress(const struct disk_ctx *c, const struct bench_stage *st,
		   const struct bench_series *s, uint64_t done, uint64_t goal)
{
	struct bench_progress p = {
		.label = st->label, .unit = st->unit, .done = done, .goal = goal,
		.rate = s->n ? bench_series_rate(s, s->n - 1) : 0, .elapsed = s->last_t - s->t0,
	};

	if (c->o->progress)
		c->o->progress(c->o->ctx, &p);
}

int disk_close_window(const struct disk_ctx *c, struct disk_window *w, int fd, int rc)
{
	double t = bench_now();

	if (rc == 0 && fdatasync(fd) < 0)
		rc = err_sys(-errno, "fdatasync of the bench file");
	w->t1 = bench_now();
	w->sync_s = w->t1 - t;
	disk_snap(c, &w->after);
	close(fd);
	return rc;
}

static void verdict(const struct disk_ctx *c, const struct disk_window *w, struct bench_stage *st)
{
	const char *did = w->reading ? "read" : "wrote";
	uint64_t sectors;

	if (c->dev.memory) {
		st->verdict = BENCH_MEMORY;
		snprintf(st->note, sizeof st->note, "the device is memory (%s%s%s)", c->dev.fstype,
			 c->dev.name[0] ? " on " : ", no block device", c->dev.name);
		return;
	}
	if (!w->before.ok || !w->after.ok) {
		st->verdict = BENCH_UNVERIFIED;
		snprintf(st->note, sizeof st->note, "not checked: %s has no block device in %s",
			 c->dev.fstype[0] ? c->dev.fstype : "this file system", DISKSTATS_FILE);
		return;
	}
	sectors = w->reading ? w->after.ds.sectors_read - w->before.ds.sectors_read
			     : w->after.ds.sectors_written - w->before.ds.sectors_written;
	st->dev_bytes = sectors * 512;
	double share = w->bytes ? (double)st->dev_bytes / (double)w->bytes : 0;
	st->verdict = share < BENCH_CACHED_BELOW ? BENCH_CACHED : BENCH_DEVICE;
	snprintf(st->note, sizeof st->note, "%s%s %s %.0f %% of it",
		 st->verdict == BENCH_CACHED ? "CACHED: " : "", c->dev.name, did, share * 100);
}

void disk_finish(const struct disk_ctx *c, const struct disk_window *w,
		 const struct bench_series *s, struct bench_stage *st)
{
	st->seconds = w->t1 - w->t0;
	st->sync_s = w->sync_s;
	st->bytes = w->bytes;
	st->ops = w->ops;
	st->rate = st->seconds > 0 ? (double)w->units / st->seconds : 0;
	bench_series_store(s, st);
	verdict(c, w, st);
}
