/* SPDX-License-Identifier: MIT */
#include "session/progress.h"

#include <string.h>

#include "util/ratelimit.h"

void progress_init(struct progress *p, FILE *out, int live)
{
	memset(p, 0, sizeof *p);
	p->out = out;
	p->live = live;
	p->start = now_monotonic();
}

void progress_totals(struct progress *p, uint64_t files, uint64_t bytes)
{
	p->total_files = files;
	p->total_bytes = bytes;
}

static void fmt_eta(char *buf, size_t n, double secs)
{
	if (secs < 0 || secs > 99 * 3600) {
		snprintf(buf, n, "--:--:--");
		return;
	}
	unsigned s = (unsigned)secs;
	snprintf(buf, n, "%u:%02u:%02u", s / 3600, s / 60 % 60, s % 60);
}

static void draw(struct progress *p, int force)
{
	double t = now_monotonic();
	if (!p->live || (!force && t - p->last_draw < 0.1))
		return;
	p->last_draw = t;
	double el = t - p->start;
	double rate = el > 0 ? (double)p->moved_bytes / el : 0;
	char eta[16], pct[16] = "";
	double left = p->total_bytes > p->done_bytes ? (double)(p->total_bytes - p->done_bytes) : 0;
	fmt_eta(eta, sizeof eta, rate > 0 ? left / rate : -1);
	if (p->total_bytes)
		snprintf(pct, sizeof pct, "%3u%%",
			 (unsigned)(100.0 * (double)p->done_bytes / (double)p->total_bytes));
	else
		snprintf(pct, sizeof pct, "  ?%%");
	/* Keep the line short enough for an 80-column terminal: the name is cut on the left. */
	const char *name = p->file;
	size_t len = strlen(name);
	if (len > 32)
		name += len - 32;
	fprintf(p->out, "\r\033[K%-32s %10.1f MB %8.1f MB/s %s ETA %s", name,
		(double)p->done_bytes / 1e6, rate / 1e6, pct, eta);
	fflush(p->out);
	p->drawn = 1;
}

void progress_file(struct progress *p, const char *path, uint64_t size)
{
	snprintf(p->file, sizeof p->file, "%s", path);
	p->file_size = size;
	p->file_done = 0;
	draw(p, 0);
}

void progress_bytes(struct progress *p, uint64_t n)
{
	p->moved_bytes += n;
	p->done_bytes += n;
	p->file_done += n;
	draw(p, 0);
}

void progress_skip(struct progress *p, uint64_t n)
{
	p->done_bytes += n;
	draw(p, 0);
}

void progress_file_done(struct progress *p)
{
	p->files_done++;
	draw(p, 0);
}

void progress_clear(struct progress *p)
{
	if (p->live && p->drawn) {
		fputs("\r\033[K", p->out);
		fflush(p->out);
		p->drawn = 0;
	}
}

void progress_summary(struct progress *p, const char *verb, uint64_t files, uint64_t skipped,
		      uint64_t errors)
{
	double el = now_monotonic() - p->start;
	if (p->live) {
		draw(p, 1);
		fputc('\n', p->out);
	}
	fprintf(p->out, "%s %llu files (%llu up to date), %.1f MB in %.2f s, %.1f MB/s%s\n", verb,
		(unsigned long long)files, (unsigned long long)skipped,
		(double)p->moved_bytes / 1e6, el,
		el > 0 ? (double)p->moved_bytes / 1e6 / el : 0.0,
		errors ? ", with errors" : "");
	fflush(p->out);
}
