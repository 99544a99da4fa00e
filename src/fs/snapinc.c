/* SPDX-License-Identifier: MIT */
#include "fs/snapinc.h"
#include "fs/sync.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fs/meta.h"
#include "fs/quote.h"
#include "fs/snapidx.h"
#include "fs/xattrcopy.h"
#include "fs/snapprune.h"
#include "fs/snapview.h"
#include "util/err.h"
#include "util/log.h"

#define TMP_NAME "new.tmp"

/* 128 KiB: with the 100,000 directories of a large push a few percent of the
 * questions still read the log */
#define BELOW_BITS (1u << 20)

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void release(struct snapinc *s)
{
	close_fd(&s->dirs);
	close_fd(&s->log);
	close_fd(&s->obj);
	close_fd(&s->dir);
	close_fd(&s->snaps);
	close_fd(&s->hist);
	close_fd(&s->lock);   /* last: it is what serializes pushes */
	free(s->below);
	s->below = NULL;
}

static int start(struct snapinc *s)
{
	if (mkdirat(s->snaps, TMP_NAME, 0700) < 0)
		return err_sys(-errno, SNAP_DIR "/snaps/" TMP_NAME);
	s->dir = openat(s->snaps, TMP_NAME, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->dir < 0 || mkdirat(s->dir, "inc", 0700) < 0 || mkdirat(s->dir, "inc/o", 0700) < 0)
		return err_sys(-errno, SNAP_DIR "/snaps/" TMP_NAME);
	s->obj = openat(s->dir, "inc/o", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	s->log = openat(s->dir, "log", O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW |
			O_CLOEXEC, 0600);
	s->dirs = openat(s->dir, "dirs", O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (s->obj < 0 || s->log < 0 || s->dirs < 0)
		return err_sys(-errno, SNAP_DIR "/snaps/" TMP_NAME);
	return 0;
}

int snapinc_settle(const struct jail *mod, int snaps)
{
	struct snapinfo *list = NULL;
	struct stat st;
	size_t n = 0;
	int rc;

	if (fstatat(snaps, TMP_NAME, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if ((rc = snapstore_list(snaps, &list, &n)) < 0)
		return rc;
	free(list);
	/* Before the first snapshot a push logs nothing: a log there is not
	 * one of ours (a tree pushed before the module had snapshots can hold
	 * anything) and is dropped, never run. */
	log_warn("%s a push to this module that did not finish",
		 n ? "undoing" : "dropping what is left of");
	return n ? snapinc_recover(mod, snaps, TMP_NAME) : fs_remove_tree_force(snaps, TMP_NAME);
}

int snapinc_begin(struct snapinc *s, const struct jail *mod, const char *client)
{
	struct snapinfo *list = NULL;
	size_t n = 0;
	int rc;

	*s = (struct snapinc){ .mod = mod, .hist = -1, .snaps = -1, .lock = -1, .dir = -1,
			       .obj = -1, .log = -1, .dirs = -1 };
	snprintf(s->client, sizeof s->client, "%s", client);
	if ((rc = snapstore_open(mod->root_fd, 1, &s->hist, &s->snaps)) < 0 ||
	    (rc = s->lock = snapstore_lock(s->hist, 1)) < 0)
		goto fail;
	snapview_clean(s->hist);   /* views of sessions that are gone */
	if ((rc = snapprune_settle(mod, s->snaps)) < 0 || (rc = snapinc_settle(mod, s->snaps)) < 0 ||
	    (rc = snapstore_list(s->snaps, &list, &n)) < 0)
		goto fail;
	if (n)
		snprintf(s->last, sizeof s->last, "%s", list[n - 1].name);
	free(list);
	s->record = n > 0;
	s->below = calloc(BELOW_BITS / 8, 1);   /* (without it, each question reads the log) */
	if ((rc = start(s)) < 0)
		goto fail;
	return 0;
fail:
	release(s);
	return rc;
}

static uint32_t below_bit(const char *dir, size_t len)
{
	uint64_t h = 1469598103934665603ull;   /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)dir[i]) * 1099511628211ull;
	return (uint32_t)(h ^ (h >> 32)) & (BELOW_BITS - 1);
}

/* Every directory above path has something below it in the log. */
static void below_mark(struct snapinc *s, const char *path)
{
	for (size_t i = 0; s->below && path[i]; i++)
		if (path[i] == '/') {
			uint32_t b = below_bit(path, i);
			s->below[b / 8] |= (uint8_t)(1u << (b % 8));
		}
}

static int log_rec(struct snapinc *s, char kind, uint32_t obj, const char *path)
{
	below_mark(s, path);
	return snapidx_log_append(s->log, kind, obj, path);
}

static void hex_of(char out[9], uint32_t obj)
{
	snprintf(out, 9, "%08x", obj);
}

/* Before the first change in a directory (each time it is not the one
 * changed last), its state goes to the log: undoing the push puts back its
 * mtime too, which the changes in it moved. */
static int note_parent(struct snapinc *s, const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;
	uint8_t rec[SNAPSTAT_LEN];
	struct stat st;

	if (strlen(s->parent) == n && !memcmp(s->parent, path, n) && s->ndirs)
		return 0;
	snprintf(s->parent, sizeof s->parent, "%.*s", (int)n, path);
	int fd = n ? jail_open_dir(s->mod, s->parent, O_RDONLY) : dup(s->mod->root_fd);
	if (fd < 0)
		return 0;   /* nothing there to undo */
	int ok = fstat(fd, &st) == 0;
	close(fd);
	if (!ok)
		return 0;
	snapstat_put(rec, &st);
	if (pwrite(s->dirs, rec, SNAPSTAT_LEN, (off_t)s->ndirs * SNAPSTAT_LEN) != SNAPSTAT_LEN)
		return err_sys(-EIO, "writing the snapshot log");
	return log_rec(s, SNAP_PARENT, s->ndirs++, path);
}

int snapinc_keep(struct snapinc *s, int dirfd, const char *name, const char *path, int move)
{
	char hex[9], q[FS_QUOTE_BUF];
	int rc;

	s->files++;
	if (!s->record)
		return move ? fs_remove_tree(dirfd, name) : 0;
	if ((rc = note_parent(s, path)) < 0)
		return rc;
	uint32_t obj = s->nobj++;
	hex_of(hex, obj);
	if ((rc = log_rec(s, SNAP_OLD, obj, path)) < 0)
		return rc;
	if (move ? renameat(dirfd, name, s->obj, hex) < 0 : linkat(dirfd, name, s->obj, hex, 0) < 0)
		return err_sys(-errno, "keeping the old version of %s", fs_quote(q, path, strlen(path)));
	return 0;
}

int snapinc_changed_below(struct snapinc *s, const char *path)
{
	uint32_t b = below_bit(path, strlen(path));

	if (!s->record || (s->below && !(s->below[b / 8] & (1u << (b % 8)))))
		return 0;   /* nothing below it was logged (the summary misses none) */
	/* the log is this push's own; an error says "changed": nothing is lost */
	return snapidx_log_has_below(s->log, path) != 0;
}

int snapinc_added(struct snapinc *s, const char *path)
{
	s->files++;
	if (!s->record || !path[0])
		return 0;
	int rc = note_parent(s, path);
	return rc < 0 ? rc : log_rec(s, SNAP_ADDED, 0, path);
}

/* An empty entry in o/ that has st's mode, owner and mtime. */
/* The xattrs (and ACLs) the entry at `path` has now, before its metadata
 * changes, onto its object, marked as kept; a regular file or a directory
 * only (a FIFO is not opened, a link has none of its own to keep). */
static void keep_xattrs(struct snapinc *s, int objfd, const struct stat *st, const char *path)
{
	char q[FS_QUOTE_BUF];
	const char *leaf;

	if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode))
		return;
	int dfd = jail_open_parent(s->mod, path, &leaf);
	int fd = dfd < 0 ? -1 : openat(dfd, leaf, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK |
				     O_NOCTTY);
	if (dfd >= 0)
		close(dfd);
	int rc = fd < 0 ? 0 : fs_xattr_copy(fd, objfd);
	if (fd >= 0 && rc == 0)
		rc = fs_xattr_mark(objfd);
	if (rc < 0 && rc != -ENOTSUP)   /* ENOTSUP: a file system that keeps none */
		log_warn("%s: its xattrs are not kept in the snapshot: %s",
			 fs_quote(q, path, strlen(path)), err_msg());
	if (fd >= 0)
		close(fd);
}

static int meta_object(struct snapinc *s, const char *hex, const struct stat *st, const char *path)
{
	int fd;

	if (S_ISDIR(st->st_mode)) {
		if (mkdirat(s->obj, hex, 0700) < 0)
			return -errno;
		fd = openat(s->obj, hex, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	} else {
		fd = openat(s->obj, hex, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	}
	if (fd < 0)
		return -errno;
	keep_xattrs(s, fd, st, path);   /* first: an ACL set moves the mode's group bits */
	int rc = 0;
	/* an owner that cannot be kept (not root) is the session's own anyway */
	if (fchown(fd, st->st_uid, st->st_gid) < 0 && errno != EPERM)
		rc = -errno;
	if (!rc && !S_ISLNK(st->st_mode) && fchmod(fd, st->st_mode & 07777) < 0)
		rc = -errno;
	if (!rc && futimens(fd, (struct timespec[2]){ { .tv_nsec = UTIME_OMIT }, st->st_mtim }) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

int snapinc_meta(struct snapinc *s, const struct stat *st, const char *path)
{
	char hex[9], q[FS_QUOTE_BUF];
	int rc;

	s->files++;
	if (!s->record || !path[0])   /* the module's root: its metadata is not kept */
		return 0;
	if ((rc = note_parent(s, path)) < 0)
		return rc;
	uint32_t obj = s->nobj++;
	hex_of(hex, obj);
	if ((rc = log_rec(s, SNAP_META, obj, path)) < 0)
		return rc;
	if ((rc = meta_object(s, hex, st, path)) < 0)
		return err_sys(rc, "keeping the old metadata of %s", fs_quote(q, path, strlen(path)));
	return 0;
}

void snapinc_count(struct snapinc *s, uint64_t bytes)
{
	s->bytes += bytes;
}

int snapinc_commit(struct snapinc *s)
{
	struct snapinfo si = { .files = s->files, .bytes = s->bytes, .failed = s->failed };
	int rc = 0;

	s->committed = 1;
	s->made = 0;
	if (!s->files) {   /* nothing changed: no snapshot */
		close_fd(&s->log);
		rc = fs_remove_tree_force(s->snaps, TMP_NAME);
		release(s);
		return rc;
	}
	si.time = (int64_t)time(NULL);
	snprintf(si.client, sizeof si.client, "%s", s->client);
	snapstore_name(si.name, si.time, s->client, s->last[0] ? s->last : NULL);
	unsigned runs;
	int inc = openat(s->dir, "inc", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	rc = inc < 0 ? err_sys(-errno, "the new snapshot") : snapidx_build(inc, s->log, &runs);
	if (inc >= 0)
		close(inc);
	/* the index, the info and every file the push wrote reach the disk
	 * before the rename that commits them: after a power cut a snapshot is
	 * whole or not there (a new file's delayed allocation is not ordered
	 * before a rename of its directory) */
	if (rc == 0 && (rc = snapinfo_write(s->dir, &si)) == 0 && fs_syncfs(s->dir) < 0)
		rc = err_wrap(-EIO, "the new snapshot");
	if (rc < 0) {
		snapinc_abort(s);
		return rc;
	}
	/* the rename is the commit; the log goes after it */
	if (renameat(s->snaps, TMP_NAME, s->snaps, si.name) < 0) {
		rc = err_sys(-errno, "committing snapshot %s", si.name);
		snapinc_abort(s);
		return rc;
	}
	unlinkat(s->dir, "log", 0);
	unlinkat(s->dir, "dirs", 0);
	s->made = 1;
	snprintf(s->name, sizeof s->name, "%s", si.name);
	release(s);
	return 0;
}

int snapinc_abort(struct snapinc *s)
{
	int rc = 0;

	if (s->snaps >= 0) {
		close_fd(&s->log);
		rc = snapinc_recover(s->mod, s->snaps, TMP_NAME);
	}
	release(s);
	return rc;
}

/* --- undoing a push ------------------------------------------------------- */

static void undo_meta(int dfd, const char *leaf, int obj, const char *hex)
{
	struct stat st;
	if (fstatat(obj, hex, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	if (fs_xattr_restore(obj, hex, dfd, leaf) < 0)   /* the xattrs kept, if any */
		log_warn("undoing the xattrs of %s: %s", leaf, err_msg());
	snapstat_apply(dfd, leaf, &st);
}

/* A directory as it was before the push's first change in it. */
static void undo_parent(const struct jail *mod, int dirs, const struct snaprec *r)
{
	const char *slash = strrchr(r->path, '/');
	char dir[PATH_MAX_WIRE + 1];
	uint8_t b[SNAPSTAT_LEN];
	struct stat st;

	if (dirs < 0 || pread(dirs, b, SNAPSTAT_LEN, (off_t)r->obj * SNAPSTAT_LEN) != SNAPSTAT_LEN)
		return;
	snapstat_get(b, &st);
	snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - r->path) : 0, r->path);
	int fd = dir[0] ? jail_open_dir(mod, dir, O_RDONLY) : dup(mod->root_fd);
	if (fd < 0)
		return;
	snapstat_apply(fd, NULL, &st);
	close(fd);
}

/* The kept version renamed straight over what the push left: a reader of
 * the latest tree sees the new file or the old one, never neither (removing
 * first left a gap that a client listing during the undo could fall into).
 * Only a directory on either side needs the remove first: -1 then. */
static int put_back(int obj, const char *hex, int dfd, const char *leaf)
{
	struct stat st;
	if (fstatat(obj, hex, &st, AT_SYMLINK_NOFOLLOW) < 0 || S_ISDIR(st.st_mode))
		return -1;
	return renameat(obj, hex, dfd, leaf);
}

/* One record, undone; what cannot be is said and passed over. */
static void undo(const struct jail *mod, int obj, int dirs, const struct snaprec *r)
{
	char hex[9], q[FS_QUOTE_BUF];
	const char *leaf;
	struct stat st;

	if (r->kind == SNAP_PARENT) {
		undo_parent(mod, dirs, r);
		return;
	}

	hex_of(hex, r->obj);
	if (r->kind == SNAP_OLD && fstatat(obj, hex, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;   /* never kept, or already put back */
	int dfd = jail_open_parent(mod, r->path, &leaf);
	if (dfd < 0) {
		log_warn("undoing %s: %s", fs_quote(q, r->path, strlen(r->path)), err_msg());
		return;
	}
	if (r->kind == SNAP_META) {
		undo_meta(dfd, leaf, obj, hex);
	} else if (r->kind == SNAP_OLD && put_back(obj, hex, dfd, leaf) == 0) {
		;
	} else if (fs_remove_tree(dfd, leaf) < 0) {
		log_warn("undoing %s: %s", fs_quote(q, r->path, strlen(r->path)), err_msg());
	} else if (r->kind == SNAP_OLD && renameat(obj, hex, dfd, leaf) < 0) {
		log_warn("undoing %s: %s", fs_quote(q, r->path, strlen(r->path)), strerror(errno));
	}
	close(dfd);
}

struct undo_ctx {
	const struct jail *mod;
	int obj, dirs, log;
	long done;
};

/* Each record undone is cut off the log, so that an undo cut short by a
 * kill goes on where it stopped: a record undone twice could remove what
 * the one before it put back (a directory that became a file is logged as
 * kept, then added). */
static int undo_one(void *ctx, const struct snaprec *r, long long at)
{
	struct undo_ctx *u = ctx;

	undo(u->mod, u->obj, u->dirs, r);
	if (ftruncate(u->log, (off_t)at) < 0)
		return err_sys(-errno, "the snapshot log");
#ifdef FERRY_TEST_HOOKS
	/* test builds (tests/unit/test_fs_snapinc.c): an undo ended as by kill -9 */
	const char *k = getenv("FERRY_TEST_UNDO_KILL");
	if (k && *k && ++u->done >= atol(k))
		_exit(99);
#endif
	return 0;
}

/* The log read from its end: the last change is undone first, so an entry
 * changed twice ends as it was before the first. */
static int undo_log(const struct jail *mod, int dir, int obj)
{
	static const char kinds[] = { SNAP_ADDED, SNAP_OLD, SNAP_META, SNAP_PARENT, '\0' };
	struct undo_ctx u = { .mod = mod, .obj = obj,
			      .dirs = openat(dir, "dirs", O_RDONLY | O_NOFOLLOW | O_CLOEXEC) };
	int fd = u.log = openat(dir, "log", O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	int rc = fd < 0 ? (errno == ENOENT ? 0 : err_sys(-errno, "the snapshot log")) :
			  snapidx_log_reverse(fd, kinds, undo_one, &u);

	if (fd >= 0)
		close(fd);
	if (u.dirs >= 0)
		close(u.dirs);
	return rc;
}

int snapinc_recover(const struct jail *mod, int snaps, const char *tmpname)
{
	int dir = openat(snaps, tmpname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0)
		return errno == ENOENT ? 0 : err_sys(-errno, "the unfinished push");
	int obj = openat(dir, "inc/o", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int rc = obj < 0 ? 0 : undo_log(mod, dir, obj);
	if (obj >= 0)
		close(obj);
	close(dir);
	if (rc == 0)
		rc = fs_remove_tree_force(snaps, tmpname);
	return rc;
}
