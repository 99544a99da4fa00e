/* SPDX-License-Identifier: MIT */
#include "fs/snapview.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/meta.h"
#include "fs/quote.h"
#include "fs/snapidx.h"
#include "fs/xattrcopy.h"
#include "util/err.h"
#include "util/log.h"

#define VIEW_PREFIX "view."
#define MAX_DEPTH 512   /* one fd per level is held while a view is made */

/* The increments that matter for snapshot k: those of the pushes after it. */
struct inc {
	char name[SNAP_NAME_MAX + 2];   /* its directory: NAME, or NAME.h */
	struct snapidx idx;
};

struct view {
	int snaps;
	struct inc *inc;        /* owned; [0] is the push right after the snapshot */
	size_t ninc;
	char path[PATH_MAX_WIRE + 1];   /* the entry being made, module-relative */
	size_t depth;
};

/* Where an entry of the snapshot is: `fd`/`name` holds its contents (and,
 * without an override, its metadata); only increments before `upto` can
 * still say something about what is below it. */
struct where {
	int fd;                 /* owned when own = 1 */
	int own;
	char name[NAME_MAX_WIRE + 1];
	size_t upto;
	int meta_inc;           /* -1, or the increment whose object has its metadata */
	uint32_t meta_obj;
	struct stat st;         /* of fd/name, when resolve() found it */
};

static int obj_dir(const struct view *v, size_t i)
{
	char p[SNAP_NAME_MAX + 16];
	snprintf(p, sizeof p, "%s/inc/o", v->inc[i].name);
	int fd = openat(v->snaps, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? err_sys(-errno, "snapshot %s", v->inc[i].name) : fd;
}

/* The child `name` of a directory whose contents are at dirfd and which
 * increments before `upto` may still change: 1 and *w, 0 if the snapshot
 * had no such entry, <0 on error. v->path is the child's path. */
/* Where the snapshot's entry `name` is: 1 found (w->st its stat), 0 not in
 * the snapshot, or -errno. With `lazy`, an entry that is the latest tree's
 * own, unchanged since (the common case), is not stat'ed: 2, and the caller
 * links it (or learns from linkat that it is a directory or not there). */
static int resolve_at(const struct view *v, int dirfd, size_t upto, const char *name,
		      struct where *w, int lazy)
{
	*w = (struct where){ .fd = dirfd, .upto = upto, .meta_inc = -1 };
	snprintf(w->name, sizeof w->name, "%s", name);
	for (size_t i = 0; i < upto; i++) {
		struct snaprec r;
		if (!snapidx_find(&v->inc[i].idx, v->path, &r))
			continue;
		if (r.kind == SNAP_ADDED)
			return 0;
		if (r.kind == SNAP_META) {
			if (w->meta_inc < 0) {
				w->meta_inc = (int)i;
				w->meta_obj = r.obj;
			}
			continue;
		}
		int fd = obj_dir(v, i);
		if (fd < 0)
			return fd;
		w->fd = fd;
		w->own = 1;
		snprintf(w->name, sizeof w->name, "%08x", r.obj);
		w->upto = i;
		break;
	}
	if (lazy && !w->own && w->meta_inc < 0)
		return 2;
	if (fstatat(w->fd, w->name, &w->st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (w->own)
			close(w->fd);
		return errno == ENOENT ? 0 : err_sys(-errno, "%s", v->path);
	}
	return 1;
}

static int resolve(const struct view *v, int dirfd, size_t upto, const char *name, struct where *w)
{
	return resolve_at(v, dirfd, upto, name, w, 0);
}

static void where_done(struct where *w)
{
	if (w->own)
		close(w->fd);
	w->own = 0;
}

/* The stat that the entry had: its own, or its override's. */
static int meta_of(const struct view *v, const struct where *w, struct stat *st)
{
	if (w->meta_inc >= 0) {
		char p[SNAP_NAME_MAX + 24];
		snprintf(p, sizeof p, "%s/inc/o/%08x", v->inc[w->meta_inc].name, w->meta_obj);
		if (fstatat(v->snaps, p, st, AT_SYMLINK_NOFOLLOW) == 0)
			return 0;
	}
	return fstatat(w->fd, w->name, st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

/* A view's own copy of an entry (a directory, a file with a later change of
 * metadata) gets the xattrs, and so the ACLs, the entry had: those its
 * metadata record kept (a marked object), else the entry's own. A restore
 * of a snapshot must not lose them; a failure is logged and the view goes
 * on. */
static void keep_xattrs(const struct view *v, const struct where *w, int from, int to)
{
	char p[SNAP_NAME_MAX + 24], q[FS_QUOTE_BUF];
	int kept = -1;

	if (w->meta_inc >= 0) {
		snprintf(p, sizeof p, "%s/inc/o/%08x", v->inc[w->meta_inc].name, w->meta_obj);
		kept = openat(v->snaps, p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (kept >= 0 && !fs_xattr_marked(kept)) {
			close(kept);
			kept = -1;
		}
	}
	if (fs_xattr_copy(kept >= 0 ? kept : from, to) < 0)
		log_warn("snapshot view of %s: its xattrs: %s",
			 fs_quote(q, v->path, strlen(v->path)), err_msg());
	if (kept >= 0)
		close(kept);
}

/* A copy of a file whose metadata alone changed later: the contents are
 * shared, the metadata not, so it cannot be a link. */
static int copy_file(const struct view *v, const struct where *w, int sfd, const char *sname,
		     int dfd, const char *dname, const struct stat *st)
{
	int in = openat(sfd, sname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int out = in < 0 ? -1 : openat(dfd, dname, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
				       O_CLOEXEC, 0600);
	int rc = 0;

	if (in < 0 || out < 0)
		rc = -errno;
	while (rc == 0) {
		ssize_t n = copy_file_range(in, NULL, out, NULL, 1 << 30, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			rc = -errno;
		if (n <= 0)
			break;
	}
	if (rc == 0) {
		keep_xattrs(v, w, in, out);
		snapstat_apply(out, NULL, st);
	}
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return rc;
}

static int make_entry(struct view *v, const struct where *w, int vdir, const char *name);

/* A latest-tree entry that resolve_at did not stat: linked at once (one
 * syscall, not two, for each of the view's files), 0 when that is done or
 * it is gone; a directory (EPERM), or any other failure, gets its stat and
 * goes the usual way (1: make_entry, which links a file once more, and so
 * reports the failure as before). */
static int link_or_resolve(struct view *v, struct where *w, int vdir, const char *name)
{
	if (linkat(w->fd, w->name, vdir, name, 0) == 0 || errno == EEXIST)
		return 0;
	/* gone since it was listed (ENOENT) is "not in the view", as resolve's */
	if (fstatat(w->fd, w->name, &w->st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : err_sys(-errno, "%s", v->path);
	return 1;
}

struct names {
	char **v;
	size_t n, cap;
};

static int names_add(void *ctx, const char *name, size_t len)
{
	struct names *ns = ctx;
	if (ns->n == ns->cap) {
		size_t cap = ns->cap ? ns->cap * 2 : 64;
		char **nv = realloc(ns->v, cap * sizeof *nv);
		if (!nv)
			return -ENOMEM;
		ns->v = nv;
		ns->cap = cap;
	}
	if (!(ns->v[ns->n] = strndup(name, len)))
		return -ENOMEM;
	ns->n++;
	return 0;
}

static int names_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void names_free(struct names *ns)
{
	for (size_t i = 0; i < ns->n; i++)
		free(ns->v[i]);
	free(ns->v);
}

/* The names a directory of the snapshot may hold: those in its contents'
 * place and those the increments name below it. */
static int list_names(const struct view *v, int dirfd, size_t upto, struct names *ns)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	int rc = 0;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return err_sys(-errno, "%s", v->path[0] ? v->path : ".");
	}
	for (struct dirent *e; rc == 0 && (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!v->path[0] && !strcmp(e->d_name, SNAP_DIR))
			continue;
		rc = names_add(ns, e->d_name, strlen(e->d_name));
	}
	closedir(d);
	for (size_t i = 0; rc == 0 && i < upto; i++)
		rc = snapidx_children(&v->inc[i].idx, v->path, names_add, ns);
	if (rc < 0)
		return err_set(rc, "out of memory");
	qsort(ns->v, ns->n, sizeof *ns->v, names_cmp);
	return 0;
}

static int make_dir(struct view *v, const struct where *w, int vdir, const char *name)
{
	struct names ns = { 0 };
	struct stat st;
	int rc;

	if (++v->depth > MAX_DEPTH)
		return err_set(-ELOOP, "%s: too deep for a snapshot view", v->path);
	int src = openat(w->fd, w->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (src < 0)
		return err_sys(-errno, "%s", v->path);
	if (mkdirat(vdir, name, 0700) < 0 && errno != EEXIST) {
		close(src);
		return err_sys(-errno, "making the snapshot view");
	}
	int dst = openat(vdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dst < 0) {
		close(src);
		return err_sys(-errno, "making the snapshot view");
	}
	size_t plen = strlen(v->path);
	rc = list_names(v, src, w->upto, &ns);
	for (size_t i = 0; rc == 0 && i < ns.n; i++) {
		if (i && !strcmp(ns.v[i], ns.v[i - 1]))
			continue;
		if (plen + 1 + strlen(ns.v[i]) > PATH_MAX_WIRE)
			continue;
		snprintf(v->path + plen, sizeof v->path - plen, "%s%s", plen ? "/" : "", ns.v[i]);
		struct where c;
		int got = resolve_at(v, src, w->upto, ns.v[i], &c, 1);
		if (got == 2)
			got = link_or_resolve(v, &c, dst, ns.v[i]);
		if (got < 0)
			rc = got;
		else if (got == 1)
			rc = make_entry(v, &c, dst, ns.v[i]);
		where_done(&c);
		v->path[plen] = '\0';
	}
	if (rc == 0)
		keep_xattrs(v, w, src, dst);
	if (rc == 0 && meta_of(v, w, &st) == 0) {
		snapstat_apply(dst, NULL, &st);   /* last: its entries moved the mtime */
	}
	names_free(&ns);
	close(src);
	close(dst);
	v->depth--;
	return rc;
}

/* w as resolve() found it */
static int make_entry(struct view *v, const struct where *w, int vdir, const char *name)
{
	if (S_ISDIR(w->st.st_mode))
		return make_dir(v, w, vdir, name);
	if (w->meta_inc >= 0 && S_ISREG(w->st.st_mode)) {
		struct stat old;
		int rc = meta_of(v, w, &old);
		if (rc == 0)
			rc = copy_file(v, w, w->fd, w->name, vdir, name, &old);
		return rc < 0 ? err_sys(rc, "%s", v->path) : 0;
	}
	if (linkat(w->fd, w->name, vdir, name, 0) < 0 && errno != EEXIST)
		return err_sys(-errno, "%s: linking it into the snapshot view", v->path);
	return 0;
}

static void close_incs(struct view *v)
{
	for (size_t i = 0; i < v->ninc; i++)
		snapidx_close(&v->inc[i].idx);
	free(v->inc);
}

static int open_incs(struct view *v, const struct snapinfo *list, size_t n, size_t k)
{
	v->ninc = 0;
	v->inc = n - k - 1 ? calloc(n - k - 1, sizeof *v->inc) : NULL;
	if (n - k - 1 && !v->inc)
		return err_set(-ENOMEM, "out of memory");
	for (size_t i = k + 1; i < n; i++) {
		char d[SNAP_NAME_MAX + 8];
		snprintf(d, sizeof d, "%s%s/inc", list[i].name, list[i].hidden ? ".h" : "");
		int dir = openat(v->snaps, d, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		/* an increment emptied by a deletion has no inc/ */
		int rc = dir < 0 ? (errno == ENOENT ? 0 : err_sys(-errno, "snapshot %s", list[i].name)) :
				   snapidx_open(&v->inc[v->ninc].idx, dir);
		if (dir >= 0)
			close(dir);
		if (rc < 0)
			return err_wrap(rc, "snapshot %s", list[i].name);
		snapinfo_dir(&list[i], v->inc[v->ninc++].name);
	}
	return 0;
}

/* Walks `path` down from the module's root, resolving each step, and makes
 * the view's directories on the way (plain ones: only the last is sent). */
static int make_path(struct view *v, const struct jail *mod, int vroot, const char *path)
{
	struct where w = { .fd = mod->root_fd, .upto = v->ninc, .meta_inc = -1 };
	char comp[NAME_MAX_WIRE + 1];
	int vdir = vroot, rc = 0;

	snprintf(w.name, sizeof w.name, ".");
	v->path[0] = '\0';
	if (!path[0])
		return make_dir(v, &w, vroot, ".");
	for (const char *p = path; rc == 0;) {
		const char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);
		snprintf(comp, sizeof comp, "%.*s", (int)len, p);
		/* the contents' directory of the step before */
		int dfd = openat(w.fd, w.name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0) {
			rc = errno == ENOTDIR || errno == ENOENT ? -ENOENT : err_sys(-errno, "%s", path);
			break;
		}
		snprintf(v->path + strlen(v->path), sizeof v->path - strlen(v->path), "%s%s",
			 v->path[0] ? "/" : "", comp);
		struct where c;
		int got = resolve(v, dfd, w.upto, comp, &c);
		if (got <= 0) {
			close(dfd);
			rc = got ? got : -ENOENT;
			break;
		}
		if (!c.own) {   /* it stays in dfd: keep dfd open as its place */
			c.fd = dfd;
			c.own = 1;
		} else {
			close(dfd);
		}
		where_done(&w);
		w = c;
		if (!slash) {
			rc = make_entry(v, &w, vdir, comp);
			break;
		}
		if (mkdirat(vdir, comp, 0700) < 0 && errno != EEXIST) {
			rc = err_sys(-errno, "making the snapshot view");
			break;
		}
		int nd = openat(vdir, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (vdir != vroot)
			close(vdir);
		vdir = nd;
		if (vdir < 0) {
			rc = err_sys(-errno, "making the snapshot view");
			break;
		}
		p = slash + 1;
	}
	where_done(&w);
	if (vdir >= 0 && vdir != vroot)
		close(vdir);
	if (rc == -ENOENT) {
		char q[FS_QUOTE_BUF];
		return err_set(-ENOENT, "%s is not in that snapshot", fs_quote(q, path, strlen(path)));
	}
	return rc;
}

/* A view's owner holds an flock on view.PID.lock for as long as it lives
 * (the fd is kept until the process exits: the view is read until then), so
 * a view whose lock can be taken is one nobody reads. A check by pid would
 * need kill(2) on other processes, which a sandboxed session may not. */
static int view_lock = -1;
static int view_root = -1;   /* this process's view, kept for snapview_drop */

void snapview_clean(int hist)
{
	int fd = openat(hist, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	for (struct dirent *e; (e = readdir(d));) {
		char lock[NAME_MAX_WIRE + 8];
		size_t n = strlen(e->d_name);
		if (strncmp(e->d_name, VIEW_PREFIX, sizeof VIEW_PREFIX - 1) || n > NAME_MAX_WIRE ||
		    (n > 5 && !strcmp(e->d_name + n - 5, ".lock")))
			continue;
		snprintf(lock, sizeof lock, "%s.lock", e->d_name);
		int lfd = openat(hist, lock, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (lfd >= 0 && flock(lfd, LOCK_EX | LOCK_NB) < 0) {
			close(lfd);
			continue;   /* its session still reads it */
		}
		fs_remove_tree_force(hist, e->d_name);
		unlinkat(hist, lock, 0);
		if (lfd >= 0)
			close(lfd);
	}
	closedir(d);
}

int snapview_make(const struct jail *mod, int hist, int snaps, const struct snapinfo *list,
		  size_t n, size_t k, const char *path, struct jail *out)
{
	struct view v = { .snaps = snaps };
	char vname[32], rel[64];
	int rc;

	snapview_clean(hist);
	snprintf(vname, sizeof vname, VIEW_PREFIX "%ld", (long)getpid());
	snprintf(rel, sizeof rel, "%s.lock", vname);
	if (view_lock < 0) {
		view_lock = openat(hist, rel, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (view_lock < 0 || flock(view_lock, LOCK_EX | LOCK_NB) < 0)
			return err_sys(-errno, "locking the snapshot view");
	}
	if (mkdirat(hist, vname, 0700) < 0)
		return err_sys(-errno, "making the snapshot view");
	int vroot = openat(hist, vname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (vroot < 0)
		return err_sys(-errno, "making the snapshot view");
	rc = open_incs(&v, list, n, k);
	if (rc == 0)
		rc = make_path(&v, mod, vroot, path);
	close_incs(&v);
	if (view_root >= 0)
		close(view_root);
	view_root = vroot;
	snprintf(rel, sizeof rel, SNAP_DIR "/%s", vname);
	if (rc == 0)
		rc = jail_open_at(out, mod, rel);
	return rc;
}

int snapview_active(void)
{
	return view_root >= 0;
}

int snapview_drop(void)
{
	if (view_root < 0)
		return 0;
	DIR *d = fdopendir(view_root);
	int rc = 0;

	if (!d) {
		int e = errno;
		close(view_root);
		view_root = -1;
		return err_sys(-e, "removing the snapshot view");
	}
	view_root = -1;
	for (struct dirent *e; rc == 0 && (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			rc = fs_remove_tree_force(dirfd(d), e->d_name);
	closedir(d);
	return rc < 0 ? err_wrap(rc, "removing the snapshot view") : 0;
}
