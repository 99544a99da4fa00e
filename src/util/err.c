/* SPDX-License-Identifier: MIT */
#include "util/err.h"

#include <stdio.h>
#include <string.h>

static _Thread_local char last[1024];

static void vrecord(const char *fmt, va_list ap)
{
	vsnprintf(last, sizeof last, fmt, ap);
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
	char ctx[512];
	va_list ap;
	memcpy(prev, last, sizeof prev);
	va_start(ap, fmt);
	vsnprintf(ctx, sizeof ctx, fmt, ap);
	va_end(ap);
	snprintf(last, sizeof last, "%s: %s", ctx, prev);
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
