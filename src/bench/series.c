/* SPDX-License-Identifier: MIT */
#include "bench/series.h"

#include <string.h>
#include <time.h>

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void bench_series_start(struct bench_series *s, double now)
{
	memset(s, 0, sizeof *s);
	s->t0 = s->last_t = now;
}

static void take(struct bench_series *s, double now, uint64_t units, uint64_t bytes)
{
	if (s->n < BENCH_MAX_SAMPLES) {
		s->dt[s->n] = now - s->last_t;
		s->units[s->n] = units - s->last_units;
		s->bytes[s->n] = bytes - s->last_bytes;
		s->n++;
	}
	s->last_t = now;
	s->last_units = units;
	s->last_bytes = bytes;
}

int bench_series_tick(struct bench_series *s, double now, uint64_t units, uint64_t bytes)
{
	if (now - s->last_t < BENCH_SAMPLE_S)
		return 0;
	take(s, now, units, bytes);
	return 1;
}

void bench_series_finish(struct bench_series *s, double now, uint64_t units, uint64_t bytes)
{
	if (now - s->last_t >= BENCH_SAMPLE_S / 2 && units > s->last_units)
		take(s, now, units, bytes);
}

double bench_series_rate(const struct bench_series *s, uint32_t i)
{
	return s->dt[i] > 0 ? (double)s->units[i] / s->dt[i] : 0;
}

/* Insertion sort: at most BENCH_MAX_SAMPLES values. */
double bench_median(double *v, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 1; i < n; i++) {
		double x = v[i];
		size_t j = i;
		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double median_of(const double *rates, size_t lo, size_t hi)
{
	double tmp[BENCH_MAX_SAMPLES];
	size_t n = hi - lo;

	if (n > BENCH_MAX_SAMPLES)
		n = BENCH_MAX_SAMPLES;
	memcpy(tmp, rates + lo, n * sizeof *tmp);
	return bench_median(tmp, n);
}

/* Sum of |x - median| over one side of a split. */
static double spread(const double *rates, size_t lo, size_t hi, double *med)
{
	double sum = 0;

	*med = median_of(rates, lo, hi);
	for (size_t i = lo; i < hi; i++)
		sum += rates[i] > *med ? rates[i] - *med : *med - rates[i];
	return sum;
}

/* The split is the best two-level fit (least absolute deviation from each
 * side's median), then judged by the ratio of the medians. Medians, not
 * means: one stalled interval (a journal commit) in a fast burst must
 * neither hide the burst nor fake a cliff. */
int bench_find_cliff(const double *rates, size_t n, double *before, double *after)
{
	double best = -1, b, a;
	int at = -1;

	if (n > BENCH_MAX_SAMPLES)
		n = BENCH_MAX_SAMPLES;
	*before = *after = median_of(rates, 0, n);
	if (n < 2 * BENCH_CLIFF_MIN_SIDE)
		return -1;
	for (size_t k = BENCH_CLIFF_MIN_SIDE; k + BENCH_CLIFF_MIN_SIDE <= n; k++) {
		double cost = spread(rates, 0, k, &b) + spread(rates, k, n, &a);
		if (best < 0 || cost < best) {
			best = cost;
			at = (int)k;
		}
	}
	b = median_of(rates, 0, (size_t)at);
	a = median_of(rates, (size_t)at, n);
	if (!(b >= BENCH_CLIFF_RATIO * a) || b <= 0)
		return -1;
	*before = b;
	*after = a;
	return at;
}

void bench_series_store(const struct bench_series *s, struct bench_stage *st)
{
	double rates[BENCH_MAX_SAMPLES], before, after;
	int at;

	st->nsamples = s->n;
	st->sample_s = (float)BENCH_SAMPLE_S;
	for (uint32_t i = 0; i < s->n; i++) {
		rates[i] = bench_series_rate(s, i);
		st->samples[i] = (float)rates[i];
	}
	at = bench_find_cliff(rates, s->n, &before, &after);
	memset(&st->cliff, 0, sizeof st->cliff);
	/* Without a cliff the stage sustained its whole rate. */
	st->cliff.burst = st->cliff.sustained = st->rate;
	if (at < 0)
		return;
	st->cliff.burst = before;
	st->cliff.sustained = after;
	st->cliff.found = 1;
	for (int i = 0; i < at; i++) {
		st->cliff.bytes += s->bytes[i];
		st->cliff.at_s += s->dt[i];
	}
}
