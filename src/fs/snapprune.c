/* SPDX-License-Identifier: MIT */
#include "fs/snapprune.h"
#include "fs/sync.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/meta.h"
#include "fs/quote.h"
#include "fs/snapidx.h"
#include "fs/snapstore.h"
#include "fs/xattrcopy.h"
#include "util/err.h"
#include "util/log.h"

#define GONE "gone."
#define DIRN (SNAP_NAME_MAX + 2)

/* the journal's records (snapidx.h's form): what a merge did, to undo it */
enum {
	J_MOVE = 'R',    /* object "H/OLD" or "X/OLD" became inc.new/o/OBJ */
	J_TRASH = 'T',   /* X's entry at PATH (in X/inc/o) went to inc.new/trash/OBJ */
	J_INTO = 'I',    /* H's object OBJ went to PATH in X/inc/o */
	J_STAT = 'S',    /* PATH's stat (stats entry OBJ) before H's was set on it */
	J_XATTR = 'A',   /* PATH's xattrs, kept on trash/OBJ before H's were set on it */
};
static const char JKINDS[] = { J_MOVE, J_TRASH, J_INTO, J_STAT, J_XATTR, '\0' };

/* Test builds only (tests/e2e/test_snapshot_prune.sh): FERRY_TEST_PRUNE_KILL=N
 * ends the process at the Nth step of a deletion, as kill -9 would. */
static void kill_point(void)
{
#ifdef FERRY_TEST_HOOKS
	static long left = -1;
	if (left < 0) {
		const char *e = getenv("FERRY_TEST_PRUNE_KILL");
		left = e && *e ? atol(e) : 0;
		if (left <= 0)
			left = 0;
	}
	if (left > 0 && --left == 0)
		_exit(99);
#endif
}

static void hex_of(char out[9], uint32_t v)
{
	snprintf(out, 9, "%08x", v);
}

static int open_dir(int at, const char *p)
{
	return openat(at, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static int exists_at(int at, const char *p)
{
	struct stat st;
	return fstatat(at, p, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Renames at/name to snaps/gone.<tag> and removes it: a removal the next
 * settle finishes if it is cut short. */
static int remove_via_gone(int snaps, int at, const char *name, const char *tag)
{
	char g[DIRN + 16];

	snprintf(g, sizeof g, GONE "%s", tag);
	if (fs_remove_tree_force(snaps, g) < 0)
		return -EIO;
	kill_point();
	if (renameat(at, name, snaps, g) < 0)
		return errno == ENOENT ? 0 : err_sys(-errno, "removing %s", name);
	kill_point();
	return fs_remove_tree_force(snaps, g);
}

/* --- a merge of hidden H into the next entry X ----------------------------- */

struct merge {
	const struct jail *mod;
	int snaps;
	char hd[DIRN], xd[DIRN];
	struct snapidx h, x;
	int ho, xo;             /* H's and X's inc/o (-1: none) */
	struct jail xoj;        /* X's inc/o as a jail: paths inside its objects */
	int n, no, trash;       /* X/inc.new, its o/ and trash/ */
	int journal, log, stats;
	uint32_t m, t, ns;      /* objects, trash entries and stats written */
	int rc;
};

static int jlog(struct merge *g, char kind, uint32_t obj, const char *path)
{
	kill_point();
	int rc = snapidx_log_append(g->journal, kind, obj, path);
	kill_point();   /* logged, not done */
	return rc;
}

/* The first record of r's path in x is r itself (a path is in a run once,
 * but may be in several runs: the first one counts). */
static int first_of(const struct snapidx *x, const struct snaprec *r)
{
	struct snaprec f;
	return snapidx_find(x, r->path, &f) && f.kind == r->kind && f.obj == r->obj;
}

/* The record in x of the nearest proper ancestor of path whose kind is in
 * kinds: 1 and *out (and its length in *plen), or 0. */
static int ancestor(const struct snapidx *x, const char *path, const char *kinds,
		    struct snaprec *out, size_t *plen)
{
	char p[PATH_MAX_WIRE + 1];
	size_t n = strlen(path);

	for (size_t i = 0; i < n; i++) {
		if (path[i] != '/')
			continue;
		memcpy(p, path, i);
		p[i] = '\0';
		if (snapidx_find(x, p, out) && strchr(kinds, out->kind)) {
			*plen = i;
			return 1;
		}
	}
	return 0;
}

/* Moves object OLD of H or X (`from` = 'H' or 'X') into inc.new as the next
 * object, logged first. Its new number, or <0. */
static int64_t move_obj(struct merge *g, char from, uint32_t old)
{
	char src[16], hex[9], nhex[9];
	int rc;

	hex_of(hex, old);
	hex_of(nhex, g->m);
	snprintf(src, sizeof src, "%c/%s", from, hex);
	if ((rc = jlog(g, J_MOVE, g->m, src)) < 0)
		return rc;
	if (renameat(from == 'H' ? g->ho : g->xo, hex, g->no, nhex) < 0)
		return err_sys(-errno, "merging snapshots: object %s", src);
	return g->m++;
}

/* The xattrs H's meta object `hex` kept (if marked) onto dfd/leaf, whose
 * own are kept first in the trash (logged) for an undo. One that cannot be
 * kept is left as it is, with a warning: the snapshot before shows the
 * entry's later xattrs, as it did before ferry kept them, and the merge
 * goes on (a history that can never be pruned would fill the disk). */
static int xattrs_from_h(struct merge *g, const char *hex, const struct stat *cur, int dfd,
			 const char *leaf, const char *jpath)
{
	char t[9], q[FS_QUOTE_BUF];
	int from = fs_xattr_open(g->ho, hex);
	int to = from < 0 || !fs_xattr_marked(from) ? -1 : fs_xattr_open(dfd, leaf);
	int kept = -1, logged = 0, rc = 0;

	if (to < 0)
		goto out;   /* none kept, or nothing there to set them on */
	uint32_t ti = g->t++;   /* its own number: a leftover never blocks the next */
	hex_of(t, ti);
	if (S_ISDIR(cur->st_mode))   /* a directory's default ACL needs a directory */
		kept = mkdirat(g->trash, t, 0700) == 0 ? fs_xattr_open(g->trash, t) : -1;
	else
		kept = openat(g->trash, t, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	rc = kept < 0 ? err_sys(-errno, "keeping its xattrs") : fs_xattr_copy(to, kept);
	if (rc == 0)
		rc = fs_xattr_mark(kept);
	if (rc == 0) {
		if ((rc = jlog(g, J_XATTR, ti, jpath)) < 0)
			goto out;
		logged = 1;
		if ((rc = fs_xattr_copy(from, to)) < 0)
			fs_xattr_copy(kept, to);   /* not half of each: its own again */
	}
	if (rc < 0) {
		log_warn("merging snapshots: %s keeps its later xattrs: %s",
			 fs_quote(q, jpath, strlen(jpath)), err_msg());
		if (!logged)
			fs_remove_tree_force(g->trash, t);
		rc = 0;
	}
out:;
	int fds[] = { from, to, kept };
	for (size_t i = 0; i < 3; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return rc;
}

/* H's stat of an entry (its meta object OBJ) onto dfd/leaf, and the
 * xattrs it kept: the old ones logged first. */
static int set_meta_from_h(struct merge *g, uint32_t hobj, int dfd, const char *leaf,
			   const char *jpath)
{
	char hex[9];
	uint8_t b[SNAPSTAT_LEN];
	struct stat cur, want;
	int rc;

	hex_of(hex, hobj);
	if (g->ho < 0 || fstatat(g->ho, hex, &want, AT_SYMLINK_NOFOLLOW) < 0 ||
	    fstatat(dfd, leaf, &cur, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	snapstat_put(b, &cur);
	if (pwrite(g->stats, b, SNAPSTAT_LEN, (off_t)g->ns * SNAPSTAT_LEN) != SNAPSTAT_LEN)
		return err_sys(-EIO, "merging snapshots");
	if ((rc = jlog(g, J_STAT, g->ns++, jpath)) < 0 ||
	    (rc = xattrs_from_h(g, hex, &cur, dfd, leaf, jpath)) < 0)
		return rc;
	snapstat_apply(dfd, leaf, &want);   /* after: an ACL set moves the group bits */
	return 0;
}

/* Phase 1: a record of H below a directory X stored whole (X: O) is put into
 * that stored tree itself: the tree then shows what H's snapshot had. */
static int into_x(void *ctx, const struct snaprec *h)
{
	struct merge *g = ctx;
	struct snaprec xr;
	char rel[PATH_MAX_WIRE + 16], hex[9];
	const char *leaf;
	size_t plen;
	int rc;

	if (!first_of(&g->h, h) || !ancestor(&g->x, h->path, "O", &xr, &plen))
		return 0;
	hex_of(hex, xr.obj);
	snprintf(rel, sizeof rel, "%s%s", hex, h->path + plen);
	int dfd = jail_open_parent(&g->xoj, rel, &leaf);
	if (dfd < 0)
		return 0;   /* not there to change: nothing of H's snapshot is lost by it */
	int here = exists_at(dfd, leaf);
	struct stat dst;   /* the stored directory's own mtime is part of the snapshot */
	int dst_ok = fstat(dfd, &dst) == 0;
	rc = 0;
	if (here && h->kind != SNAP_META) {   /* what X's tree had there goes */
		char t[9];
		hex_of(t, g->t);
		if ((rc = jlog(g, J_TRASH, g->t++, rel)) == 0 && renameat(dfd, leaf, g->trash, t) < 0)
			rc = err_sys(-errno, "merging snapshots: %s", rel);
	}
	if (rc == 0 && h->kind == SNAP_OLD) {
		hex_of(hex, h->obj);
		if ((rc = jlog(g, J_INTO, h->obj, rel)) == 0 && g->ho >= 0 &&
		    renameat(g->ho, hex, dfd, leaf) < 0)
			rc = err_sys(-errno, "merging snapshots: %s", rel);
	}
	if (rc == 0 && h->kind == SNAP_META && here)
		rc = set_meta_from_h(g, h->obj, dfd, leaf, rel);
	if (dst_ok)
		futimens(dfd, (struct timespec[2]){ { .tv_nsec = UTIME_OMIT }, dst.st_mtim });
	close(dfd);
	return rc;
}

/* Phase 2: X's records, but for what H's snapshot shadows (H has the same
 * path, or has it absent or stored whole above it): those are the versions
 * only the deleted snapshot had. */
static int from_x(void *ctx, const struct snaprec *x)
{
	struct merge *g = ctx;
	struct snaprec hr;
	size_t plen;
	int64_t m;

	if (!first_of(&g->x, x))
		return 0;
	if (snapidx_find(&g->h, x->path, &hr)) {
		if (!(hr.kind == SNAP_META && x->kind == SNAP_OLD))
			return 0;
		/* H changed its metadata only, X then replaced it: X's old
		 * version with H's metadata is what H's snapshot had */
		char nhex[9];
		if ((m = move_obj(g, 'X', x->obj)) < 0)
			return (int)m;
		hex_of(nhex, (uint32_t)m);
		char jp[16];
		snprintf(jp, sizeof jp, "N/%s", nhex);
		int rc = set_meta_from_h(g, hr.obj, g->no, nhex, jp);
		return rc < 0 ? rc : snapidx_log_append(g->log, SNAP_OLD, (uint32_t)m, x->path);
	}
	if (ancestor(&g->h, x->path, "AO", &hr, &plen))
		return 0;
	if (x->kind == SNAP_ADDED)
		return snapidx_log_append(g->log, SNAP_ADDED, 0, x->path);
	if ((m = move_obj(g, 'X', x->obj)) < 0)
		return (int)m;
	return snapidx_log_append(g->log, x->kind, (uint32_t)m, x->path);
}

/* Phase 3: the rest of H's records, as they are. */
static int from_h(void *ctx, const struct snaprec *h)
{
	struct merge *g = ctx;
	struct snaprec xr;
	size_t plen;
	int64_t m;

	if (!first_of(&g->h, h) || ancestor(&g->x, h->path, "O", &xr, &plen))
		return 0;
	if (h->kind == SNAP_META && snapidx_find(&g->x, h->path, &xr) && xr.kind == SNAP_OLD)
		return 0;   /* phase 2 set it on X's version */
	if (h->kind == SNAP_ADDED)
		return snapidx_log_append(g->log, SNAP_ADDED, 0, h->path);
	if ((m = move_obj(g, 'H', h->obj)) < 0)
		return (int)m;
	return snapidx_log_append(g->log, h->kind, (uint32_t)m, h->path);
}

static int open_idx(int snaps, const char *d, struct snapidx *x, int *o)
{
	char p[DIRN + 8];
	snprintf(p, sizeof p, "%s/inc", d);
	int fd = open_dir(snaps, p);
	*o = -1;
	x->n = 0;
	x->run = NULL;
	if (fd < 0)
		return errno == ENOENT ? 0 : err_sys(-errno, "snapshot %s", d);
	int rc = snapidx_open(x, fd);
	*o = open_dir(fd, "o");
	close(fd);
	return rc;
}

static void merge_close(struct merge *g)
{
	snapidx_close(&g->h);
	snapidx_close(&g->x);
	int *fds[] = { &g->ho, &g->xo, &g->n, &g->no, &g->trash, &g->journal, &g->log, &g->stats };
	for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
	jail_close(&g->xoj);
}

/* X/inc.new, with its journal, log and where its objects go. */
static int merge_start(struct merge *g)
{
	char p[DIRN + 32];
	int xfd = open_dir(g->snaps, g->xd);

	if (xfd < 0)
		return err_sys(-errno, "snapshot %s", g->xd);
	int ok = mkdirat(xfd, "inc.new", 0700) == 0 && (g->n = open_dir(xfd, "inc.new")) >= 0 &&
		 mkdirat(g->n, "o", 0700) == 0 && mkdirat(g->n, "trash", 0700) == 0 &&
		 (g->no = open_dir(g->n, "o")) >= 0 && (g->trash = open_dir(g->n, "trash")) >= 0;
	close(xfd);
	if (!ok)
		return err_sys(-errno, "merging snapshots into %s", g->xd);
	g->journal = openat(g->n, "journal", O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
	g->log = openat(g->n, "log", O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
	g->stats = openat(g->n, "stats", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	int from = openat(g->n, "from", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (g->journal < 0 || g->log < 0 || g->stats < 0 || from < 0) {
		if (from >= 0)
			close(from);
		return err_sys(-errno, "merging snapshots into %s", g->xd);
	}
	ok = write(from, g->hd, strlen(g->hd)) == (ssize_t)strlen(g->hd);
	close(from);
	snprintf(p, sizeof p, SNAP_DIR "/snaps/%s/inc/o", g->xd);
	if (g->xo >= 0 && jail_open_at(&g->xoj, g->mod, p) < 0)
		return -EIO;
	return ok ? 0 : err_sys(-EIO, "merging snapshots into %s", g->xd);
}

static int roll_forward(const struct jail *mod, int snaps, const char *xd);

static int merge(const struct jail *mod, int snaps, const char *hd, const char *xd)
{
	struct merge g = { .mod = mod, .snaps = snaps, .ho = -1, .xo = -1, .n = -1, .no = -1,
			   .trash = -1, .journal = -1, .log = -1, .stats = -1,
			   .xoj = { .root_fd = -1 } };
	unsigned runs;
	int rc;

	snprintf(g.hd, sizeof g.hd, "%s", hd);
	snprintf(g.xd, sizeof g.xd, "%s", xd);
	if ((rc = open_idx(snaps, hd, &g.h, &g.ho)) < 0 || (rc = open_idx(snaps, xd, &g.x, &g.xo)) < 0 ||
	    (rc = merge_start(&g)) < 0 || (rc = snapidx_each(&g.h, into_x, &g)) < 0 ||
	    (rc = snapidx_each(&g.x, from_x, &g)) < 0 || (rc = snapidx_each(&g.h, from_h, &g)) < 0 ||
	    (rc = snapidx_build(g.n, g.log, &runs)) < 0) {
		merge_close(&g);
		return rc < 0 ? rc : -EIO;
	}
	/* the merged index on the disk before the mark that commits it (a
	 * power cut must not leave "done" beside empty index files) */
	if (fs_syncfs(g.n) < 0) {
		merge_close(&g);
		return err_wrap(-EIO, "merging snapshots into %s", xd);
	}
	/* the commit: from here on the next settle rolls forward */
	kill_point();
	int done = openat(g.n, "done", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	merge_close(&g);
	if (done < 0)
		return err_sys(-errno, "merging snapshots into %s", xd);
	close(done);
	kill_point();
	return roll_forward(mod, snaps, xd);
}

/* X/inc.new is complete: it becomes X/inc; the hidden entry it came from
 * and X's old increment go. Each step can be cut and done again. */
static int roll_forward(const struct jail *mod, int snaps, const char *xd)
{
	char from[DIRN] = "", tag[DIRN + 8];
	int xfd = open_dir(snaps, xd);
	int rc = 0;

	(void)mod;
	if (xfd < 0)
		return err_sys(-errno, "snapshot %s", xd);
	if (exists_at(xfd, "inc.new")) {
		snprintf(tag, sizeof tag, "inc.%s", xd);
		if ((rc = remove_via_gone(snaps, xfd, "inc", tag)) < 0 ||
		    (renameat(xfd, "inc.new", xfd, "inc") < 0 &&
		     (rc = err_sys(-errno, "snapshot %s", xd)) < 0)) {
			close(xfd);
			return rc;
		}
		kill_point();
	}
	int inc = open_dir(xfd, "inc");
	close(xfd);
	if (inc < 0)
		return 0;
	int f = openat(inc, "from", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (f >= 0) {
		ssize_t n = read(f, from, sizeof from - 1);
		from[n > 0 ? n : 0] = '\0';
		close(f);
	}
	/* the hidden entry merged (only a name of the form NAME.h is taken) */
	size_t fl = strlen(from);
	if (fl > 2 && !strcmp(from + fl - 2, ".h") && !strchr(from, '/') && from[0] != '.')
		rc = remove_via_gone(snaps, snaps, from, from);
	const char *leftovers[] = { "journal", "log", "stats", "trash", "done", "from" };
	for (size_t i = 0; rc == 0 && i < sizeof leftovers / sizeof *leftovers; i++)
		rc = fs_remove_tree_force(inc, leftovers[i]);
	close(inc);
	return rc;
}

/* --- undoing a merge that was cut short ------------------------------------ */

struct back {
	int snaps, n, no, trash, stats, ho, xo;
	struct jail xoj;
};

static int undo_merge_one(void *ctx, const struct snaprec *r, long long at)
{
	(void)at;   /* each step checks its own state: undoing one twice is harmless */
	struct back *b = ctx;
	char hex[9];
	const char *leaf;

	hex_of(hex, r->obj);
	if (r->kind == J_MOVE) {
		int to = r->path[0] == 'H' ? b->ho : b->xo;
		if (to >= 0 && strlen(r->path) == 10 && exists_at(b->no, hex))
			renameat(b->no, hex, to, r->path + 2);
		return 0;
	}
	if (r->kind == J_XATTR && !strncmp(r->path, "N/", 2)) {   /* on an object in inc.new */
		if (fs_xattr_restore(b->trash, hex, b->no, r->path + 2) < 0)
			log_warn("undoing a merge: the xattrs of %s: %s", r->path, err_msg());
		return 0;
	}
	int dfd = b->xoj.root_fd >= 0 ? jail_open_parent(&b->xoj, r->path, &leaf) : -1;
	if (r->kind == J_XATTR) {
		if (dfd >= 0 && fs_xattr_restore(b->trash, hex, dfd, leaf) < 0)
			log_warn("undoing a merge: the xattrs of %s: %s", r->path, err_msg());
	} else if (r->kind == J_STAT && !strncmp(r->path, "N/", 2)) {   /* on an object in inc.new */
		uint8_t rec[SNAPSTAT_LEN];
		struct stat st;
		if (pread(b->stats, rec, SNAPSTAT_LEN, (off_t)r->obj * SNAPSTAT_LEN) == SNAPSTAT_LEN) {
			snapstat_get(rec, &st);
			snapstat_apply(b->no, r->path + 2, &st);
		}
	} else if (dfd < 0) {
		/* the place is gone: nothing to put back there */
	} else if (r->kind == J_TRASH) {
		if (exists_at(b->trash, hex))
			renameat(b->trash, hex, dfd, leaf);
	} else if (r->kind == J_INTO) {
		if (b->ho >= 0 && !exists_at(b->ho, hex) && exists_at(dfd, leaf))
			renameat(dfd, leaf, b->ho, hex);
	} else if (r->kind == J_STAT) {
		uint8_t rec[SNAPSTAT_LEN];
		struct stat st;
		if (pread(b->stats, rec, SNAPSTAT_LEN, (off_t)r->obj * SNAPSTAT_LEN) == SNAPSTAT_LEN) {
			snapstat_get(rec, &st);
			snapstat_apply(dfd, leaf, &st);
		}
	}
	if (dfd >= 0)
		close(dfd);
	return 0;
}

static int roll_back(const struct jail *mod, int snaps, const char *xd)
{
	struct back b = { .snaps = snaps, .xoj = { .root_fd = -1 } };
	char p[DIRN + 32], from[DIRN] = "";
	int xfd = open_dir(snaps, xd), rc = 0;

	if (xfd < 0)
		return err_sys(-errno, "snapshot %s", xd);
	b.n = open_dir(xfd, "inc.new");
	b.no = b.n < 0 ? -1 : open_dir(b.n, "o");
	b.trash = b.n < 0 ? -1 : open_dir(b.n, "trash");
	b.stats = b.n < 0 ? -1 : openat(b.n, "stats", O_RDONLY | O_CLOEXEC);
	int f = b.n < 0 ? -1 : openat(b.n, "from", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (f >= 0) {
		ssize_t n = read(f, from, sizeof from - 1);
		from[n > 0 ? n : 0] = '\0';
		close(f);
	}
	snprintf(p, sizeof p, "%s/inc/o", from);
	size_t fl = strlen(from);
	b.ho = fl > 2 && !strcmp(from + fl - 2, ".h") && !strchr(from, '/') && from[0] != '.' ?
	       open_dir(snaps, p) : -1;
	b.xo = open_dir(xfd, "inc/o");
	snprintf(p, sizeof p, SNAP_DIR "/snaps/%s/inc/o", xd);
	if (b.xo >= 0)
		jail_open_at(&b.xoj, mod, p);
	int j = b.n < 0 ? -1 : openat(b.n, "journal", O_RDONLY | O_CLOEXEC);
	if (j >= 0 && b.no >= 0)
		rc = snapidx_log_reverse(j, JKINDS, undo_merge_one, &b);
	int fds[] = { j, b.no, b.trash, b.stats, b.ho, b.xo, b.n };
	for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	jail_close(&b.xoj);
	if (rc == 0)
		rc = fs_remove_tree_force(xfd, "inc.new");
	close(xfd);
	return rc;
}

/* --- settling -------------------------------------------------------------- */

static int remove_gone(int snaps)
{
	int fd = open_dir(snaps, ".");
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	int rc = 0;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return err_sys(-errno, "the snapshot history");
	}
	for (struct dirent *e; (e = readdir(d));)
		if (!strncmp(e->d_name, GONE, sizeof GONE - 1) &&
		    fs_remove_tree_force(snaps, e->d_name) < 0)
			rc = -EIO;
	closedir(d);
	return rc;
}

/* Merges cut short: finished or undone. */
static int finish_merges(const struct jail *mod, int snaps, const struct snapinfo *c, size_t n)
{
	char d[DIRN], p[DIRN + 16];
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < n; i++) {
		snapinfo_dir(&c[i], d);
		snprintf(p, sizeof p, "%s/inc.new", d);
		if (exists_at(snaps, p)) {
			snprintf(p, sizeof p, "%s/inc.new/done", d);
			log_warn("snapshots: finishing a deletion that was cut short (%s)",
				 exists_at(snaps, p) ? "forward" : "undone");
			rc = exists_at(snaps, p) ? roll_forward(mod, snaps, d) : roll_back(mod, snaps, d);
			continue;
		}
		snprintf(p, sizeof p, "%s/inc/from", d);
		if (exists_at(snaps, p))   /* swapped in, not yet cleaned */
			rc = roll_forward(mod, snaps, d);
	}
	return rc;
}

int snapprune_settle(const struct jail *mod, int snaps)
{
	struct snapinfo *c = NULL;
	size_t n = 0;
	int rc;

	if ((rc = remove_gone(snaps)) < 0 || (rc = snapstore_chain(snaps, &c, &n)) < 0 ||
	    (rc = finish_merges(mod, snaps, c, n)) < 0)
		goto out;
	for (;;) {
		free(c);
		c = NULL;
		if ((rc = snapstore_chain(snaps, &c, &n)) < 0)
			goto out;
		size_t v = 0;
		while (v < n && c[v].hidden)
			v++;
		char d[DIRN], tag[DIRN + 8];
		/* before the oldest snapshot nothing is read: gone whole */
		for (size_t i = 0; i < v && rc == 0; i++)
			rc = remove_via_gone(snaps, snaps, snapinfo_dir(&c[i], d), d);
		if (rc < 0 || v == n)
			break;
		int vfd = open_dir(snaps, snapinfo_dir(&c[v], d));
		snprintf(tag, sizeof tag, "inc.%s", d);
		if (vfd >= 0) {
			rc = remove_via_gone(snaps, vfd, "inc", tag);
			close(vfd);
		}
		size_t h = v + 1;
		while (h < n && !c[h].hidden)
			h++;
		if (rc < 0 || h >= n)
			break;
		if (h + 1 >= n) {   /* the latest is never deleted: not ours */
			rc = err_set(-EINVAL, "snapshots: the latest is marked deleted");
			break;
		}
		char xd[DIRN];
		if ((rc = merge(mod, snaps, snapinfo_dir(&c[h], d), snapinfo_dir(&c[h + 1], xd))) < 0)
			break;
	}
	if (rc == 0)
		rc = remove_gone(snaps);
out:
	free(c);
	return rc;
}

int snapprune_delete(const struct jail *mod, int snaps, const char *name)
{
	struct snapinfo *list = NULL;
	char q[FS_QUOTE_BUF], hd[DIRN];
	size_t n = 0;
	int rc = snapstore_list(snaps, &list, &n);

	if (rc < 0)
		return rc;
	size_t k = n;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(list[i].name, name))
			k = i;
	free(list);
	if (k == n)
		return err_set(-ENOENT, "no snapshot %s", fs_quote(q, name, strlen(name)));
	if (k + 1 == n)
		return err_set(-EPERM, "%s is the latest snapshot, the module's tree itself: "
			       "it is never deleted", name);
	snprintf(hd, sizeof hd, "%s.h", name);
	kill_point();
	if (renameat(snaps, name, snaps, hd) < 0)
		return err_sys(-errno, "deleting snapshot %s", name);
	kill_point();
	return snapprune_settle(mod, snaps);
}
