/* SPDX-License-Identifier: MIT */
#include "session/xmeta.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/err.h"
#include "util/idmap.h"
#include "util/log.h"

/* --- fake super's stored stat ---------------------------------------------- */

int fake_stat_read(const struct xa_at *at, struct fake_stat *fs)
{
	char buf[96];
	char tail;
	ssize_t n = fs_xattr_get(at, XA_FAKE_STAT, buf, sizeof buf - 1);

	if (n < 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "%o %u,%u %u:%u%c", &fs->mode, &fs->major, &fs->minor, &fs->uid,
		   &fs->gid, &tail) != 5)
		return 0;
	uint32_t fmt = fs->mode & WIRE_IFMT;
	return fmt != 0 && !(fs->mode & ~(WIRE_IFMT | 07777));
}

int fake_stat_write(const struct xa_at *at, const struct fake_stat *fs)
{
	char buf[96];
	int n = snprintf(buf, sizeof buf, "%o %u,%u %u:%u", fs->mode, fs->major, fs->minor,
			 fs->uid, fs->gid);
	int rc = fs_xattr_set(at, XA_FAKE_STAT, buf, (size_t)n);
	return rc < 0 ? err_sys(rc, "keeping the owner in %s", XA_FAKE_STAT) : 0;
}

/* --- the sender --------------------------------------------------------------- */

static unsigned ns_of(uint32_t flags, int sys_ok, int fake)
{
	unsigned ns = 0;

	if (flags & REQ_XATTRS)
		ns |= XA_USER | (sys_ok ? XA_SYS : 0);
	if (flags & REQ_ACLS)
		ns |= XA_ACL;
	return ns | (ns && fake ? XA_FAKE : 0);
}

void xmeta_src_init(struct xmeta_src *x, uint32_t flags, int fake_super)
{
	memset(x, 0, sizeof *x);
	x->flags = flags;
	x->ns = ns_of(flags, geteuid() == 0 || fake_super, fake_super);
}

void xmeta_src_free(struct xmeta_src *x)
{
	xattr_buf_free(&x->xb);
	free(x->last_x);
	x->last_x = NULL;
}

/* 1 if m says what the receiver holds already; else m becomes the last. */
static int same_as_last(struct xmeta_src *x, const struct m_xmeta *m)
{
	const struct m_xmeta *l = &x->last;

	if (x->sent && l->flags == m->flags && l->uid == m->uid && l->gid == m->gid &&
	    !strcmp(l->user, m->user) && !strcmp(l->group, m->group) && l->count == m->count &&
	    l->xattr_bytes == m->xattr_bytes &&
	    (!m->xattr_bytes || !memcmp(x->last_x, m->xattrs, m->xattr_bytes)))
		return 1;
	if (m->xattr_bytes && !x->last_x && !(x->last_x = malloc(XMETA_MAX_XATTR_BYTES))) {
		x->sent = 0;   /* no room to remember it: always send */
		return 0;
	}
	x->last = *m;
	if (m->xattr_bytes)
		memcpy(x->last_x, m->xattrs, m->xattr_bytes);
	x->sent = 1;
	return 0;
}

int xmeta_describe(struct xmeta_src *x, const struct xa_at *at, uint32_t uid, uint32_t gid,
		   const char *wpath, struct xfer_stats *st, struct msg *out)
{
	struct m_xmeta *m = &out->u.xmeta;
	int names = !(x->flags & REQ_NUMERIC_IDS);

	if (!(x->flags & REQ_XMETA))
		return 0;
	out->type = MSG_XMETA;
	memset(m, 0, sizeof *m);
	if (x->flags & REQ_OWNER) {
		m->flags |= XM_OWNER;
		m->uid = uid;
		snprintf(m->user, sizeof m->user, "%s", names ? idmap_user_name(uid) : "");
	}
	if (x->flags & REQ_GROUP) {
		m->flags |= XM_GROUP;
		m->gid = gid;
		snprintf(m->group, sizeof m->group, "%s", names ? idmap_group_name(gid) : "");
	}
	if (x->ns & (XA_USER | XA_SYS | XA_ACL)) {
		/* a set that cannot be read does not travel: the receiver's stays */
		if (fs_xattr_read(at, x->ns, &x->xb) < 0) {
			xfer_error(st, "%s: %s (sent without its xattrs)", wpath, err_msg());
		} else {
			m->flags |= XM_XATTRS;
			m->count = (uint16_t)x->xb.count;
			m->xattr_bytes = (uint32_t)x->xb.len;
			m->xattrs = x->xb.p;
		}
	}
	return !same_as_last(x, m);
}

/* --- the receiver ------------------------------------------------------------- */

void xmeta_dst_init(struct xmeta_dst *d, uint32_t flags, int fake_super, int no_caps)
{
	memset(d, 0, sizeof *d);
	d->flags = flags;
	d->root = geteuid() == 0;
	d->fake = fake_super;
	d->ns = ns_of(flags, d->root || fake_super, fake_super);
	if (d->ns && no_caps && !fake_super)
		d->ns |= XA_NOCAPS;
}

void xmeta_dst_free(struct xmeta_dst *d)
{
	free(d->buf);
	d->buf = NULL;
}

int xmeta_hold(struct xmeta_dst *d, const struct m_xmeta *m)
{
	uint8_t asked = (uint8_t)(((d->flags & REQ_OWNER) ? XM_OWNER : 0) |
				  ((d->flags & REQ_GROUP) ? XM_GROUP : 0) |
				  ((d->flags & (REQ_XATTRS | REQ_ACLS)) ? XM_XATTRS : 0));

	if (m->flags & ~asked)
		return err_set(-EBADMSG, "protocol: XMETA with what the request did not ask for");
	if (!d->buf && !(d->buf = malloc(XMETA_MAX_XATTR_BYTES)))
		return err_set(-ENOMEM, "out of memory for xattrs");
	d->m = *m;
	if (m->xattr_bytes)
		memcpy(d->buf, m->xattrs, m->xattr_bytes);
	d->m.xattrs = d->buf;
	d->have = 1;
	return 0;
}

void xmeta_ids(const struct xmeta_dst *d, uint32_t *uid, uint32_t *gid)
{
	int names = !(d->flags & REQ_NUMERIC_IDS);

	*uid = *gid = (uint32_t)-1;
	if (!d->have)
		return;
	if (d->m.flags & XM_OWNER)
		*uid = names ? idmap_uid(d->m.user, d->m.uid) : d->m.uid;
	if (d->m.flags & XM_GROUP)
		*gid = names ? idmap_gid(d->m.group, d->m.gid) : d->m.gid;
}

uint32_t xmeta_real_mode(const struct xmeta_dst *d, uint32_t mode, int is_dir)
{
	return d->fake ? mode | (is_dir ? 0700u : 0600u) : mode;
}

static int do_chown(const struct xa_at *at, uint32_t uid, uint32_t gid)
{
	int rc = at->fd >= 0 ? fchown(at->fd, (uid_t)uid, (gid_t)gid)
			     : fchownat(at->dirfd, at->name, (uid_t)uid, (gid_t)gid,
					AT_SYMLINK_NOFOLLOW);
	return rc < 0 ? err_sys(-errno, "setting the owner to %u:%u", uid, gid) : 0;
}

static uint32_t wire_type(mode_t m)
{
	return S_ISDIR(m) ? 0040000u : S_ISLNK(m) ? 0120000u : S_ISCHR(m) ? WIRE_IFCHR :
	       S_ISBLK(m) ? WIRE_IFBLK : S_ISFIFO(m) ? WIRE_IFIFO : S_ISSOCK(m) ? WIRE_IFSOCK :
	       0100000u;
}

/* Fake super: what the entry should be goes into XA_FAKE_STAT unless the
 * real entry already says it all (then a stale one goes). */
static int apply_fake(struct xmeta_dst *d, const struct xa_at *at, const struct stat *now,
		      const struct xmeta_want *w, uint32_t uid, uint32_t gid, int dry)
{
	struct fake_stat have, want = { w->mode, w->major, w->minor, 0, 0 };
	int got = fake_stat_read(at, &have);
	unsigned bits = 0;

	want.uid = uid != (uint32_t)-1 ? uid : got ? have.uid : (uint32_t)now->st_uid;
	want.gid = gid != (uint32_t)-1 ? gid : got ? have.gid : (uint32_t)now->st_gid;
	uint32_t o_uid = got ? have.uid : (uint32_t)now->st_uid;
	uint32_t o_gid = got ? have.gid : (uint32_t)now->st_gid;
	bits |= o_uid != want.uid ? CHGB_OWNER : 0;
	bits |= o_gid != want.gid ? CHGB_GROUP : 0;
	/* the stored mode (or type, or device) changes: a change of perms, which
	 * a dry look must report too (a snapshot keeps the old one first) */
	uint32_t o_mode = got ? have.mode : wire_type(now->st_mode) | ((uint32_t)now->st_mode & 07777);
	if (o_mode != want.mode || (got && (have.major != want.major || have.minor != want.minor)))
		bits |= CHGB_PERMS;
	int plain = want.uid == (uint32_t)now->st_uid && want.gid == (uint32_t)now->st_gid &&
		    (want.mode & WIRE_IFMT) == wire_type(now->st_mode) && !want.major &&
		    !want.minor && xmeta_real_mode(d, want.mode & 07777, S_ISDIR(now->st_mode)) ==
		    (want.mode & 07777);
	if (dry || w->is_link)
		return (int)bits;
	if (plain && got) {
		int rc = fs_xattr_remove(at, XA_FAKE_STAT);
		if (rc < 0 && rc != -ENODATA)
			return err_sys(rc, "removing %s", XA_FAKE_STAT);
	} else if (!plain && (!got || memcmp(&have, &want, sizeof want))) {
		int rc = fake_stat_write(at, &want);
		if (rc < 0)
			return rc;
	}
	return (int)bits;
}

static int apply_owner(struct xmeta_dst *d, const struct xa_at *at, const struct stat *now,
		       uint32_t uid, uint32_t gid, int dry)
{
	unsigned bits = 0;

	if (uid != (uint32_t)-1 && uid != (uint32_t)now->st_uid)
		bits |= CHGB_OWNER;
	if (gid != (uint32_t)-1 && gid != (uint32_t)now->st_gid)
		bits |= CHGB_GROUP;
	if (!bits || dry)
		return (int)bits;
	if (!d->root) {
		/* a group the user is in can still be set, as chown(1) allows */
		if (!(bits & CHGB_OWNER) && do_chown(at, (uint32_t)-1, gid) == 0)
			return (int)bits;
		if (!d->said_owner++)
			log_info("owners and groups are not kept: the receiver is not root "
				 "(a module with 'fake super = yes' keeps them in an xattr)");
		return 0;
	}
	int rc = do_chown(at, uid, gid);
	return rc < 0 ? rc : (int)bits;
}

int xmeta_apply(struct xmeta_dst *d, const struct xa_at *at, const struct stat *now,
		const struct xmeta_want *w, int dry)
{
	uint32_t uid, gid;
	int rc, bits = 0;

	xmeta_ids(d, &uid, &gid);
	if (d->fake)
		rc = apply_fake(d, at, now, w, uid, gid, dry);
	else
		rc = apply_owner(d, at, now, uid, gid, dry);
	if (rc < 0)
		return rc;
	bits = rc;
	if (d->have && (d->m.flags & XM_XATTRS) && !w->is_link) {
		rc = fs_xattr_apply(at, d->ns, d->m.xattrs, d->m.xattr_bytes, dry);
		if (rc == -ENOTSUP && dry) {
			rc = 0;
		} else if (rc == -ENOTSUP) {
			if (!d->said_xattr++)
				log_warn("xattrs and ACLs are not kept here: %s", err_msg());
			rc = 0;
		}
		if (rc < 0)
			return rc;
		bits |= rc > 0 ? CHGB_XATTR : 0;
	}
	return bits;
}
