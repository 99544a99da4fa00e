/* SPDX-License-Identifier: MIT */
/* When the sender compresses (docs/DESIGN.md, "Compression"): pure
 * decisions from what the sender measured, no I/O, so that every rule is
 * unit-tested with made-up clocks.
 *
 *   Per file, incompressible data: a chunk that did not shrink by 3 % went
 *   raw; after it the next `backoff` chunks go raw without a try, and the
 *   back-off doubles (1, 2, 4 .. ZP_BACKOFF_MAX chunks) until a chunk
 *   compresses again. Random data costs a try every 2^k chunks only.
 *
 *   auto (module "compress = auto"): the sender compresses only while the
 *   link is slower than half its compressor. The compressor's speed C is the
 *   raw bytes it compressed per CPU second; the link's L is the wire bytes
 *   per second over a window in which the sender was blocked (the socket
 *   full, or --bwlimit sleeping) at least ZP_BLOCKED_PCT % of the time,
 *   i.e. in which the link, not the sender, set the pace. Not blocked while
 *   compressing for ZP_IDLE_WINDOWS windows means the compressor is the
 *   bottleneck: raw again, and the next window measures the link afresh.
 *   While raw, one chunk in ZP_PROBE_EVERY is still compressed, so C stays
 *   known. */
#ifndef FERRY_SESSION_ZPOLICY_H
#define FERRY_SESSION_ZPOLICY_H

#include <stdint.h>

#define ZP_BACKOFF_MAX 256u        /* chunks: 32 MiB of random data between tries */
#define ZP_RAW_RUN_MAX 8u          /* chunks sent as one raw run between link samples */
#define ZP_PROBE_EVERY 32u         /* auto, raw: one chunk in this many is compressed */
#define ZP_WINDOW_SECS 0.25        /* a link sample spans at least this */
#define ZP_BLOCKED_PCT 20          /* blocked this much of a window: the link sets the pace */
#define ZP_IDLE_WINDOWS 4

enum zp_mode { ZP_YES = 1, ZP_AUTO = 2 };

struct zpolicy {
	enum zp_mode mode;
	/* this file */
	uint32_t backoff, skip;
	/* auto */
	int on;                       /* auto: compressing now */
	uint32_t since_probe;
	double c_bytes, c_secs;       /* raw bytes compressed, CPU seconds it took */
	double link;                  /* bytes/s; 0 = not measured */
	uint32_t idle;                /* windows not blocked while on */
	double win_t;                 /* the current window's start (monotonic s); < 0: none yet */
	uint64_t win_wire;            /* wire bytes out at its start */
	double win_blocked;           /* seconds blocked at its start */
	uint32_t flips;               /* auto's decisions that changed (for -v and the tests) */
};

void zpolicy_init(struct zpolicy *p, enum zp_mode mode);
/* A new file: the back-off starts over. */
void zpolicy_file(struct zpolicy *p);
/* How many chunks go raw from here without a try (<= ZP_RAW_RUN_MAX);
 * 0 = try to compress the next chunk. */
uint32_t zpolicy_next(const struct zpolicy *p);
/* k chunks went raw without a try. */
void zpolicy_skipped(struct zpolicy *p, uint32_t k);
/* A chunk of raw bytes was tried in secs of CPU: zlen 0 = not worth it. */
void zpolicy_tried(struct zpolicy *p, uint64_t raw, uint64_t zlen, double secs);
/* A link sample: the time, and the channel's cumulative wire bytes out and
 * seconds blocked sending. Auto decides at the end of each window. */
void zpolicy_link(struct zpolicy *p, double now, uint64_t wire_out, double blocked);
/* The compressor's measured speed in bytes/s (0 = not yet). */
double zpolicy_speed(const struct zpolicy *p);

#endif
