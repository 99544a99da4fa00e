/* SPDX-License-Identifier: MIT */
/* The progress line (-P or a TTY), redrawn at most 10 times a second:
 *   per file (rsync's --progress): the current file's bytes, its percentage,
 *   the rate and the file's ETA, plus the whole transfer's percentage and ETA
 *   when the totals are known (-P asks the sender to count them first);
 *   whole (--info=progress2): one line for the transfer, as rsync draws it.
 * The rate is smoothed over the last seconds, so an ETA follows the link as
 * it is now, not the average since the start. */
#ifndef FERRY_SESSION_PROGRESS_H
#define FERRY_SESSION_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

#define PROGRESS_WHOLE 0x1   /* --info=progress2 */

struct progress {
	FILE *out;
	int live;                 /* draw the updating line */
	int mode;                 /* PROGRESS_* */
	int human;                /* -h level: sizes in K/M/G */
	uint64_t total_bytes, total_files;   /* from TOTALS; 0 = unknown */
	uint64_t done_bytes;      /* data moved plus bytes of skipped files */
	uint64_t moved_bytes;     /* data moved */
	uint64_t files_done;      /* files whose data moved */
	uint64_t files_checked;   /* files decided: moved or skipped */
	char file[256];
	uint64_t file_size, file_done;
	double start, last_draw;
	double rate, rate_at;     /* smoothed bytes/s, and when it was last sampled */
	uint64_t rate_bytes;      /* moved_bytes at rate_at */
	int drawn;                /* a line is on the screen */
	const char *clr;          /* what starts a line again: \r, and \033[K on a terminal */
};

void progress_init(struct progress *p, FILE *out, int live, int mode, int human);
void progress_totals(struct progress *p, uint64_t files, uint64_t bytes);
void progress_file(struct progress *p, const char *path, uint64_t size);
void progress_bytes(struct progress *p, uint64_t n);          /* data moved */
void progress_skip(struct progress *p, uint64_t n);           /* a file found up to date */
void progress_matched(struct progress *p, uint64_t n);        /* a delta's bytes from the basis, a hole */
void progress_file_done(struct progress *p);
/* Clears the line (so other output can be printed), e.g. before a message. */
void progress_clear(struct progress *p);
/* Draws the line once more as it stands (at the end) and moves to a new line. */
void progress_end(struct progress *p);
/* Seconds since progress_init. */
double progress_elapsed(const struct progress *p);

/* "12.3 MB" (human 0), "12.3M" (1: units of 1000), "11.7Mi"... (2: of 1024). */
const char *progress_size(char *buf, size_t n, uint64_t bytes, int human);
/* "h:mm:ss", or "--:--:--" when unknown */
const char *progress_eta(char *buf, size_t n, double secs);

#endif
