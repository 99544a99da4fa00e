/* SPDX-License-Identifier: MIT */
#include "util/stoptime.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int stop_after_parse(const char *s, double *secs)
{
	char *end;
	double m;

	if (!s || !*s || strchr(" \t+-", s[0]))
		return -EINVAL;
	errno = 0;
	m = strtod(s, &end);
	if (errno || *end || !isfinite(m) || m <= 0 || m > 366.0 * 24 * 60)
		return -EINVAL;
	*secs = m * 60;
	return 0;
}

/* Up to `max` digits at *p into *v; returns how many (0: none). */
static int digits(const char **p, int max, int *v)
{
	int n = 0;

	*v = 0;
	while (n < max && **p >= '0' && **p <= '9') {
		*v = *v * 10 + (**p - '0');
		(*p)++;
		n++;
	}
	return n;
}

/* The fields a spelling gave; -1 = left out, to be the next that matches. */
struct when {
	int year, mon, mday, hour, min;
};

/* "HH:MM" or ":MM" at p, to the end. */
static int parse_clock(const char *p, struct when *w)
{
	int h, m;

	if (*p != ':') {
		if (!digits(&p, 2, &h) || *p != ':' || h > 23)
			return -EINVAL;
		w->hour = h;
	}
	p++;
	if (!digits(&p, 2, &m) || *p || m > 59)
		return -EINVAL;
	w->min = m;
	return 0;
}

/* [YYYY-]MM-DD, then nothing or T and a clock. */
static int parse_date(const char *p, struct when *w)
{
	int a, b, c, na;

	na = digits(&p, 4, &a);
	if (!na || (*p != '-' && *p != '/'))
		return -EINVAL;
	p++;
	if (!digits(&p, 2, &b))
		return -EINVAL;
	if (*p == '-' || *p == '/') {   /* a year first */
		p++;
		if (!digits(&p, 2, &c) || (na != 2 && na != 4))
			return -EINVAL;
		w->year = na == 2 ? 2000 + a : a;
		w->mon = b;
		w->mday = c;
	} else {
		if (na > 2)
			return -EINVAL;
		w->mon = a;
		w->mday = b;
	}
	if (w->mon < 1 || w->mon > 12 || w->mday < 1 || w->mday > 31)
		return -EINVAL;
	int t = *p == 'T' || *p == 't';
	p += t;
	if (!*p) {   /* "12-31" or "12-31T": midnight */
		w->hour = 0;
		w->min = 0;
		return 0;
	}
	if (!t || *p == ':')
		return -EINVAL;
	return parse_clock(p, w);
}

/* The time w names with the left-out fields taken from tm, or -1 when
 * that day does not exist (mktime would move it to the next month). */
static time_t at(const struct when *w, struct tm tm)
{
	int y = w->year >= 0 ? w->year - 1900 : tm.tm_year;
	int mon = w->mon >= 0 ? w->mon - 1 : tm.tm_mon, mday = w->mday >= 0 ? w->mday : tm.tm_mday;

	tm.tm_year = y;
	tm.tm_mon = mon;
	tm.tm_mday = mday;
	tm.tm_hour = w->hour >= 0 ? w->hour : tm.tm_hour;
	tm.tm_min = w->min;
	tm.tm_sec = 0;
	tm.tm_isdst = -1;
	time_t t = mktime(&tm);
	return t == (time_t)-1 || tm.tm_mday != mday || tm.tm_mon != mon ? (time_t)-1 : t;
}

int stop_at_parse(const char *s, time_t now, time_t *out)
{
	struct when w = { -1, -1, -1, -1, -1 };
	struct tm tm;
	int rc;

	if (!s || !*s || !localtime_r(&now, &tm))
		return -EINVAL;
	size_t nd = strspn(s, "0123456789");
	if (nd && nd <= 2 && !s[nd]) {   /* "14": the next 14th, at midnight */
		w.mday = atoi(s);
		w.hour = 0;
		w.min = 0;
		rc = w.mday >= 1 && w.mday <= 31 ? 0 : -EINVAL;
	} else if (s[0] == 'T' || s[0] == 't')
		rc = parse_clock(s + 1, &w);
	else if (strchr(s, '-') || strchr(s, '/'))
		rc = parse_date(s, &w);
	else
		rc = parse_clock(s, &w);
	if (rc < 0)
		return rc;
	if (w.year >= 0) {   /* all given: it must be ahead */
		time_t t = at(&w, tm);
		if (t == (time_t)-1)
			return -EINVAL;
		if (t <= now)
			return -ERANGE;
		*out = t;
		return 0;
	}
	/* the next time that matches: step the first left-out field (the year,
	 * the month, the day, or the hour) from now until it is ahead; 9 years
	 * find a February 29th, 13 months a 31st, 3 days a clock time that a
	 * DST change skipped once */
	int steps = w.mon >= 0 ? 9 : w.mday >= 0 ? 13 : w.hour >= 0 ? 3 : 48;
	for (int i = 0; i < steps; i++) {
		struct tm base = tm;
		if (w.mon >= 0)
			base.tm_year += i;
		else if (w.mday >= 0) {
			base.tm_mday = 1;   /* a month on from the 1st: never past its end */
			base.tm_mon += i;
		} else if (w.hour >= 0)
			base.tm_mday += i;
		else
			base.tm_hour += i;
		base.tm_isdst = -1;
		time_t norm = mktime(&base);   /* a day or an hour on, normalised */
		if (norm == (time_t)-1 || !localtime_r(&norm, &base))
			return -EINVAL;
		time_t t = at(&w, base);
		if (t != (time_t)-1 && t > now) {
			*out = t;
			return 0;
		}
	}
	return -EINVAL;
}
