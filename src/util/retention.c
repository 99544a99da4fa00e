/* SPDX-License-Identifier: MIT */
#include "util/retention.h"

#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/err.h"

int retention_duration(const char *s, int64_t *secs)
{
	int64_t total = 0;
	const char *p = s;

	if (!*p)
		return err_set(-EINVAL, "an empty duration");
	while (*p) {
		char *end;
		if (!isdigit((unsigned char)*p))
			return err_set(-EINVAL, "%s: a duration is a number and a unit (h, d, w, m, y)", s);
		unsigned long long v = strtoull(p, &end, 10);
		int64_t unit = *end == 'h' ? 3600 : *end == 'd' ? 86400 : *end == 'w' ? 7 * 86400 :
			       *end == 'm' ? 30 * 86400 : *end == 'y' ? 365 * 86400 : 0;
		if (!unit)
			return err_set(-EINVAL, "%s: a duration is a number and a unit (h, d, w, m, y)", s);
		if (v > 1000000ull)
			return err_set(-EINVAL, "%s: too long", s);
		total += (int64_t)v * unit;
		p = end + 1;
	}
	*secs = total;
	return 0;
}

static int count(const char *key, const char *val, unsigned *out)
{
	char *end;
	unsigned long v = strtoul(val, &end, 10);
	if (!*val || *end || !isdigit((unsigned char)*val) || v > 1000000)
		return err_set(-EINVAL, "%s: expected a count (0 to 1000000): %s", key, val);
	*out = (unsigned)v;
	return 0;
}

int retention_set(struct retention *r, const char *key, const char *val)
{
	static const struct { const char *k; size_t off; } counts[] = {
		{ "keep last", offsetof(struct retention, last) },
		{ "keep hourly", offsetof(struct retention, hourly) },
		{ "keep daily", offsetof(struct retention, daily) },
		{ "keep weekly", offsetof(struct retention, weekly) },
		{ "keep monthly", offsetof(struct retention, monthly) },
		{ "keep yearly", offsetof(struct retention, yearly) },
	};
	for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
		if (!strcmp(key, counts[i].k)) {
			int rc = count(key, val, (unsigned *)((char *)r + counts[i].off));
			return rc < 0 ? rc : 1;
		}
	int64_t *d = !strcmp(key, "keep within") ? &r->within :
		     !strcmp(key, "protect within") ? &r->protect_within : NULL;
	if (!d)
		return 0;
	int rc = retention_duration(val, d);
	return rc < 0 ? err_wrap(rc, "%s", key) : 1;
}

int retention_any(const struct retention *r)
{
	return r->last || r->hourly || r->daily || r->weekly || r->monthly || r->yearly ||
	       r->within;
}

/* A bucket's key: the time cut to its hour, day, ISO week, month or year. */
static int64_t bucket(int64_t t, unsigned kind)
{
	time_t tt = (time_t)t;
	struct tm tm;
	char b[16];

	gmtime_r(&tt, &tm);
	switch (kind) {
	case KEEP_HOURLY: return t / 3600;
	case KEEP_DAILY: return t / 86400;
	case KEEP_WEEKLY:
		strftime(b, sizeof b, "%G%V", &tm);
		return strtoll(b, NULL, 10);
	case KEEP_MONTHLY: return (int64_t)tm.tm_year * 12 + tm.tm_mon;
	default: return tm.tm_year;
	}
}

/* The newest snapshot of each of the newest `n` buckets. */
static void keep_buckets(const int64_t *times, size_t count_, unsigned n, unsigned kind,
			 unsigned *why)
{
	int64_t last = 0;
	int have = 0;

	for (size_t i = count_; i-- > 0 && n;) {
		int64_t b = bucket(times[i], kind);
		if (have && b == last)
			continue;
		why[i] |= kind;
		last = b;
		have = 1;
		n--;
	}
}

void retention_apply(const struct retention *r, const int64_t *times, size_t n, int64_t now,
		     unsigned *why)
{
	static const unsigned kinds[] = { KEEP_HOURLY, KEEP_DAILY, KEEP_WEEKLY, KEEP_MONTHLY,
					  KEEP_YEARLY };
	const unsigned counts[] = { r->hourly, r->daily, r->weekly, r->monthly, r->yearly };

	for (size_t i = 0; i < n; i++) {
		why[i] = retention_any(r) ? 0 : KEEP_NO_RULES;
		if (r->within && times[i] > now - r->within)
			why[i] |= KEEP_WITHIN;
		if (r->protect_within && times[i] > now - r->protect_within)
			why[i] |= KEEP_PROTECTED;
		if (n - i <= r->last)
			why[i] |= KEEP_LAST;
	}
	for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
		keep_buckets(times, n, counts[k], kinds[k], why);
	if (n)
		why[n - 1] |= KEEP_LATEST;
}

const char *retention_reasons(unsigned why, char *buf, size_t cap)
{
	static const char *names[] = { "latest", "last", "hourly", "daily", "weekly", "monthly",
				       "yearly", "within", "protected", "no rules" };
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (why & (1u << i))
			used += (size_t)snprintf(buf + used, used < cap ? cap - used : 0, "%s%s",
						 used ? "," : "", names[i]);
	return buf;
}
