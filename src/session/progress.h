/* SPDX-License-Identifier: MIT */
/* The progress line (-P or a TTY): current file, bytes, MB/s, ETA and the
 * overall percentage on one updating line, redrawn at most 10 times a second,
 * and the summary at the end. */
#ifndef FERRY_SESSION_PROGRESS_H
#define FERRY_SESSION_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

struct progress {
	FILE *out;
	int live;                 /* draw the updating line */
	uint64_t total_bytes, total_files;   /* from TOTALS; 0 = unknown */
	uint64_t done_bytes;      /* data moved plus bytes of skipped files */
	uint64_t moved_bytes;     /* data moved */
	uint64_t files_done;
	char file[256];
	uint64_t file_size, file_done;
	double start, last_draw;
	int drawn;                /* a line is on the screen */
};

void progress_init(struct progress *p, FILE *out, int live);
void progress_totals(struct progress *p, uint64_t files, uint64_t bytes);
void progress_file(struct progress *p, const char *path, uint64_t size);
void progress_bytes(struct progress *p, uint64_t n);          /* data moved */
void progress_skip(struct progress *p, uint64_t n);           /* a file found up to date */
void progress_file_done(struct progress *p);
/* Clears the line (so other output can be printed), e.g. before a message. */
void progress_clear(struct progress *p);
/* Final line: "sent N files (M skipped), X MB in T s, Y MB/s". */
void progress_summary(struct progress *p, const char *verb, uint64_t files, uint64_t skipped,
		      uint64_t errors);

#endif
