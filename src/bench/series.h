/* SPDX-License-Identifier: MIT */
/* Internal: a stage's rate sampled every BENCH_SAMPLE_S, and the cache cliff
 * found in it. A cliff is an SLC cache or the dirty-page limit filling up:
 * the device takes writes fast for a while, then drops to what it sustains.
 * The detection is pure (arrays in, verdict out) so it is unit-tested on
 * made-up series. */
#ifndef FERRY_BENCH_SERIES_H
#define FERRY_BENCH_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "bench/bench.h"

/* A drop to under 1/BENCH_CLIFF_RATIO of the burst's median counts as a cliff. */
#define BENCH_CLIFF_RATIO 1.5
/* Samples needed on each side of a cliff (1 s at 0.5 s a sample). */
#define BENCH_CLIFF_MIN_SIDE 2u

/* Seconds on the monotonic clock. */
double bench_now(void);

struct bench_series {
	double t0, last_t;
	uint64_t last_units, last_bytes;
	uint32_t n;
	double dt[BENCH_MAX_SAMPLES];        /* each interval's length */
	uint64_t units[BENCH_MAX_SAMPLES];   /* units done in it */
	uint64_t bytes[BENCH_MAX_SAMPLES];   /* bytes done in it */
};

void bench_series_start(struct bench_series *s, double now);
/* Closes an interval when BENCH_SAMPLE_S have passed since the last one; the
 * totals are cumulative. 1 when a sample was taken (time for the progress
 * line), else 0. Past BENCH_MAX_SAMPLES the samples stop, the stage does not. */
int bench_series_tick(struct bench_series *s, double now, uint64_t units, uint64_t bytes);
/* The last part-interval, if at least half an interval long (a shorter one
 * is mostly noise). */
void bench_series_finish(struct bench_series *s, double now, uint64_t units, uint64_t bytes);
/* Rate of sample i in units per second. */
double bench_series_rate(const struct bench_series *s, uint32_t i);

/* Splits rates[0..n) where two levels (each side's median) fit best; a
 * cliff when the median before is at least BENCH_CLIFF_RATIO times the one
 * after and each side has BENCH_CLIFF_MIN_SIDE samples. Returns the index
 * of the first slow sample, or -1 (no cliff). *before / *after get the two
 * medians (both the overall median when there is no cliff). */
int bench_find_cliff(const double *rates, size_t n, double *before, double *after);
/* Median of v[0..n) (v is reordered); 0 for n == 0. */
double bench_median(double *v, size_t n);

/* Stores the samples and the cliff verdict into the stage (its unit's
 * rates, the bytes before the cliff); st->rate must be set already (it is
 * the burst and the sustained rate when there is no cliff). */
void bench_series_store(const struct bench_series *s, struct bench_stage *st);

#endif
