/* SPDX-License-Identifier: MIT */
#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

static const char *prog_name = "ferry";
static int cur_level = LOG_WARN;
static int to_syslog;
static char prefix[128];
static void (*before_fn)(void *);
static void *before_ctx;
static void (*tee_fn)(void *, const char *);
static void *tee_ctx;

void log_set_before(void (*fn)(void *), void *ctx)
{
	before_fn = fn;
	before_ctx = ctx;
}

void log_set_tee(void (*fn)(void *, const char *line), void *ctx)
{
	tee_fn = fn;
	tee_ctx = ctx;
}

void log_tee(const char *line)
{
	if (tee_fn)
		tee_fn(tee_ctx, line);
}

void log_init(const char *prog, int level, int use_syslog)
{
	prog_name = prog;
	cur_level = level;
	to_syslog = use_syslog;
	if (use_syslog)
		openlog(prog, LOG_PID | LOG_NDELAY, LOG_DAEMON);   /* connected before any sandbox */
}

void log_set_prefix(const char *p)
{
	snprintf(prefix, sizeof prefix, "%s", p ? p : "");
}

int log_level(void)
{
	return cur_level;
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	static const int sysprio[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };
	char line[1200];
	va_list ap;

	if ((int)lvl > cur_level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (to_syslog) {
		syslog(sysprio[lvl], "%s%s%s", prefix, prefix[0] ? " " : "", line);
		return;
	}
	if (before_fn)
		before_fn(before_ctx);
	fprintf(stderr, "%s: %s%s%s\n", prog_name, prefix, prefix[0] ? " " : "", line);
	log_tee(line);
}
