/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "util/err.h"

static int base_dir(char *out, size_t cap)
{
	const char *e = getenv("FERRY_HOME");
	int n;

	if (e && *e)
		n = snprintf(out, cap, "%s", e);
	else if ((e = getenv("XDG_CONFIG_HOME")) && *e)
		n = snprintf(out, cap, "%s/ferry", e);
	else if ((e = getenv("HOME")) && *e)
		n = snprintf(out, cap, "%s/.config/ferry", e);
	else
		return err_set(-ENOENT, "cannot find ferry's directory: set HOME or FERRY_HOME");
	return n > 0 && (size_t)n < cap ? 0 : err_set(-ENAMETOOLONG, "ferry's directory path is too long");
}

int ferry_path(char *out, size_t cap, const char *name)
{
	char dir[3072];
	int rc = base_dir(dir, sizeof dir);
	if (rc < 0)
		return rc;
	int n = snprintf(out, cap, "%s/%s", dir, name);
	return n > 0 && (size_t)n < cap ? 0 : err_set(-ENAMETOOLONG, "path too long");
}

int ferry_dir_ensure(void)
{
	char dir[3072];
	int rc = base_dir(dir, sizeof dir);
	if (rc < 0)
		return rc;
	/* Like ~/.ssh: the parent (~/.config) may be missing too. */
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(dir, 0755);
		*p = '/';
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return err_sys(-errno, "cannot create %s", dir);
	return 0;
}

void die_msg(const char *fmt, ...)
{
	va_list ap;

	fputs("ferry: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
