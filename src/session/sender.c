/* SPDX-License-Identifier: MIT */
/* The sending role: walks the source one directory at a time, streams the
 * entries without waiting, and sends a file's data when the receiver asks for
 * it (WANT). A bounded window of undecided files is all it remembers. */
#include "session/sender.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fs/dirlist.h"
#include "fs/meta.h"
#include "fs/partial.h"
#include "fs/xattr.h"
#include "session/delta.h"
#include "session/filedata.h"
#include "session/hlink.h"
#include "session/progress.h"
#include "session/prune.h"
#include "session/xfilter.h"
#include "session/xmeta.h"
#include "util/err.h"
#include "util/path.h"
#include "util/pathset.h"
#include "util/ratelimit.h"
#include "util/log.h"

enum pstate { P_UNDECIDED = 0, P_WANTED = 1, P_SKIPPED = 2 };

struct pending {
	uint32_t index;
	uint8_t state;
	uint16_t src;
	uint32_t len;           /* strlen(path): counted against PROTO_WINDOW_PATH_BYTES */
	char *path;             /* wire path, owned */
	struct delta_sig *sig;  /* WANT_DELTA: the basis's signature, owned; NULL = whole */
	struct pull_delta *pd;  /* WANT_SIG: what the receiver needs of this file, owned */
};

/* A pull's delta on the box: the signature went out, the NEEDs come back as
 * one bit a block (the only per-file memory: size / block / 8 bytes). */
struct pull_delta {
	int sent;               /* FILE_SIG and the signature have gone */
	int whole;              /* FILE_SIG said block 0: the file goes whole */
	int need_done;          /* NEED_END came */
	struct delta_need d;
	uint8_t hash[MSG_HASH_LEN];
	uint8_t *bits;          /* owned */
};
/* Pull deltas signed and not yet sent at once: past it the file goes whole. */
#define MAX_PULL_DELTAS 16

/* Files sent as deltas lately, should the receiver ask one again whole
 * (REDO: its reconstruction did not verify). */
#define DONE_DELTAS 64
struct done_delta {
	uint32_t index;
	uint16_t src;
	char *path;             /* owned; NULL = free slot */
};

/* A DIR_META the receiver may still hold: it waits there for every file
 * listed before it (index < next) that is not done (PROTOCOL.md 4.1). */
struct meta_wait {
	uint32_t next;
	uint32_t len;
};

/* What pump() returns for: room in the window for one more file whose wire
 * path has `len` bytes, room for one more waiting DIR_META, or all done. */
enum need { NEED_FILE, NEED_META, NEED_ALL };

struct sender {
	struct conn *c;
	const struct source *srcs;
	size_t nsrc;
	const struct xfer_opts *o;
	const struct xfer_hooks *h;
	struct xfer_stats *st;
	struct pending *ring;   /* owned, cap entries */
	size_t cap, head, count, path_bytes;
	int root_bare;          /* --files-from without ".": the root is no entry of its own */
	struct prune prune;     /* -m: what is known of the directories ahead */
	uint16_t prune_si;      /* ... and the source they are in */
	dev_t root_dev;         /* -x: the file system of the source being walked, */
	int root_src;           /* and which source that is (-1: none yet) */
	struct meta_wait *mw;   /* owned, PROTO_META_PENDING entries */
	size_t mw_head, mw_count, mw_bytes;
	struct done_delta done[DONE_DELTAS];
	size_t done_next;
	unsigned pull_deltas;   /* signed, data not sent */
	unsigned sigs_wanted;   /* WANT_SIGs whose signature has not gone yet */
	uint32_t next_index;
	uint32_t decided;
	uint64_t wanted;        /* files the receiver asked for */
	unsigned since_poll;
	int have_result;
	struct msg m;           /* scratch for receiving */
	struct msg out;         /* scratch for sending */
	struct xmeta_src xs;    /* -o, -g, -X, -A: what XMETA says */
	struct hlinks hl;       /* -H: the link groups still open */
	struct msg xout;        /* an XMETA being sent */
	/* the directory of the last file opened for its data: files come
	 * directory by directory, so each directory is resolved (beneath the
	 * jail) once, not once per file */
	int pdir_fd;
	uint16_t pdir_src;
	char pdir[PATH_MAX_WIRE + 1];
};

static int local_path(const struct source *s, const char *wpath, char *out, size_t cap)
{
	if (path_join(out, cap, s->base, wpath) < 0 || strlen(out) > PATH_MAX_WIRE)
		return err_set(-ENAMETOOLONG, "%s: path too long", wpath);
	return 0;
}

/* The file opened non-blocking must be a regular one; then it is made
 * blocking again for the reads (F_SETFL 0: it was opened with no other flag
 * that F_SETFL changes). Its stat is the one the caller uses. Returns fd, or
 * closes it and fails. */
static int regular_or_close(int fd, const char *wpath, struct stat *st)
{
	int rc = 0;

	if (fstat(fd, st) < 0)
		rc = err_sys(-errno, "%s: fstat", wpath);
	else if (!S_ISREG(st->st_mode))
		rc = err_set(-EINVAL, "%s: no longer a regular file (replaced since it was "
			     "listed), not read", wpath);
	else if (fcntl(fd, F_SETFL, 0) < 0)
		rc = err_sys(-errno, "%s: fcntl", wpath);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

/* Opens a file of the source for reading, never through a symlink (but
 * push -L's), and never anything but a regular file: O_NONBLOCK, because a FIFO (or a device)
 * swapped in for the listed file by a local user would block open() until a
 * writer came, holding the session forever. */
static int open_source_file(struct sender *s, uint16_t si, const char *wpath, struct stat *st)
{
	char lp[PATH_MAX_WIRE + 1];
	const char *leaf;
	int rc = local_path(&s->srcs[si], wpath, lp, sizeof lp);
	if (rc < 0)
		return rc;
	const char *slash = strrchr(lp, '/');
	size_t dlen = slash ? (size_t)(slash - lp) : 0;
	leaf = slash ? slash + 1 : lp;
	/* what jail_open_parent would refuse in the leaf, for a cached parent */
	if (!leaf[0] || !strcmp(leaf, ".") || !strcmp(leaf, ".."))
		return err_set(-EINVAL, "%s: not a file name", wpath);
	if (s->pdir_fd < 0 || s->pdir_src != si || strlen(s->pdir) != dlen ||
	    memcmp(s->pdir, lp, dlen)) {
		if (s->pdir_fd >= 0)
			close(s->pdir_fd);
		s->pdir_fd = jail_open_parent(s->srcs[si].jail, lp, &leaf);
		if (s->pdir_fd < 0)   /* its directory went: the file is named first */
			return err_wrap(s->pdir_fd, "%s", wpath);
		s->pdir_src = si;
		memcpy(s->pdir, lp, dlen);
		s->pdir[dlen] = '\0';
	}
	int fd = openat(s->pdir_fd, leaf, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK |
			(s->o->follow == FOLLOW_ALL ? 0 : O_NOFOLLOW));
	if (fd < 0)
		return err_sys(-errno, "%s: open", wpath);
	return regular_or_close(fd, wpath, st);
}

/* --- incoming decisions --------------------------------------------------- */

static struct pending *ring_at(struct sender *s, size_t k)
{
	return &s->ring[(s->head + k) % s->cap];
}

static void ring_pop(struct sender *s)
{
	struct pending *p = ring_at(s, 0);
	s->path_bytes -= p->len;
	free(p->path);
	p->path = NULL;
	if (p->sig) {
		delta_sig_free(p->sig);
		free(p->sig);
		p->sig = NULL;
	}
	if (p->pd) {
		if (p->pd->sent && !p->pd->whole)
			s->pull_deltas--;
		free(p->pd->bits);
		free(p->pd);
		p->pd = NULL;
	}
	s->head = (s->head + 1) % s->cap;
	s->count--;
}

/* Drops the DIR_METAs the receiver has applied by now: those whose files
 * before them are all done (or skipped). */
static void metas_resolve(struct sender *s)
{
	uint32_t low = s->count ? ring_at(s, 0)->index : UINT32_MAX;

	while (s->mw_count && s->mw[s->mw_head].next <= low) {
		s->mw_bytes -= s->mw[s->mw_head].len;
		s->mw_head = (s->mw_head + 1) % PROTO_META_PENDING;
		s->mw_count--;
	}
}

/* A message the receiver may have to hold until the files listed before it
 * are done (a DIR_META, a hard link): counted while any is open. */
static void meta_wait_add(struct sender *s, size_t len)
{
	if (!s->count)
		return;
	struct meta_wait *w = &s->mw[(s->mw_head + s->mw_count) % PROTO_META_PENDING];
	w->next = s->next_index;
	w->len = (uint32_t)len;
	s->mw_bytes += len;
	s->mw_count++;
}

static int satisfied(struct sender *s, enum need need, size_t len)
{
	switch (need) {
	case NEED_FILE:
		return s->count < s->cap && s->path_bytes + len <= PROTO_WINDOW_PATH_BYTES;
	case NEED_META:
		metas_resolve(s);
		return s->mw_count < PROTO_META_PENDING && s->mw_bytes + len <= PROTO_META_PATH_BYTES;
	default:
		return s->count == 0;
	}
}

static struct pending *on_want(struct sender *s, uint32_t index)
{
	for (size_t k = 0; k < s->count; k++) {
		struct pending *p = ring_at(s, k);
		if (p->index == index && p->state == P_UNDECIDED) {
			p->state = P_WANTED;
			s->wanted++;
			return p;
		}
		if (p->index > index)
			break;
		if (p->state == P_UNDECIDED)
			p->state = P_SKIPPED;   /* decisions come in order */
	}
	err_set(-EBADMSG, "protocol: WANT for entry %u, which is not pending", index);
	return NULL;
}

/* A delta is computed only where this side may roll: a box (a daemon's
 * sender) never does, whatever a client asks. */
static int on_want_delta(struct sender *s, const struct m_want_delta *w)
{
	if (!s->o->do_delta)
		return err_set(-EBADMSG, "protocol: WANT_DELTA, but this side does not compute deltas");
	struct pending *p = on_want(s, w->index);
	if (!p)
		return -EBADMSG;
	if (!(p->sig = malloc(sizeof *p->sig)))
		return err_set(-ENOMEM, "out of memory");
	int rc = delta_sig_init(p->sig, w);
	if (rc < 0) {
		free(p->sig);
		p->sig = NULL;
	}
	return rc;
}

/* WANT_SIG (a box's sender, on a pull): the signature goes out from
 * pump(), between files, never in the middle of one. */
static int on_want_sig(struct sender *s, uint32_t index)
{
	if (!s->o->send_sig)
		return err_set(-EBADMSG, "protocol: WANT_SIG, but this side sends no block hashes");
	struct pending *p = on_want(s, index);
	if (!p)
		return -EBADMSG;
	if (!(p->pd = calloc(1, sizeof *p->pd)))
		return err_set(-ENOMEM, "out of memory");
	s->sigs_wanted++;
	return 0;
}

/* FILE_SIG and the signature of one file, or FILE_SIG(block 0): whole. */
static int sign_one(struct sender *s, struct pending *p)
{
	struct pull_delta *pd = p->pd;
	struct msg m = { .type = MSG_FILE_SIG };
	struct stat sb;
	int fd = open_source_file(s, p->src, p->path, &sb), rc;
	uint64_t size = fd >= 0 ? (uint64_t)sb.st_size : 0;

	pd->sent = 1;
	s->sigs_wanted--;
	pd->d.block = delta_block_size(size);
	pd->d.n = (uint32_t)(size / pd->d.block);
	if (fd < 0 || size < DELTA_MIN_FILE || s->pull_deltas >= MAX_PULL_DELTAS ||
	    size / pd->d.block > DELTA_MAX_BLOCKS || !(pd->bits = calloc(pd->d.n / 8 + 1, 1))) {
		pd->whole = 1;
		if (fd >= 0)
			close(fd);
		m.u.want_delta = (struct m_want_delta){ .index = p->index };
		return conn_send(s->c, &m);
	}
	pd->d = (struct delta_need){ .path = p->path, .size = size, .block = pd->d.block,
				     .n = pd->d.n, .bits = pd->bits, .hash = pd->hash };
	s->pull_deltas++;
	rc = delta_file_sig_send(s->c, fd, p->index, size, pd->hash);
	uint8_t want[MSG_HASH_LEN];
	if (rc == 0 && filedata_stored(s->c, fd, want))
		pd->d.damaged = memcmp(want, pd->hash, MSG_HASH_LEN) != 0;
	close(fd);
	return rc;
}

/* The signatures WANT_SIG asked for go out between files. */
static int send_sigs(struct sender *s)
{
	for (size_t k = 0; s->sigs_wanted && k < s->count; k++) {
		struct pending *p = ring_at(s, k);
		int rc;
		if (p->pd && !p->pd->sent && (rc = sign_one(s, p)) < 0)
			return rc;
	}
	return 0;
}

static struct pending *pull_delta_of(struct sender *s, uint32_t index)
{
	for (size_t k = 0; k < s->count; k++) {
		struct pending *p = ring_at(s, k);
		if (p->index == index && p->pd && p->pd->sent && !p->pd->whole)
			return p;
	}
	return NULL;
}

/* NEED / NEED_END: the blocks the receiver lacks, checked against the
 * signature this side sent, as bits. */
static int on_need(struct sender *s, const struct msg *m)
{
	uint32_t index = m->type == MSG_NEED_END ? m->u.index.index : m->u.need.index;
	struct pending *p = pull_delta_of(s, index);

	if (!p || p->pd->need_done)
		return err_set(-EBADMSG, "protocol: %s for entry %u, which has no signature out",
			       msg_type_name(m->type), index);
	if (m->type == MSG_NEED_END) {
		p->pd->need_done = 1;
		return 0;
	}
	const struct m_need *n = &m->u.need;
	if (n->block >= p->pd->d.n || n->count > p->pd->d.n - n->block)
		return err_set(-EBADMSG, "protocol: NEED of blocks %u+%u of %u", n->block, n->count,
			       p->pd->d.n);
	for (uint32_t k = n->block; k < n->block + n->count; k++)
		p->pd->bits[k / 8] |= (uint8_t)(1u << (k % 8));
	return 0;
}

static int on_sig(struct sender *s, const struct m_sig *m)
{
	for (size_t k = 0; k < s->count; k++) {
		struct pending *p = ring_at(s, k);
		if (p->index == m->index && p->sig)
			return delta_sig_add(p->sig, m);
	}
	return err_set(-EBADMSG, "protocol: SIG for entry %u, which asked for no delta", m->index);
}

static int send_whole(struct sender *s, uint16_t si, const char *path, uint32_t index);

/* REDO: a delta that did not verify goes again, whole. */
static int on_redo(struct sender *s, uint32_t index)
{
	for (size_t i = 0; i < DONE_DELTAS; i++) {
		struct done_delta *d = &s->done[i];
		if (d->path && d->index == index) {
			char *path = d->path;
			d->path = NULL;
			int rc = send_whole(s, d->src, path, index);
			free(path);
			return rc;
		}
	}
	return filedata_send_failed(s->c, index);   /* forgotten: the receiver counts it */
}

static int remember_delta(struct sender *s, const struct pending *p)
{
	struct done_delta *d = &s->done[s->done_next];
	s->done_next = (s->done_next + 1) % DONE_DELTAS;
	free(d->path);
	d->index = p->index;
	d->src = p->src;
	d->path = strdup(p->path);
	return d->path ? 0 : err_set(-ENOMEM, "out of memory");
}

static int handle(struct sender *s, const struct msg *m)
{
	switch (m->type) {
	case MSG_WANT:
		return on_want(s, m->u.index.index) ? 0 : -EBADMSG;
	case MSG_WANT_DELTA:
		return on_want_delta(s, &m->u.want_delta);
	case MSG_SIG:
		return on_sig(s, &m->u.sig);
	case MSG_REDO:
		return on_redo(s, m->u.index.index);
	case MSG_WANT_SIG:
		return on_want_sig(s, m->u.index.index);
	case MSG_NEED:
	case MSG_NEED_END:
		return on_need(s, m);
	case MSG_DECIDED:
		s->decided = m->u.index.index;
		return 0;
	case MSG_CHANGE:
		if (s->h->change)
			s->h->change(s->h->ctx, m->u.change.kind, m->u.change.bits, m->u.change.path,
				     m->u.change.target[0] ? m->u.change.target : NULL);
		return 0;
	case MSG_RESULT:
		/* The receiver's counts are the exact ones: what it committed,
		 * compared, kept and deleted, and every failure once (its own and
		 * those this side sent in END). */
		s->have_result = 1;
		s->st->errors = m->u.result.errors;
		s->st->files_sent = m->u.result.files;
		s->st->bytes_committed = m->u.result.bytes;
		s->st->files_skipped = m->u.result.uptodate;
		s->st->files_kept = m->u.result.kept;
		s->st->deleted = m->u.result.deleted;
		/* a count the request did not ask for is not the server's to say */
		s->st->del_skipped = (s->o->flags & REQ_MAX_DELETE) ? m->u.result.del_skipped : 0;
		/* this side's own words for a failure it saw (open: Permission
		 * denied) say more than the receiver's ("could not read it") */
		if (m->u.result.errors && !s->st->first_error[0])
			snprintf(s->st->first_error, sizeof s->st->first_error, "%s",
				 m->u.result.message);
		return 0;
	default:
		return err_set(-EBADMSG, "protocol: unexpected %s message from the receiver",
			       msg_type_name(m->type));
	}
}

static int recv_one(struct sender *s)
{
	int rc = conn_recv(s->c, &s->m);
	return rc < 0 ? rc : handle(s, &s->m);
}

/* --- sending files -------------------------------------------------------- */

static int send_xmeta_fd(struct sender *s, int fd, const struct stat *st, const char *wpath);

/* A file written to while it was read may reach the other side as a mix of
 * old and new data (its hash is of what was read): said, as borg and
 * restic do. The copy keeps the mtime from before the read, so the next run
 * sends it again. A file read in one piece (up to a record) is not checked:
 * a box's pull of many small files pays no syscall more for it. */
static void changed_while_read(int fd, const struct stat *before, const char *path)
{
	struct stat now;

	if (before->st_size <= 256 * 1024 || fstat(fd, &now) < 0)
		return;
	if (now.st_size != before->st_size || now.st_mtim.tv_sec != before->st_mtim.tv_sec ||
	    now.st_mtim.tv_nsec != before->st_mtim.tv_nsec)
		log_warn("%s: changed while it was read: the copy may mix old and new data "
			 "(the next run sends it again)", path);
}

static int send_whole(struct sender *s, uint16_t si, const char *path, uint32_t index)
{
	struct progress *pg = s->h->progress;
	struct stat sb;
	int fd = open_source_file(s, si, path, &sb);
	int rc;

	if (fd < 0) {
		s->st->vanished += fd == -ENOENT;
		xfer_note(s->st, "%s", err_msg());   /* the receiver counts it (FILE_END) */
		return filedata_send_unopened(s->c, index, fd, s->o->flags2);
	}
	if ((rc = send_xmeta_fd(s, fd, &sb, path)) < 0) {
		close(fd);
		return rc;
	}
	rc = filedata_send(s->c, fd, &sb, index, path, s->st, pg);
	if (rc == 0)
		changed_while_read(fd, &sb, path);
	close(fd);
	if (pg && rc == 0)
		progress_file_done(pg);
	return rc;
}

/* A delta, either way round, once what it needs from the receiver is here:
 * the whole signature of the receiver's basis (push, WANT_DELTA), or every
 * NEED for the blocks of the signature this side sent (pull, WANT_SIG). */
static int send_delta(struct sender *s, struct pending *p)
{
	struct progress *pg = s->h->progress;
	int rc = conn_flush(s->c);

	while (rc == 0 && (p->pd ? !p->pd->need_done : !delta_sig_coarse_done(p->sig)))
		rc = recv_one(s);
	if (rc < 0)
		return rc;
	struct stat sb;
	int fd = open_source_file(s, p->src, p->path, &sb);
	if (fd < 0) {
		s->st->vanished += fd == -ENOENT;
		xfer_note(s->st, "%s", err_msg());
		return filedata_send_unopened(s->c, p->index, fd, s->o->flags2);
	}
	/* two levels: pass one with the coarse entries, then the fine ones
	 * it asked for (one round trip) */
	if (!p->pd && (rc = delta_refine(s->c, fd, p->sig)) == 0)
		while (rc == 0 && !delta_sig_ready(p->sig))
			rc = recv_one(s);
	if (rc < 0 || (rc = send_xmeta_fd(s, fd, &sb, p->path)) < 0) {
		close(fd);
		return rc;
	}
	rc = p->pd ? delta_send_needed(s->c, fd, p->index, &p->pd->d, s->st, pg)
		   : delta_send(s->c, fd, p->index, p->path, p->sig, s->st, pg);
	if (rc == 0)
		changed_while_read(fd, &sb, p->path);
	close(fd);
	if (rc == 0)
		rc = remember_delta(s, p);
	if (pg && rc == 0)
		progress_file_done(pg);
	return rc;
}

static int send_wanted(struct sender *s, struct pending *p)
{
	int rc;

	if (p->pd && !p->pd->sent && (rc = sign_one(s, p)) < 0)
		return rc;
	if ((p->pd && !p->pd->whole) || p->sig)
		return send_delta(s, p);
	return send_whole(s, p->src, p->path, p->index);
}

/* Serves what the receiver asked for and reads its decisions, until `need`
 * is met (a correct sender never exceeds a window limit: the receiver would
 * end the session). */
static int pump(struct sender *s, enum need need, size_t len)
{
	int rc;

	for (;;) {
		if ((rc = send_sigs(s)) < 0)
			return rc;
		while (s->count) {
			struct pending *p = ring_at(s, 0);
			if (p->state == P_UNDECIDED && p->index < s->decided)
				p->state = P_SKIPPED;
			if (p->state == P_SKIPPED) {
				ring_pop(s);
				continue;
			}
			if (p->state != P_WANTED)
				break;
			rc = send_wanted(s, p);
			if (rc < 0)
				return rc;
			ring_pop(s);
		}
		int ok = satisfied(s, need, len);
		/* Peek for decisions only every 64th time: a peek (a recv and a
		 * poll) per entry cost as much as the entry's own fstatat. */
		if (ok && ++s->since_poll < 64)
			return 0;
		if (ok) {
			s->since_poll = 0;
			if (!conn_pending(s->c))
				return 0;
		}
		if (!ok && (rc = conn_flush(s->c)) < 0)
			return rc;
		if ((rc = recv_one(s)) < 0)
			return rc;
	}
}

/* --- the walk ------------------------------------------------------------- */

static int entry_type(mode_t mode)
{
	if (S_ISREG(mode))
		return ENT_REG;
	if (S_ISDIR(mode))
		return ENT_DIR;
	if (S_ISLNK(mode))
		return ENT_LNK;
	if (S_ISCHR(mode) || S_ISBLK(mode) || S_ISFIFO(mode) || S_ISSOCK(mode))
		return ENT_SPECIAL;
	return 0;
}

/* -D: devices with --devices, FIFOs and sockets with --specials */
static int special_wanted(const struct sender *s, mode_t mode)
{
	return (S_ISCHR(mode) || S_ISBLK(mode)) ? !!(s->o->flags & REQ_DEVICES)
						 : !!(s->o->flags & REQ_SPECIALS);
}

static uint32_t wire_type_of(mode_t mode)
{
	return S_ISCHR(mode) ? WIRE_IFCHR : S_ISBLK(mode) ? WIRE_IFBLK :
	       S_ISFIFO(mode) ? WIRE_IFIFO : WIRE_IFSOCK;
}

/* XMETA for the entry at `at` (before its ENTRY, DIR_META or FILE_BEGIN). */
static int send_xmeta(struct sender *s, const struct xa_at *at, uint32_t uid, uint32_t gid,
		      const char *wpath)
{
	if (!xmeta_describe(&s->xs, at, uid, gid, wpath, s->st, &s->xout))
		return 0;
	return conn_send(s->c, &s->xout);
}

/* -H: a file with other links is the first of its group (ENT_LINK_FIRST,
 * while there is room for one more open group) or another name of a group
 * already sent (ENT_LINK_TO: returns 1, and it goes without data). */
static int hard_link_of(struct sender *s, int dfd, const char *name, const char *wpath,
			struct m_entry *e)
{
	struct stat full;
	size_t len = strlen(wpath);

	if (fs_stat_entry(dfd, name, &full, s->o->follow) < 0 || !S_ISREG(full.st_mode) ||
	    full.st_nlink < 2)
		return 0;   /* changed since listed: sent as it was listed */
	struct hlink_group *g = hlinks_find(&s->hl, (uint64_t)full.st_dev, (uint64_t)full.st_ino);
	if (g) {
		e->flags |= ENT_LINK_TO;
		e->link = g->first;
		hlinks_seen(&s->hl, g);
		return 1;
	}
	if (!hlinks_room(&s->hl, len))
		return 0;   /* too many groups open: this one travels as its own file */
	uint32_t left = full.st_nlink - 1 > UINT32_MAX ? UINT32_MAX : (uint32_t)(full.st_nlink - 1);
	/* following links (-L, -k), a file may be met by more names than its
	 * link count (a link to it, a linked directory): the group stays open
	 * to the end (the receiver keeps the same count), as far as there is
	 * room for groups */
	if (s->o->follow)
		left = UINT32_MAX;
	e->flags |= ENT_LINK_FIRST;
	e->link = left;
	return hlinks_add(&s->hl, (uint64_t)full.st_dev, (uint64_t)full.st_ino, s->next_index, left,
			  (uint32_t)len, NULL);
}

/* Another name of a group already sent: the receiver links it once the
 * files before it are done, so it is held as a DIR_META is (PROTOCOL.md
 * 4.1: the same limits, counted the same way). */
static int send_follower(struct sender *s, const struct xa_at *at, const struct dent_stat *st,
			 const char *wpath)
{
	size_t len = strlen(wpath);
	int rc = pump(s, NEED_META, len);

	if (rc < 0)
		return rc;
	meta_wait_add(s, len);
	s->st->files_seen++;
	s->st->bytes_total += s->out.u.entry.size;   /* rsync's total counts every name */
	if (s->h->entry)
		s->h->entry(s->h->ctx, ENT_REG, s->out.u.entry.mode, s->out.u.entry.size,
			    s->out.u.entry.mtime_s, wpath, "");
	s->next_index++;
	if ((rc = send_xmeta(s, at, st->st_uid, st->st_gid, wpath)) < 0)
		return rc;
	return conn_send(s->c, &s->out);
}

/* What this side could not send: counted, logged, and (a push's client) one
 * FAILED line, as the receiver gives for the files it could not write. */
__attribute__((format(printf, 3, 4)))
static void sender_failed(struct sender *s, const char *wpath, const char *fmt, ...)
{
	char line[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	xfer_error(s->st, "%s", line);
	if (s->h->change)
		s->h->change(s->h->ctx, CHG_ERROR, 0, wpath[0] ? wpath : ".", NULL);
}

/* XMETA of an open file or directory (its FILE_BEGIN or DIR_META follows). */
static int send_xmeta_fd(struct sender *s, int fd, const struct stat *known, const char *wpath)
{
	struct xa_at at = { .fd = fd, .dirfd = -1, .name = NULL };
	struct fake_stat fs;
	struct stat st;

	if (!(s->o->flags & REQ_XMETA))
		return 0;
	if (known)   /* the caller's fstat of this fd */
		st = *known;
	else if (fstat(fd, &st) < 0) {
		sender_failed(s, wpath, "%s: fstat: %s", wpath, strerror(errno));
		return 0;
	}
	if (s->o->fake_super && fake_stat_read(&at, &fs)) {
		st.st_uid = fs.uid;
		st.st_gid = fs.gid;
	}
	return send_xmeta(s, &at, st.st_uid, st.st_gid, wpath);
}

/* A fake-super symlink: the target is the placeholder file's contents. */
static ssize_t read_placeholder(int dfd, const char *name, char target[MSG_MAX_PATH + 1])
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, target, MSG_MAX_PATH);
	close(fd);
	return n > 0 && !memchr(target, 0, (size_t)n) ? n : -1;
}

/* Under fake super (a module's), what the entry really is was kept in an
 * xattr: its type, mode, device and owner replace the placeholder's. */
static void fake_view(const struct sender *s, const struct xa_at *at, struct dent_stat *st,
		      uint32_t *major, uint32_t *minor)
{
	struct fake_stat fs;

	if (!s->o->fake_super || !fake_stat_read(at, &fs))
		return;
	uint32_t fmt = fs.mode & WIRE_IFMT;
	mode_t type = fmt == WIRE_IFCHR ? S_IFCHR : fmt == WIRE_IFBLK ? S_IFBLK :
		      fmt == WIRE_IFIFO ? S_IFIFO : fmt == WIRE_IFSOCK ? S_IFSOCK :
		      fmt == 0120000u ? S_IFLNK : st->st_mode & S_IFMT;
	/* a placeholder (a regular file) may stand for a special file; a real
	 * directory or link stays what it is */
	if (type != (st->st_mode & S_IFMT) && !S_ISREG(st->st_mode))
		type = st->st_mode & S_IFMT;
	st->st_mode = type | (fs.mode & 07777);
	st->st_uid = fs.uid;
	st->st_gid = fs.gid;
	if (!S_ISREG(type))
		st->st_size = 0;
	*major = fs.major;
	*minor = fs.minor;
}

static int hash_file(struct sender *s, uint16_t si, const char *wpath, uint8_t out[MSG_HASH_LEN])
{
	struct stat sb;
	int fd = open_source_file(s, si, wpath, &sb);
	if (fd < 0)
		return fd;
	int rc = filedata_hash_fd(fd, out, s->c);
	close(fd);
	return rc;
}

/* Sends one ENTRY; dfd is the directory holding it (for readlink). */
static int emit_entry(struct sender *s, uint16_t si, int dfd, const char *name,
		      const char *wpath, const struct dent_stat *st_listed)
{
	struct m_entry *e = &s->out.u.entry;
	struct dent_stat stv = *st_listed, *st = &stv;
	struct xa_at at = { .fd = -1, .dirfd = dfd, .name = name,
			    .follow = s->o->follow == FOLLOW_ALL };
	uint32_t major = 0, minor = 0;
	int rc;

	fake_view(s, &at, st, &major, &minor);
	int type = entry_type(st->st_mode);
	if (type == ENT_LNK && s->o->follow == FOLLOW_ALL) {   /* its target is gone, as rsync says */
		sender_failed(s, wpath, "symlink has no referent: \"%s\"", wpath);
		return 0;
	}
	if (!type || (type == ENT_SPECIAL && !special_wanted(s, st->st_mode))) {
		/* said by default on the PC (do_delta: the PC's sender), as rsync's
		 * --info=nonreg; a box's log gets it with -v only */
		if (s->o->do_delta)
			log_warn("skipping non-regular file \"%s\"", wpath);
		else
			log_info("skipping non-regular file \"%s\"", wpath);
		return 0;
	}
	if (type == ENT_SPECIAL && !s->o->fake_super) {
		struct stat full;
		if (fs_stat_entry(dfd, name, &full, s->o->follow) < 0 ||
		    (full.st_mode & S_IFMT) != (st->st_mode & S_IFMT)) {
			sender_failed(s, wpath, "%s: changed while listed, not sent", wpath);
			return 0;
		}
		major = major(full.st_rdev);
		minor = minor(full.st_rdev);
	}
	s->out.type = MSG_ENTRY;
	memset(e, 0, offsetof(struct m_entry, name));
	e->type = (uint8_t)type;
	e->mode = st->st_mode & 07777;
	if (type == ENT_SPECIAL) {
		e->mode |= wire_type_of(st->st_mode);
		e->rdev_major = major;
		e->rdev_minor = minor;
	}
	e->size = type == ENT_REG ? (uint64_t)st->st_size : 0;
	e->mtime_s = st->st_mtim.tv_sec;
	e->mtime_ns = (uint32_t)st->st_mtim.tv_nsec;
	snprintf(e->name, sizeof e->name, "%s", name);
	e->target[0] = '\0';
	if (type == ENT_LNK) {
		/* under fake super a link may be kept as a file holding its target */
		ssize_t n = S_ISLNK(st_listed->st_mode) ? readlinkat(dfd, name, e->target, MSG_MAX_PATH)
							: read_placeholder(dfd, name, e->target);
		if (n < 0 || n >= MSG_MAX_PATH) {
			sender_failed(s, wpath, "%s: readlink failed or target too long", wpath);
			return 0;
		}
		e->target[n] = '\0';
		s->st->links++;
	}
	if (type == ENT_REG && st->st_nlink > 1 && (s->o->flags & REQ_HARD_LINKS)) {
		int follower = hard_link_of(s, dfd, name, wpath, e);
		if (follower < 0)
			return follower;
		if (follower)
			return send_follower(s, &at, st, wpath);
	}
	if (type == ENT_REG) {
		size_t len = strlen(wpath);
		if ((rc = pump(s, NEED_FILE, len)) < 0)
			return rc;
		if ((s->o->flags & REQ_CHECKSUM) && hash_file(s, si, wpath, e->hash) == 0)
			e->flags |= ENT_HAS_HASH;
		struct pending *p = ring_at(s, s->count);
		p->index = s->next_index;
		p->state = P_UNDECIDED;
		p->src = si;
		p->len = (uint32_t)len;
		p->path = strdup(wpath);
		if (!p->path)
			return err_set(-ENOMEM, "out of memory");
		s->path_bytes += len;
		s->count++;
		s->st->files_seen++;
		s->st->bytes_total += e->size;
	}
	if (type == ENT_DIR)
		s->st->dirs++;
	if (s->h->entry)
		s->h->entry(s->h->ctx, type, e->mode, e->size, e->mtime_s, wpath, e->target);
	s->next_index++;
	/* a directory's own XMETA goes with its DIR_META, after its subtree */
	if (type != ENT_DIR && (rc = send_xmeta(s, &at, st->st_uid, st->st_gid, wpath)) < 0)
		return rc;
	return conn_send(s->c, &s->out);
}

static int send_dir_msg(struct sender *s, uint8_t type, uint8_t flags, const char *path,
			const struct stat *st)
{
	s->out.type = type;
	/* the root of "src/" is a directory of the transfer, as in rsync's count */
	if (type == MSG_DIR_BEGIN && !path[0] && !(flags & DIRB_SYNTHETIC))
		s->st->dirs++;
	if (type == MSG_DIR_BEGIN) {
		s->out.u.dir_begin.flags = flags;
		snprintf(s->out.u.dir_begin.path, sizeof s->out.u.dir_begin.path, "%s", path);
	} else if (type == MSG_DIR_META) {
		s->out.u.dir_meta.mode = st->st_mode & 07777;
		s->out.u.dir_meta.mtime_s = st->st_mtim.tv_sec;
		s->out.u.dir_meta.mtime_ns = (uint32_t)st->st_mtim.tv_nsec;
		snprintf(s->out.u.dir_meta.path, sizeof s->out.u.dir_meta.path, "%s", path);
	}
	return conn_send(s->c, &s->out);
}

/* DIR_META after a directory's subtree. Files listed before it that are not
 * done yet make the receiver hold it; that is bounded (PROTOCOL.md 4.1), so
 * first wait for room. */
static int send_meta(struct sender *s, uint16_t si, const char *path, const struct stat *st_listed)
{
	size_t len = strlen(path);
	struct stat stv = *st_listed, *st = &stv;
	int rc = pump(s, NEED_META, len);

	if (rc < 0)
		return rc;
	if (!(s->o->flags & (REQ_XATTRS | REQ_ACLS)) && !s->o->fake_super) {
		/* owner and group only: the listing's stat has them */
		struct xa_at none = { .fd = -1, .dirfd = -1, .name = NULL };
		if ((rc = send_xmeta(s, &none, st->st_uid, st->st_gid, path)) < 0)
			return rc;
	} else {
		char lp[PATH_MAX_WIRE + 1];
		int dfd = local_path(&s->srcs[si], path, lp, sizeof lp) < 0 ? -1 :
			  jail_open_dir(s->srcs[si].jail, lp, O_RDONLY);
		struct fake_stat fs;
		if (dfd >= 0 && s->o->fake_super &&
		    fake_stat_read(&(struct xa_at){ .fd = dfd, .dirfd = -1 }, &fs) &&
		    (fs.mode & WIRE_IFMT) == 0040000u)
			stv.st_mode = S_IFDIR | (fs.mode & 07777);
		if (dfd >= 0)
			rc = send_xmeta_fd(s, dfd, NULL, path);
		else
			xfer_error(s->st, "%s: %s (its owner and xattrs not sent)", path, err_msg());
		if (dfd >= 0)
			close(dfd);
		if (rc < 0)
			return rc;
	}
	meta_wait_add(s, len);
	return send_dir_msg(s, MSG_DIR_META, 0, path, st);
}

/* Takes out of a listing what is never sent: files in progress, partials
 * (resume), and what the filter rules exclude (an excluded directory is then
 * not descended into either). The directory wpath must be entered. */
/* ferry's own files in progress: a temporary (a regular file or a link) or
 * a tagged partial; a user's look-alike is sent as any file. */
static int ours_in_progress(int dfd, const struct dirent_info *e)
{
	if (S_ISREG(e->st.st_mode) || S_ISLNK(e->st.st_mode)) {
		if (fs_is_tmp_name(e->name))
			return 1;
		return S_ISREG(e->st.st_mode) && fs_partial_ours(dfd, e->name);
	}
	return 0;
}

/* --files-from, -R: what the list says of entry e of directory wpath (its
 * path into child). A link to a directory listed as "dir/", or on the way to
 * something listed (even when listed itself), is that directory, as rsync's
 * implied directories are; e's stat becomes the directory's. */
static enum pathset_want listed(const struct sender *s, int dfd, const char *wpath,
				struct dirent_info *e, char child[PATH_MAX_WIRE + 1])
{
	int link = S_ISLNK(e->st.st_mode);
	struct stat t;

	if (path_join(child, PATH_MAX_WIRE + 1, wpath, e->name) < 0)
		return PATHSET_NO;
	enum pathset_want w = pathset_wants(s->o->files_from, child, S_ISDIR(e->st.st_mode) || link);
	if (link && w == PATHSET_LISTED && fstatat(dfd, e->name, &t, 0) == 0 &&
	    S_ISDIR(t.st_mode) && pathset_link_on_way(s->o->files_from, child)) {
		e->st = dent_stat_of(&t);
		return PATHSET_IMPLIED;
	}
	if (link && (w == PATHSET_LISTED_DIR || w == PATHSET_IMPLIED)) {
		if (fstatat(dfd, e->name, &t, 0) < 0 || !S_ISDIR(t.st_mode))
			return w == PATHSET_IMPLIED ? PATHSET_NO : w;
		e->st = dent_stat_of(&t);
	}
	return w;
}

static void drop_unsent(const struct sender *s, uint16_t si, int dfd, struct dirlist *l,
			const char *wpath)
{
	const struct xfer_opts *o = s->o;
	char child[PATH_MAX_WIRE + 1];
	size_t k = 0;

	for (size_t i = 0; i < l->n; i++) {
		struct dirent_info *e = &l->ents[i];
		int dir = S_ISDIR(e->st.st_mode);
		if (ours_in_progress(dfd, e))
			continue;
		if (o->files_from) {
			enum pathset_want w = listed(s, dfd, wpath, e, child);
			if (w == PATHSET_NO)
				continue;
			dir = S_ISDIR(e->st.st_mode);
			if (w == PATHSET_IMPLIED) {   /* as rsync: no rule is asked of it */
				l->ents[k++] = *e;
				continue;
			}
		}
		if ((o->filter || o->module_filter) &&
		    path_join(child, sizeof child, wpath, e->name) == 0 &&
		    (xfilter_excluded(o->filter, FILTER_SENDER, child, dir) ||
		     xfilter_module_excluded(o->module_filter, s->srcs[si].base, child, dir)))
			continue;
		l->ents[k++] = *e;
	}
	l->n = k;
}

/* A named source (rsync's "src", no trailing slash) the rules exclude. */
static int excluded_top(const struct sender *s, size_t i, const struct stat *st)
{
	const struct source *src = &s->srcs[i];
	int dir = S_ISDIR(st->st_mode);

	return src->top[0] && (xfilter_excluded(s->o->filter, FILTER_SENDER, src->top, dir) ||
			       xfilter_module_excluded(s->o->module_filter, src->base, src->top, dir));
}

/* Following links (-L, -k), a directory that is one of its own ancestors
 * again: said, and not descended (rsync goes round until the path is too
 * long). */
static int link_loop(struct sender *s, const struct dirstack *d, const struct stat *st,
		     const char *wpath)
{
	const struct dirlevel *v = s->o->follow ? dirstack_find(d, st->st_dev, st->st_ino) : NULL;

	if (v)
		sender_failed(s, wpath, "%s: a symlink loop (the same directory as \"%.*s\"), "
			      "not descended", wpath, v->plen ? (int)v->plen : 1,
			      v->plen ? d->path : ".");
	return v != NULL;
}

/* -x: whether the directory d->path (stat dst) is on another file system
 * than its source's root. With -R and --files-from each listed path is a
 * source of its own, as rsync's, and a directory on the way to one belongs
 * to none. */
static int other_fs(const struct sender *s, const struct dirstack *d, const struct stat *dst)
{
	const struct pathset *ps = s->o->files_from;

	if (!ps)
		return dst->st_dev != s->root_dev;
	if (pathset_is_listed(ps, d->path, strlen(d->path)))
		return 0;
	for (size_t i = d->n; i-- > 0;)   /* the nearest listed ancestor */
		if (pathset_is_listed(ps, d->path, d->lv[i].plen))
			return dst->st_dev != d->lv[i].st.st_dev;
	return 0;
}

/* An entry of no type ferry knows: never sent, nor said. (A FIFO without
 * -D is in rsync's file list, and keeps its directory under -m, as there; a
 * link with no referent under -L keeps it too, so that the walk says it.) */
static int never_sent(const struct dent_stat *st)
{
	return !entry_type(st->st_mode);
}

/* -m's look ahead, -x: a directory whose contents the walk would not send
 * (another file system than the directory it is in, which is that of its
 * source: the walk goes no further; with -R and --files-from a listed path
 * is a source of its own and a directory on the way belongs to none). */
static int prune_other_fs(const struct sender *s, const char *wpath, const struct stat *parent,
			  const struct stat *st)
{
	const struct pathset *ps = s->o->files_from;

	if (!(s->o->flags & REQ_ONE_FS) || !parent || st->st_dev == parent->st_dev)
		return 0;
	if (!ps)
		return 1;
	if (pathset_is_listed(ps, wpath, strlen(wpath)))
		return 0;
	for (size_t i = strlen(wpath); i-- > 0;)
		if (wpath[i] == '/' && pathset_is_listed(ps, wpath, i))
			return 1;
	return pathset_is_listed(ps, "", 0);
}

/* -m's look ahead: the directory wpath as walk_list would send it. */
static int prune_list(void *ctx, const char *wpath, const struct stat *parent, struct dirlist *l,
		      struct stat *st)
{
	struct sender *s = ctx;
	uint16_t si = s->prune_si;
	char lp[PATH_MAX_WIRE + 1];
	int rc = local_path(&s->srcs[si], wpath, lp, sizeof lp);
	int dfd = rc < 0 ? rc : jail_open_dir(s->srcs[si].jail, lp, O_RDONLY);

	if (dfd < 0)
		return dfd;
	rc = dirlist_read_as(dfd, l, s->o->follow);
	if (rc == 0 && fstat(dfd, st) < 0)
		rc = -errno;
	if (rc == 0 && xfilter_goto(s->o->filter, wpath) < 0)
		rc = -EIO;
	if (rc == 0) {
		if (prune_other_fs(s, wpath, parent, st))
			l->n = 0;   /* -x: what is in a mount point is not sent */
		drop_unsent(s, si, dfd, l, wpath);
		size_t k = 0;
		for (size_t i = 0; i < l->n; i++)
			if (!never_sent(&l->ents[i].st))
				l->ents[k++] = l->ents[i];
		l->n = k;
	}
	close(dfd);
	if (rc < 0)
		dirlist_free(l);
	return rc;
}

/* -m looks ahead in source si: what it knows of another is forgotten. */
static void prune_in(struct sender *s, uint16_t si)
{
	if (s->prune_si != si)
		prune_forget(&s->prune);
	s->prune_si = si;
}

/* -m: the subdirectories of wpath's listing l (wpath's stat: dst) under
 * which nothing but directories would be sent are left out, as rsync's
 * --prune-empty-dirs. */
static void prune_listing(struct sender *s, uint16_t si, struct dirlist *l, const char *wpath,
			  const struct stat *dst)
{
	char child[PATH_MAX_WIRE + 1];
	size_t k = 0;

	prune_in(s, si);
	for (size_t i = 0; i < l->n; i++)
		if (!S_ISDIR(l->ents[i].st.st_mode) ||
		    path_join(child, sizeof child, wpath, l->ents[i].name) < 0 ||
		    prune_has_file(&s->prune, child, dst))
			l->ents[k++] = l->ents[i];
	l->n = k;
	if (xfilter_goto(s->o->filter, wpath) < 0)   /* back to this listing's rules */
		xfer_error(s->st, "%s: %s", wpath[0] ? wpath : ".", err_msg());
}

/* Lists the directory open as dfd, whose wire path is d->path: DIR_BEGIN, an
 * ENTRY per child, DIR_END. Its listing then stays on the stack for the
 * descent into its subdirectories (unless the walk is one level only). */
static int walk_list(struct sender *s, uint16_t si, struct dirstack *d, int dfd, uint8_t flags)
{
	const char *wpath = d->path;
	struct dirlist l = { 0 };
	struct stat dst;
	char child[PATH_MAX_WIRE + 1];
	int rc = dirlist_read_as(dfd, &l, s->o->follow);

	if (rc < 0 || fstat(dfd, &dst) < 0) {
		sender_failed(s, wpath, "%s: cannot list directory: %s", wpath[0] ? wpath : ".",
			      rc < 0 ? err_msg() : "fstat failed");
		dirlist_free(&l);
		return 0;
	}
	if (link_loop(s, d, &dst, wpath)) {
		dirlist_free(&l);
		return 0;
	}
	if (xfilter_goto(s->o->filter, wpath) < 0) {   /* a bad dir-merge file here */
		xfer_error(s->st, "%s: not sent: %s", wpath[0] ? wpath : ".", err_msg());
		dirlist_free(&l);
		return 0;
	}
	if (s->root_src != (int)si) {   /* a source's first listing is its root */
		s->root_src = si;
		s->root_dev = dst.st_dev;
	} else if ((s->o->flags & REQ_ONE_FS) && other_fs(s, d, &dst)) {
		l.n = 0;   /* -x: a mount point is sent, what is in it is not */
		flags |= DIRB_PARTIAL;
	}
	/* a directory on the way to what -R or --files-from sends */
	if (s->o->files_from && !(flags & DIRB_SYNTHETIC) &&
	    !pathset_complete(s->o->files_from, wpath))
		flags |= DIRB_PARTIAL;
	drop_unsent(s, si, dfd, &l, wpath);
	if (s->o->prune)
		prune_listing(s, si, &l, wpath, &dst);
	rc = send_dir_msg(s, MSG_DIR_BEGIN, flags, wpath, NULL);
	for (size_t i = 0; rc == 0 && i < l.n; i++) {
		if (path_join(child, PATH_MAX_WIRE + 1, wpath, l.ents[i].name) < 0) {
			xfer_error(s->st, "%s/%s: path longer than %d bytes, skipped", wpath,
				   l.ents[i].name, PATH_MAX_WIRE);
			continue;
		}
		rc = emit_entry(s, si, dfd, l.ents[i].name, child, &l.ents[i].st);
	}
	if (rc == 0)
		rc = send_dir_msg(s, MSG_DIR_END, 0, NULL, NULL);
	if (rc == 0 && !(s->o->flags & REQ_NO_RECURSE))
		return dirstack_push(d, &l, &dst);
	dirlist_free(&l);
	return rc;
}

/* Opens the directory d->path through the jail and lists it. By path, not
 * relative to its parent's fd: the parent's fd is closed once listed, so the
 * walk holds one directory fd however deep it goes. */
static int walk_enter(struct sender *s, uint16_t si, struct dirstack *d)
{
	char lp[PATH_MAX_WIRE + 1];
	int rc = local_path(&s->srcs[si], d->path, lp, sizeof lp);
	if (rc < 0) {
		xfer_error(s->st, "%s", err_msg());
		return 0;
	}
	int dfd = jail_open_dir(s->srcs[si].jail, lp, O_RDONLY);
	if (dfd < 0) {
		sender_failed(s, d->path, "%s: %s", d->path, err_msg());
		return 0;
	}
	rc = walk_list(s, si, d, dfd, 0);
	close(dfd);
	return rc;
}

/* Walks what is below the listed directories on the stack, in the order
 * docs/PROTOCOL.md gives: a directory's subdirectories depth-first in listing
 * order, then its DIR_META, after its whole subtree. A loop, not a recursion:
 * the stack is on the heap (fs/dirlist.h). */
static int walk_below(struct sender *s, uint16_t si, struct dirstack *d)
{
	int rc = 0;

	while (rc == 0 && d->n) {
		if (dirstack_next_dir(d)) {
			rc = walk_enter(s, si, d);
			continue;
		}
		/* a bare root (--files-from) keeps its own mode and times */
		if (!(s->root_bare && d->n == 1))
			rc = send_meta(s, si, d->path, &dirstack_top(d)->st);
		dirstack_pop(d);
	}
	return rc;
}

/* The whole tree at wire path wpath; dfd is the directory when the caller
 * has it open already, else -1; flags are its listing's DIR_BEGIN flags. */
static int walk_tree(struct sender *s, uint16_t si, const char *wpath, int dfd, uint8_t flags)
{
	struct dirstack d;
	int rc;

	if (dirstack_init(&d, wpath) < 0) {
		xfer_error(s->st, "%s", err_msg());
		return 0;
	}
	rc = dfd >= 0 ? walk_list(s, si, &d, dfd, flags) : walk_enter(s, si, &d);
	if (rc == 0)
		rc = walk_below(s, si, &d);
	dirstack_free(&d);
	return rc;
}

/* -m: a named source directory with nothing to send below it is not sent
 * either, as with rsync. */
static void prune_tops(struct sender *s, struct stat *sts)
{
	if (!s->o->prune)
		return;
	for (size_t i = 0; i < s->nsrc; i++) {
		if (!S_ISDIR(sts[i].st_mode))
			continue;
		xfilter_place(s->o->filter, s->srcs[i].jail, s->srcs[i].base);
		prune_in(s, (uint16_t)i);
		if (!prune_has_file(&s->prune, s->srcs[i].top, NULL))
			sts[i].st_mode = 0;
	}
	xfilter_place(s->o->filter, s->srcs[0].jail, s->srcs[0].base);
	if (xfilter_goto(s->o->filter, "") < 0)
		xfer_error(s->st, "not sent: %s", err_msg());
}

/* The root listing: the named sources themselves (rsync's "src"), or with one
 * source ending in '/', that directory's contents. */
static int walk_root(struct sender *s)
{
	const struct source *src = &s->srcs[0];
	int rc;

	xfilter_place(s->o->filter, src->jail, src->base);
	if (s->nsrc == 1 && !src->top[0]) {
		int dfd = jail_open_dir(src->jail, src->base, O_RDONLY);
		if (dfd < 0)
			return dfd;
		/* --files-from: the root is sent as an entry only when listed
		 * ("."); else, as rsync, the destination keeps its own */
		s->root_bare = s->o->files_from && !pathset_root(s->o->files_from);
		rc = walk_tree(s, 0, "", dfd, s->root_bare ? DIRB_SYNTHETIC : 0);
		close(dfd);
		xfilter_leave_all(s->o->filter);
		return rc;
	}
	struct stat *sts = calloc(s->nsrc, sizeof *sts);
	if (!sts)
		return err_set(-ENOMEM, "out of memory");
	int single = s->nsrc == 1;
	for (size_t i = 0; i < s->nsrc; i++) {
		char lp[PATH_MAX_WIRE + 1];
		const char *leaf;
		path_join(lp, sizeof lp, s->srcs[i].base, s->srcs[i].top);
		int dfd = jail_open_parent(s->srcs[i].jail, lp, &leaf);
		if (dfd < 0 || (rc = fs_stat_entry(dfd, leaf, &sts[i], s->o->follow)) < 0) {
			rc = dfd < 0 ? dfd : err_sys(rc, "%s", lp);
			if (dfd >= 0)
				close(dfd);
			free(sts);
			return rc;
		}
		close(dfd);
		single = single && S_ISREG(sts[i].st_mode);
	}
	/* the named sources are matched too, as rsync matches "src" */
	if (xfilter_goto(s->o->filter, "") < 0) {
		xfer_error(s->st, "not sent: %s", err_msg());
		for (size_t i = 0; i < s->nsrc; i++)
			sts[i].st_mode = 0;
	}
	for (size_t i = 0; i < s->nsrc; i++)
		if (excluded_top(s, i, &sts[i]))
			sts[i].st_mode = 0;   /* not sent */
	prune_tops(s, sts);
	rc = send_dir_msg(s, MSG_DIR_BEGIN, DIRB_SYNTHETIC | (single ? DIRB_SINGLE : 0), "", NULL);
	for (size_t i = 0; rc == 0 && i < s->nsrc; i++) {
		char lp[PATH_MAX_WIRE + 1];
		if (!sts[i].st_mode)
			continue;
		const char *leaf;
		path_join(lp, sizeof lp, s->srcs[i].base, s->srcs[i].top);
		int dfd = jail_open_parent(s->srcs[i].jail, lp, &leaf);
		if (dfd < 0) {
			rc = dfd;
			break;
		}
		struct dent_stat ds = dent_stat_of(&sts[i]);
		rc = emit_entry(s, (uint16_t)i, dfd, s->srcs[i].top, s->srcs[i].top, &ds);
		close(dfd);
	}
	if (rc == 0)
		rc = send_dir_msg(s, MSG_DIR_END, 0, NULL, NULL);
	for (size_t i = 0; rc == 0 && !(s->o->flags & REQ_NO_RECURSE) && i < s->nsrc; i++) {
		if (!S_ISDIR(sts[i].st_mode))
			continue;
		/* dir-merge files below are this source's; the root's were the first's */
		xfilter_place(s->o->filter, s->srcs[i].jail, s->srcs[i].base);
		rc = walk_tree(s, (uint16_t)i, s->srcs[i].top, -1, 0);
	}
	xfilter_leave_all(s->o->filter);
	free(sts);
	return rc;
}

/* --files-from, -R: an entry the walk never met is named when it is not there
 * (rsync's "link_stat failed"); one the rules excluded, or below a directory
 * they did, is left out in silence. */
static void listed_not_found(struct sender *s)
{
	const struct pathset *ps = s->o->files_from;

	for (size_t i = 0; i < ps->n; i++) {
		const char *p = ps->e[i].path, *leaf;
		char lp[PATH_MAX_WIRE + 1];
		struct stat st;
		int rc;

		if (ps->e[i].seen || !p[0])
			continue;
		if ((rc = local_path(&s->srcs[0], p, lp, sizeof lp)) == 0) {
			int dfd = jail_open_parent(s->srcs[0].jail, lp, &leaf);
			rc = dfd < 0 ? dfd : fs_stat_entry(dfd, leaf, &st, s->o->follow);
			if (dfd >= 0)
				close(dfd);
			if (rc == 0 || (rc == -ENOENT && s->o->ignore_missing))
				continue;   /* --ignore-missing-args: in silence, as rsync */
			if (dfd >= 0)
				err_set(rc, "%s", strerror(-rc));
		}
		sender_failed(s, p, "%s: %s%s%s", p, ps->origin ? ps->origin : "",
			      ps->origin ? ": " : "", err_msg());
	}
}

/* --- totals --------------------------------------------------------------- */

/* The count before the walk (-P's TOTALS). It has a time budget: the peer
 * hears nothing while it runs, and its I/O timeout (30 s by default) must
 * not end the session; past the budget the totals are unknown (0: the
 * progress line then has no percentage). */
#define TOTALS_BUDGET_S 10.0
struct count {
	uint64_t files, bytes;
	double until;   /* now_monotonic() */
	int over;
};

/* Adds the regular files of the directory d->path (a local path; its wire
 * path is what follows the first `skip` bytes) to the totals and keeps its
 * listing on the stack for the descent, less what the walk will not send.
 * What cannot be read counts nothing: the totals only feed the progress line. */
static void count_enter(const struct sender *s, uint16_t si, struct dirstack *d, size_t skip,
			struct count *c)
{
	struct dirlist l = { 0 };
	struct stat st;
	const char *wpath = strlen(d->path) > skip ? d->path + skip : "";
	int dfd;

	if (now_monotonic() > c->until) {
		c->over = 1;
		return;
	}
	if ((dfd = jail_open_dir(s->srcs[si].jail, d->path, O_RDONLY)) < 0)
		return;
	if (dirlist_read_as(dfd, &l, s->o->follow) == 0 && fstat(dfd, &st) == 0 &&
	    (!s->o->follow || !dirstack_find(d, st.st_dev, st.st_ino)) &&
	    xfilter_goto(s->o->filter, wpath) == 0) {
		drop_unsent(s, si, dfd, &l, wpath);
		for (size_t i = 0; i < l.n; i++) {
			if (S_ISREG(l.ents[i].st.st_mode)) {
				c->files++;
				c->bytes += (uint64_t)l.ents[i].st.st_size;
			}
		}
		dirstack_push(d, &l, &st);   /* out of memory: that subtree is not counted */
	}
	dirlist_free(&l);
	close(dfd);
}

/* The same loop over a heap stack as the walk (walk_below): no recursion. */
static void count_tree(const struct sender *s, size_t si, const char *lp, struct count *c)
{
	const struct source *src = &s->srcs[si];
	size_t skip = src->base[0] ? strlen(src->base) + 1 : 0;
	struct dirstack d;

	if (dirstack_init(&d, lp) < 0)
		return;
	xfilter_place(s->o->filter, src->jail, src->base);
	count_enter(s, (uint16_t)si, &d, skip, c);
	while (d.n && !c->over) {
		if (dirstack_next_dir(&d))
			count_enter(s, (uint16_t)si, &d, skip, c);
		else
			dirstack_pop(&d);
	}
	dirstack_free(&d);
}

/* TOTALS lets the client show an overall percentage and ETA; it costs one
 * extra metadata walk, so it is only done when the client asks (-P). */
static int send_totals(struct sender *s)
{
	struct count c = { .until = now_monotonic() + TOTALS_BUDGET_S };
#ifdef FERRY_TEST_HOOKS
	const char *budget = getenv("FERRY_TEST_TOTALS_BUDGET");   /* seconds */
	if (budget)
		c.until = now_monotonic() + strtod(budget, NULL);
#endif

	xfilter_place(s->o->filter, s->srcs[0].jail, s->srcs[0].base);
	for (size_t i = 0; i < s->nsrc && !c.over; i++) {
		char lp[PATH_MAX_WIRE + 1];
		struct stat st;
		const char *leaf;
		path_join(lp, sizeof lp, s->srcs[i].base, s->srcs[i].top);
		int dfd = jail_open_parent(s->srcs[i].jail, lp[0] ? lp : ".", &leaf);
		int got = lp[0] && dfd >= 0 && fs_stat_entry(dfd, leaf, &st, s->o->follow) == 0;
		if (got && s->srcs[i].top[0] &&
		    (xfilter_goto(s->o->filter, "") < 0 || excluded_top(s, i, &st))) {
			/* not sent: not counted */
		} else if (got && S_ISREG(st.st_mode)) {
			c.files++;
			c.bytes += (uint64_t)st.st_size;
		} else {
			count_tree(s, i, lp, &c);
		}
		if (dfd >= 0)
			close(dfd);
	}
	xfilter_leave_all(s->o->filter);
	if (c.over) {
		log_debug("the totals took longer than %.0f s: not counted", TOTALS_BUDGET_S);
		c.files = c.bytes = 0;
	}
	s->out.type = MSG_TOTALS;
	s->out.u.totals.files = c.files;
	s->out.u.totals.bytes = c.bytes;
	if (s->h->progress)
		progress_totals(s->h->progress, c.files, c.bytes);
	return conn_send(s->c, &s->out);
}

int sender_run(struct conn *c, const struct source *srcs, size_t nsrc, const struct xfer_opts *o,
	       const struct xfer_hooks *h, struct xfer_stats *st)
{
	struct sender *s = calloc(1, sizeof *s);
	int rc;

	if (!s)
		return err_set(-ENOMEM, "out of memory");
	s->c = c;
	s->pdir_fd = -1;
	s->root_src = -1;
	s->srcs = srcs;
	s->nsrc = nsrc;
	s->o = o;
	s->h = h;
	s->st = st;
	s->cap = o->window > 0 && o->window < PROTO_WINDOW_FILES ? (size_t)o->window :
									PROTO_WINDOW_FILES;
	s->ring = calloc(s->cap, sizeof *s->ring);
	s->mw = calloc(PROTO_META_PENDING, sizeof *s->mw);
	if (!s->ring || !s->mw) {
		free(s->ring);
		free(s->mw);
		free(s);
		return err_set(-ENOMEM, "out of memory");
	}
	xmeta_src_init(&s->xs, o->flags, o->fake_super);
	prune_init(&s->prune, prune_list, s);
	if ((o->flags & REQ_HARD_LINKS) && hlinks_init(&s->hl) < 0) {
		free(s->ring);
		free(s->mw);
		free(s);
		return -ENOMEM;
	}
	rc = (o->flags & REQ_TOTALS) ? send_totals(s) : 0;
	if (o->files_from)
		pathset_unsee(o->files_from);   /* the count met them; the walk must */
	if (rc == 0)
		rc = walk_root(s);
	if (rc == 0 && o->files_from)
		listed_not_found(s);
	if (rc == 0) {
		s->out.type = MSG_END;
		s->out.u.end.errors = st->errors;
		snprintf(s->out.u.end.message, sizeof s->out.u.end.message, "%s", st->first_error);
		rc = conn_send(c, &s->out);
	}
	if (rc == 0)
		rc = pump(s, NEED_ALL, 0);
	if (rc == 0)
		rc = conn_flush(c);
	while (rc == 0 && !s->have_result)
		rc = recv_one(s);
	while (s->count)
		ring_pop(s);
	free(s->ring);
	free(s->mw);
	for (size_t i = 0; i < DONE_DELTAS; i++)
		free(s->done[i].path);
	xmeta_src_free(&s->xs);
	hlinks_free(&s->hl);
	prune_free(&s->prune);
	if (s->pdir_fd >= 0)
		close(s->pdir_fd);
	free(s);
	return rc;
}
