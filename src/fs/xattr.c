/* SPDX-License-Identifier: MIT */
#include "fs/xattr.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "proto/msg.h"
#include "util/err.h"

#define FAKE_PREFIX "user.rsync."

/* dirfd/name as a path the l*xattr calls can take without following name */
static int proc_path(const struct xa_at *at, char *out, size_t cap)
{
	int n = snprintf(out, cap, "/proc/self/fd/%d/%s", at->dirfd, at->name);
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

static ssize_t do_list(const struct xa_at *at, char *buf, size_t cap)
{
	char p[4096 + 64];

	if (at->fd >= 0)
		return flistxattr(at->fd, buf, cap);
	if (proc_path(at, p, sizeof p) < 0)
		return errno = ENAMETOOLONG, -1;
	return at->follow ? listxattr(p, buf, cap) : llistxattr(p, buf, cap);
}

ssize_t fs_xattr_get(const struct xa_at *at, const char *name, void *out, size_t cap)
{
	char p[4096 + 64];
	ssize_t n;

	if (at->fd >= 0)
		n = fgetxattr(at->fd, name, out, cap);
	else if (proc_path(at, p, sizeof p) < 0)
		return -ENAMETOOLONG;
	else
		n = at->follow ? getxattr(p, name, out, cap) : lgetxattr(p, name, out, cap);
	return n < 0 ? -errno : n;
}

int fs_xattr_set(const struct xa_at *at, const char *name, const void *val, size_t len)
{
	char p[4096 + 64];
	int rc;

	if (at->fd >= 0)
		rc = fsetxattr(at->fd, name, val, len, 0);
	else if (proc_path(at, p, sizeof p) < 0)
		return -ENAMETOOLONG;
	else
		rc = lsetxattr(p, name, val, len, 0);
	return rc < 0 ? -errno : 0;
}

int fs_xattr_remove(const struct xa_at *at, const char *name)
{
	char p[4096 + 64];
	int rc;

	if (at->fd >= 0)
		rc = fremovexattr(at->fd, name);
	else if (proc_path(at, p, sizeof p) < 0)
		return -ENAMETOOLONG;
	else
		rc = lremovexattr(p, name);
	return rc < 0 ? -errno : 0;
}

void xattr_buf_free(struct xattr_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = 0;
	b->count = 0;
}

static int in_ns(const char *shown, unsigned ns)
{
	if (!strncmp(shown, "user.ferry.", 11))
		return 0;   /* ferry's own (a partial's source, a stored file's hash) */
	if ((ns & XA_NOCAPS) && !strcmp(shown, "security.capability"))
		return 0;
	if (!strncmp(shown, "user.", 5))
		return !!(ns & XA_USER);
	if (!strncmp(shown, "trusted.", 8) || !strncmp(shown, "security.", 9))
		return !!(ns & XA_SYS);
	if (!strcmp(shown, "system.posix_acl_access") || !strcmp(shown, "system.posix_acl_default"))
		return !!(ns & XA_ACL);
	return 0;
}

/* The name a real xattr is shown under in the set, or NULL if not in it. */
static const char *shown_of(const char *real, unsigned ns)
{
	if (ns & XA_FAKE) {
		if (!strncmp(real, FAKE_PREFIX, strlen(FAKE_PREFIX))) {
			const char *rest = real + strlen(FAKE_PREFIX);
			return rest[0] != '%' && (!strncmp(rest, "trusted.", 8) ||
				!strncmp(rest, "security.", 9)) && in_ns(rest, ns) ? rest : NULL;
		}
		if (!strncmp(real, "trusted.", 8) || !strncmp(real, "security.", 9))
			return NULL;   /* the box's own, not the client's */
	}
	return in_ns(real, ns) && xmeta_name_ok(real) ? real : NULL;
}

/* The real name a set's name is kept under (fake super moves some). */
static int real_of(const char *shown, unsigned ns, char out[256])
{
	const char *pre = (ns & XA_FAKE) && (!strncmp(shown, "trusted.", 8) ||
					     !strncmp(shown, "security.", 9)) ? FAKE_PREFIX : "";
	int n = snprintf(out, 256, "%s%s", pre, shown);
	return n < 0 || n > 255 ? -ENAMETOOLONG : 0;
}

struct name_pair { const char *shown, *real; };

static int by_shown(const void *a, const void *b)
{
	return strcmp(((const struct name_pair *)a)->shown, ((const struct name_pair *)b)->shown);
}

/* The entry's names in the set, sorted; *names and *pairs owned by the caller. */
static int list_names(const struct xa_at *at, unsigned ns, char **names,
		      struct name_pair **pairs, size_t *n)
{
	ssize_t len = do_list(at, NULL, 0);

	*names = NULL;
	*pairs = NULL;
	*n = 0;
	if (len < 0)
		return errno == ENOTSUP || errno == EOPNOTSUPP ? -ENOTSUP : -errno;
	/* +1: a list that grew in between is seen as ERANGE and retried once */
	for (int tries = 0; tries < 3; tries++) {
		char *buf = malloc((size_t)len + 1);
		if (!buf)
			return -ENOMEM;
		ssize_t got = do_list(at, buf, (size_t)len + 1);
		if (got < 0 && errno == ERANGE) {
			free(buf);
			len = do_list(at, NULL, 0);
			if (len < 0)
				return -errno;
			continue;
		}
		if (got < 0) {
			int e = -errno;
			free(buf);
			return e;
		}
		size_t cnt = 0;
		for (ssize_t i = 0; i < got; i += (ssize_t)strlen(buf + i) + 1)
			cnt++;
		struct name_pair *pv = calloc(cnt ? cnt : 1, sizeof *pv);
		if (!pv) {
			free(buf);
			return -ENOMEM;
		}
		for (ssize_t i = 0; i < got; i += (ssize_t)strlen(buf + i) + 1) {
			const char *sh = shown_of(buf + i, ns);
			if (sh)
				pv[(*n)++] = (struct name_pair){ sh, buf + i };
		}
		qsort(pv, *n, sizeof *pv, by_shown);
		*names = buf;
		*pairs = pv;
		return 0;
	}
	return -EAGAIN;
}

static int put_rec(struct xattr_buf *b, const char *name, const uint8_t *val, size_t vlen)
{
	size_t nl = strlen(name);

	if (nl > 255 || vlen > 0xffff || b->count >= XMETA_MAX_COUNT ||
	    b->len + 1 + nl + 2 + vlen > XMETA_MAX_XATTR_BYTES)
		return -E2BIG;
	b->p[b->len++] = (uint8_t)nl;
	memcpy(b->p + b->len, name, nl);
	b->len += nl;
	b->p[b->len++] = (uint8_t)(vlen >> 8);
	b->p[b->len++] = (uint8_t)vlen;
	memcpy(b->p + b->len, val, vlen);
	b->len += vlen;
	b->count++;
	return 0;
}

int fs_xattr_read(const struct xa_at *at, unsigned ns, struct xattr_buf *b)
{
	static uint8_t val[65536];
	struct name_pair *pv;
	char *names;
	size_t n;
	int rc;

	b->len = 0;
	b->count = 0;
	if (!b->p && !(b->p = malloc(XMETA_MAX_XATTR_BYTES)))
		return err_set(-ENOMEM, "out of memory for xattrs");
	rc = list_names(at, ns, &names, &pv, &n);
	if (rc == -ENOTSUP)
		return 0;
	if (rc < 0)
		return err_sys(rc, "listing xattrs");
	for (size_t i = 0; i < n && rc >= 0; i++) {
		ssize_t vl = fs_xattr_get(at, pv[i].real, val, sizeof val);
		if (vl == -ENODATA)
			continue;   /* removed in between */
		if (vl < 0)
			rc = err_sys((int)vl, "reading xattr %s", pv[i].shown);
		else if (put_rec(b, pv[i].shown, val, (size_t)vl) < 0)
			rc = err_set(-E2BIG, "xattrs larger than %u bytes in all (at %s)",
				     XMETA_MAX_XATTR_BYTES, pv[i].shown);
	}
	free(pv);
	free(names);
	return rc < 0 ? rc : 0;
}

static int set_one(const struct xa_at *at, unsigned ns, const struct xattr_rec *x, uint8_t *cur,
		   int dry)
{
	char real[256];
	int rc = real_of(x->name, ns, real);

	if (rc < 0)
		return err_set(rc, "xattr %s: name too long to keep", x->name);
	ssize_t have = fs_xattr_get(at, real, cur, 65536);
	if (have == (ssize_t)x->len && !memcmp(cur, x->value, x->len))
		return 0;
	if (dry)
		return 1;
	if ((rc = fs_xattr_set(at, real, x->value, x->len)) < 0)
		return err_sys(rc, "setting xattr %s", x->name);
	return 1;
}

int fs_xattr_apply(const struct xa_at *at, unsigned ns, const uint8_t *list, size_t bytes,
		   int dry)
{
	static uint8_t cur[65536];
	struct name_pair *pv;
	struct xattr_rec x;
	char *names;
	size_t n, off = 0;
	int rc, changed = 0;

	rc = list_names(at, ns, &names, &pv, &n);
	if (rc == -ENOTSUP)
		return bytes ? err_set(-ENOTSUP, "the file system keeps no xattrs") : 0;
	if (rc < 0)
		return err_sys(rc, "listing xattrs");
	/* both lists are sorted: one merge pass removes what the set lacks
	 * and sets what differs */
	size_t i = 0;
	int have = xmeta_next(list, bytes, &off, &x);
	while (rc >= 0 && (i < n || have > 0)) {
		if (have > 0 && !in_ns(x.name, ns)) {
			/* not this receiver's to set (trusted.* when not root) */
			have = xmeta_next(list, bytes, &off, &x);
			continue;
		}
		int cmp = have <= 0 ? -1 : i >= n ? 1 : strcmp(pv[i].shown, x.name);
		if (cmp < 0) {
			rc = dry ? 0 : fs_xattr_remove(at, pv[i].real);
			if (rc == -ENODATA)
				rc = 0;
			else if (rc < 0)
				rc = err_sys(rc, "removing xattr %s", pv[i].shown);
			else
				changed++;
			i++;
			continue;
		}
		if (cmp == 0)
			i++;
		rc = set_one(at, ns, &x, cur, dry);
		changed += rc > 0;
		have = xmeta_next(list, bytes, &off, &x);
	}
	if (rc >= 0 && have < 0)
		rc = err_set(-EBADMSG, "a malformed xattr list");
	free(pv);
	free(names);
	return rc < 0 ? rc : changed;
}
