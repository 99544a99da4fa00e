/* SPDX-License-Identifier: MIT */
#ifndef FERRY_SESSION_RECEIVER_H
#define FERRY_SESSION_RECEIVER_H

#include "session/conn.h"
#include "session/xfer.h"

/* Runs the receiving role into `root` (a path inside the jail, created if
 * missing; "" = the jail's root) until the sender's END and the last file,
 * then syncs and sends RESULT. Per-file failures are counted in st; returns
 * <0 only when the session fails (nothing half-written is left under a final
 * name either way). */
int receiver_run(struct conn *c, const struct jail *j, const char *root,
		 const struct xfer_opts *o, const struct xfer_hooks *h, struct xfer_stats *st);

/* ls: receives a listing and hands each entry to h->entry. */
int receiver_list(struct conn *c, const struct xfer_hooks *h);

#endif
