/* SPDX-License-Identifier: MIT */
/* What a push or pull shows: change lines (-v, or rsync's -i itemized form),
 * the progress line, --log-file, the summary and --stats, and the one error
 * line with the exit code. Strings from the peer are quoted. */
#ifndef FERRY_CLI_VIEW_H
#define FERRY_CLI_VIEW_H

#include <stdio.h>

#include "cli/opts.h"
#include "session/progress.h"
#include "session/xfer.h"

struct view {
	struct progress pg;
	const struct xfer_cli *x;
	int live;
	char dir;                 /* '<' push (sent), '>' pull (received), as rsync's -i */
	FILE *log;                /* --log-file, owned */
};

/* First, before anything can fail: opens --log-file (one that cannot be
 * opened is said, and the run goes on without it, as rsync), so that every
 * error line of the run reaches it. view_end is the last call. */
void view_begin(struct view *v, const struct xfer_cli *x);
/* Once the session is open: the progress line. 0, or an exit code. */
int view_open(struct view *v, char dir);
void view_close(struct view *v);
/* The run's exit code, logged when it is not 0 (rsync's "(code 23)"); closes
 * the log. Returns code. */
int view_end(struct view *v, int code);
/* xfer_hooks.change */
void view_change(void *ctx, int kind, unsigned bits, const char *path, const char *target);
/* The end of a transfer: summary, --stats, the error line; the exit code. */
int view_finish(struct view *v, int rc, const struct xfer_stats *st, const char *verb,
		const char *where, const struct channel *ch, uint16_t peer_code);

#endif
