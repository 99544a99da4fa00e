/* SPDX-License-Identifier: MIT */
#include "cli/remote.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/config.h"
#include "util/err.h"

int remote_is(const char *arg)
{
	if (!strncmp(arg, "ferry://", 8))
		return 1;
	const char *colon = strchr(arg, ':');
	const char *slash = strchr(arg, '/');
	/* "./a:b" and "/x:y" are local paths, as rsync reads them. */
	return colon && colon != arg && (!slash || colon < slash);
}

static int parse_port(const char *s, size_t n, unsigned *port, const char *arg)
{
	char buf[8];
	char *end;

	if (n == 0 || n >= sizeof buf)
		return err_set(-EINVAL, "%s: bad port", arg);
	memcpy(buf, s, n);
	buf[n] = '\0';
	unsigned long v = strtoul(buf, &end, 10);
	if (*end || v == 0 || v > 65535)
		return err_set(-EINVAL, "%s: bad port '%s'", arg, buf);
	*port = (unsigned)v;
	return 0;
}

/* "HOST", "HOST:PORT", "[V6]", "[V6]:PORT" */
static int parse_hostport(const char *s, size_t n, struct remote *r, const char *arg)
{
	const char *hend, *portp = NULL;

	if (n && s[0] == '[') {
		hend = memchr(s, ']', n);
		if (!hend)
			return err_set(-EINVAL, "%s: missing ']' after IPv6 address", arg);
		if ((size_t)(hend - s - 1) >= sizeof r->host)
			return err_set(-EINVAL, "%s: host name too long", arg);
		snprintf(r->host, sizeof r->host, "%.*s", (int)(hend - s - 1), s + 1);
		if (hend + 1 < s + n) {
			if (hend[1] != ':')
				return err_set(-EINVAL, "%s: junk after ']'", arg);
			portp = hend + 2;
		}
	} else {
		hend = memchr(s, ':', n);
		if (!hend)
			hend = s + n;
		else
			portp = hend + 1;
		if ((size_t)(hend - s) >= sizeof r->host)
			return err_set(-EINVAL, "%s: host name too long", arg);
		snprintf(r->host, sizeof r->host, "%.*s", (int)(hend - s), s);
	}
	if (!r->host[0])
		return err_set(-EINVAL, "%s: missing host", arg);
	if (portp)
		return parse_port(portp, (size_t)(s + n - portp), &r->port, arg);
	return 0;
}

static int parse_modpath(const char *s, struct remote *r, const char *arg)
{
	const char *slash = strchr(s, '/');
	size_t mlen = slash ? (size_t)(slash - s) : strlen(s);

	if (!mlen)
		return err_set(-EINVAL, "%s: missing module name", arg);
	if (mlen >= sizeof r->module)
		return err_set(-EINVAL, "%s: module name too long", arg);
	snprintf(r->module, sizeof r->module, "%.*s", (int)mlen, s);
	const char *p = slash ? slash + 1 : "";
	size_t plen = strlen(p), out = 0;
	/* "mod/" names the module's root: a trailing '/' after the module is the root's contents */
	r->slash = slash && (!plen || p[plen - 1] == '/');
	/* as rsync cleans a name: "//" is "/", a "." component is dropped, and a
	 * last one means the contents ("dir/." is "dir/"); ".." is the server's
	 * to refuse */
	while (*p) {
		size_t c = strcspn(p, "/");
		if (c == 1 && p[0] == '.') {
			r->slash = 1;
		} else if (c) {
			if (out + !!out + c >= sizeof r->path)
				return err_set(-EINVAL, "%s: path too long", arg);
			if (out)
				r->path[out++] = '/';
			memcpy(r->path + out, p, c);
			out += c;
			r->slash = p[c] == '/' && !p[c + strspn(p + c, "/")];
		}
		p += c;
		p += strspn(p, "/");
	}
	r->path[out] = '\0';
	return 0;
}

int remote_parse(const char *arg, unsigned default_port, struct remote *r)
{
	int rc;

	memset(r, 0, sizeof *r);
	r->port = default_port;
	if (!strncmp(arg, "rsync://", 8))
		return err_set(-EINVAL, "%s: rsync:// is the rsync daemon's URL; for ferry write "
			       "ferry://HOST[:PORT]/MODULE[/PATH] or HOST:MODULE[/PATH]", arg);
	if (!strncmp(arg, "ferry://", 8)) {
		const char *hp = arg + 8;
		const char *scan = hp;
		if (hp[0] == '[' && strchr(hp, ']'))
			scan = strchr(hp, ']');
		const char *slash = strchr(scan, '/');
		if (!slash)
			return err_set(-EINVAL, "%s: missing /MODULE", arg);
		if ((rc = parse_hostport(hp, (size_t)(slash - hp), r, arg)) < 0)
			return rc;
		rc = parse_modpath(slash + 1, r, arg);
	} else {
		const char *colon;
		if (arg[0] == '[') {
			const char *rb = strchr(arg, ']');
			colon = rb ? strchr(rb, ':') : NULL;
		} else {
			colon = strchr(arg, ':');
		}
		if (!colon)
			return err_set(-EINVAL, "%s: not HOST:MODULE[/PATH]", arg);
		if ((rc = parse_hostport(arg, (size_t)(colon - arg), r, arg)) < 0)
			return rc;
		/* "HOST::MODULE" is rsync's daemon syntax: the same thing here */
		rc = parse_modpath(colon + 1 + (colon[1] == ':'), r, arg);
	}
	if (rc < 0)
		return rc;
	/* the known-hosts name: HOST alone only on the standard port, whether
	 * the port came from the operand or from --port (a --port run once
	 * recorded HOST, clashing with another daemon on the same host) */
	if (r->port == FERRY_DEFAULT_PORT)
		snprintf(r->display, sizeof r->display, "%s", r->host);
	else if (strchr(r->host, ':'))
		snprintf(r->display, sizeof r->display, "[%s]:%u", r->host, r->port);
	else
		snprintf(r->display, sizeof r->display, "%s:%u", r->host, r->port);
	return 0;
}
