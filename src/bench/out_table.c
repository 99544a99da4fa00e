/* SPDX-License-Identifier: MIT */
/* The table for people, laid out to paste into a forum post as it is: the
 * header says what was measured where, each stage is one line (plus one for
 * a cache cliff), and a cached result is shown in parentheses, marked, never
 * as the disk's speed. Plain ASCII, under 100 columns. */
#include "bench/bench.h"

#include <errno.h>
#include <stdio.h>

#include "util/err.h"

/* "512.3 MB/s", "12345 IOPS", "95.5 files/s" */
static void fmt_rate(char *out, size_t cap, enum bench_unit u, double rate)
{
	double v = bench_shown_rate(u, rate);

	snprintf(out, cap, v >= 1000 || (u != BENCH_MBPS && v >= 100) ? "%.0f %s" : "%.1f %s", v,
		 bench_unit_name(u));
}

static void fmt_bytes(char *out, size_t cap, uint64_t b)
{
	if (b >= (10ull << 30))
		snprintf(out, cap, "%.1f GiB", (double)b / (1ull << 30));
	else
		snprintf(out, cap, "%.0f MiB", (double)b / (1ull << 20));
}

static void header(FILE *f, const struct bench_report *r)
{
	const struct bench_env *e = &r->env;
	const struct bench_target *t = &r->target;
	char size[32];

	fprintf(f, "$ %s\nferry %s | %s | %s (%d CPU%s)\n", e->command, e->version, e->kernel,
		e->cpu, e->cpus, e->cpus == 1 ? "" : "s");
	if (r->kind == BENCH_DISK) {
		fmt_bytes(size, sizeof size, t->size);
		fprintf(f, "%s: %s %s%s%s%s%s%s%s | %s test\n", t->path, t->fstype[0] ? t->fstype : "?",
			t->device[0] ? "on " : "",
			t->device[0] ? t->device : (t->memory ? "(memory)" : "(no block device)"),
			t->model[0] ? " (" : "", t->model, t->model[0] ? ")" : "",
			t->usb[0] ? ", " : "", t->usb, size);
	} else if (r->kind == BENCH_REMOTE) {
		const struct bench_remote_info *m = &r->remote;
		fprintf(f, "server %s: %s\nround trip %.2f ms; disk and end-to-end stages at "
			"protection %s\nserver disk: %s\nthis machine's test file: in %s\n", m->server,
			m->server_env[0] ? m->server_env : "?", m->rtt_ms, m->level,
			m->server_disk[0] ? m->server_disk : "?", m->local);
	} else {
		fprintf(f, "records of %u bytes, one core, wall clock; a connection from here uses %s"
			" with %s\n(%s)\n", r->crypto.record, r->crypto.picks, r->crypto.backend,
			r->crypto.picks_why);
	}
	fprintf(f, "link: %s\n\n", e->link[0] ? e->link : "no speed readable");
}

static void cliff_line(FILE *f, const struct bench_stage *st)
{
	char b[32], s[32], at[32];

	fmt_rate(b, sizeof b, st->unit, st->cliff.burst);
	fmt_rate(s, sizeof s, st->unit, st->cliff.sustained);
	fmt_bytes(at, sizeof at, st->cliff.bytes);
	fprintf(f, "  cache cliff: %s for the first %s (%.1f s), then %s sustained\n", b, at,
		st->cliff.at_s, s);
}

/* One line of columns, without trailing blanks (empty columns at the end). */
static void columns(FILE *f, const char *a, const char *b, const char *c, const char *d)
{
	char line[300];
	int n = snprintf(line, sizeof line, "%-28s %14s   %-36s %s", a, b, c, d);

	if (n < 0)
		return;
	if ((size_t)n >= sizeof line)
		n = (int)sizeof line - 1;
	while (n > 0 && line[n - 1] == ' ')
		n--;
	fprintf(f, "%.*s\n", n, line);
}

static void row(FILE *f, const struct bench_stage *st)
{
	char rate[32], shown[40];
	int hide = st->verdict == BENCH_CACHED;

	fmt_rate(rate, sizeof rate, st->unit, st->rate);
	snprintf(shown, sizeof shown, hide ? "(%s)" : "%s", rate);
	columns(f, st->label, shown, st->method, st->note);
	if (st->cliff.found && !hide)
		cliff_line(f, st);
	/* A write the device still owed at the end: the rate above includes it. */
	if (st->sync_s > 0.05 && st->sync_s > 0.1 * st->seconds)
		fprintf(f, "  of its %.1f s, %.1f s were the final fdatasync\n", st->seconds, st->sync_s);
}

static void verdict_lines(FILE *f, const char *dir, const struct bench_verdict_line *v)
{
	fprintf(f, "\n%s is limited by: %s\n  %s\n", dir, v->stage, v->figures);
	if (v->suggest[0])
		fprintf(f, "  -> %s\n", v->suggest);
}

int bench_write_table(FILE *f, const struct bench_report *r)
{
	header(f, r);
	columns(f, "stage", "rate", r->kind == BENCH_CRYPTO ? "backend" : "how",
		r->kind == BENCH_DISK ? "checked against /proc/diskstats" : "");
	for (uint32_t i = 0; i < r->nstages && i < BENCH_MAX_STAGES; i++)
		row(f, &r->stages[i]);
	if (r->kind == BENCH_REMOTE) {
		verdict_lines(f, "Upload", &r->remote.up);
		verdict_lines(f, "Download", &r->remote.down);
	}
	if (r->kind != BENCH_CRYPTO)
		fprintf(f, "\nMB/s = 10^6 bytes/s; %.1f s; a cached figure (in parentheses) is not the"
			" disk's speed\n", r->elapsed);
	if (fflush(f) != 0 || ferror(f))
		return err_sys(-EIO, "writing the table");
	return 0;
}
