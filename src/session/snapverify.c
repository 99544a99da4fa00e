/* SPDX-License-Identifier: MIT */
#include "session/snapverify.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "fs/dirlist.h"
#include "fs/snapidx.h"
#include "fs/snapinc.h"
#include "fs/snapprune.h"
#include "fs/snapstore.h"
#include "util/err.h"
#include "util/path.h"

#define READ_BUF (1024 * 1024)
#define STATE "verify"

struct walk {
	const struct verify_opts *o;
	struct verify_report *r;
	int hist;
	uint8_t *buf;
	XXH3_state_t *h;
	uint64_t seen, resume_at;   /* files met in pass order; where to start reading */
	int64_t started;
	struct timespec t0, last_tick, last_save;
};

static double since(const struct timespec *a)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - a->tv_sec) + (double)(now.tv_nsec - a->tv_nsec) / 1e9;
}

static int save_state(struct walk *w, int complete)
{
	char buf[128];
	int n = snprintf(buf, sizeof buf, "started=%" PRId64 "\ndone=%" PRIu64 "\n%s",
			 w->started, complete ? 0 : w->seen, "");
	if (complete)   /* what it found, for a later --if-older that reads nothing */
		n = snprintf(buf, sizeof buf, "complete=%" PRId64 "\ndamaged=%" PRIu64 "\n",
			     (int64_t)time(NULL), w->r->bad);
	int fd = openat(w->hist, STATE ".tmp", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
			0600);
	if (fd < 0)
		return err_sys(-errno, SNAP_DIR "/" STATE);
	int ok = write(fd, buf, (size_t)n) == n;
	close(fd);
	if (!ok || renameat(w->hist, STATE ".tmp", w->hist, STATE) < 0)
		return err_sys(-EIO, SNAP_DIR "/" STATE);
	return 0;
}

/* The last pass: when it completed, or how far a cut one got. */
static void load_state(int hist, int64_t *complete, int64_t *started, uint64_t *done,
		       uint64_t *damaged)
{
	char buf[256];
	int fd = openat(hist, STATE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);

	*complete = *started = 0;
	*done = *damaged = 0;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if (sscanf(buf, "complete=%" SCNd64, complete) == 1) {
		const char *d = strstr(buf, "\ndamaged=");   /* absent before 2026-12-04 */
		if (d && sscanf(d + 9, "%" SCNu64, damaged) != 1)
			*damaged = 0;
		return;
	}
	if (sscanf(buf, "started=%" SCNd64 "\ndone=%" SCNu64, started, done) != 2)
		*started = 0, *done = 0;
}

static void tick(struct walk *w)
{
	if (w->o->progress && since(&w->last_tick) >= 1.0) {
		clock_gettime(CLOCK_MONOTONIC, &w->last_tick);
		w->o->progress(w->o->ctx, w->r, since(&w->t0));
	}
	if (since(&w->last_save) >= 2.0) {
		clock_gettime(CLOCK_MONOTONIC, &w->last_save);
		save_state(w, 0);
	}
}

/* One stored file: read whole, hashed, compared with what was recorded. */
static void check_file(struct walk *w, int dfd, const char *name, const char *where,
		       const char *path)
{
	uint8_t want[16];
	int64_t when;

	if (w->seen++ < w->resume_at) {
		w->r->skipped++;
		return;
	}
#ifdef FERRY_TEST_HOOKS
	const char *stop = getenv("FERRY_TEST_VERIFY_STOP");
	if (stop && *stop && w->seen > (uint64_t)atoll(stop)) {
		save_state(w, 0);
		_exit(99);   /* as a kill would, after the state was last saved */
	}
#endif
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return;
	int got = snaphash_get(fd, want, &when);
	if (got <= 0) {
		w->r->unhashed++;
		close(fd);
		return;
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	XXH3_128bits_reset(w->h);
	ssize_t n;
	off_t off = 0;
	while ((n = read(fd, w->buf, READ_BUF)) > 0) {
		XXH3_128bits_update(w->h, w->buf, (size_t)n);
		/* a pass over the whole disk must not evict what the box uses */
		posix_fadvise(fd, off, n, POSIX_FADV_DONTNEED);
		off += n;
		w->r->bytes += (uint64_t)n;
	}
	close(fd);
	XXH128_canonical_t c;
	XXH128_canonicalFromHash(&c, XXH3_128bits_digest(w->h));
	w->r->files++;
	if (n < 0 || memcmp(c.digest, want, 16)) {
		w->r->bad++;
		if (w->o->bad)
			w->o->bad(w->o->ctx, where, path);
	}
	tick(w);
}

/* Every regular file below `root` in jail j (module path: prefix + what
 * follows root), in sorted order; `skip_hist` leaves the module's history
 * out of its tree. */
static int walk_tree(struct walk *w, const struct jail *j, const char *root, const char *prefix,
		     const char *where, int skip_hist)
{
	struct dirstack d;
	size_t rl = strlen(root);
	int rc;

	if ((rc = dirstack_init(&d, root)) < 0)
		return rc;
	for (int enter = 1; enter || d.n;) {
		if (!enter) {
			if (dirstack_next_dir(&d))
				enter = 1;
			else
				dirstack_pop(&d);
			continue;
		}
		enter = 0;
		struct dirlist l = { 0 };
		struct stat st;
		int dfd = jail_open_dir(j, d.path, O_RDONLY);
		if (dfd < 0 || dirlist_read(dfd, &l) < 0 || fstat(dfd, &st) < 0) {
			if (dfd >= 0)
				close(dfd);
			continue;
		}
		const char *rest = strlen(d.path) > rl ? d.path + rl + (rl ? 1 : 0) : "";
		for (size_t i = 0; i < l.n; i++) {
			char mp[PATH_MAX_WIRE * 2 + 2], sub[PATH_MAX_WIRE + 1];
			if (skip_hist && !d.path[0] && !strcmp(l.ents[i].name, SNAP_DIR)) {
				l.ents[i].st.st_mode = 0;   /* not descended into either */
				continue;
			}
			if (!S_ISREG(l.ents[i].st.st_mode))
				continue;
			path_join(sub, sizeof sub, rest, l.ents[i].name);
			path_join(mp, sizeof mp, prefix, sub);
			check_file(w, dfd, l.ents[i].name, where, mp);
		}
		close(dfd);
		if ((rc = dirstack_push(&d, &l, &st)) < 0)
			break;
	}
	dirstack_free(&d);
	return rc;
}

struct hist_ctx {
	struct walk *w;
	struct jail oj;             /* the increment's o/ */
	const char *where;
	int rc;
};

static int check_record(void *ctx, const struct snaprec *r)
{
	struct hist_ctx *hc = ctx;
	char hex[9];
	struct stat st;

	if (r->kind != SNAP_OLD)
		return 0;
	snprintf(hex, sizeof hex, "%08x", r->obj);
	if (fstatat(hc->oj.root_fd, hex, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (S_ISREG(st.st_mode)) {
		int dfd = jail_open_dir(&hc->oj, "", O_RDONLY);
		if (dfd >= 0) {
			check_file(hc->w, dfd, hex, hc->where, r->path);
			close(dfd);
		}
	} else if (S_ISDIR(st.st_mode)) {
		hc->rc = walk_tree(hc->w, &hc->oj, hex, r->path, hc->where, 0);
	}
	return hc->rc;
}

/* The versions the history keeps, increment by increment: one of entry i
 * is what the snapshot before it had. */
static int walk_history(struct walk *w, const struct jail *mod, int snaps)
{
	struct snapinfo *c = NULL;
	size_t n = 0;
	int rc = snapstore_chain(snaps, &c, &n);

	for (size_t i = 1; rc == 0 && i < n; i++) {
		char p[SNAP_NAME_MAX + 64], d[SNAP_NAME_MAX + 2], where[SNAP_NAME_MAX + 16];
		struct hist_ctx hc = { .w = w, .oj = { .root_fd = -1 } };
		struct snapidx x;
		snprintf(p, sizeof p, "%s/inc", snapinfo_dir(&c[i], d));
		int inc = openat(snaps, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (inc < 0)
			continue;
		rc = snapidx_open(&x, inc);
		close(inc);
		if (rc < 0)
			break;
		snprintf(p, sizeof p, SNAP_DIR "/snaps/%s/inc/o", d);
		snprintf(where, sizeof where, "snapshot %s", c[i - 1].name);
		hc.where = where;
		if (jail_open_at(&hc.oj, mod, p) == 0) {
			rc = snapidx_each(&x, check_record, &hc);
			jail_close(&hc.oj);
		}
		snapidx_close(&x);
		if (rc == 0)
			rc = hc.rc;
	}
	free(c);
	return rc;
}

int snap_verify(const struct jail *mod, const struct verify_opts *o, struct verify_report *r)
{
	struct walk w = { .o = o, .r = r };
	int hist, snaps, rc;
	int64_t complete, started;
	uint64_t done, damaged;

	memset(r, 0, sizeof *r);
	if ((rc = snapstore_open(mod->root_fd, 0, &hist, &snaps)) < 0)
		return rc == -ENOENT ? err_set(-ENOENT, "the module has no snapshots yet") : rc;
	/* Settled under the lock, then read without it: a pass can take hours
	 * and must not hold pushes back. What a push or a prune changes
	 * meanwhile is replaced by rename, never in place, so a file being read
	 * stays whole; a version moved away is missed by this pass only. */
	int lock = snapstore_lock(hist, 1);
	if (lock < 0 || (rc = snapprune_settle(mod, snaps)) < 0 || (rc = snapinc_settle(mod, snaps)) < 0) {
		rc = lock < 0 ? lock : rc;
		if (lock >= 0)
			close(lock);
		goto out;
	}
	close(lock);
	w.hist = hist;
	load_state(hist, &complete, &started, &done, &damaged);
	if (o->if_older && complete && complete > (int64_t)time(NULL) - o->if_older) {
		r->skipped_run = 1;
		r->bad = damaged;   /* still damaged, as far as anyone knows */
		goto out;
	}
	w.started = started && !o->restart ? started : (int64_t)time(NULL);
	w.resume_at = started && !o->restart ? done : 0;
	w.buf = malloc(READ_BUF);
	w.h = XXH3_createState();
	if (!w.buf || !w.h) {
		rc = err_set(-ENOMEM, "out of memory");
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &w.t0);
	w.last_tick = w.last_save = w.t0;
	rc = walk_tree(&w, mod, "", "", "the tree", 1);
	if (rc == 0)
		rc = walk_history(&w, mod, snaps);
	if (rc == 0)
		rc = save_state(&w, 1);
out:
	free(w.buf);
	XXH3_freeState(w.h);
	close(snaps);
	close(hist);
	return rc;
}
