/* SPDX-License-Identifier: MIT */
/* --svg FILE: a bar chart of each stage's rate, written as text (SVG needs
 * no plotting library). Stages are grouped by unit, each group on its own
 * scale: MB/s and IOPS on one axis would mean nothing. A cached or memory
 * result is grey and says so; a cache cliff shows its burst as a thin bar
 * above the sustained one. Every stage is a <g id="stage-NAME">; a remote
 * run adds its end-to-end rates as dashed lines and its verdicts. */
#include "bench/bench.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/err.h"

#define W 780
#define LABEL_W 230
#define BAR_X (LABEL_W + 20)
#define BAR_W 330
#define ROW_H 30
#define TOP 86

static void esc(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			/* Control characters are not allowed in XML 1.0 at all. */
			fputc((unsigned char)*s < 0x20 ? '?' : *s, f);
		}
	}
}

static const char *colour(enum bench_verdict v)
{
	switch (v) {
	case BENCH_CACHED: return "#b0b0b0";
	case BENCH_MEMORY: return "#a98bc4";
	case BENCH_UNVERIFIED: return "#e0a030";
	default: return "#2f74b5";
	}
}

static double group_max(const struct bench_report *r, enum bench_unit u)
{
	double m = 0;

	for (uint32_t i = 0; i < r->nstages; i++) {
		const struct bench_stage *st = &r->stages[i];
		if (st->unit != u)
			continue;
		if (st->rate > m)
			m = st->rate;
		if (st->cliff.found && st->cliff.burst > m)
			m = st->cliff.burst;
	}
	return m > 0 ? m : 1;
}

static void bar(FILE *f, const struct bench_stage *st, double max, int y)
{
	double v = bench_shown_rate(st->unit, st->rate);
	int w = (int)(BAR_W * st->rate / max + 0.5);

	fprintf(f, "<g class=\"stage verdict-%s\" id=\"stage-", bench_verdict_name(st->verdict));
	esc(f, st->name);
	fprintf(f, "\"><title>");
	esc(f, st->label);
	fprintf(f, ": %.1f %s (%s)</title>\n", v, bench_unit_name(st->unit),
		bench_verdict_name(st->verdict));
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", LABEL_W, y + 15);
	esc(f, st->label);
	fprintf(f, "</text>\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"16\" fill=\"%s\"/>\n",
		BAR_X, y + 3, w > 1 ? w : 1, colour(st->verdict));
	if (st->cliff.found)
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"3\" fill=\"#8fb8de\"/>\n",
			BAR_X, y - 1, (int)(BAR_W * st->cliff.burst / max + 0.5));
	fprintf(f, "<text x=\"%d\" y=\"%d\">%.1f %s", BAR_X + (w > 1 ? w : 1) + 6, y + 15, v,
		bench_unit_name(st->unit));
	if (st->verdict != BENCH_DEVICE && st->verdict != BENCH_CPU && st->verdict != BENCH_NETWORK)
		fprintf(f, " (%s)", bench_verdict_name(st->verdict));
	else if (st->cliff.found)
		fprintf(f, ", burst %.1f", bench_shown_rate(st->unit, st->cliff.burst));
	if (st->backend[0])
		fprintf(f, " %s", st->backend);
	fputs("</text>\n</g>\n", f);
}

/* A remote run: each stage against the end-to-end rates, a dashed line
 * each across the MB/s group (upload blue, download orange). */
static void e2e_lines(FILE *f, const struct bench_report *r, double max, int top, int bottom)
{
	static const char *const names[] = { "e2e_up", "e2e_down" };
	static const char *const colours[] = { "#1f4e79", "#c55a11" };

	for (int i = 0; i < 2; i++) {
		const struct bench_stage *st = bench_stage_find(r, names[i]);
		if (!st || st->rate <= 0)
			continue;
		int x = BAR_X + (int)(BAR_W * st->rate / max + 0.5);
		fprintf(f, "<g id=\"%s-line\"><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
			"stroke=\"%s\" stroke-dasharray=\"4 3\"/><title>end to end, %s: %.1f MB/s"
			"</title></g>\n", names[i], x, top, x, bottom, colours[i],
			i ? "download" : "upload", bench_shown_rate(BENCH_MBPS, st->rate));
	}
}

#define WRAP 125   /* characters of 11-point text a line of the chart holds */

/* Text wrapped at spaces into lines of at most WRAP characters; the y of
 * the line after. */
static int wrapped(FILE *f, const char *s, int y)
{
	char line[WRAP + 1];

	while (*s) {
		size_t n = strlen(s);
		if (n > WRAP) {
			n = WRAP;
			while (n > WRAP / 2 && s[n] != ' ')
				n--;
		}
		snprintf(line, sizeof line, "%.*s", (int)n, s);
		fprintf(f, "<text x=\"20\" y=\"%d\" font-size=\"11\">", y);
		esc(f, line);
		fputs("</text>\n", f);
		s += n;
		while (*s == ' ')
			s++;
		y += 14;
	}
	return y;
}

/* The verdicts under the bars. */
static int verdict_text(FILE *f, const struct bench_report *r, int y)
{
	const struct bench_verdict_line *v[2] = { &r->remote.up, &r->remote.down };

	for (int i = 0; i < 2; i++) {
		fprintf(f, "<text x=\"10\" y=\"%d\" font-weight=\"bold\">%s is limited by: ",
			y + 16, i ? "Download" : "Upload");
		esc(f, v[i]->stage);
		fputs("</text>\n", f);
		y = wrapped(f, v[i]->suggest, y + 32) - 8;
	}
	return y;
}

/* Rows of one unit under a heading; returns the next free y. */
static int group(FILE *f, const struct bench_report *r, enum bench_unit u, int y)
{
	double max = group_max(r, u);
	int any = 0, top = y;

	for (uint32_t i = 0; i < r->nstages; i++) {
		if (r->stages[i].unit != u)
			continue;
		if (!any++) {
			fprintf(f, "<text x=\"10\" y=\"%d\" font-weight=\"bold\">%s</text>\n", y + 14,
				bench_unit_name(u));
			y += 22;
		}
		bar(f, &r->stages[i], max, y);
		y += ROW_H;
	}
	if (any && u == BENCH_MBPS && r->kind == BENCH_REMOTE)
		e2e_lines(f, r, max, top, y);
	return y;
}

static int rows_height(const struct bench_report *r)
{
	int h = 0, seen[3] = { 0, 0, 0 };

	for (uint32_t i = 0; i < r->nstages; i++) {
		enum bench_unit u = r->stages[i].unit;
		h += ROW_H + (u <= BENCH_FILES && !seen[u]++ ? 22 : 0);
	}
	return h;
}

static void title(FILE *f, const struct bench_report *r)
{
	const struct bench_target *t = &r->target;

	fputs("<text x=\"10\" y=\"24\" font-size=\"15\" font-weight=\"bold\">", f);
	esc(f, r->env.command);
	fprintf(f, "</text>\n<text x=\"10\" y=\"46\">ferry ");
	esc(f, r->env.version);
	fputs(" | ", f);
	esc(f, r->env.kernel);
	fputs(" | ", f);
	esc(f, r->env.cpu);
	fputs("</text>\n<text x=\"10\" y=\"66\">", f);
	if (r->kind == BENCH_REMOTE) {
		esc(f, r->remote.server);
		fputs(": ", f);
		esc(f, r->remote.server_env);
	} else if (r->kind == BENCH_DISK) {
		esc(f, t->path);
		fputs(": ", f);
		esc(f, t->fstype);
		fputs(t->device[0] ? " on " : (t->memory ? " (memory)" : " (no block device)"), f);
		esc(f, t->device);
		if (t->usb[0]) {
			fputs(", ", f);
			esc(f, t->usb);
		}
	} else {
		fprintf(f, "records of %u bytes, one core; connections from here: ", r->crypto.record);
		esc(f, r->crypto.picks);
	}
	fputs("</text>\n", f);
}

int bench_write_svg(FILE *f, const struct bench_report *r)
{
	int y = TOP, h = TOP + rows_height(r) + 20 + (r->kind == BENCH_REMOTE ? 130 : 0);

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"13\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, h, W, h);
	title(f, r);
	for (int u = BENCH_MBPS; u <= BENCH_FILES; u++)
		y = group(f, r, (enum bench_unit)u, y);
	if (r->kind == BENCH_REMOTE)
		verdict_text(f, r, y);
	fputs("</svg>\n", f);
	if (fflush(f) != 0 || ferror(f))
		return err_sys(-EIO, "writing the SVG");
	return 0;
}
