/* SPDX-License-Identifier: MIT */
#include "util/err.h"

#include <stdio.h>
#include <string.h>

static _Thread_local char last[1024];

/* Formats into a scratch buffer first: a caller may pass err_msg() itself as
 * an argument ("--listen: %s"), which must not be overwritten while read. */
__attribute__((format(printf, 1, 0)))
static void vrecord(const char *fmt, va_list ap)
{
	char line[sizeof last];

	vsnprintf(line, sizeof line, fmt, ap);
	memcpy(last, line, sizeof last);
}

int err_set(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vrecord(fmt, ap);
	va_end(ap);
	return code;
}

int err_sys(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vrecord(fmt, ap);
	va_end(ap);
	size_t n = strlen(last);
	snprintf(last + n, sizeof last - n, ": %s", strerror(code < 0 ? -code : code));
	return code;
}

int err_wrap(int code, const char *fmt, ...)
{
	char prev[sizeof last];
	va_list ap;
	memcpy(prev, last, sizeof prev);
	va_start(ap, fmt);
	vrecord(fmt, ap);
	va_end(ap);
	/* Appended piecewise: the context and the old message together may not fit. */
	size_t n = strlen(last);
	if (n + 2 < sizeof last) {
		memcpy(last + n, ": ", 3);
		n += 2;
		size_t k = strnlen(prev, sizeof last - n - 1);
		memcpy(last + n, prev, k);
		last[n + k] = '\0';
	}
	return code;
}

const char *err_msg(void)
{
	return last;
}

void err_clear(void)
{
	last[0] = '\0';
}
