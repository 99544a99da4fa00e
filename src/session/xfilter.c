/* SPDX-License-Identifier: MIT */
#include "session/xfilter.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/quote.h"
#include "util/err.h"
#include "util/path.h"
#include "util/readfile.h"

_Static_assert(FILTER_MAX_WIRE <= MSG_FILTER_MAX_TOTAL, "a filter list fits its FILTER records");

/* The whole of an open file, up to one byte past FILTER_MAX_FILE (the
 * library names a file that is too large). Closes fd. A file of the tree
 * must be a regular one (a FIFO there would block); one the user named may
 * be a pipe or a terminal (`stream`). */
static int slurp(int fd, int stream, const char *shown, char **data, size_t *len)
{
	char q[FS_QUOTE_BUF];
	int rc = stream ? read_stream_fd(fd, FILTER_MAX_FILE + 1, data, len)
			: read_regular_fd(fd, FILTER_MAX_FILE + 1, data, len);

	close(fd);
	if (rc == -EINVAL)
		return err_set(rc, stream ? "filter file %s: not a file, a pipe or a terminal" :
					    "filter file %s: not a regular file",
			       fs_quote(q, shown, strlen(shown)));
	if (rc == -ENOMEM)
		return err_set(rc, "out of memory");
	if (rc < 0)
		return err_sys(rc, "filter file %s", fs_quote(q, shown, strlen(shown)));
	return 0;
}

/* A dir-merge file: NAME in directory dir of the transfer root, through the
 * jail; a symlink anywhere on the way is refused, never followed (but on a
 * PC's push -L or -k, whose jail follows: there rsync reads it through). */
static int read_dir_file(struct xfilter *x, const char *dir, const char *name, char **data,
			 size_t *len)
{
	char d[4097], rel[4097 + 256], q[FS_QUOTE_BUF];
	const char *leaf;

	if (!x->jail)
		return -ENOENT;
	if (path_join(d, sizeof d, x->root, dir) < 0 || path_join(rel, sizeof rel, d, name) < 0)
		return err_set(-ENAMETOOLONG, "filter file %s/%s: path too long", dir, name);
	int dfd = jail_open_parent(x->jail, rel, &leaf);
	if (dfd == -ENOENT)
		return -ENOENT;
	if (dfd < 0)
		return dfd;
	int fd = openat(dfd, leaf, O_RDONLY | O_NONBLOCK | O_CLOEXEC |
			(x->jail->follow ? 0 : O_NOFOLLOW));
	int e = errno;
	close(dfd);
	if (fd < 0 && e == ENOENT)
		return -ENOENT;
	if (fd < 0)
		return err_sys(-e, "filter file %s%s", fs_quote(q, rel, strlen(rel)),
			       e == ELOOP ? " is a symlink (not followed)" : "");
	return slurp(fd, 0, rel, data, len);
}

static int read_cb(void *ctx, const char *dir, const char *name, char **data, size_t *len)
{
	struct xfilter *x = ctx;

	if (dir)
		return read_dir_file(x, dir, name, data, len);
	if (!x->local_merge)   /* filter_decode refuses merge rules already */
		return err_set(-EPERM, "merge file %s: not read for a peer", name);
	return xfilter_read_local(name, data, len);
}

int xfilter_read_local(const char *path, char **data, size_t *len)
{
	char q[FS_QUOTE_BUF];
	int fd = !strcmp(path, "-") ? dup(STDIN_FILENO) :
				      open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return err_sys(-errno, "filter file %s", fs_quote(q, path, strlen(path)));
	return slurp(fd, 1, path, data, len);
}

int xfilter_init(struct xfilter *x, int local_merge, int delete_excluded)
{
	memset(x, 0, sizeof *x);
	x->local_merge = local_merge;
	struct filter_opts o = { .delete_excluded = delete_excluded, .read = read_cb, .ctx = x };
	return filter_new(&x->fl, &o);
}

void xfilter_free(struct xfilter *x)
{
	if (!x)
		return;
	filter_free(x->fl);
	x->fl = NULL;
}

void xfilter_place(struct xfilter *x, const struct jail *j, const char *root)
{
	if (!x)
		return;
	x->jail = j;
	snprintf(x->root, sizeof x->root, "%s", root);
}

/* at is dir or one of its ancestors ("" is every path's) */
static int within(const char *at, const char *dir)
{
	size_t n = strlen(at);
	return !n || (!strncmp(at, dir, n) && (dir[n] == '\0' || dir[n] == '/'));
}

static void leave_one(struct xfilter *x)
{
	char *slash = strrchr(x->at, '/');

	filter_leave_dir(x->fl);
	if (!x->at[0])
		x->entered = 0;
	else if (slash)
		*slash = '\0';
	else
		x->at[0] = '\0';
}

int xfilter_goto(struct xfilter *x, const char *dir)
{
	int rc;

	if (!x)
		return 0;
	if (strlen(dir) >= sizeof x->at)
		return err_set(-ENAMETOOLONG, "%s: path too long", dir);
	while (x->entered && !within(x->at, dir))
		leave_one(x);
	if (!x->entered) {
		if ((rc = filter_enter_dir(x->fl, "")) < 0)
			return rc;
		x->entered = 1;
		x->at[0] = '\0';
	}
	while (strcmp(x->at, dir)) {
		size_t n = strlen(x->at);
		const char *rest = dir + n + (n ? 1 : 0);
		const char *end = strchr(rest, '/');
		size_t len = end ? (size_t)(end - dir) : strlen(dir);
		char next[sizeof x->at];
		memcpy(next, dir, len);
		next[len] = '\0';
		if ((rc = filter_enter_dir(x->fl, next)) < 0)
			return rc;
		memcpy(x->at, next, len + 1);
	}
	return 0;
}

void xfilter_leave_all(struct xfilter *x)
{
	while (x && x->entered)
		leave_one(x);
}

int xfilter_excluded(const struct xfilter *x, enum filter_side side, const char *path, int is_dir)
{
	return x && filter_match(x->fl, side, path, is_dir) == FILTER_EXCLUDED;
}

int xfilter_module_excluded(const struct filter_list *fl, const char *prefix, const char *path,
			    int is_dir)
{
	char full[2 * 4097];

	if (!fl || path_join(full, sizeof full, prefix, path) < 0 || !full[0])
		return 0;
	/* every directory above it, the transfer root's too, then the entry */
	for (char *p = full; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		int ex = filter_match(fl, FILTER_SENDER, full, 1) == FILTER_EXCLUDED;
		*p = '/';
		if (ex)
			return 1;
	}
	return filter_match(fl, FILTER_SENDER, full, is_dir) == FILTER_EXCLUDED;
}

int xfilter_send(struct conn *c, const struct xfilter *x)
{
	uint8_t *wire;
	size_t len;
	int rc;

	if ((rc = filter_encode(x->fl, &wire, &len)) < 0)
		return rc;
	struct msg m = { .type = MSG_FILTER };
	for (size_t off = 0; rc == 0 && off < len;) {
		size_t k = len - off < FILTER_MAX_PIECE ? len - off : FILTER_MAX_PIECE;
		m.u.filter = (struct m_filter){ .total = (uint32_t)len, .offset = (uint32_t)off,
						.len = (uint16_t)k, .bytes = wire + off };
		rc = conn_send(c, &m);
		off += k;
	}
	free(wire);
	return rc;
}

int xfilter_recv(struct conn *c, struct xfilter *x)
{
	struct msg m;
	uint8_t *buf = NULL;
	uint32_t total = 0, got = 0;
	int rc;

	do {
		if ((rc = conn_recv(c, &m)) < 0)
			break;
		if (m.type != MSG_FILTER || (buf && (m.u.filter.total != total ||
						     m.u.filter.offset != got))) {
			rc = err_set(-EBADMSG, "protocol: %s where the filter rules' bytes %u.. were due",
				     msg_type_name(m.type), got);
			break;
		}
		if (!buf) {
			if (m.u.filter.offset) {
				rc = err_set(-EBADMSG, "protocol: filter rules from byte %u",
					     m.u.filter.offset);
				break;
			}
			total = m.u.filter.total;
			if (!(buf = malloc(total))) {
				rc = err_set(-ENOMEM, "out of memory");
				break;
			}
		}
		memcpy(buf + got, m.u.filter.bytes, m.u.filter.len);
		got += m.u.filter.len;
	} while (got < total);
	if (rc == 0) {
		struct filter_list *fl;
		struct filter_opts o = { .read = read_cb, .ctx = x };
		if ((rc = filter_decode(buf, total, &o, &fl)) == 0) {
			filter_free(x->fl);
			x->fl = fl;
		}
	}
	free(buf);
	return rc;
}
