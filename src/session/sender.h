/* SPDX-License-Identifier: MIT */
#ifndef FERRY_SESSION_SENDER_H
#define FERRY_SESSION_SENDER_H

#include <stddef.h>

#include "session/conn.h"
#include "session/xfer.h"

/* Runs the sending role to the end: the walk, the data the receiver wants,
 * and the receiver's RESULT (its error count is added to st->errors).
 * Returns 0, or <0 when the session itself failed (err_msg says why). */
int sender_run(struct conn *c, const struct source *srcs, size_t nsrc, const struct xfer_opts *o,
	       const struct xfer_hooks *h, struct xfer_stats *st);

#endif
