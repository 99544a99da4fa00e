/* SPDX-License-Identifier: MIT */
/* The receiving role: decides entry by entry what it needs (WANT), writes
 * each file through the atomic writer, applies directory metadata once the
 * directory's files are in, mirrors deletions, and reports a RESULT after the
 * data is on disk. Everything goes through the jail: paths from the peer are
 * checked, symlinks are never followed. */
#include "session/receiver.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <xxhash.h>

#include "fs/dirlist.h"
#include "fs/snapidx.h"
#include "fs/snapinc.h"
#include "fs/snapstore.h"
#include "fs/meta.h"
#include "fs/quote.h"
#include "fs/sync.h"
#include "fs/spool.h"
#include "fs/tgran.h"
#include "fs/xattr.h"
#include "session/backup.h"
#include "session/delbudget.h"
#include "session/delta.h"
#include "session/resume.h"
#include "session/filedata.h"
#include "session/progress.h"
#include "session/xfilter.h"
#include "session/xmeta.h"
#include "session/hlink.h"
#include "util/chmod.h"
#include "util/err.h"
#include "util/path.h"
#include "util/safelink.h"
#include "util/log.h"

struct want {
	uint32_t index;
	uint32_t wire_len;      /* its wire path's length, counted against the window */
	uint64_t size;          /* the ENTRY's size: the most that is preallocated */
	uint32_t block;         /* a delta: the signature's block size; 0 = whole */
	uint64_t basis_size;    /* a delta: the old version's size when its signature was read */
	uint64_t part_size;     /* ... and the partial's (resume) */
	uint8_t bases;          /* which of them: BASE_OLD | BASE_PART */
	uint8_t group;          /* two levels: blocks per coarse entry (0: one level) */
	uint8_t refined;        /* REFINE: 0 none yet, 1 answering, 2 ended */
	uint32_t refine_next;   /* the first group a REFINE may still ask */
	struct fs_part_id id;   /* the source version, as the ENTRY said */
	char *path;             /* local path in the jail, owned */
	/* a pull's delta (WANT_SIG): the sender's signature, then where each of
	 * its blocks is in the basis (owned; NULL when whole) */
	int sig_asked;
	struct delta_sig *nsig;
	uint64_t *match;
};

/* --delete-delay's spool: a directory (its wire path), then the names in it
 * to delete */
enum { DELAY_DIR = 'D', DELAY_ENT = 'f', DELAY_ENT_DIR = 'd' };

#define BASE_OLD  1u
#define BASE_PART 2u

/* A delta that did not verify is asked for once more, whole (REDO); its
 * data may come before the wants queued after it. */
#define MAX_REDO 64
#define MAX_DEFERRED 64   /* links waiting for a REDO; past that they fail */

struct dmeta {
	uint64_t after;         /* apply once this many wants are done */
	uint32_t mode;
	uint32_t wire_len;
	struct timespec mtime;
	char *path;             /* owned */
	char *link_to;          /* -H: path is a hard link to this one, not a directory (owned) */
	char *wpath;            /* ... and its wire path, for messages (owned) */
	int first_failed;       /* -H: link_to did not get the sender's data: no link */
	int have_old;           /* old: the directory's stat when its listing began */
	struct stat old;        /* (what a snapshot keeps: its files change its mtime) */
};

struct receiver {
	struct conn *c;
	const struct jail *j;   /* the caller's jail, then `own` once rooted */
	struct jail own;        /* owned: narrowed to the transfer root (setup_root) */
	int rooted;
	struct backup bk;       /* -b: where replaced and deleted entries go */
	struct del_budget del;  /* --max-delete */
	const struct xfer_opts *o;
	const struct xfer_hooks *h;
	struct xfer_stats *st;
	char root[PATH_MAX_WIRE + 1];   /* the transfer root inside the jail */
	char mroot[PATH_MAX_WIRE + 1];  /* ... inside the module, for its own excludes */
	int kept;                       /* the last entry was left as it was (-u, --existing,
					   --ignore-existing) */
	int rewritten;                  /* the last entry's data is asked for (or would be, -n) */
	int cur_hidden;                 /* the listing is of a directory the module excludes */
	int dry;
	/* single-file mode: the one file is written under this name */
	int single, single_done;
	char single_name[NAME_MAX_WIRE + 1];
	/* the listing being received */
	char cur[PATH_MAX_WIRE + 1];
	int cur_fd;
	/* cur held nothing when its listing began (a directory this run made,
	 * or an empty destination): its entries need no stat each, no partial
	 * probe. The listing's names are distinct, and what this run writes
	 * under one of them comes after that name's ENTRY. */
	int cur_empty;
	int root_existed;       /* the destination was there before this run */
	int gran_known;         /* gran: how finely the destination keeps mtimes (fs/tgran.h), */
	struct tgran gran;      /* found at the first near miss */
	int have_root_old;      /* root_old: its stat as its listing began ("src/") */
	struct stat root_old;
	unsigned long dirs_made;        /* directories this run created */
	char max_listed[PATH_MAX_WIRE + 1];   /* the last listing in name order ('/' first) */
	/* a snapshot's push: the stat of cur and of each directory above it
	 * when its listing began, for its DIR_META, which comes after its
	 * subdirectories' listings (each entry's path is cur's first len bytes) */
	struct { size_t len; struct stat st; } *open_dirs;
	size_t nopen, capopen;
	int in_listing;
	/* --delete: this directory's own entries, and which of them the sender
	 * also has. The peer's names are never stored: it cannot grow this. */
	struct dirlist local;
	uint8_t *seen;          /* owned, local.n flags; NULL = no deletion here */
	/* --delete-delay: what --delete found, deleted once the files are in */
	struct spool delay;
	int delay_none;         /* <0: no spool could be made (a dry run then says each at once) */
	int delay_have_old;     /* delay_old: cur's mtime before its deletions */
	struct timespec delay_old;
	int delay_opened;       /* delay_mode: cur's mode, opened for them (u+wx) */
	mode_t delay_mode;
	/* wanted files, in the order their data will come */
	struct want *wq;
	size_t wcap, whead, wcount, want_bytes;
	uint64_t wants_enq, wants_done;
	/* directory metadata waiting for the directory's files */
	struct dmeta *mq;
	size_t mcap, mhead, mcount, meta_bytes;
	/* directories that failed (reported once): what is inside them is not
	 * counted again. Bounded; past it a failure inside may count twice. */
	char *failed[64];
	size_t nfailed;
	struct want redo[MAX_REDO];
	size_t nredo;
	/* -H: links whose first name's data was asked for again (REDO), made
	 * once it has come; outside the meta queue the sender counts */
	struct dmeta deferred[MAX_DEFERRED];
	size_t ndeferred;
	uint32_t index, decided_sent;
	int end_seen;
	/* the directory the last file was written to */
	char data_dir[PATH_MAX_WIRE + 1];
	int data_fd;
	struct xmeta_dst xd;    /* -o, -g, -X, -A, fake super: the XMETA held */
	XXH3_state_t *xh;       /* a snapshot's push: the hash of the file being written */
	struct hlinks hl;       /* -H: the link groups still open */
	struct basis rf;        /* the bases REFINEs are answered from (one file at a time) */
	struct msg m;
};

static int local_of(struct receiver *r, const char *wpath, char *out, size_t cap)
{
	if (path_join(out, cap, r->root, wpath) < 0 || strlen(out) > PATH_MAX_WIRE)
		return err_set(-ENAMETOOLONG, "%s: path too long", wpath);
	return 0;
}

static uint32_t mode_of(const struct receiver *r, uint32_t mode, int is_dir);

/* A change, with a symlink's target or a hard link's first name (NULL:
 * none). A client that did not ask for targets (REQ2_CHG_TARGET) gets the
 * kinds it knows: a hard link as a new or updated file, a symlink's line
 * as before (no bits). */
static void report_target(struct receiver *r, int kind, unsigned bits, const char *wpath,
			  const char *target)
{
	if (r->h->change) {
		r->h->change(r->h->ctx, kind, bits, wpath, target);
		return;
	}
	if (!(r->o->flags & REQ_CHANGES))
		return;
	struct msg m = { .type = MSG_CHANGE };
	if (!(r->o->flags2 & REQ2_CHG_TARGET)) {
		kind = kind == CHG_HLINK ? CHG_NEW : kind == CHG_HLINK_UPD ? CHG_UPDATE : kind;
		bits = kind == CHG_LINK ? 0 : bits;
		target = NULL;
	}
	m.u.change.kind = (uint8_t)kind;
	m.u.change.bits = (uint8_t)bits;
	snprintf(m.u.change.path, sizeof m.u.change.path, "%s", wpath);
	snprintf(m.u.change.target, sizeof m.u.change.target, "%s", target ? target : "");
	conn_send(r->c, &m);
}

static void report_bits(struct receiver *r, int kind, unsigned bits, const char *wpath)
{
	report_target(r, kind, bits, wpath, NULL);
}

static void report(struct receiver *r, int kind, const char *wpath)
{
	report_bits(r, kind, 0, wpath);
}

/* The sender's mtime s.ns is `have`, as the destination's file system keeps
 * times. Its precision is learned the first time a time falls short by less
 * than 2 s, the most FAT loses (an exact file system never pays for it):
 * from the file system's type where that says it, else on an unnamed
 * O_TMPFILE (which no one else sees, so a dry run and a concurrent session
 * on the module may have it too), else, for a file system without those,
 * on a named temporary file (not in a dry run). */
static void learn_gran(struct receiver *r)
{
	int fd = jail_open_dir(r->j, "", O_RDONLY);
	int rc = fd < 0 ? fd : tgran_guess(fd, &r->gran);

	if (rc < 0 && fd >= 0)
		rc = tgran_probe(fd, &r->gran);
	if (rc < 0 && rc != -EINVAL && fd >= 0 && !r->dry)
		rc = tgran_probe_file(fd, &r->gran);
	if (fd >= 0)
		close(fd);
	r->gran_known = 1;
	log_debug("the destination keeps mtimes to %u ns, %u s%s", r->gran.ns, r->gran.sec,
		  rc < 0 ? " (not found: exact)" : "");
}

static int same_mtime(struct receiver *r, const struct timespec *have, int64_t s, uint32_t ns)
{
	if (r->o->flags2 & REQ2_MODIFY_WINDOW)   /* rsync's: whole seconds, that far apart */
		return have->tv_sec <= s + r->o->modify_window &&
		       s <= have->tv_sec + r->o->modify_window;
	if (have->tv_sec == s && (uint32_t)have->tv_nsec == ns)
		return 1;
	if (have->tv_sec > s || have->tv_sec < s - 1)
		return 0;   /* a truncation only takes away, less than 2 s */
	if (!r->gran_known)
		learn_gran(r);
	struct timespec t = tgran_trunc(&r->gran, s, ns);
	return have->tv_sec == t.tv_sec && have->tv_nsec == t.tv_nsec;
}

/* What differs between the file here and the entry, for -i. */
static unsigned diff_bits(struct receiver *r, const struct m_entry *e, const struct stat *old)
{
	unsigned b = 0;
	if ((uint64_t)old->st_size != e->size)
		b |= CHGB_SIZE;
	if (!same_mtime(r, &old->st_mtim, e->mtime_s, e->mtime_ns))
		b |= CHGB_TIME;
	if ((old->st_mode & 07777) != mode_of(r, e->mode, 0))
		b |= CHGB_PERMS;
	return b;
}

static void file_error(struct receiver *r, const char *wpath, const char *what)
{
	xfer_error(r->st, "%s: %s", wpath, what);
	report(r, CHG_ERROR, wpath);
}

/* 1 if wpath is a directory that failed, or lies inside one. */
static int under_failed(const struct receiver *r, const char *wpath)
{
	for (size_t i = 0; i < r->nfailed; i++) {
		size_t n = strlen(r->failed[i]);
		if (!strncmp(wpath, r->failed[i], n) && (wpath[n] == '\0' || wpath[n] == '/'))
			return 1;
	}
	return 0;
}

/* A directory that cannot be created or opened is one failure, whatever it
 * holds: its listing, its files and its metadata are not counted again. */
static void dir_error(struct receiver *r, const char *wpath, const char *what)
{
	const char *shown = wpath[0] ? wpath : ".";

	if (under_failed(r, wpath))
		return;
	file_error(r, shown, what);
	if (r->nfailed < sizeof r->failed / sizeof r->failed[0] &&
	    (r->failed[r->nfailed] = strdup(wpath)))
		r->nfailed++;
}

/* The mode to give what the peer sent: a daemon (often root) does not take
 * setuid/setgid bits from a client unless the module allows it. The sticky
 * bit stays: on a directory it only restricts deletion, on a file Linux
 * ignores it. */
static uint32_t mode_of(const struct receiver *r, uint32_t mode, int is_dir)
{
	mode &= 07777;
	if (r->o->chmod)
		mode = chmod_apply(r->o->chmod, mode, is_dir);
	if (r->o->strip_setid)
		mode &= ~(uint32_t)(S_ISUID | S_ISGID);
	return xmeta_real_mode(&r->xd, mode, is_dir);
}

/* Doubles a full ring buffer of `count` elements of `size` bytes (`first`
 * slots when empty), unrolled so that the oldest element is at index 0. */
static int ring_grow(void **buf, size_t size, size_t *cap, size_t *head, size_t count,
		     size_t first)
{
	size_t ncap = *cap ? *cap * 2 : first;
	uint8_t *n = malloc(ncap * size), *old = *buf;

	if (!n)
		return -ENOMEM;
	for (size_t k = 0; k < count; k++)
		memcpy(n + k * size, old + ((*head + k) % *cap) * size, size);
	free(old);
	*buf = n;
	*cap = ncap;
	*head = 0;
	return 0;
}

/* --- directory metadata, applied after the directory's files ---------------- */

/* A slot at the queue's end for something held until the files listed
 * before it are done: a directory's metadata, or a hard link (-H). */
static int meta_slot(struct receiver *r, size_t len, const char *lp, struct dmeta **out)
{
	if (r->mcount >= PROTO_META_PENDING || r->meta_bytes + len > PROTO_META_PATH_BYTES)
		return err_set(-EBADMSG, "protocol: the sender has more than %d directories' "
			       "metadata or hard links (or %u bytes of their paths) outstanding",
			       PROTO_META_PENDING, PROTO_META_PATH_BYTES);
	if (r->mcount == r->mcap &&
	    ring_grow((void **)&r->mq, sizeof *r->mq, &r->mcap, &r->mhead, r->mcount, 64) < 0)
		return err_set(-ENOMEM, "out of memory");
	struct dmeta *d = &r->mq[(r->mhead + r->mcount) % r->mcap];
	memset(d, 0, sizeof *d);
	if (!(d->path = strdup(lp)))
		return err_set(-ENOMEM, "out of memory");
	d->after = r->wants_enq;
	d->wire_len = (uint32_t)len;
	r->meta_bytes += len;
	r->mcount++;
	*out = d;
	return 0;
}

/* A snapshot's push: the stat `path` had when its listing began, if it is
 * still known (1). */
static int listed_stat(const struct receiver *r, const char *path, struct stat *out)
{
	size_t len = strlen(path);

	for (size_t i = r->nopen; i-- > 0;)
		if (r->open_dirs[i].len == len && !strncmp(r->cur, path, len)) {
			*out = r->open_dirs[i].st;
			return 1;
		}
	return 0;
}

static int meta_push(struct receiver *r, const struct m_dir_meta *dm, const char *lp)
{
	struct dmeta *d;
	int rc = meta_slot(r, strlen(dm->path), lp, &d);

	if (rc < 0)
		return rc;
	d->mode = mode_of(r, dm->mode, 1);
	d->mtime.tv_sec = (time_t)dm->mtime_s;
	d->mtime.tv_nsec = dm->mtime_ns;
	d->have_old = listed_stat(r, dm->path, &d->old);
	return 0;
}

static void make_hard_link(struct receiver *r, const struct dmeta *d);

/* A directory's mode and mtime, written only where they differ: a no-op
 * run dirties no inode (no journal write on the box's disk). */
static int note_meta(struct receiver *r, const struct stat *old, const char *wpath);

static int dir_meta_set(struct receiver *r, int fd, const struct dmeta *d)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -1;
	/* what it was before this push: before its files changed its mtime */
	const struct stat *old = d->have_old ? &d->old : &st;
	int differs = (old->st_mode & 07777) != d->mode ||
		      !same_mtime(r, &old->st_mtim, d->mtime.tv_sec, (uint32_t)d->mtime.tv_nsec);
	if (differs && note_meta(r, old, d->path) < 0) {
		errno = EIO;
		return -1;
	}
	if ((st.st_mode & 07777) != d->mode && fchmod(fd, d->mode) < 0)
		return -1;
	if (!same_mtime(r, &st.st_mtim, d->mtime.tv_sec, (uint32_t)d->mtime.tv_nsec) &&
	    futimens(fd, (struct timespec[2]){ { .tv_nsec = UTIME_OMIT }, d->mtime }) < 0)
		return -1;
	return 0;
}

/* A file asked for again (REDO) whose data has not come yet. */
static int redo_pending(const struct receiver *r, const char *path)
{
	for (size_t i = 0; i < r->nredo; i++)
		if (!strcmp(r->redo[i].path, path))
			return 1;
	return 0;
}

static void make_hard_link(struct receiver *r, const struct dmeta *d);

static void dmeta_free(struct dmeta *d)
{
	free(d->path);
	free(d->link_to);
	free(d->wpath);
}

/* The head of the meta queue leaves it (its strings are the caller's). */
static void meta_pop(struct receiver *r)
{
	r->meta_bytes -= r->mq[r->mhead].wire_len;
	r->mhead = (r->mhead + 1) % r->mcap;
	r->mcount--;
}

/* The links that waited for `path`'s data asked for again (NULL: all that
 * still wait, at the end): made if it came (ok), else refused. */
static void deferred_links(struct receiver *r, const char *path, int ok)
{
	size_t kept = 0;

	for (size_t i = 0; i < r->ndeferred; i++) {
		struct dmeta *d = &r->deferred[i];
		if (path && strcmp(d->link_to, path)) {
			r->deferred[kept++] = *d;
			continue;
		}
		d->first_failed = !ok;
		make_hard_link(r, d);
		dmeta_free(d);
	}
	r->ndeferred = kept;
}

/* `path` did not get the sender's data (its transfer failed): the hard
 * links waiting to be made to it are refused, not made to the old version. */
static void links_refused(struct receiver *r, const char *path)
{
	for (size_t i = 0; i < r->mcount; i++) {
		struct dmeta *d = &r->mq[(r->mhead + i) % r->mcap];
		if (d->link_to && !strcmp(d->link_to, path))
			d->first_failed = 1;
	}
}

static void meta_apply_ready(struct receiver *r, int all)
{
	while (r->mcount) {
		struct dmeta *d = &r->mq[r->mhead];
		if (!all && d->after > r->wants_done)
			break;
		/* a link to a name whose data was asked for again waits for it
		 * aside (the sender counts this queue as it empties) */
		if (d->link_to && redo_pending(r, d->link_to)) {
			if (!all && r->ndeferred < MAX_DEFERRED) {
				r->deferred[r->ndeferred++] = *d;   /* its strings go along */
				meta_pop(r);
				continue;
			}
			d->first_failed = 1;
		}
		if (d->link_to) {
			make_hard_link(r, d);
			dmeta_free(d);
			meta_pop(r);
			continue;
		}
		int fd = jail_open_dir(r->j, d->path, O_RDONLY);
		/* --existing did not make it: nothing to set, as rsync */
		int absent = fd == -ENOENT && (r->o->flags & REQ_EXISTING);
		if ((fd < 0 || dir_meta_set(r, fd, d) < 0) && !under_failed(r, d->path) && !absent)
			xfer_error(r->st, "%s: cannot set directory metadata: %s",
				   d->path[0] ? d->path : ".", fd < 0 ? err_msg() : strerror(errno));
		if (fd >= 0)
			close(fd);
		dmeta_free(d);
		meta_pop(r);
	}
}

/* --- the listing of one directory ------------------------------------------ */

static void local_clear(struct receiver *r)
{
	dirlist_free(&r->local);
	memset(&r->local, 0, sizeof r->local);
	free(r->seen);
	r->seen = NULL;
}

/* --delete: what this directory holds before the sender's entries arrive.
 * What is created while the listing comes in is not in it, so never deleted. */
static void local_read(struct receiver *r, const char *shown)
{
	if (dirlist_read(r->cur_fd, &r->local) < 0) {
		file_error(r, shown, err_msg());
		return;
	}
	r->seen = calloc(r->local.n ? r->local.n : 1, 1);
	if (!r->seen) {
		file_error(r, shown, "out of memory for the directory's listing");
		local_clear(r);
	}
}

static void local_mark(struct receiver *r, const char *name)
{
	const struct dirent_info *d = r->seen ? dirlist_find(&r->local, name) : NULL;
	if (d)
		r->seen[d - r->local.ents] = 1;
}

/* The module's own excludes (ferry.conf "exclude"): never written, never
 * deleted; wpath is relative to the transfer root. */
static int module_hides(const struct receiver *r, const char *wpath, int is_dir)
{
	return xfilter_module_excluded(r->o->module_filter, r->mroot, wpath, is_dir);
}

/* --- what a push replaces: -b's backup, or the module's snapshot history -- */

static int keeps_old(const struct receiver *r)
{
	return (r->o->flags & REQ_BACKUP) || r->o->snap;
}

/* The module's path of wpath: what the snapshot history names. */
static const char *mpath_of(const struct receiver *r, const char *wpath, char *buf, size_t cap)
{
	if (path_join(buf, cap, r->mroot, wpath) < 0)
		snprintf(buf, cap, "%s", wpath);   /* cannot be longer: mroot is a prefix of the root */
	return buf;
}

/* A directory moved away takes what is below it: the file data cached
 * for it must not land there (in the history, or a backup). */
static void forget_data_dir(struct receiver *r)
{
	if (r->data_fd >= 0)
		close(r->data_fd);
	r->data_fd = -1;
	r->data_dir[0] = '\0';
}

/* dirfd/name (wpath) before it is replaced (move = 0) or removed (move = 1). */
static int keep_old(struct receiver *r, int dirfd, const char *name, const char *wpath, int move)
{
	char mp[PATH_MAX_WIRE * 2 + 2];

	if (move)
		forget_data_dir(r);
	if (!r->o->snap)
		return backup_keep(&r->bk, dirfd, name, wpath, move);
	mpath_of(r, wpath, mp, sizeof mp);
	/* A directory is kept whole only if nothing below it changed in this
	 * push, or the snapshot before would show those changes as its own. A
	 * sender lists parent first in name order, so that can only happen once
	 * a listing at or below it was seen (a second source with the same
	 * names, or a forged stream): then the log says. */
	struct stat st;
	if (move && snapidx_cmp(r->max_listed, wpath) >= 0 &&
	    fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
	    snapinc_changed_below(r->o->snap, mp))
		return err_set(-EBUSY, "%s: not removed: what is in it changed earlier in this push",
			       wpath);
	return snapinc_keep(r->o->snap, dirfd, name, mp, move);
}

/* wpath, absent until now, is about to be created. */
static int note_added(struct receiver *r, const char *wpath)
{
	char mp[PATH_MAX_WIRE * 2 + 2];

	return r->o->snap ? snapinc_added(r->o->snap, mpath_of(r, wpath, mp, sizeof mp)) : 0;
}

/* wpath's mode, owner or mtime (`old`) are about to change in place. */
static int note_meta(struct receiver *r, const struct stat *old, const char *wpath)
{
	char mp[PATH_MAX_WIRE * 2 + 2];

	return r->o->snap ? snapinc_meta(r->o->snap, old, mpath_of(r, wpath, mp, sizeof mp)) : 0;
}

/* 0 if nothing is at `rel` (which is no directory), else <0 with the error. */
static int in_the_way(const struct jail *j, const char *rel)
{
	const char *leaf;
	struct stat st;
	int dfd = jail_open_parent(j, rel, &leaf);

	if (dfd < 0)
		return dfd;
	int there = fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT;
	close(dfd);
	return there ? err_set(-ENOTDIR, "%s is in the way: not a directory", rel) : 0;
}

/* mkdir -p of `path` inside the jail (each missing component, 0755). */
static int mkdirs(struct receiver *r, const char *path)
{
	char part[PATH_MAX_WIRE + 1];

	for (const char *p = path; *p; p++) {
		if (p[1] != '/' && p[1] != '\0')
			continue;
		snprintf(part, sizeof part, "%.*s", (int)(p - path + 1), path);
		if (r->o->snap) {
			/* the history names it from the module's root, which r->j still is */
			int fd = jail_open_dir(r->j, part, O_RDONLY);
			if (fd >= 0) {
				close(fd);
				continue;
			}
			/* Only what is absent is logged as added: its undo removes
			 * it, and a file in the way is committed data. */
			if ((fd = in_the_way(r->j, part)) != 0)
				return fd;
			if (snapinc_added(r->o->snap, part) < 0)
				return -EIO;
		}
		int rc = jail_mkdir(r->j, part, 0755);
		if (rc < 0 && rc != -EEXIST)
			return rc;
	}
	return 0;
}

static int is_dir(const struct jail *j, const char *path)
{
	int fd = jail_open_dir(j, path, O_PATH);
	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

/* rsync follows a destination that is a symlink: a single file named onto
 * one that leads to a directory goes inside it. The box follows no symlink,
 * so that push is refused; onto a link to a file, or a dangling one, the
 * file replaces the link, as in rsync. (A pull's destination was followed
 * on the PC already, by the client.) */
static int single_onto_link(struct receiver *r)
{
	char q[FS_QUOTE_BUF];

	if (!r->o->box || !jail_link_may_be_dir(r->j, r->root))
		return 0;
	return err_set(-ELOOP, "%s is a symlink that may lead to a directory (not followed): "
		       "name the directory itself", fs_quote(q, r->root, strlen(r->root)));
}

/* The destination, at the root listing. rsync's single-file case: "push
 * file host:mod/a/new" writes the file as "new" in "a" (created if missing),
 * unless "a/new" is an existing directory or was written with a trailing '/';
 * then nothing but that one regular file is accepted. Otherwise the root is
 * created and the jail narrowed to it: whatever the peer sends later, it
 * cannot reach above what the user named (a pull into a new DEST opens the
 * jail on DEST's parent). In a dry run a missing root gives a jail that opens
 * nothing, which reads as "nothing exists yet". */
static int setup_root(struct receiver *r, const struct m_dir_begin *db)
{
	int rc;

	r->rooted = 1;
	if ((db->flags & DIRB_SINGLE) && r->root[0] && !(r->o->flags & REQ_SLASH) &&
	    !is_dir(r->j, r->root)) {
		if ((rc = single_onto_link(r)) < 0)
			return rc;
		char *slash = strrchr(r->root, '/');
		r->single = 1;
		snprintf(r->single_name, sizeof r->single_name, "%.255s", slash ? slash + 1 : r->root);
		if (slash)
			*slash = '\0';
		else
			r->root[0] = '\0';
	}
	snprintf(r->mroot, sizeof r->mroot, "%s", r->root);
	if (xfilter_module_excluded(r->o->module_filter, "", r->root, 1))
		return err_set(-EACCES, "the destination is excluded by the module");
	r->root_existed = !r->root[0] || is_dir(r->j, r->root);
	if (!r->dry && (rc = mkdirs(r, r->root)) < 0)
		return rc;
	rc = jail_open_at(&r->own, r->j, r->root);
	if (rc < 0 && !r->dry)
		return rc;
	r->j = &r->own;
	r->root[0] = '\0';
	r->bk = (struct backup){ .j = r->j, .dir = r->o->backup_dir, .suffix = r->o->suffix };
	/* the receiver's dir-merge files are its own, in the destination */
	xfilter_place(r->o->filter, r->j, "");
	return 0;
}

/* A snapshot's push: `path` (now listed, cur_fd) joins the directories
 * whose stat is kept; those that are not above it leave. */
static int open_dirs_enter(struct receiver *r, const char *path)
{
	while (r->nopen) {
		size_t l = r->open_dirs[r->nopen - 1].len;
		if (!strncmp(r->cur, path, l) && (l == 0 || path[l] == '/'))
			break;
		r->nopen--;
	}
	if (r->nopen == r->capopen) {
		size_t cap = r->capopen ? r->capopen * 2 : 16;
		void *n = realloc(r->open_dirs, cap * sizeof *r->open_dirs);
		if (!n)
			return err_set(-ENOMEM, "out of memory");
		r->open_dirs = n;
		r->capopen = cap;
	}
	if (r->cur_fd < 0 || fstat(r->cur_fd, &r->open_dirs[r->nopen].st) < 0)
		return 0;
	r->open_dirs[r->nopen++].len = strlen(path);
	return 0;
}

/* A directory of ours that we may not write (0555, say) is given u+wx while
 * its entries arrive, as rsync does; its DIR_META sets the sender's mode
 * afterwards (ferry always keeps modes). Not in a snapshot module, where a
 * mode change must go through the increment's log. */
static void let_us_write(struct receiver *r, const char *wpath)
{
	struct stat st;

	if (r->dry || r->o->snap || r->cur_fd < 0 || geteuid() == 0 ||
	    fstat(r->cur_fd, &st) < 0 || st.st_uid != geteuid() ||
	    (st.st_mode & (S_IWUSR | S_IXUSR)) == (S_IWUSR | S_IXUSR))
		return;
	if (fchmod(r->cur_fd, (st.st_mode & 07777) | S_IWUSR | S_IXUSR) < 0)
		dir_error(r, wpath, strerror(errno));
}

static int on_dir_begin(struct receiver *r, const struct m_dir_begin *db)
{
	char lp[PATH_MAX_WIRE + 1];
	int rc;

	if (r->in_listing)
		return err_set(-EBADMSG, "protocol: DIR_BEGIN inside a listing");
	if ((rc = path_check(db->path, strlen(db->path))) < 0)
		return err_wrap(rc, "protocol: bad directory from the sender");
	if (r->single)
		return err_set(-EBADMSG, "protocol: a listing after the single file of this transfer");
	if (r->rooted && !db->path[0])
		return err_set(-EBADMSG, "protocol: a second root listing");
	if (!r->rooted && db->path[0])
		return err_set(-EBADMSG, "protocol: the first listing must be the transfer root");
	if (!r->rooted && (rc = setup_root(r, db)) < 0)
		return rc;
	if (!db->path[0] && !(db->flags & DIRB_SYNTHETIC))
		r->st->dirs++;   /* the root of "src/", as rsync counts it */
	if ((rc = local_of(r, db->path, lp, sizeof lp)) < 0)
		return rc;
	if (r->cur_fd >= 0)
		close(r->cur_fd);
	r->cur_fd = -1;
	r->cur_empty = 0;
	r->cur_hidden = db->path[0] && module_hides(r, db->path, 1);
	if (r->cur_hidden) {   /* its entries are ignored, nothing in it deleted */
		if (r->o->snap && (rc = open_dirs_enter(r, db->path)) < 0)
			return rc;
		snprintf(r->cur, sizeof r->cur, "%s", db->path);
		r->in_listing = 1;
		local_clear(r);
		return 0;
	}
	r->cur_fd = jail_open_dir(r->j, lp, O_RDONLY);
	/* with --existing a directory that is not here was not created: quietly */
	if (r->cur_fd < 0 && !r->dry && !(r->cur_fd == -ENOENT && (r->o->flags & REQ_EXISTING)))
		dir_error(r, db->path, err_msg());
	if (!(db->flags & DIRB_SYNTHETIC) && !r->single)   /* its DIR_META will follow */
		let_us_write(r, db->path);
	if (r->o->snap && (rc = open_dirs_enter(r, db->path)) < 0)
		return rc;
	snprintf(r->cur, sizeof r->cur, "%s", db->path);
	if (snapidx_cmp(db->path, r->max_listed) > 0)
		snprintf(r->max_listed, sizeof r->max_listed, "%s", db->path);
	r->in_listing = 1;
	local_clear(r);
	/* single-file mode lists the parent of what was named, and a partial
	 * listing (-R, --files-from, -x's mount point) some of the directory:
	 * never mirrored */
	if ((r->o->flags & REQ_DELETE) && !(db->flags & (DIRB_SYNTHETIC | DIRB_PARTIAL)) &&
	    !r->single && r->cur_fd >= 0) {
		/* what the rules protect here is known before anything is deleted */
		if (xfilter_goto(r->o->filter, db->path) < 0)
			file_error(r, db->path[0] ? db->path : ".", err_msg());
		else
			local_read(r, db->path[0] ? db->path : ".");
	}
	if (!db->path[0] && !(db->flags & DIRB_SYNTHETIC) && r->cur_fd >= 0 && r->root_existed)
		r->have_root_old = fstat(r->cur_fd, &r->root_old) == 0;
	/* rsync's "cd+++++++++ ./": the directory whose contents come was made */
	if (!db->path[0] && !(db->flags & DIRB_SYNTHETIC) && !r->root_existed && !r->single)
		report(r, CHG_MKDIR, ".");
	/* the root, or a directory when this run has made some */
	if (r->cur_fd >= 0 && !r->dry && (!db->path[0] || r->dirs_made))
		r->cur_empty = r->seen ? r->local.n == 0 : fs_dir_is_empty(r->cur_fd);
	return 0;
}

/* A changed file with an old version of some size here is asked for as a
 * delta (where this receiver may: a box receiver, unless -W). */
static int wants_delta(const struct receiver *r, const struct m_entry *e, const struct stat *old,
		       int exists)
{
	return (r->o->want_delta || r->o->want_sig) && !(r->o->flags & REQ_WHOLE_FILE) && exists &&
	       S_ISREG(old->st_mode) && (uint64_t)old->st_size >= DELTA_MIN_FILE &&
	       e->size >= DELTA_MIN_FILE &&
	       (uint64_t)old->st_size / DELTA_MAX_BLOCK <= DELTA_MAX_BLOCKS;
}

/* Resume is on unless --no-resume (or -n: nothing is written). */
static int resume_on(const struct receiver *r)
{
	return !(r->o->flags & (REQ_NO_RESUME | REQ_DRY_RUN));
}

/* Which bases to look for: the old version when it makes a delta worth it,
 * a partial when this side may ask for a delta at all. */
static unsigned bases_wanted(const struct receiver *r, const struct want *w, int delta)
{
	int may = (r->o->want_delta || r->o->want_sig) && !(r->o->flags & REQ_WHOLE_FILE);

	return (delta ? BASE_OLD : 0) |
	       (may && resume_on(r) && w->size >= DELTA_MIN_FILE ? BASE_PART : 0);
}

static unsigned bases_of(const struct basis *b)
{
	return (b->fd[0] >= 0 ? BASE_OLD : 0) | (b->fd[1] >= 0 ? BASE_PART : 0);
}

/* WANT, or WANT_DELTA with the signature of the bases (the old version and
 * a partial, streamed as they are read; nothing of it is kept), or on a pull
 * WANT_SIG: the sender (the box) sends block hashes, this side rolls. */
static int ask(struct receiver *r, struct want *w, const char *name, int delta)
{
	struct basis b;
	unsigned want = bases_wanted(r, w, delta);

	basis_init(&b);
	if (r->cur_empty)
		want = 0;   /* no old version, no partial */
	if (want)
		resume_open(&b, r->cur_fd, name, want & BASE_OLD, want & BASE_PART, &w->id);
	uint64_t total = b.size[0] + b.size[1];
	if (b.fd[1] >= 0 && total / DELTA_MAX_BLOCK > DELTA_MAX_BLOCKS) {
		close(b.fd[1]);   /* too big together: the old version alone */
		b.fd[1] = -1;
		b.size[1] = 0;
		total = b.size[0];
	}
	w->bases = (uint8_t)bases_of(&b);
	if (b.fd[1] >= 0)
		log_info("%s: resuming from %llu bytes of an interrupted transfer", w->path,
			 (unsigned long long)b.size[1]);
	if (w->bases && r->o->want_sig) {
		basis_close(&b);
		w->sig_asked = 1;
		return conn_send_len(r->c, MSG_WANT_SIG, w->index);
	}
	if (!w->bases)
		return conn_send_len(r->c, MSG_WANT, w->index);
	w->block = delta_block_size(total);
	basis_layout_blocks(&b, w->block);
	w->basis_size = b.size[0];
	w->part_size = b.size[1];
	w->group = (uint8_t)delta_group(w->block, b.nblocks);
	int rc = delta_sig_send(r->c, &b, w->index, w->group);
	basis_close(&b);
	return rc;
}

static int want_push(struct receiver *r, const struct m_entry *e, const char *lp,
		     const char *name, int delta)
{
	size_t len = strlen(r->cur) + (r->cur[0] ? 1 : 0) + strlen(e->name);

	if (r->wcount >= PROTO_WINDOW_FILES || r->want_bytes + len > PROTO_WINDOW_PATH_BYTES)
		return err_set(-EBADMSG, "protocol: the sender has more than %d files (or %u bytes "
			       "of their paths) outstanding", PROTO_WINDOW_FILES,
			       PROTO_WINDOW_PATH_BYTES);
	if (r->wcount == r->wcap &&
	    ring_grow((void **)&r->wq, sizeof *r->wq, &r->wcap, &r->whead, r->wcount, 256) < 0)
		return err_set(-ENOMEM, "out of memory");
	struct want *w = &r->wq[(r->whead + r->wcount) % r->wcap];
	w->index = r->index;
	w->wire_len = (uint32_t)len;
	w->size = e->size;
	w->block = 0;
	w->basis_size = 0;
	w->part_size = 0;
	w->bases = 0;
	w->group = 0;
	w->refined = 0;
	w->refine_next = 0;
	w->id = (struct fs_part_id){ .size = e->size, .mtime_s = e->mtime_s,
				     .mtime_ns = e->mtime_ns };
	w->sig_asked = 0;
	w->nsig = NULL;
	w->match = NULL;
	w->path = strdup(lp);
	if (!w->path)
		return err_set(-ENOMEM, "out of memory");
	r->want_bytes += len;
	r->wcount++;
	r->wants_enq++;
	return ask(r, w, name, delta);
}

/* Deletes cur/name, or with -b moves it to its backup. */
/* Inside a directory --delete removes, what the filter rules protect stays
 * (rel is relative to the directory being listed). */
static int protected_inside(void *ctx, const char *rel, int is_dir)
{
	struct receiver *r = ctx;
	char wpath[PATH_MAX_WIRE + 1], dir[PATH_MAX_WIRE + 1];

	if (path_join(wpath, sizeof wpath, r->cur, rel) < 0)
		return 1;
	snprintf(dir, sizeof dir, "%s", wpath);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		dir[0] = '\0';
	if (module_hides(r, wpath, is_dir))
		return 1;
	/* rules that cannot be read keep everything: nothing is lost */
	return xfilter_goto(r->o->filter, dir) < 0 ||
	       xfilter_excluded(r->o->filter, FILTER_RECEIVER, wpath, is_dir);
}

static int remove_entry(struct receiver *r, const char *name, const char *wpath)
{
	forget_data_dir(r);   /* it may be the directory going, or below it */
	if (keeps_old(r))
		return keep_old(r, r->cur_fd, name, wpath, 1);
	/* (as rsync, a directory of ours inside whose mode keeps us out, 0555,
	 * is opened first: it is going anyway) */
	if (!r->o->filter && !r->o->module_filter)
		return fs_remove_tree_force(r->cur_fd, name);
	int rc = fs_remove_tree_keep(r->cur_fd, name, protected_inside, r);
	int back = xfilter_goto(r->o->filter, r->cur);   /* for the rest of this listing */
	if (rc == 1)
		log_info("%s: kept, it holds what the filter rules protect", wpath);
	return rc < 0 ? rc : back < 0 ? back : 0;
}

/* Makes room for an entry of another type: rsync -a replaces it. */
static int clear_existing(struct receiver *r, const char *name, const char *wpath)
{
	int rc = remove_entry(r, name, wpath);
	if (rc < 0)
		file_error(r, wpath, err_msg());
	return rc;
}

static int same_hash(struct receiver *r, const char *name, const uint8_t *hash)
{
	uint8_t mine[MSG_HASH_LEN];
	struct stat st;
	/* O_NONBLOCK: a FIFO swapped in for the file must not block the open. */
	int fd = openat(r->cur_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	int rc = filedata_hash_fd(fd, mine, r->c);
	close(fd);
	return rc == 0 && !memcmp(mine, hash, MSG_HASH_LEN);
}

/* -u, as rsync: a regular file here whose mtime is later than the sender's
 * stays as it is, contents and mode (an equal mtime is not newer). */
static int newer_here(const struct receiver *r, const struct m_entry *e, const struct stat *old,
		      int exists)
{
	if (!(r->o->flags & REQ_UPDATE) || !exists || !S_ISREG(old->st_mode))
		return 0;
	if (r->o->flags2 & REQ2_MODIFY_WINDOW)   /* rsync's: unless the sender's is the
						   * window or more newer */
		return e->mtime_s - old->st_mtim.tv_sec < (int64_t)r->o->modify_window;
	return old->st_mtim.tv_sec > e->mtime_s ||
	       (old->st_mtim.tv_sec == e->mtime_s && (uint32_t)old->st_mtim.tv_nsec > e->mtime_ns);
}

static int meta_differs(struct receiver *r, const struct m_entry *e, const struct stat *old,
			int *mtime_too)
{
	*mtime_too = !same_mtime(r, &old->st_mtim, e->mtime_s, e->mtime_ns);
	return *mtime_too || (old->st_mode & 07777) != mode_of(r, e->mode, 0);
}

/* Contents up to date: only mode and (after -c found equal contents with
 * another mtime, as rsync does) mtime are set, so that the next plain push
 * does not send the file again. */
static void refresh_meta(struct receiver *r, const struct m_entry *e, const char *name,
			 const char *wpath, const struct stat *old)
{
	struct timespec mt = { .tv_sec = (time_t)e->mtime_s, .tv_nsec = e->mtime_ns };
	int mtime_too;

	if (!meta_differs(r, e, old, &mtime_too))
		return;
	report_bits(r, CHG_META, diff_bits(r, e, old) & ~CHGB_SIZE, wpath);
	if (!r->dry && (note_meta(r, old, wpath) < 0 ||
			fs_set_meta(r->cur_fd, name, mode_of(r, e->mode, 0), mtime_too ? &mt : NULL) < 0))
		file_error(r, wpath, err_msg());
}

static struct xmeta_want xwant_of(uint32_t mode, const struct m_entry *e)
{
	return (struct xmeta_want){ .mode = mode, .is_link = e && e->type == ENT_LNK,
				    .major = e ? e->rdev_major : 0, .minor = e ? e->rdev_minor : 0 };
}

/* The held XMETA (owner, xattrs; fake super's stored stat) onto an entry
 * that exists: what differed is reported with the entry's other changes.
 * `dry`: what a dry xmeta_apply of it gave already (<0: not looked yet). */
static unsigned apply_xmeta_dry(struct receiver *r, const struct xa_at *at, uint32_t mode,
				const struct m_entry *e, const char *wpath, const struct stat *known,
				int dry)
{
	struct xmeta_want w = xwant_of(mode, e);
	struct stat now;
	int rc;

	if (!(r->o->flags & REQ_XMETA) && !r->o->fake_super)
		return 0;
	/* `known`: the caller's fresh stat of it (a no-op run stats once) */
	if (known)
		now = *known;
	else if ((at->fd >= 0 ? fstat(at->fd, &now) : fstatat(at->dirfd, at->name, &now,
								AT_SYMLINK_NOFOLLOW)) < 0)
		return 0;
	/* an entry that was here: the snapshot keeps what it had, if that changes */
	if (r->o->snap && !r->dry && known && at->fd < 0 &&
	    (dry >= 0 ? dry : xmeta_apply(&r->xd, at, &now, &w, 1)) > 0 &&
	    note_meta(r, &now, wpath) < 0) {
		file_error(r, wpath, err_msg());
		return 0;
	}
	rc = xmeta_apply(&r->xd, at, &now, &w, r->dry);
	if (rc < 0) {
		file_error(r, wpath, err_msg());
		return 0;
	}
	return (unsigned)rc;
}

static unsigned apply_xmeta(struct receiver *r, const struct xa_at *at, uint32_t mode,
			    const struct m_entry *e, const char *wpath, const struct stat *known)
{
	return apply_xmeta_dry(r, at, mode, e, wpath, known, -1);
}

static uint32_t full_mode(const struct m_entry *e)
{
	return e->type == ENT_SPECIAL ? e->mode : e->mode | (e->type == ENT_DIR ? 0040000u :
				      e->type == ENT_LNK ? 0120000u : 0100000u);
}

/* In a snapshot module an xattr or ACL change is a new version of the file:
 * the old one goes to the history whole, its xattrs with it, instead of
 * being rewritten in place under the snapshots that share it (a META
 * record keeps mode, owner and mtime only). The dry look's bits, for
 * apply_xmeta_dry (<0: none taken). */
static int xattrs_dry(struct receiver *r, const struct m_entry *e, const char *name,
		      const struct stat *old)
{
	struct xa_at at = { .fd = -1, .dirfd = r->cur_fd, .name = name };
	struct xmeta_want w = xwant_of(full_mode(e), e);

	if (!(r->o->flags & (REQ_XATTRS | REQ_ACLS)))
		return -1;
	return xmeta_apply(&r->xd, &at, old, &w, 1);
}

/* rsync's quick check: size and mtime (-c: the hash; --size-only: the size;
 * -I: never), in rsync's order: -c and --size-only decide before -I, which
 * only turns off the look at the time. */
static int up_to_date(struct receiver *r, const struct m_entry *e, const char *name,
		      const struct stat *old, int exists)
{
	if (!exists || !S_ISREG(old->st_mode) || (uint64_t)old->st_size != e->size)
		return 0;
	if (r->o->flags & REQ_CHECKSUM)
		return (e->flags & ENT_HAS_HASH) && same_hash(r, name, e->hash);
	if (r->o->flags & REQ_SIZE_ONLY)
		return 1;
	return !(r->o->flags & REQ_IGNORE_TIMES) &&
	       same_mtime(r, &old->st_mtim, e->mtime_s, e->mtime_ns);
}

static int on_reg(struct receiver *r, const struct m_entry *e, const char *name,
		  const char *wpath, const char *lp, const struct stat *old, int exists)
{
	struct progress *pg = r->h->progress;
	int fresh = up_to_date(r, e, name, old, exists);
	int mtime_too;

	r->st->files_seen++;
	r->st->bytes_total += e->size;
	/* A file with other links may be linked from outside the module (by a
	 * local user): it is replaced through a temporary, never changed in
	 * place. */
	if (fresh && old->st_nlink > 1 && meta_differs(r, e, old, &mtime_too))
		fresh = 0;
	int dry = -1;
	if (fresh && r->o->snap && (dry = xattrs_dry(r, e, name, old)) > 0 && (dry & CHGB_XATTR))
		fresh = 0;
	/* -u first, as rsync: a newer file here is left whole, its time too
	 * (even when -c or --size-only finds it equal) */
	int newer = newer_here(r, e, old, exists);
	r->kept = newer;
	if (fresh || newer) {
		if (newer)
			r->st->files_kept++;
		else
			r->st->files_skipped++;
		if (pg)
			progress_skip(pg, e->size);
		if (!newer) {
			struct xa_at at = { .fd = -1, .dirfd = r->cur_fd, .name = name };
			unsigned bits = apply_xmeta_dry(r, &at, full_mode(e), e, wpath, old, dry);
			struct stat now = *old;
			if (bits && !r->dry)
				fstatat(r->cur_fd, name, &now, AT_SYMLINK_NOFOLLOW);
			if (bits && !meta_differs(r, e, &now, &mtime_too))
				report_bits(r, CHG_META, bits, wpath);
			refresh_meta(r, e, name, wpath, &now);
		}
		return 0;
	}
	/* rsync's 'c': -c looked, and the contents differ (a size too) */
	unsigned csum = (r->o->flags & REQ_CHECKSUM) &&
			(r->h->change || (r->o->flags2 & REQ2_CHG_CSUM)) ? CHGB_CSUM : 0;
	if (exists && S_ISREG(old->st_mode))
		report_bits(r, CHG_UPDATE, diff_bits(r, e, old) | csum, wpath);
	else
		report(r, CHG_NEW, wpath);
	r->rewritten = 1;
	if (r->dry)
		return 0;
	if (exists && !S_ISREG(old->st_mode) && clear_existing(r, name, wpath) < 0)
		return 0;
	return want_push(r, e, lp, name, wants_delta(r, e, old, exists));
}

/* rsync's -i ".d..t...... dir/": an existing directory whose mode or time
 * its DIR_META will change, said as its entry comes (before its files
 * change its time). */
static void report_dir_attrs(struct receiver *r, uint32_t mode, int64_t mtime_s, uint32_t mtime_ns,
			     const char *wpath, const struct stat *old)
{
	char shown[PATH_MAX_WIRE + 2];
	unsigned bits = ((old->st_mode & 07777) != mode_of(r, mode, 1) ? CHGB_PERMS : 0) |
			(!same_mtime(r, &old->st_mtim, mtime_s, mtime_ns) ? CHGB_TIME : 0);

	if (bits && snprintf(shown, sizeof shown, "%s/", wpath[0] ? wpath : ".") < (int)sizeof shown)
		report_bits(r, CHG_META, bits, shown);
}

static int on_dir(struct receiver *r, const struct m_entry *e, const char *name,
		  const char *wpath, const struct stat *old, int exists)
{
	r->st->dirs++;
	if (exists && S_ISDIR(old->st_mode)) {
		report_dir_attrs(r, e->mode, e->mtime_s, e->mtime_ns, wpath, old);
		return 0;
	}
	report(r, CHG_MKDIR, wpath);
	if (r->dry)
		return 0;
	if (exists && remove_entry(r, name, wpath) < 0) {
		dir_error(r, wpath, err_msg());
		return 0;
	}
	if (!exists && note_added(r, wpath) < 0) {
		dir_error(r, wpath, err_msg());
		return 0;
	}
	/* Owner-writable until DIR_META gives the real mode, so its files can land. */
	if (mkdirat(r->cur_fd, name, mode_of(r, e->mode, 1) | 0700) < 0)
		dir_error(r, wpath, strerror(errno));
	else
		r->dirs_made++;
	return 0;
}

/* Before a link or special file replaces what is at name: a directory
 * goes, anything else is kept first under -b. 0 (reported) if it cannot. */
static int make_room(struct receiver *r, const char *name, const char *wpath,
		     const struct stat *old, int exists)
{
	if (exists && S_ISDIR(old->st_mode))
		return clear_existing(r, name, wpath) >= 0;
	if ((exists && keeps_old(r) && keep_old(r, r->cur_fd, name, wpath, 0) < 0) ||
	    (!exists && note_added(r, wpath) < 0)) {
		file_error(r, wpath, err_msg());
		return 0;
	}
	return 1;
}

/* Fake super keeps a symlink as rsync's daemon does: a regular file holding
 * the target, its stored stat saying it is a link (a link itself can carry
 * no user.* xattr for the owner). */
static int fake_link_is(const struct receiver *r, const char *name, const struct stat *old,
			const char *target)
{
	struct xa_at at = { .fd = -1, .dirfd = r->cur_fd, .name = name };
	char cur[MSG_MAX_PATH + 1];
	struct fake_stat fs;
	ssize_t n = -1;

	if (!S_ISREG(old->st_mode) || !fake_stat_read(&at, &fs) || (fs.mode & WIRE_IFMT) != 0120000u)
		return 0;
	int fd = openat(r->cur_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, cur, sizeof cur - 1);
		close(fd);
	}
	return n >= 0 && (cur[n] = '\0', !strcmp(cur, target));
}

static int fake_link_make(struct receiver *r, const struct m_entry *e, const char *name,
			  const char *wpath)
{
	struct timespec mt = { .tv_sec = (time_t)e->mtime_s, .tv_nsec = e->mtime_ns };
	char tmp[256];
	size_t len = strlen(e->target);
	int fd = -1;

	if (fs_tmp_name(tmp, name) < 0 ||
	    (fd = openat(r->cur_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			 0600)) < 0 || write(fd, e->target, len) != (ssize_t)len) {
		file_error(r, wpath, fd < 0 ? strerror(errno) : "writing its placeholder");
		if (fd >= 0) {
			close(fd);
			unlinkat(r->cur_fd, tmp, 0);
		}
		return 0;
	}
	struct xa_at at = { .fd = fd, .dirfd = -1, .name = NULL };
	apply_xmeta(r, &at, full_mode(e), NULL, wpath, NULL);
	if (futimens(fd, (struct timespec[2]){ { .tv_nsec = UTIME_OMIT }, mt }) < 0 ||
	    renameat(r->cur_fd, tmp, r->cur_fd, name) < 0) {
		file_error(r, wpath, strerror(errno));
		unlinkat(r->cur_fd, tmp, 0);
	}
	close(fd);
	return 0;
}

static int on_link(struct receiver *r, const struct m_entry *e, const char *name,
		   const char *wpath, const struct stat *old, int exists)
{
	char cur[MSG_MAX_PATH + 1];
	struct timespec mt = { .tv_sec = (time_t)e->mtime_s, .tv_nsec = e->mtime_ns };
	struct xa_at at = { .fd = -1, .dirfd = r->cur_fd, .name = name };

	unsigned bits = 0;

	r->st->links++;
	if (exists && r->o->fake_super && fake_link_is(r, name, old, e->target)) {
		if ((bits = apply_xmeta(r, &at, full_mode(e), NULL, wpath, old)))
			report_target(r, CHG_META, bits, wpath, e->target);
		return 0;
	}
	if (exists && S_ISLNK(old->st_mode) && !r->o->fake_super) {
		ssize_t n = readlinkat(r->cur_fd, name, cur, sizeof cur - 1);
		if (n >= 0 && (cur[n] = '\0', !strcmp(cur, e->target))) {
			if ((bits = apply_xmeta(r, &at, full_mode(e), e, wpath, old)))
				report_target(r, CHG_META, bits, wpath, e->target);
			return 0;
		}
		/* rsync's "cLc.t......": another target ('c'), maybe another time */
		bits = CHGB_CSUM | (!same_mtime(r, &old->st_mtim, e->mtime_s, e->mtime_ns) ?
				    CHGB_TIME : 0);
	}
	report_target(r, CHG_LINK, bits, wpath, e->target);
	if (r->dry)
		return 0;
	if (!make_room(r, name, wpath, old, exists))
		return 0;
	if (r->o->fake_super)
		return fake_link_make(r, e, name, wpath);
	if (fs_symlink_atomic(r->cur_fd, name, e->target, &mt) < 0) {
		file_error(r, wpath, err_msg());
		return 0;
	}
	apply_xmeta(r, &at, full_mode(e), e, wpath, NULL);
	return 0;
}

/* The open group an ENT_LINK_TO entry names; a protocol error if none. */
static int link_group_of(struct receiver *r, const struct m_entry *e, struct hlink_group **g)
{
	if (!(*g = hlinks_find(&r->hl, 0, e->link)))
		return err_set(-EBADMSG, "protocol: a hard link to entry %u, which opened no "
			       "link group", e->link);
	return 0;
}

static int keep_as_is(struct receiver *r, const struct m_entry *e, const struct stat *old,
		      int exists);

/* The first of a link group was left as it was (-u, --existing,
 * --ignore-existing): unless it is what the sender has, by the quick check,
 * its other names may not be linked to it (rsync gives them the sender's
 * data; ferry sends a group's data once, with its first name). */
static void first_kept(struct receiver *r, const struct m_entry *e, const char *name,
		       const struct stat *old, int exists)
{
	struct hlink_group *g = hlinks_find(&r->hl, 0, r->index);

	if (g && r->kept)
		g->kept = !up_to_date(r, e, name, old, exists);
	if (g)
		g->rewritten = r->rewritten;
}

/* Two local paths of the jail are one inode (a dry run's "already linked"). */
static int same_inode(const struct receiver *r, const char *a, const char *b)
{
	struct stat sa, sb;
	const char *la, *lb;
	int fa = jail_open_parent(r->j, a, &la);
	int fb = fa < 0 ? -1 : jail_open_parent(r->j, b, &lb);
	int same = fb >= 0 && fstatat(fa, la, &sa, AT_SYMLINK_NOFOLLOW) == 0 &&
		   fstatat(fb, lb, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
		   sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;

	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	return same;
}

/* rsync's "hf+++++++++ NAME => FIRST", or, where a name was, what differs
 * ("hf.st......"). `first` is the first's local path, which is its path in
 * the transfer once rooted (the root is then ""). */
static void report_hlink(struct receiver *r, const char *wpath, const char *first,
			 const struct stat *was, const struct stat *now)
{
	unsigned bits = 0;

	if (was && now)
		bits = (was->st_size != now->st_size ? CHGB_SIZE : 0) |
		       (was->st_mtim.tv_sec != now->st_mtim.tv_sec ||
			was->st_mtim.tv_nsec != now->st_mtim.tv_nsec ? CHGB_TIME : 0) |
		       ((was->st_mode & 07777) != (now->st_mode & 07777) ? CHGB_PERMS : 0);
	report_target(r, was ? CHG_HLINK_UPD : CHG_HLINK, bits, wpath, first);
}

/* -H: another name of a link group; linked once the files listed before
 * it are done (its first member's data may still be on the way). As in
 * rsync, -u, --existing and --ignore-existing ask of every name itself. */
static int on_hardlink(struct receiver *r, const struct m_entry *e, const char *wpath,
		       const char *lp, const struct stat *old, int exists)
{
	struct hlink_group *g;
	struct dmeta *d;
	int rc;

	if ((rc = link_group_of(r, e, &g)) < 0)
		return rc;
	if (keep_as_is(r, e, old, exists)) {
		hlinks_seen(&r->hl, g);
		return 0;
	}
	r->st->files_seen++;
	r->st->bytes_total += e->size;
	if (newer_here(r, e, old, exists)) {
		r->st->files_kept++;
		if (r->h->progress)
			progress_skip(r->h->progress, e->size);
		hlinks_seen(&r->hl, g);
		return 0;
	}
	if (!g->path || g->kept) {
		/* its first member was not written here (the module excludes it, or
		 * -u, --existing or --ignore-existing left another version) */
		file_error(r, wpath, g->path ? "not linked: the first name of its hard-link group "
			   "was left as it was (-u, --existing, --ignore-existing), and its data "
			   "comes with that name only" :
			   "its first link was not written here, so it is not linked");
		hlinks_seen(&r->hl, g);
		return 0;
	}
	if ((rc = meta_slot(r, strlen(wpath), lp, &d)) < 0)
		return rc;
	int rewritten = g->rewritten;
	d->link_to = strdup(g->path);
	d->wpath = strdup(wpath);
	hlinks_seen(&r->hl, g);   /* g may be gone now */
	if (!d->link_to || !d->wpath)
		return err_set(-ENOMEM, "out of memory");
	if (r->dry) {   /* what make_hard_link will do */
		if (!rewritten && same_inode(r, d->link_to, lp))
			r->st->files_skipped++;
		else
			report_hlink(r, wpath, d->link_to, exists ? old : NULL, NULL);
		return 0;
	}
	meta_apply_ready(r, 0);
	return 0;
}

/* The link itself: a temporary name linked to the first member, renamed
 * over this one, both reached through the jail; nothing if already one. */
static void make_hard_link(struct receiver *r, const struct dmeta *d)
{
	const char *from_leaf, *leaf;
	struct stat a, b;
	char tmp[256];

	if (r->dry)
		return;
	int from = jail_open_parent(r->j, d->link_to, &from_leaf);
	int to = from < 0 ? -1 : jail_open_parent(r->j, d->path, &leaf);
	if (from < 0 || to < 0) {
		file_error(r, d->wpath, err_msg());
		goto out;
	}
	if (fstatat(from, from_leaf, &a, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(a.st_mode)) {
		file_error(r, d->wpath, "its first link is not here, so it is not linked");
		goto out;
	}
	if (d->first_failed) {
		file_error(r, d->wpath, "not linked: the data of the first name of its hard-link "
			   "group did not arrive");
		goto out;
	}
	int exists = fstatat(to, leaf, &b, AT_SYMLINK_NOFOLLOW) == 0;
	if (exists && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
		r->st->files_skipped++;
		goto out;
	}
	if (exists && S_ISDIR(b.st_mode)) {
		file_error(r, d->wpath, "a directory is in the way of the hard link");
		goto out;
	}
	report_hlink(r, d->wpath, d->link_to, exists ? &b : NULL, &a);
	if ((exists && keeps_old(r) && keep_old(r, to, leaf, d->wpath, 0) < 0) ||
	    (!exists && note_added(r, d->wpath) < 0)) {
		file_error(r, d->wpath, err_msg());
		goto out;
	}
	if (fs_tmp_name(tmp, leaf) < 0 || linkat(from, from_leaf, to, tmp, 0) < 0) {
		file_error(r, d->wpath, strerror(errno));
		goto out;
	}
	if (renameat(to, tmp, to, leaf) < 0) {
		file_error(r, d->wpath, strerror(errno));
		unlinkat(to, tmp, 0);
		goto out;
	}
	r->st->files_sent++;
out:
	if (from >= 0)
		close(from);
	if (to >= 0)
		close(to);
}

/* A device, FIFO or socket (-D) already there as the sender has it: under
 * fake super, a placeholder whose stored stat says so. */
static int same_special(const struct receiver *r, const struct m_entry *e, const char *name,
			const struct stat *old)
{
	uint32_t fmt = e->mode & WIRE_IFMT;

	if (r->o->fake_super) {
		struct xa_at at = { .fd = -1, .dirfd = r->cur_fd, .name = name };
		struct fake_stat fs;
		return S_ISREG(old->st_mode) && fake_stat_read(&at, &fs) &&
		       (fs.mode & WIRE_IFMT) == fmt && fs.major == e->rdev_major &&
		       fs.minor == e->rdev_minor;
	}
	if (fmt == WIRE_IFCHR || fmt == WIRE_IFBLK)
		return (fmt == WIRE_IFCHR ? S_ISCHR(old->st_mode) : S_ISBLK(old->st_mode)) &&
		       major(old->st_rdev) == e->rdev_major && minor(old->st_rdev) == e->rdev_minor;
	return fmt == WIRE_IFIFO ? S_ISFIFO(old->st_mode) : S_ISSOCK(old->st_mode);
}

/* Creates the special file as `tmp` in the current directory. */
static int make_special(struct receiver *r, const struct m_entry *e, const char *tmp)
{
	uint32_t fmt = e->mode & WIRE_IFMT;
	mode_t type = fmt == WIRE_IFCHR ? S_IFCHR : fmt == WIRE_IFBLK ? S_IFBLK :
		      fmt == WIRE_IFIFO ? S_IFIFO : S_IFSOCK;

	if (r->o->fake_super) {
		/* a placeholder, as rsync's fake super: an empty regular file */
		int fd = openat(r->cur_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				0600);
		if (fd < 0)
			return err_sys(-errno, "creating its placeholder");
		close(fd);
		return 0;
	}
	if ((S_ISCHR(type) || S_ISBLK(type)) && !r->xd.root)
		return err_set(-EPERM, "a device is only created by a receiver running as root "
			       "(or kept by a module with 'fake super = yes'): not created");
	if (mknodat(r->cur_fd, tmp, type | 0600, makedev(e->rdev_major, e->rdev_minor)) < 0)
		return err_sys(-errno, "mknod");
	return 0;
}

static int on_special(struct receiver *r, const struct m_entry *e, const char *name,
		      const char *wpath, const struct stat *old, int exists)
{
	struct timespec mt = { .tv_sec = (time_t)e->mtime_s, .tv_nsec = e->mtime_ns };
	char tmp[256];

	if (!(r->o->flags & ((e->mode & WIRE_IFMT) == WIRE_IFCHR || (e->mode & WIRE_IFMT) ==
			     WIRE_IFBLK ? REQ_DEVICES : REQ_SPECIALS)))
		return err_set(-EBADMSG, "protocol: a special file the request did not ask for");
	if (exists && same_special(r, e, name, old)) {
		struct xa_at at = { .fd = -1, .dirfd = r->cur_fd, .name = name };
		unsigned bits = apply_xmeta(r, &at, e->mode, e, wpath, old);
		int mtime_too, differs = meta_differs(r, e, old, &mtime_too);
		if (bits || differs)
			report_bits(r, CHG_META, bits | (differs ? diff_bits(r, e, old) & ~CHGB_SIZE : 0),
				    wpath);
		if (differs && !r->dry && (note_meta(r, old, wpath) < 0 ||
		    fs_set_meta(r->cur_fd, name, mode_of(r, e->mode, 0), &mt) < 0))
			file_error(r, wpath, err_msg());
		return 0;
	}
	report(r, CHG_NEW, wpath);
	if (r->dry)
		return 0;
	if (!make_room(r, name, wpath, old, exists))
		return 0;
	if (fs_tmp_name(tmp, name) < 0 || make_special(r, e, tmp) < 0) {
		file_error(r, wpath, err_msg());
		return 0;
	}
	struct xa_at at = { .fd = -1, .dirfd = r->cur_fd, .name = tmp };
	apply_xmeta(r, &at, e->mode, e, wpath, NULL);
	if (fs_set_meta(r->cur_fd, tmp, mode_of(r, e->mode, 0), &mt) < 0 ||
	    (renameat(r->cur_fd, tmp, r->cur_fd, name) < 0 &&
	     err_sys(-errno, "rename into place") < 0)) {
		file_error(r, wpath, err_msg());
		unlinkat(r->cur_fd, tmp, 0);
	}
	return 0;
}

/* --max-size, --min-size: a transfer rule, as rsync's, not an exclude: the
 * file is listed (so not deleted) but not transferred */
static int size_out(const struct receiver *r, const struct m_entry *e)
{
	return e->type == ENT_REG &&
	       (((r->o->flags2 & REQ2_MAX_SIZE) && e->size > r->o->max_size) ||
		((r->o->flags2 & REQ2_MIN_SIZE) && e->size < r->o->min_size));
}

/* --existing and --ignore-existing, as rsync, and the size rules: what is
 * not created or not updated at all (a directory not created takes its
 * subtree with it). --ignore-existing goes into a directory that exists as
 * one only: whatever else is there (a file, a link) is left alone. */
static int keep_as_is(struct receiver *r, const struct m_entry *e, const struct stat *old,
		      int exists)
{
	int keep = ((r->o->flags & REQ_EXISTING) && !exists) ||
		   ((r->o->flags & REQ_IGNORE_EXISTING) && exists &&
		    !(e->type == ENT_DIR && S_ISDIR(old->st_mode))) ||
		   size_out(r, e);

	if (keep && e->type == ENT_REG) {
		r->st->files_seen++;
		r->st->files_kept++;
		r->st->bytes_total += e->size;
		if (r->h->progress)
			progress_skip(r->h->progress, e->size);
	}
	return keep;
}

/* --safe-links, as rsync: a symlink that could point outside the transfer
 * is not made, and what is here under its name stays (it is listed, so never
 * extraneous either). */
static int unsafe_link(struct receiver *r, const struct m_entry *e, const char *wpath)
{
	if (e->type != ENT_LNK || !(r->o->flags2 & REQ2_SAFE_LINKS) ||
	    !safelink_unsafe(e->target, wpath))
		return 0;
	log_info("ignoring unsafe symlink \"%s\" -> \"%s\"", wpath, e->target);
	report_target(r, CHG_UNSAFE, 0, wpath, e->target);
	return 1;
}

/* The first of a link group (ENT_LINK_FIRST): remembered while its other
 * links may come, within the limits both ends count the same way. */
static int open_link_group(struct receiver *r, const struct m_entry *e, const char *wpath,
			   const char *lp)
{
	if (!hlinks_room(&r->hl, strlen(wpath)) || hlinks_find(&r->hl, 0, r->index))
		return err_set(-EBADMSG, "protocol: more than %d hard-link groups (or %u bytes of "
			       "their paths) open", PROTO_LINK_GROUPS, PROTO_LINK_PATH_BYTES);
	return hlinks_add(&r->hl, 0, r->index, r->index, e->link, (uint32_t)strlen(wpath), lp);
}

/* A link the module hides: nothing written, the group counts it. */
static int drop_link(struct receiver *r, const struct m_entry *e)
{
	struct hlink_group *g;
	int rc = link_group_of(r, e, &g);

	if (rc == 0)
		hlinks_seen(&r->hl, g);
	return rc;
}

static void report_deleted(struct receiver *r, const char *wpath, int is_dir);

/* 1 if nothing is in the directory (or it cannot be opened: then its
 * removal says why). */
static int dir_empty(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return 1;
	int empty = fs_dir_is_empty(fd);
	close(fd);
	return empty;
}

/* A directory where a non-directory comes: as rsync, an empty one goes; a
 * non-empty one only under --delete or --force, and its going is shown and
 * counted as a deletion. Else the entry fails and the directory stays: 0. */
static int dir_may_go(struct receiver *r, const char *name, const char *wpath)
{
	if (!(r->o->flags & (REQ_DELETE | REQ_FORCE)) && !dir_empty(r->cur_fd, name)) {
		file_error(r, wpath, "cannot delete non-empty directory to make way for a "
			   "non-directory (--force or --delete would)");
		return 0;
	}
	report_deleted(r, wpath, 1);
	r->st->deleted++;
	return 1;
}

static int on_entry(struct receiver *r, const struct m_entry *e)
{
	char wpath[PATH_MAX_WIRE + 1], lp[PATH_MAX_WIRE + 1];
	const char *name = e->name;
	struct stat old;
	int rc, exists;

	if (!r->in_listing)
		return err_set(-EBADMSG, "protocol: ENTRY outside a listing");
	if (strchr(name, '/') || (rc = path_check(name, strlen(name))) < 0)
		return err_set(-EBADMSG, "protocol: bad entry name from the sender");
	if (r->single) {
		if (r->single_done || e->type != ENT_REG)
			return err_set(-EBADMSG, "protocol: a single-file transfer takes one regular "
				       "file and nothing else");
		r->single_done = 1;
		name = r->single_name;
	}
	if (path_join(wpath, sizeof wpath, r->cur, name) < 0)
		return err_set(-EBADMSG, "protocol: entry path too long");
	if ((rc = local_of(r, wpath, lp, sizeof lp)) < 0)
		return rc;
	local_mark(r, name);
	if ((e->flags & (ENT_LINK_FIRST | ENT_LINK_TO)) &&
	    (!(r->o->flags & REQ_HARD_LINKS) || r->single))
		return err_set(-EBADMSG, "protocol: a hard link the request did not ask for");
	int hidden = r->cur_hidden || module_hides(r, wpath, e->type == ENT_DIR);
	if ((e->flags & ENT_LINK_FIRST) && (rc = open_link_group(r, e, wpath, hidden ? NULL : lp)) < 0)
		return rc;
	r->kept = r->rewritten = 0;
	exists = r->cur_fd >= 0 && !r->cur_empty &&
		 fstatat(r->cur_fd, name, &old, AT_SYMLINK_NOFOLLOW) == 0;
	/* a link group shares one size: --max-size or --min-size leaves all of it */
	int sized_out = (e->flags & ENT_LINK_TO) && size_out(r, e);
	if (sized_out)
		keep_as_is(r, e, &old, exists);   /* counted as kept, as its first was */
	if ((e->flags & ENT_LINK_TO) && !hidden && (r->cur_fd >= 0 || r->dry) && !sized_out)
		rc = on_hardlink(r, e, wpath, lp, &old, exists);
	else if (e->flags & ENT_LINK_TO)
		rc = drop_link(r, e);   /* hidden, its directory failed, or sized out */
	else if (hidden)
		rc = 0;   /* never written (ferry.conf "exclude") */
	else if (r->cur_fd < 0 && !r->dry)
		rc = 0;   /* the directory itself failed; already reported */
	else if ((r->kept = keep_as_is(r, e, &old, exists)))
		rc = 0;
	else if (unsafe_link(r, e, wpath))
		rc = 0;
	else if (e->type != ENT_DIR && exists && S_ISDIR(old.st_mode) && !dir_may_go(r, name, wpath))
		rc = 0;
	else if (e->type == ENT_REG)
		rc = on_reg(r, e, name, wpath, lp, &old, exists);
	else if (e->type == ENT_DIR)
		rc = on_dir(r, e, name, wpath, &old, exists);
	else if (e->type == ENT_LNK)
		rc = on_link(r, e, name, wpath, &old, exists);
	else
		rc = on_special(r, e, name, wpath, &old, exists);
	if (rc == 0 && (e->flags & ENT_LINK_FIRST))
		first_kept(r, e, name, &old, exists);
	r->index++;
	return rc;
}

/* rsync's form: a directory ends in '/' (its contents are not listed) */
static void report_deleted(struct receiver *r, const char *wpath, int is_dir)
{
	char shown[PATH_MAX_WIRE + 2];

	if (is_dir && snprintf(shown, sizeof shown, "%s/", wpath) < (int)sizeof shown)
		report(r, CHG_DELETE, shown);
	else
		report(r, CHG_DELETE, wpath);
}

/* --max-delete: 1 when the extraneous entry may go; else it stays (counted
 * as skipped, or failed when it could not be counted) */
static int within_budget(struct receiver *r, const char *name, const char *wpath, int is_dir)
{
	int filtered = (r->o->filter || r->o->module_filter) && !keeps_old(r);
	int ok = del_budget_take(&r->del, r->cur_fd, name, is_dir,
				 filtered ? protected_inside : NULL, r);

	if (filtered && is_dir && r->del.on && xfilter_goto(r->o->filter, r->cur) < 0)
		ok = -EIO;   /* the walk moved the rules: back to this listing's */
	if (ok < 0)
		file_error(r, wpath, err_msg());
	return ok > 0;
}

/* cur/name (wpath), extraneous, goes now (or, in a dry run, is only said to) */
static void delete_now(struct receiver *r, const char *name, const char *wpath, int is_dir)
{
	int rc = r->dry ? 0 : remove_entry(r, name, wpath);

	report_deleted(r, wpath, is_dir);
	r->st->deleted++;
	if (rc < 0 && rc != -ENOENT)   /* (gone already: as good) */
		file_error(r, wpath, err_msg());
}

/* --delete-delay's spool: in the transfer root, else in the directory whose
 * entry is the first to go (a root that is not ours to write in), else in
 * the temporary directory (a pull's PC); a dry run makes only an unnamed one.
 * 0, or <0 and every later call fails alike. */
static int delay_open(struct receiver *r)
{
	enum spool_how how = r->dry ? SPOOL_UNNAMED : SPOOL_ANY;
	int fd = jail_open_dir(r->j, "", O_RDONLY);
	int rc = fd < 0 ? fd : spool_open(&r->delay, fd, how);

	if (fd >= 0)
		close(fd);
	if (rc < 0 && r->cur_fd >= 0)
		rc = spool_open(&r->delay, r->cur_fd, how);
	if (rc < 0)
		rc = spool_open_tmp(&r->delay);
	if (rc < 0)
		r->delay_none = rc;
	return rc;
}

/* --delete-delay: cur/name is noted in the spool, after cur itself when
 * *dir_noted is 0. <0 when it cannot be: then it is not deleted; 1 in a dry
 * run without a spool: said now. */
static int delay_note(struct receiver *r, const char *name, int is_dir, int *dir_noted)
{
	int rc = r->delay.f ? 0 : r->delay_none ? r->delay_none : delay_open(r);

	if (rc < 0)
		return r->dry ? 1 : err_set(rc, "cannot keep the list of what --delete-delay deletes: "
					    "%s", strerror(-rc));
	if (!*dir_noted && (rc = spool_add(&r->delay, DELAY_DIR, r->cur)) == 0)
		*dir_noted = 1;
	if (rc == 0)
		rc = spool_add(&r->delay, is_dir ? DELAY_ENT_DIR : DELAY_ENT, name);
	return rc < 0 ? err_set(rc, "writing the list of what --delete-delay deletes: %s",
				strerror(-rc)) : 0;
}

static int on_dir_end(struct receiver *r)
{
	char wpath[PATH_MAX_WIRE + 1];
	int dir_noted = 0, rc;

	if (!r->in_listing)
		return err_set(-EBADMSG, "protocol: DIR_END outside a listing");
	r->in_listing = 0;
	/* last name first, as rsync deletes (so --max-delete spares the same) */
	for (size_t i = r->local.n; r->seen && i-- > 0;) {
		const char *n = r->local.ents[i].name;
		int is_dir = S_ISDIR(r->local.ents[i].st.st_mode);
		/* another session's file in progress is not ours to delete */
		if (r->seen[i] || fs_is_tmp_name(n) || fs_partial_ours(r->cur_fd, n))
			continue;
		if (path_join(wpath, sizeof wpath, r->cur, n) < 0)
			snprintf(wpath, sizeof wpath, "%s", n);
		if ((r->o->flags & REQ_BACKUP) && backup_is_ours(&r->bk, wpath, n))
			continue;
		if (xfilter_excluded(r->o->filter, FILTER_RECEIVER, wpath, is_dir) ||
		    module_hides(r, wpath, is_dir))
			continue;   /* protected: excluded, P, a receiver-side rule, the module's */
		if (!within_budget(r, n, wpath, is_dir))
			continue;
		if (!(r->o->flags2 & REQ2_DELETE_DELAY))
			delete_now(r, n, wpath, is_dir);
		else if ((rc = delay_note(r, n, is_dir, &dir_noted)) > 0)
			delete_now(r, n, wpath, is_dir);
		else if (rc < 0)
			file_error(r, wpath, err_msg());
	}
	local_clear(r);
	return 0;
}

static int on_dir_meta(struct receiver *r, const struct m_dir_meta *dm)
{
	char lp[PATH_MAX_WIRE + 1];
	int rc;

	if (r->single || !r->rooted)
		return err_set(-EBADMSG, "protocol: directory metadata %s",
			       r->single ? "in a single-file transfer" : "before the root listing");
	if ((rc = path_check(dm->path, strlen(dm->path))) < 0)
		return err_wrap(rc, "protocol: bad directory from the sender");
	if (!dm->path[0] && r->have_root_old)   /* rsync's ".d..t...... ./" */
		report_dir_attrs(r, dm->mode, dm->mtime_s, dm->mtime_ns, "", &r->root_old);
	if (r->dry || (dm->path[0] && module_hides(r, dm->path, 1)))
		return 0;
	if ((rc = local_of(r, dm->path, lp, sizeof lp)) < 0)
		return rc;
	if (r->xd.have) {
		/* owner and xattrs now (they do not touch the mtime); mode and
		 * mtime once the directory's files are in */
		int fd = jail_open_dir(r->j, lp, O_RDONLY);
		struct xa_at at = { .fd = fd, .dirfd = -1, .name = NULL };
		struct stat st;
		struct xmeta_want w = { .mode = 0040000u | dm->mode };
		/* a snapshot keeps the directory's owner if it changes here */
		struct stat old;
		if (fd >= 0 && r->o->snap && fstat(fd, &st) == 0 &&
		    xmeta_apply(&r->xd, &at, &st, &w, 1) > 0 &&
		    note_meta(r, listed_stat(r, dm->path, &old) ? &old : &st, dm->path) < 0) {
			file_error(r, dm->path[0] ? dm->path : ".", err_msg());
			close(fd);
			fd = -1;
		}
		if (fd >= 0) {
			apply_xmeta(r, &at, 0040000u | dm->mode, NULL,
				    dm->path[0] ? dm->path : ".", NULL);
			close(fd);
		}
	}
	meta_apply_ready(r, 0);
	if ((rc = meta_push(r, dm, lp)) < 0)
		return rc;
	meta_apply_ready(r, 0);
	return 0;
}

/* --- file data -------------------------------------------------------------- */

static int data_dirfd(struct receiver *r, const char *lp, const char **leaf)
{
	const char *slash = strrchr(lp, '/');
	size_t dlen = slash ? (size_t)(slash - lp) : 0;

	*leaf = slash ? slash + 1 : lp;
	if (r->data_fd >= 0 && strlen(r->data_dir) == dlen && !memcmp(r->data_dir, lp, dlen))
		return r->data_fd;
	if (r->data_fd >= 0)
		close(r->data_fd);
	snprintf(r->data_dir, sizeof r->data_dir, "%.*s", (int)dlen, lp);
	r->data_fd = jail_open_dir(r->j, r->data_dir, O_RDONLY);
	return r->data_fd;
}

/* What to preallocate: no more than the ENTRY said (FILE_BEGIN comes from
 * the same peer, ~100 bytes can announce 4 GiB) and no more than half the
 * free space, so a stalled sender cannot reserve the disk. */
static off_t prealloc_hint(int dfd, uint64_t announced, uint64_t entry_size)
{
	struct statvfs sv;
	uint64_t n = announced < entry_size ? announced : entry_size;

	/* below it the hint only sizes the buffer: no statvfs per small file */
	if (n >= (uint64_t)AFILE_PREALLOC_MIN && fstatvfs(dfd, &sv) == 0) {
		uint64_t half = (uint64_t)sv.f_bavail * sv.f_frsize / 2;
		if (n > half)
			n = half;
	}
	return n > (uint64_t)INT64_MAX ? 0 : (off_t)n;
}

static void record_hash(struct afile *f);

/* A complete, verified file goes into place (after -b kept the old one). */
static void commit_file(struct receiver *r, struct afile *f, const struct m_file_begin *fb,
			int dfd, const char *leaf, const char *wpath, uint64_t size)
{
	struct timespec mt = { .tv_sec = (time_t)fb->mtime_s, .tv_nsec = fb->mtime_ns };
	struct stat old;
	int exists = keeps_old(r) &&
		     fstatat(dfd, leaf, &old, AT_SYMLINK_NOFOLLOW) == 0;

	if ((exists && keeps_old(r) && !S_ISDIR(old.st_mode) &&
	     keep_old(r, dfd, leaf, wpath, 0) < 0) ||
	    (!exists && note_added(r, wpath) < 0)) {
		afile_abort(f);
		file_error(r, wpath, err_msg());
		return;
	}
	if (r->o->snap)
		snapinc_count(r->o->snap, size);
	if (r->o->snap)
		record_hash(f);
	if ((r->xd.have || r->o->fake_super) && afile_flush(f) == 0) {
		/* after the last write: a write clears a file capability */
		struct xa_at at = { .fd = f->fd, .dirfd = -1, .name = NULL };
		apply_xmeta(r, &at, 0100000u | (fb->mode & 07777), NULL, wpath, NULL);
	}
	if (afile_commit(f, mode_of(r, fb->mode, 0), &mt) < 0) {
		file_error(r, wpath, err_msg());
		return;
	}
	r->st->files_sent++;
	r->st->bytes_committed += size;
}

static void want_free(struct want *w)
{
	free(w->path);
	w->path = NULL;
	if (w->nsig) {
		delta_sig_free(w->nsig);
		free(w->nsig);
		w->nsig = NULL;
	}
	free(w->match);
	w->match = NULL;
}

/* The queued want whose signature this is (a pull's delta). */
static struct want *sig_want(struct receiver *r, uint32_t index)
{
	for (size_t k = 0; k < r->wcount; k++) {
		struct want *w = &r->wq[(r->whead + k) % r->wcap];
		if (w->index == index && w->sig_asked)
			return w;
	}
	return NULL;
}

/* The whole signature is here: roll over the basis for its blocks, then tell
 * the sender the ones missing (NEED runs, NEED_END). */
static int plan_pull_delta(struct receiver *r, struct want *w)
{
	const char *leaf;
	int dfd = data_dirfd(r, w->path, &leaf), rc = 0;
	struct msg m = { .type = MSG_NEED };
	struct basis b;

	basis_init(&b);
	if (dfd >= 0)
		resume_open(&b, dfd, leaf, w->bases & BASE_OLD, w->bases & BASE_PART, &w->id);
	basis_layout_bytes(&b);
	w->match = malloc(((size_t)w->nsig->n + 1) * sizeof *w->match);
	if (!w->match)
		rc = err_set(-ENOMEM, "out of memory");
	else
		rc = delta_find_blocks(&b, w->nsig, w->match);
	w->bases = (uint8_t)bases_of(&b);
	w->basis_size = b.size[0];
	w->part_size = b.size[1];
	basis_close(&b);
	for (uint32_t k = 0; rc == 0 && k < w->nsig->n;) {
		if (w->match[k] != DELTA_NO_MATCH) {
			k++;
			continue;
		}
		uint32_t e = k;
		while (e < w->nsig->n && w->match[e] == DELTA_NO_MATCH)
			e++;
		m.u.need = (struct m_need){ .index = w->index, .block = k, .count = e - k };
		rc = conn_send(r->c, &m);
		k = e;
	}
	return rc < 0 ? rc : conn_send_len(r->c, MSG_NEED_END, w->index);
}

static int on_file_sig(struct receiver *r, const struct m_want_delta *fs)
{
	struct want *w = sig_want(r, fs->index);

	if (!w || w->nsig)
		return err_set(-EBADMSG, "protocol: FILE_SIG for entry %u, which did not ask", fs->index);
	if (!fs->block) {   /* the sender sends it whole */
		w->sig_asked = 0;
		return 0;
	}
	if (!(w->nsig = malloc(sizeof *w->nsig)))
		return err_set(-ENOMEM, "out of memory");
	int rc = delta_sig_init(w->nsig, fs);
	if (rc < 0) {
		free(w->nsig);
		w->nsig = NULL;
		return rc;
	}
	w->block = fs->block;
	return w->nsig->n ? 0 : plan_pull_delta(r, w);
}

static int on_pull_sig(struct receiver *r, const struct m_sig *m)
{
	struct want *w = sig_want(r, m->index);
	int rc;

	if (!w || !w->nsig)
		return err_set(-EBADMSG, "protocol: SIG for entry %u, which has no FILE_SIG", m->index);
	if ((rc = delta_sig_add(w->nsig, m)) < 0)
		return rc;
	return w->nsig->have == w->nsig->n ? plan_pull_delta(r, w) : 0;
}

/* The want this file's data answers: the head of the queue, or a REDO. */
static struct want *want_of(struct receiver *r, uint32_t index, int *redo)
{
	*redo = 0;
	if (r->wcount && r->wq[r->whead].index == index)
		return &r->wq[r->whead];
	for (size_t i = 0; i < r->nredo; i++) {
		if (r->redo[i].index == index) {
			*redo = 1;
			return &r->redo[i];
		}
	}
	return NULL;
}

/* A delta that did not verify (a block collision, or a basis that changed)
 * is asked for once more, whole; past MAX_REDO at once it just fails. */
static int redo_push(struct receiver *r, const struct want *w, const char *why)
{
	if (r->nredo == MAX_REDO) {
		file_error(r, w->path, why);
		return 0;
	}
	struct want *x = &r->redo[r->nredo];
	*x = *w;
	x->block = 0;
	x->sig_asked = 0;
	x->nsig = NULL;   /* the original's, freed with it */
	x->match = NULL;
	if (!(x->path = strdup(w->path)))
		return err_set(-ENOMEM, "out of memory");
	r->nredo++;
	log_info("%s: the delta did not verify (%s); asking for it whole", w->path, why);
	report(r, CHG_RETRY, w->path);
	return conn_send_len(r->c, MSG_REDO, w->index);
}

static void want_done(struct receiver *r, struct want *w, int redo)
{
	basis_close(&r->rf);   /* a peer that never sent REFINE_END */
	want_free(w);
	if (redo) {
		*w = r->redo[--r->nredo];
		return;
	}
	r->want_bytes -= w->wire_len;
	r->whead = (r->whead + 1) % r->wcap;
	r->wcount--;
	r->wants_done++;
	meta_apply_ready(r, 0);
}

/* The bases a delta's data is built from, as its signature or plan saw
 * them: a piece that went or changed size reads as missing (zeros), the
 * whole-file hash fails and the file is asked for again, whole. */
static void reopen_bases(struct receiver *r, const struct want *w, int dfd, const char *leaf,
			 struct basis *b)
{
	basis_init(b);
	if (dfd >= 0)
		resume_open(b, dfd, leaf, w->bases & BASE_OLD, w->bases & BASE_PART, &w->id);
	(void)r;
	for (int i = 0; i < 2; i++) {
		uint64_t was = i ? w->part_size : w->basis_size;
		if (b->fd[i] >= 0 && b->size[i] != was) {
			close(b->fd[i]);
			b->fd[i] = -1;
		}
		b->size[i] = was;
	}
	if (w->match)
		basis_layout_bytes(b);
	else
		basis_layout_blocks(b, w->block);
}

/* The temporary the data goes to: under the partial name when resume is on
 * (*stale: another partial holds that name). */
/* A snapshot module keeps each file's hash (fs/snapstore.h: verify). */
static void hash_tap(void *ctx, const void *p, uint64_t n)
{
	static const uint8_t zeros[65536];

	if (p) {
		XXH3_128bits_update(ctx, p, (size_t)n);
		return;
	}
	for (; n; n -= n < sizeof zeros ? n : sizeof zeros)
		XXH3_128bits_update(ctx, zeros, n < sizeof zeros ? (size_t)n : sizeof zeros);
}

static void record_hash(struct afile *f)
{
	XXH128_canonical_t c;

	if (!f->tap || f->tap_lost)
		return;   /* spliced (--no-verify): verify will say it has no hash */
	XXH128_canonicalFromHash(&c, XXH3_128bits_digest(f->tap_ctx));
	if (snaphash_put(f->fd, c.digest, (int64_t)time(NULL)) < 0)
		log_warn("%s", err_msg());
}

static int open_target(struct receiver *r, struct afile *f, const struct m_file_begin *fb,
		       const struct want *w, int dfd, const char *leaf, int *stale)
{
	struct fs_part_id id = { .size = fb->size, .mtime_s = fb->mtime_s,
				 .mtime_ns = fb->mtime_ns };

	off_t hint = dfd < 0 ? 0 : prealloc_hint(dfd, fb->size, w->size);

	*stale = 0;
	/* a partial that is no basis here gives up its name, before the
	 * temporary exists: nothing but the partial's own steps between its
	 * creation and its rename */
	if (dfd >= 0 && resume_on(r) && (off_t)fb->size >= RESUME_MIN)
		resume_drop(dfd, leaf);
	if (dfd < 0 || afile_open_bare(f, dfd, leaf, hint, &r->o->writer,
				       mode_of(r, fb->mode, 0)) < 0) {
		file_error(r, w->path, err_msg());
		return 0;
	}
	/* the partial name first, then the (slow) preallocation */
	if (resume_on(r) && (off_t)fb->size >= RESUME_MIN)
		*stale = !afile_make_partial(f, &id);
	if (afile_prealloc(f, hint) < 0) {
		file_error(r, w->path, err_msg());
		return 0;
	}
	if (r->o->snap && (r->xh || (r->xh = XXH3_createState())) &&
	    XXH3_128bits_reset(r->xh) == XXH_OK) {
		f->tap = hash_tap;
		f->tap_ctx = r->xh;
	}
	return 1;
}

/* Receives one file's data into a temporary and commits it. */
static int receive(struct receiver *r, const struct m_file_begin *fb, struct want *w)
{
	struct afile f;
	const char *leaf, *why = NULL;
	struct progress *pg = r->h->progress;
	struct basis b;
	int have, stale, rc;
	uint32_t vanished = r->st->vanished;

	if (w->sig_asked && !w->match && w->nsig)
		return err_set(-EBADMSG, "protocol: data for entry %u before its signature ended",
			       fb->index);
	int dfd = data_dirfd(r, w->path, &leaf);
	basis_init(&b);
	if (w->block || w->match)
		reopen_bases(r, w, dfd, leaf, &b);
	resume_begin(&b, dfd, leaf);
	have = open_target(r, &f, fb, w, dfd, leaf, &stale);
	if (pg)
		progress_file(pg, w->path, fb->size);
	if (w->match) {
		struct delta_plan pl = { .b = &b, .block = w->nsig->block, .n = w->nsig->n,
					 .match = w->match };
		rc = delta_recv_assembled(r->c, fb, have ? &f : NULL, &pl, r->st, pg, &why);
	} else {
		rc = filedata_recv(r->c, fb, have ? &f : NULL, w->block ? &b : NULL, r->st, pg,
				   &why);
	}
	basis_close(&b);
#ifdef FERRY_TEST_HOOKS
	/* test builds (test_hardlinks): every delta of a push fails its check once */
	if (rc == 1 && w->block && getenv("FERRY_TEST_DELTA_MISMATCH")) {
		rc = 0;
		why = "a test build's forced mismatch";
	}
#endif
	if (rc == 1) {
		commit_file(r, &f, fb, dfd, leaf, w->path, fb->size);
		if (stale)
			resume_drop(dfd, leaf);
		if (pg)
			progress_file_done(pg);
		return 0;
	}
	/* interrupted: what arrived stays in the partial; a file that failed
	 * (or did not verify) leaves nothing, not even the partial it used */
	if (have && rc < 0)
		afile_keep(&f, RESUME_MIN);
	else if (have)
		afile_abort(&f);
	/* a file gone on the sender counts as vanished (rsync's 24) only when
	 * it fails here for good, as that */
	if (!(rc == 0 && have && !w->block))
		r->st->vanished = vanished;
	if (rc == 0 && have && w->block)
		rc = redo_push(r, w, why);
	else if (rc == 0 && have)
		file_error(r, w->path, why);
	return rc < 0 ? rc : 0;
}

static int on_file(struct receiver *r, const struct m_file_begin *fb)
{
	int redo;
	struct want *w = want_of(r, fb->index, &redo);

	if (!w)
		return err_set(-EBADMSG, "protocol: data for entry %u, which was not asked for",
			       fb->index);
	uint32_t errors = r->st->errors;
	int rc = receive(r, fb, w);
	int failed = r->st->errors != errors;   /* for good: the old version stays */
	if (failed)
		links_refused(r, w->path);
	if (redo)
		deferred_links(r, w->path, rc == 0 && !failed);
	want_done(r, w, redo);
	return rc;
}

/* --- two-level signatures: the fine entries the sender asks for ------------ */

static struct want *refine_want(struct receiver *r, uint32_t index, uint8_t type)
{
	int redo;
	struct want *w = want_of(r, index, &redo);

	if (!w || redo || !w->group || w->refined == 2) {
		err_set(-EBADMSG, "protocol: %s for entry %u, which has no two-level signature out",
			msg_type_name(type), index);
		return NULL;
	}
	return w;
}

/* Groups are asked once each, in order: the box reads its basis at most
 * twice, whatever the sender asks. */
static int on_refine(struct receiver *r, const struct m_need *q)
{
	struct want *w = refine_want(r, q->index, MSG_REFINE);

	if (!w)
		return -EBADMSG;
	uint32_t n = (uint32_t)(w->basis_size / w->block + w->part_size / w->block);
	uint32_t groups = n / w->group + (n % w->group ? 1 : 0);
	if (q->block < w->refine_next || q->block >= groups || q->count > groups - q->block)
		return err_set(-EBADMSG, "protocol: REFINE of groups %u+%u of entry %u (%u groups, "
			       "next %u)", q->block, q->count, q->index, groups, w->refine_next);
	if (!w->refined) {
		const char *leaf;
		int dfd = data_dirfd(r, w->path, &leaf);
		basis_close(&r->rf);
		reopen_bases(r, w, dfd, leaf, &r->rf);
		w->refined = 1;
	}
	w->refine_next = q->block + q->count;
	return delta_refine_send(r->c, &r->rf, w->index, w->group, q->block, q->count);
}

static int on_refine_end(struct receiver *r, uint32_t index)
{
	struct want *w = refine_want(r, index, MSG_REFINE_END);

	if (!w)
		return -EBADMSG;
	basis_close(&r->rf);
	w->refined = 2;
	return 0;
}

/* --- the loop --------------------------------------------------------------- */

#define DECIDED_EVERY 256

static int dispatch(struct receiver *r, const struct msg *m)
{
	switch (m->type) {
	case MSG_TOTALS:
		if (r->h->progress)
			progress_totals(r->h->progress, m->u.totals.files, m->u.totals.bytes);
		return 0;
	case MSG_DIR_BEGIN:
		return on_dir_begin(r, &m->u.dir_begin);
	case MSG_ENTRY:
		return on_entry(r, &m->u.entry);
	case MSG_DIR_END:
		return on_dir_end(r);
	case MSG_DIR_META:
		return on_dir_meta(r, &m->u.dir_meta);
	case MSG_XMETA:
		return xmeta_hold(&r->xd, &m->u.xmeta);
	case MSG_FILE_BEGIN:
		return on_file(r, &m->u.file_begin);
	case MSG_FILE_SIG:
		return on_file_sig(r, &m->u.want_delta);
	case MSG_SIG:
		return on_pull_sig(r, &m->u.sig);
	case MSG_REFINE:
		return on_refine(r, &m->u.need);
	case MSG_REFINE_END:
		return on_refine_end(r, m->u.index.index);
	case MSG_END:
		if (r->in_listing)
			return err_set(-EBADMSG, "protocol: END inside a listing");
		r->end_seen = 1;
		/* the sender's own failures: counted here, once, for the RESULT */
		if (m->u.end.errors && !r->st->first_error[0])
			snprintf(r->st->first_error, sizeof r->st->first_error, "%s",
				 m->u.end.message);
		r->st->errors = m->u.end.errors > UINT32_MAX - r->st->errors ? UINT32_MAX :
				r->st->errors + m->u.end.errors;
		return 0;
	default:
		return err_set(-EBADMSG, "protocol: unexpected %s message from the sender",
			       msg_type_name(m->type));
	}
}

/* Decisions are sent when the input runs dry, so they travel in batches. */
static int flush_decisions(struct receiver *r)
{
	int rc;

	/* Also every DECIDED_EVERY entries while input keeps coming: a sender
	 * faster than this receiver would otherwise fill its window and wait
	 * while the backlog drains, then this side would wait for it. */
	if (r->index - r->decided_sent < DECIDED_EVERY && conn_pending(r->c))
		return 0;
	if (r->decided_sent != r->index) {
		if ((rc = conn_send_len(r->c, MSG_DECIDED, r->index)) < 0)
			return rc;
		r->decided_sent = r->index;
	}
	return conn_flush(r->c);
}

/* A directory of ours that its own mode (set already, the sender's: 0555,
 * say) keeps us from deleting in: u+wx until its deletions are done, as
 * let_us_write does while its listing comes. */
static void delay_let_us_write(struct receiver *r, const struct stat *st)
{
	if (r->dry || r->o->snap || geteuid() == 0 || st->st_uid != geteuid() ||
	    (st->st_mode & (S_IWUSR | S_IXUSR)) == (S_IWUSR | S_IXUSR))
		return;
	if (fchmod(r->cur_fd, (st->st_mode & 07777) | S_IWUSR | S_IXUSR) < 0) {
		file_error(r, r->cur[0] ? r->cur : ".", strerror(errno));
		return;
	}
	r->delay_mode = st->st_mode & 07777;
	r->delay_opened = 1;
}

/* The directory whose delayed deletions are done gets its mtime back (it may
 * have been set already, to the sender's), and its mode. */
static void delay_dir_done(struct receiver *r)
{
	struct timespec t[2] = { { .tv_nsec = UTIME_OMIT }, r->delay_old };
	struct stat st;

	if (r->delay_opened && fchmod(r->cur_fd, r->delay_mode) < 0)
		file_error(r, r->cur[0] ? r->cur : ".", strerror(errno));
	r->delay_opened = 0;
	if (r->delay_have_old && !r->dry && fstat(r->cur_fd, &st) == 0 &&
	    (st.st_mtim.tv_sec != t[1].tv_sec || st.st_mtim.tv_nsec != t[1].tv_nsec) &&
	    futimens(r->cur_fd, t) < 0)
		file_error(r, r->cur[0] ? r->cur : ".", strerror(errno));
	r->delay_have_old = 0;
}

static int delay_one(void *arg, uint8_t kind, const char *path)
{
	struct receiver *r = arg;
	char wpath[PATH_MAX_WIRE + 1], lp[PATH_MAX_WIRE + 1];
	struct stat st;

	conn_keepalive(r->c);   /* 100,000 deletions on a USB stick take a while */

	if (kind == DELAY_DIR) {
		delay_dir_done(r);
		if (r->cur_fd >= 0)
			close(r->cur_fd);
		snprintf(r->cur, sizeof r->cur, "%s", path);
		r->cur_fd = local_of(r, path, lp, sizeof lp) < 0 ? -1 :
			    jail_open_dir(r->j, lp, O_RDONLY);
		if (r->cur_fd < 0 && r->cur_fd != -ENOENT && !r->dry)
			file_error(r, path[0] ? path : ".", err_msg());
		if (r->cur_fd < 0)
			r->cur_fd = -1;   /* (gone since: nothing in it to delete) */
		/* --delete-after: the rules as the transfer left them (its
		 * filter files read again) */
		if (r->o->flags2 & REQ2_DELETE_AFTER)
			xfilter_leave_all(r->o->filter);
		if (r->cur_fd >= 0 && xfilter_goto(r->o->filter, path) < 0) {
			file_error(r, path[0] ? path : ".", err_msg());
			close(r->cur_fd);
			r->cur_fd = -1;   /* the rules cannot be read: nothing goes */
		}
		if (r->cur_fd >= 0 && fstat(r->cur_fd, &st) == 0) {
			r->delay_old = st.st_mtim;
			r->delay_have_old = 1;
			delay_let_us_write(r, &st);
		}
		return 0;
	}
	if (kind != DELAY_ENT && kind != DELAY_ENT_DIR)
		return -EBADMSG;
	if (path_join(wpath, sizeof wpath, r->cur, path) < 0)
		snprintf(wpath, sizeof wpath, "%s", path);
	/* --delete-after: a filter file this transfer brought may protect it now */
	if ((r->o->flags2 & REQ2_DELETE_AFTER) &&
	    (xfilter_excluded(r->o->filter, FILTER_RECEIVER, wpath, kind == DELAY_ENT_DIR) ||
	     module_hides(r, wpath, kind == DELAY_ENT_DIR)))
		return 0;
	if (r->cur_fd >= 0 || r->dry)
		delete_now(r, path, wpath, kind == DELAY_ENT_DIR);
	return 0;
}

/* --delete-delay: what --delete found is deleted now that every file is in
 * (and nothing at all if the transfer did not get here). */
static int delayed_deletions(struct receiver *r)
{
	if (!r->delay.f)
		return 0;
	int rc = spool_each(&r->delay, delay_one, r);
	delay_dir_done(r);
	spool_close(&r->delay);
	return rc < 0 ? err_set(rc, "the list of what --delete-delay deletes: %s (nothing more "
				"deleted)", rc == -EBADMSG ? "damaged" : strerror(-rc)) : 0;
}

static int finish(struct receiver *r)
{
	struct msg m = { .type = MSG_RESULT };
	int rc = delayed_deletions(r);

	if (rc < 0)
		xfer_error(r->st, "%s", err_msg());   /* what is left stays: nothing lost */
	meta_apply_ready(r, 1);
	deferred_links(r, NULL, 0);   /* a REDO that never came: none made */
	/* a snapshot is committed before success is reported (and synced with
	 * the files) */
	/* a push with failed files is still a snapshot, marked partial with
	 * their count (as restic and borg keep one): every file in it is a
	 * version that was pushed, and the tree is what the box now has */
	if (r->o->snap)
		r->o->snap->failed = r->st->errors;
	if (r->o->snap && snapinc_commit(r->o->snap) < 0)
		return err_wrap(-EIO, "the snapshot");
	if (!r->dry && !r->o->writer.fsync_each) {
		int fd = jail_open_dir(r->j, "", O_RDONLY);
		/* One syncfs for the whole session instead of an fsync per file. */
		if (fd < 0 || fs_syncfs(fd) < 0)
			xfer_error(r->st, "syncfs: %s", err_msg());
		if (fd >= 0)
			close(fd);
	}
	m.u.result.errors = r->st->errors;
	m.u.result.files = r->st->files_sent;
	m.u.result.bytes = r->st->bytes_committed;
	m.u.result.uptodate = r->st->files_skipped;
	m.u.result.kept = r->st->files_kept;
	m.u.result.deleted = r->st->deleted;
	m.u.result.del_skipped = r->st->del_skipped = r->del.skipped;
	snprintf(m.u.result.message, sizeof m.u.result.message, "%s", r->st->first_error);
	rc = conn_send(r->c, &m);
	return rc < 0 ? rc : conn_flush(r->c);
}

static void cleanup(struct receiver *r)
{
	basis_close(&r->rf);
	local_clear(r);
	spool_close(&r->delay);
	free(r->open_dirs);
	XXH3_freeState(r->xh);
	while (r->nredo)
		free(r->redo[--r->nredo].path);
	while (r->ndeferred)   /* a session that ended early: no link made */
		dmeta_free(&r->deferred[--r->ndeferred]);
	for (size_t i = 0; i < r->nfailed; i++)
		free(r->failed[i]);
	while (r->wcount) {
		want_free(&r->wq[r->whead]);
		r->whead = (r->whead + 1) % r->wcap;
		r->wcount--;
	}
	free(r->wq);
	while (r->mcount) {
		dmeta_free(&r->mq[r->mhead]);
		meta_pop(r);
	}
	free(r->mq);
	xmeta_dst_free(&r->xd);
	hlinks_free(&r->hl);
	if (r->cur_fd >= 0)
		close(r->cur_fd);
	if (r->data_fd >= 0)
		close(r->data_fd);
	jail_close(&r->own);
}

int receiver_run(struct conn *c, const struct jail *j, const char *root,
		 const struct xfer_opts *o, const struct xfer_hooks *h, struct xfer_stats *st)
{
	struct receiver *r = calloc(1, sizeof *r);
	int rc = 0;

	if (!r)
		return err_set(-ENOMEM, "out of memory");
	r->c = c;
	r->j = j;
	r->o = o;
	r->h = h;
	r->st = st;
	r->dry = !!(o->flags & REQ_DRY_RUN);
	r->del.on = !!(o->flags & REQ_MAX_DELETE);
	r->del.limit = o->max_delete;
	r->cur_fd = -1;
	r->data_fd = -1;
	r->own.root_fd = -1;
	basis_init(&r->rf);
	xmeta_dst_init(&r->xd, o->flags, o->fake_super, o->strip_setid);
	if ((o->flags & REQ_HARD_LINKS) && (rc = hlinks_init(&r->hl)) < 0) {
		free(r);
		return rc;
	}
	snprintf(r->root, sizeof r->root, "%s", root);
	while (rc == 0 && !(r->end_seen && !r->wcount && !r->nredo)) {
		rc = conn_recv(c, &r->m);
		if (rc == 0)
			rc = dispatch(r, &r->m);
		if (rc == 0)
			rc = flush_decisions(r);
	}
	if (rc == 0)
		rc = finish(r);
	cleanup(r);
	free(r);
	return rc;
}

/* ls: the listing only; nothing is asked for and nothing touched. */
int receiver_list(struct conn *c, const struct xfer_hooks *h)
{
	struct msg *m = malloc(sizeof *m);
	uint32_t index = 0;
	int rc = 0, end = 0;
	char dir[PATH_MAX_WIRE + 1] = "", wpath[PATH_MAX_WIRE + 1];

	if (!m)
		return err_set(-ENOMEM, "out of memory");
	while (rc == 0 && !end) {
		if ((rc = conn_recv(c, m)) < 0)
			break;
		switch (m->type) {
		case MSG_TOTALS:
		case MSG_DIR_END:
		case MSG_DIR_META:
			break;
		case MSG_DIR_BEGIN:
			snprintf(dir, sizeof dir, "%s", m->u.dir_begin.path);
			break;
		case MSG_ENTRY:
			if (path_join(wpath, sizeof wpath, dir, m->u.entry.name) < 0)
				snprintf(wpath, sizeof wpath, "%s", m->u.entry.name);
			if (h->entry)
				h->entry(h->ctx, m->u.entry.type, m->u.entry.mode, m->u.entry.size,
					 m->u.entry.mtime_s, wpath, m->u.entry.target);
			index++;
			if (!(index & 1023))
				rc = conn_send_len(c, MSG_DECIDED, index);
			break;
		case MSG_SNAP:
			if (h->snap)
				h->snap(h->ctx, &m->u.snap);
			break;
		case MSG_END:
			end = 1;
			break;
		default:
			rc = err_set(-EBADMSG, "protocol: unexpected %s in a listing",
				     msg_type_name(m->type));
		}
		if (rc == 0 && !end && !conn_pending(c))
			rc = conn_flush(c);
	}
	if (rc == 0) {
		m->type = MSG_DECIDED;
		m->u.index.index = index;
		rc = conn_send(c, m);
	}
	if (rc == 0) {
		memset(m, 0, sizeof *m);
		m->type = MSG_RESULT;
		rc = conn_send(c, m);
	}
	if (rc == 0)
		rc = conn_flush(c);
	free(m);
	return rc;
}
