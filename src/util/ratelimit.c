/* SPDX-License-Identifier: MIT */
#include "util/ratelimit.h"

#include <time.h>

double now_monotonic(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void ratelimit_init(struct ratelimit *r, uint64_t bytes_per_sec)
{
	r->rate = bytes_per_sec;
	/* A tenth of a second's worth, at least one record, keeps the line smooth. */
	r->burst = bytes_per_sec / 10 > 65536 ? bytes_per_sec / 10 : 65536;
	r->tokens = (double)r->burst;
	r->last = now_monotonic();
	r->slept = 0;
}

void ratelimit_take(struct ratelimit *r, uint64_t n)
{
	if (!r->rate)
		return;
	double t = now_monotonic();
	r->tokens += (t - r->last) * (double)r->rate;
	if (r->tokens > (double)r->burst)
		r->tokens = (double)r->burst;
	r->last = t;
	r->tokens -= (double)n;
	if (r->tokens >= 0)
		return;
	double wait = -r->tokens / (double)r->rate;
	struct timespec ts = { .tv_sec = (time_t)wait,
			       .tv_nsec = (long)((wait - (double)(time_t)wait) * 1e9) };
	nanosleep(&ts, NULL);
	r->slept += wait;
}

uint64_t ratelimit_min(uint64_t a, uint64_t b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return a < b ? a : b;
}
