/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "util/log.h"
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
	char line[2048];
	va_list ap, ap2;

	va_start(ap, fmt);
	va_copy(ap2, ap);
	fputs("ferry: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	vsnprintf(line, sizeof line, fmt, ap2);   /* --log-file's copy (cut short there) */
	va_end(ap2);
	va_end(ap);
	log_tee(line);
}

/* One default for `ferry serve DIR` and `ferry serve --config FILE`, so that
 * moving from one to the other keeps the host key (clients would otherwise
 * see it CHANGED): host_key in ferry's directory. A host_key next to the
 * config file, where older versions put it, is still used. */
int default_host_key(const char *config, char *out, size_t cap)
{
	const char *slash = config ? strrchr(config, '/') : NULL;

	if (config) {
		int n = slash ? snprintf(out, cap, "%.*s/host_key", (int)(slash - config), config)
			      : snprintf(out, cap, "host_key");
		if (n > 0 && (size_t)n < cap && access(out, F_OK) == 0)
			return 0;
	}
	return ferry_path(out, cap, "host_key");
}

/* pair.sock beside the host key: a directory the daemon can reach and
 * `ferry pair` (run by whoever made that key) can write. */
int default_pair_socket(const char *host_key, char *out, size_t cap)
{
	const char *slash = strrchr(host_key, '/');
	int n = slash ? snprintf(out, cap, "%.*s/pair.sock", (int)(slash - host_key), host_key)
		      : snprintf(out, cap, "pair.sock");

	if (n <= 0 || (size_t)n >= cap || (size_t)n >= 108)
		return err_set(-ENAMETOOLONG, "pair socket %s: path too long for a unix socket "
			       "(set 'pair socket =' in [global])", out);
	return 0;
}
