/* SPDX-License-Identifier: MIT */
#include "session/progress.h"

#include <string.h>
#include <unistd.h>

#include "util/ratelimit.h"

void progress_init(struct progress *p, FILE *out, int live, int mode, int human)
{
	memset(p, 0, sizeof *p);
	p->out = out;
	p->live = live;
	p->mode = mode;
	p->human = human;
	/* a log file gets no terminal escapes (rsync writes \r alone too) */
	p->clr = out && isatty(fileno(out)) ? "\r\033[K" : "\r";
	p->start = p->rate_at = now_monotonic();
}

void progress_totals(struct progress *p, uint64_t files, uint64_t bytes)
{
	p->total_files = files;
	p->total_bytes = bytes;
}

double progress_elapsed(const struct progress *p)
{
	return now_monotonic() - p->start;
}

const char *progress_eta(char *buf, size_t n, double secs)
{
	if (!(secs >= 0) || secs > 99 * 3600) {
		snprintf(buf, n, "--:--:--");
		return buf;
	}
	unsigned s = (unsigned)(secs + 0.5);
	snprintf(buf, n, "%u:%02u:%02u", s / 3600, s / 60 % 60, s % 60);
	return buf;
}

const char *progress_size(char *buf, size_t n, uint64_t bytes, int human)
{
	static const char unit[] = "KMGTPE";
	double v = (double)bytes, base = human >= 2 ? 1024.0 : 1000.0;
	int u = -1;

	if (!human) {
		snprintf(buf, n, "%.1f MB", v / 1e6);
		return buf;
	}
	while (v >= base && u < 5) {
		v /= base;
		u++;
	}
	if (u < 0)
		snprintf(buf, n, "%llu B", (unsigned long long)bytes);   /* not a bare number */
	else
		snprintf(buf, n, "%.1f%c%s", v, unit[u], human >= 2 ? "i" : "");
	return buf;
}

/* A rate weighted toward the last few seconds (the weight dt/(dt+3) is
 * close to an exponential average with a 3 s time constant, without libm). */
static void sample_rate(struct progress *p, double t)
{
	double dt = t - p->rate_at;
	if (dt < 0.25)
		return;
	double inst = (double)(p->moved_bytes - p->rate_bytes) / dt;
	double w = dt / (dt + 3.0);
	p->rate = p->rate_bytes || p->rate > 0 ? p->rate + w * (inst - p->rate) : inst;
	p->rate_at = t;
	p->rate_bytes = p->moved_bytes;
}

static unsigned pct(uint64_t done, uint64_t total)
{
	if (!total)
		return 100;
	return done >= total ? 100 : (unsigned)(100.0 * (double)done / (double)total);
}

static double eta_of(const struct progress *p, uint64_t left)
{
	return p->rate > 0 ? (double)left / p->rate : -1;
}

static void draw_file(struct progress *p)
{
	char size[24], eta[16], teta[16], total[40] = "";
	const char *name = p->file;
	size_t len = strlen(name);

	/* An 80-column line: the name is cut on the left. */
	if (len > 22)
		name += len - 22;
	if (p->total_bytes) {
		uint64_t left = p->total_bytes > p->done_bytes ? p->total_bytes - p->done_bytes : 0;
		snprintf(total, sizeof total, " (total %u%%, ETA %s)",
			 pct(p->done_bytes, p->total_bytes), progress_eta(teta, sizeof teta, eta_of(p, left)));
	}
	uint64_t fleft = p->file_size > p->file_done ? p->file_size - p->file_done : 0;
	fprintf(p->out, "%s%-22s %9s %3u%% %6.1f MB/s %s%s", p->clr, name,
		progress_size(size, sizeof size, p->file_done, p->human),
		pct(p->file_done, p->file_size), p->rate / 1e6,
		progress_eta(eta, sizeof eta, eta_of(p, fleft)), total);
}

static void draw_whole(struct progress *p)
{
	char size[24], eta[16], pc[8] = "  ?%", chk[48] = "";
	uint64_t left = p->total_bytes > p->done_bytes ? p->total_bytes - p->done_bytes : 0;

	if (p->total_bytes || p->total_files)
		snprintf(pc, sizeof pc, "%3u%%", pct(p->done_bytes, p->total_bytes));
	if (p->total_files)
		snprintf(chk, sizeof chk, " (xfr#%llu, to-chk=%llu/%llu)",
			 (unsigned long long)p->files_done,
			 (unsigned long long)(p->total_files > p->files_checked ?
					      p->total_files - p->files_checked : 0),
			 (unsigned long long)p->total_files);
	fprintf(p->out, "%s%12s %s %6.1f MB/s %s%s", p->clr,
		progress_size(size, sizeof size, p->done_bytes, p->human), pc, p->rate / 1e6,
		progress_eta(eta, sizeof eta, p->total_bytes ? eta_of(p, left) : -1), chk);
}

static void draw(struct progress *p, int force)
{
	double t = now_monotonic();
	if (!p->live || (!force && t - p->last_draw < 0.1))
		return;
	p->last_draw = t;
	sample_rate(p, t);
	if (p->mode & PROGRESS_WHOLE)
		draw_whole(p);
	else
		draw_file(p);
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
	p->files_checked++;
	draw(p, 0);
}

void progress_matched(struct progress *p, uint64_t n)
{
	p->done_bytes += n;
	p->file_done += n;
	draw(p, 0);
}

void progress_file_done(struct progress *p)
{
	p->files_done++;
	p->files_checked++;
	draw(p, 0);
}

void progress_clear(struct progress *p)
{
	if (p->live && p->drawn) {
		fputs(p->clr, p->out);
		fflush(p->out);
		p->drawn = 0;
	}
}

void progress_end(struct progress *p)
{
	if (!p->live)
		return;
	if (p->moved_bytes && !(p->rate > 0)) {
		double el = progress_elapsed(p);
		p->rate = el > 0 ? (double)p->moved_bytes / el : 0;
	}
	draw(p, 1);
	fputc('\n', p->out);
	fflush(p->out);
	p->drawn = 0;
}
