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

/* Sets up the view; opens --log-file. 0, or an exit code (already printed). */
int view_open(struct view *v, const struct xfer_cli *x, char dir);
void view_close(struct view *v);
/* xfer_hooks.change */
void view_change(void *ctx, int kind, unsigned bits, const char *path, const char *target);
/* The end of a transfer: summary, --stats, the error line; the exit code. */
int view_finish(struct view *v, int rc, const struct xfer_stats *st, const char *verb,
		const char *where, const struct channel *ch, uint16_t peer_code);

#endif
