/* SPDX-License-Identifier: MIT */
/* A token bucket for --bwlimit: callers account bytes and sleep when ahead. */
#ifndef FERRY_UTIL_RATELIMIT_H
#define FERRY_UTIL_RATELIMIT_H

#include <stdint.h>

struct ratelimit {
	uint64_t rate;        /* bytes per second; 0 = unlimited */
	uint64_t burst;       /* bytes allowed ahead of schedule */
	double tokens;
	double last;          /* monotonic seconds */
	double slept;         /* seconds slept so far (a slow link by choice, for -z auto) */
};

void ratelimit_init(struct ratelimit *r, uint64_t bytes_per_sec);
/* Accounts n bytes; sleeps until they fit the rate. */
void ratelimit_take(struct ratelimit *r, uint64_t n);
/* The lower non-zero of two rates (0 = unlimited). */
uint64_t ratelimit_min(uint64_t a, uint64_t b);
double now_monotonic(void);

#endif
