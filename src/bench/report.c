/* SPDX-License-Identifier: MIT */
/* The report's small helpers: names of units and verdicts, stages, sizes. */
#include "bench/bench.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *bench_unit_name(enum bench_unit u)
{
	switch (u) {
	case BENCH_MBPS: return "MB/s";
	case BENCH_IOPS: return "IOPS";
	case BENCH_FILES: return "files/s";
	}
	return "?";
}

const char *bench_verdict_name(enum bench_verdict v)
{
	switch (v) {
	case BENCH_DEVICE: return "device";
	case BENCH_CACHED: return "cached";
	case BENCH_MEMORY: return "memory";
	case BENCH_UNVERIFIED: return "unverified";
	case BENCH_CPU: return "cpu";
	case BENCH_NETWORK: return "network";
	}
	return "?";
}

double bench_shown_rate(enum bench_unit u, double rate)
{
	return u == BENCH_MBPS ? rate / 1e6 : rate;
}

int bench_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; break;
	case 'm': case 'M': shift = 20; break;
	case 'g': case 'G': shift = 30; break;
	case 't': case 'T': shift = 40; break;
	case '\0': break;
	default: return -EINVAL;
	}
	if (*end) {
		end++;
		if (*end == 'i' && end[1] == 'B')   /* "256MiB" */
			end += 2;
	}
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

struct bench_stage *bench_stage_add(struct bench_report *r, const char *name, const char *label,
				    enum bench_unit unit)
{
	struct bench_stage *st;

	if (r->nstages >= BENCH_MAX_STAGES)
		return NULL;
	st = &r->stages[r->nstages++];
	memset(st, 0, sizeof *st);
	snprintf(st->name, sizeof st->name, "%s", name);
	snprintf(st->label, sizeof st->label, "%s", label);
	st->unit = unit;
	return st;
}
