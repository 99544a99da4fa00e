/* SPDX-License-Identifier: MIT */
#include "session/xfer.h"

#include <stdarg.h>
#include <stdio.h>

#include "util/log.h"

void xfer_merge(struct xfer_stats *st, const struct xfer_stats *earlier)
{
	if (!earlier->errors)
		return;
	snprintf(st->first_error, sizeof st->first_error, "%s", earlier->first_error);
	st->errors = earlier->errors > UINT32_MAX - st->errors ? UINT32_MAX :
		     st->errors + earlier->errors;
}

/* Logs a failure and keeps its message if it is the first. */
__attribute__((format(printf, 2, 0)))
static void record(struct xfer_stats *st, const char *fmt, va_list ap)
{
	char line[512];

	vsnprintf(line, sizeof line, fmt, ap);
	if (!st->first_error[0])
		snprintf(st->first_error, sizeof st->first_error, "%s", line);
	log_err("%s", line);
}

void xfer_note(struct xfer_stats *st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	record(st, fmt, ap);
	va_end(ap);
}

void xfer_error(struct xfer_stats *st, const char *fmt, ...)
{
	va_list ap;

	st->errors++;
	va_start(ap, fmt);
	record(st, fmt, ap);
	va_end(ap);
}
