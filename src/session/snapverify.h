/* SPDX-License-Identifier: MIT */
/* ferry admin verify: every file a snapshot module stores (its tree, and
 * each version its history keeps) is read again and checked against the
 * xxh3-128 its receiver recorded when it was written (fs/snapstore.h), so
 * that bit rot on a USB disk or SD card is found, named by snapshot and
 * path. It reads without holding the history's lock (pushes go on; what
 * they replace meanwhile is missed by this pass only). A pass goes in a fixed order (the tree, then the history oldest
 * increment first) and notes how far it got in .ferry-history/verify, so
 * that the next run resumes there; `if_older` skips a run whose last full
 * pass is younger. */
#ifndef FERRY_SESSION_SNAPVERIFY_H
#define FERRY_SESSION_SNAPVERIFY_H

#include <stdint.h>

#include "fs/jail.h"

struct verify_report {
	uint64_t files, bytes;      /* read and checked this run */
	uint64_t bad;               /* whose contents differ from their hash */
	uint64_t unhashed;          /* with no hash recorded (written before, or spliced) */
	uint64_t skipped;           /* passed over: a resumed pass had them */
	int skipped_run;            /* if_older: the last pass is recent, nothing read */
};

/* Called for each damaged file: where ("the tree" or "snapshot NAME") and
 * its path in the module. */
typedef void (*verify_bad_fn)(void *ctx, const char *where, const char *path);
/* Called about once a second: what the pass has read so far. */
typedef void (*verify_progress_fn)(void *ctx, const struct verify_report *r, double secs);

struct verify_opts {
	int64_t if_older;           /* seconds; 0 = always run */
	int restart;                /* start a new pass even if one was cut short */
	verify_bad_fn bad;
	verify_progress_fn progress;
	void *ctx;
};

/* 0 when the pass completed (r->bad says what it found), <0 on error. */
int snap_verify(const struct jail *mod, const struct verify_opts *o, struct verify_report *r);

#endif
