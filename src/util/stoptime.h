/* SPDX-License-Identifier: MIT */
/* rsync's --stop-after=MINS and --stop-at=y-m-dTh:m: when a transfer stops
 * on its own (what arrived of a big file stays, and the next run resumes
 * it: a nightly window for an off-site backup over a slow uplink). */
#ifndef FERRY_UTIL_STOPTIME_H
#define FERRY_UTIL_STOPTIME_H

#include <time.h>

/* MINS: a positive number of minutes, a fraction allowed ("0.5"; rsync
 * takes whole minutes), at most a year. 0 and *secs, or -EINVAL. */
int stop_after_parse(const char *s, double *secs);

/* The next point in local time, after `now`, that y-m-dTh:m names:
 *   YYYY-MM-DDTHH:MM, YYYY-MM-DD[T] (at midnight), MM-DD[THH:MM] (the next
 *   such day), DD (the next such day of a month, at midnight), HH:MM or
 *   THH:MM (the next such time), :MM (the next such minute); '/' may
 *   separate the date's numbers, a two-digit year is 20YY, a minute may
 *   have one digit.
 * 0 and *out; -EINVAL for anything else or a date that does not exist,
 * -ERANGE for a full date and time that is not after now (rsync refuses a
 * past time too). */
int stop_at_parse(const char *s, time_t now, time_t *out);

#endif
