/* SPDX-License-Identifier: MIT */
/* What rsync's -o, -g, -X, -A and fake super keep beyond mode and mtime,
 * for both ends of a transfer: the sender describes an entry in an XMETA
 * message (owner and group with their names, the xattr set, the ACLs as
 * the xattrs Linux keeps them in), leaving out one equal to the last it
 * sent; the receiver holds the last XMETA and applies it to what follows: as root it sets the owner; under fake super
 * it keeps owner, type and mode in user.rsync.%stat, as rsync's daemon does. */
#ifndef FERRY_SESSION_XMETA_H
#define FERRY_SESSION_XMETA_H

#include <stdint.h>
#include <sys/stat.h>

#include "fs/xattr.h"
#include "proto/msg.h"
#include "session/xfer.h"

/* An entry's type, mode, device and owner as fake super stores them. */
struct fake_stat { uint32_t mode, major, minor, uid, gid; };

/* Reads XA_FAKE_STAT of the entry: 1 and *fs when it is there and well
 * formed, 0 when absent (or malformed: then the real stat counts). */
int fake_stat_read(const struct xa_at *at, struct fake_stat *fs);
int fake_stat_write(const struct xa_at *at, const struct fake_stat *fs);

struct xmeta_src {
	uint32_t flags;         /* the request's REQ_* */
	unsigned ns;            /* XA_* read for -X / -A (and XA_FAKE) */
	struct xattr_buf xb;    /* owned */
	int sent;               /* `last` is what the receiver holds */
	struct m_xmeta last;    /* its xattrs point into last_x */
	uint8_t *last_x;        /* owned, XMETA_MAX_XATTR_BYTES */
};

void xmeta_src_init(struct xmeta_src *x, uint32_t flags, int fake_super);
void xmeta_src_free(struct xmeta_src *x);
/* Fills *out (an XMETA) for the entry at `at` owned by uid:gid. Returns 1
 * to send it, 0 if the request wants none or the receiver holds the same
 * already; a failure to read the xattrs is counted in st (naming wpath)
 * and the XMETA goes without them. */
int xmeta_describe(struct xmeta_src *x, const struct xa_at *at, uint32_t uid, uint32_t gid,
		   const char *wpath, struct xfer_stats *st, struct msg *out);

struct xmeta_dst {
	uint32_t flags;         /* the request's REQ_* */
	unsigned ns;
	int root, fake;         /* may chown and mknod; keeps them in XA_FAKE_STAT */
	int said_owner, said_xattr;
	int have;               /* an XMETA is held for the next entry */
	struct m_xmeta m;       /* its xattrs point into buf */
	uint8_t *buf;           /* owned */
};

/* no_caps: never set a file capability (a daemon's receiver, see XA_NOCAPS) */
void xmeta_dst_init(struct xmeta_dst *d, uint32_t flags, int fake_super, int no_caps);
void xmeta_dst_free(struct xmeta_dst *d);
/* Holds a received XMETA (copied): it describes every entry that follows
 * until the next one (the sender leaves out one equal to the last). */
int xmeta_hold(struct xmeta_dst *d, const struct m_xmeta *m);
/* The held XMETA's owner as this receiver maps it (uid and gid; -1 keeps). */
void xmeta_ids(const struct xmeta_dst *d, uint32_t *uid, uint32_t *gid);

/* What an entry should end up with beyond its data. */
struct xmeta_want {
	uint32_t mode;          /* full st_mode the sender has (type and permissions) */
	uint32_t major, minor;  /* a device's */
	int is_link;
};

/* Applies the held XMETA (and, under fake super, `w` into XA_FAKE_STAT) to
 * the entry at `at`, whose current stat is `now`. Returns
 * the CHGB_* bits that differed (set unless dry), or <0 with err_msg. */
int xmeta_apply(struct xmeta_dst *d, const struct xa_at *at, const struct stat *now,
		const struct xmeta_want *w, int dry);

/* The mode the receiver gives the real file: fake super keeps files
 * readable and writable (directories usable) by the daemon itself. */
uint32_t xmeta_real_mode(const struct xmeta_dst *d, uint32_t mode, int is_dir);

#endif
