/* SPDX-License-Identifier: MIT */
/* What a push or pull says when it ends: the one summary line (exact counts
 * from the receiver's RESULT, committed bytes only) and rsync's --stats. */
#ifndef FERRY_SESSION_SUMMARY_H
#define FERRY_SESSION_SUMMARY_H

#include <stdio.h>

#include "channel/channel.h"
#include "session/xfer.h"

struct summary {
	const char *verb;              /* "sent" / "received" */
	const struct xfer_stats *st;
	double secs;
	int human;                     /* -h level */
	int dry;                       /* -n: "(DRY RUN)", as rsync */
	struct chan_stats wire;        /* bytes on the wire, both ways */
};

/* "sent 3 files (4 up to date, 1 failed), 12.3 MB in 1.20 s, 10.2 MB/s" */
void summary_line(FILE *out, const struct summary *s);
/* The --stats block, in rsync's words where ferry counts the same thing. */
void summary_stats(FILE *out, const struct summary *s);

#endif
