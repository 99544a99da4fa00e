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

void xfer_note(struct xfer_stats *st, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (!st->first_error[0])
		snprintf(st->first_error, sizeof st->first_error, "%s", line);
	log_err("%s", line);
}

void xfer_error(struct xfer_stats *st, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	st->errors++;
	if (!st->first_error[0])
		snprintf(st->first_error, sizeof st->first_error, "%s", line);
	log_err("%s", line);
}
