/* SPDX-License-Identifier: MIT */
#include "session/xfer.h"

#include <stdarg.h>
#include <stdio.h>

#include "util/log.h"

void xfer_error(struct xfer_stats *st, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (!st->errors++)
		snprintf(st->first_error, sizeof st->first_error, "%s", line);
	log_err("%s", line);
}
