/* SPDX-License-Identifier: MIT */
/* ferry bench disk PATH | crypto | HOST:MODULE [--size SIZE] [--seconds N]
 * [--json] [--svg FILE] [-q]: the command line around src/bench/ and
 * cli/bench_remote.c (options, the progress line, where the table, JSON and
 * SVG go, exit codes). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/bench.h"
#include "cli/bench_remote.h"
#include "cli/cli.h"
#include "cli/remote.h"
#include "util/config.h"
#include "util/err.h"

#define BENCH_USAGE "usage: ferry bench disk PATH [--size SIZE] | crypto | HOST:MODULE [--size SIZE] [--protection LEVEL] [--local DIR]   [--seconds N] [--json] [--svg FILE] [-q]"

struct bench_cli {
	const char *what, *path, *svg;
	int json, quiet, remote;
	unsigned port;
	struct bench_opts o;
	struct bench_remote_opts ro;
};

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

/* The stages stop at the next block; the files are removed before exit. */
static void catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static void show_progress(void *ctx, const struct bench_progress *p)
{
	double v = bench_shown_rate(p->unit, p->rate);

	(void)ctx;
	if (p->goal)
		fprintf(stderr, "\r\033[K%-24s %10.1f %-7s %5.1f s  %3.0f %%", p->label, v,
			bench_unit_name(p->unit), p->elapsed, 100.0 * (double)p->done / (double)p->goal);
	else
		fprintf(stderr, "\r\033[K%-24s %10.1f %-7s %5.1f s", p->label, v,
			bench_unit_name(p->unit), p->elapsed);
}

static int parse_seconds(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v > 0 && v <= 3600))
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse(int argc, char **argv, struct bench_cli *b)
{
	static const struct option opts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "seconds", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "svg", required_argument, NULL, 'g' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "protection", required_argument, NULL, 'p' },
		{ "identity", required_argument, NULL, 'i' },
		{ "known-hosts", required_argument, NULL, 'k' },
		{ "port", required_argument, NULL, 'P' },
		{ "local", required_argument, NULL, 'l' },
		{ "accept-new", no_argument, NULL, 'a' },
		{ "timeout", required_argument, NULL, 'T' },
		{ NULL, 0, NULL, 0 },
	};
	int ch, remote_only = 0;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "q", opts, NULL)) != -1) {
		if (ch == 's' && bench_parse_size(optarg, &b->o.size) == 0 && b->o.size > 0)
			continue;
		if (ch == 't' && parse_seconds(optarg, &b->o.seconds) == 0)
			continue;
		if (ch == 's' || ch == 't')
			return die_msg("bench: bad --%s '%s'", ch == 's' ? "size" : "seconds", optarg), -1;
		if (ch == 'p' && parse_protection(optarg, &b->ro.co.protection) < 0)
			return die_msg("bench: --protection %s: use encrypt, integrity or none", optarg), -1;
		if (ch == 'P') {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);
			if (end == optarg || *end || !v || v > 65535)
				return die_msg("bench: bad --port '%s'", optarg), -1;
			b->port = (unsigned)v;
		}
		if (ch == 'T') {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);
			if (end == optarg || *end || v > 86400)
				return die_msg("bench: bad --timeout '%s'", optarg), -1;
			b->ro.co.timeout_ms = (int)v * 1000;
		}
		remote_only |= ch == 'p' || ch == 'i' || ch == 'k' || ch == 'P' || ch == 'l' ||
			       ch == 'a' || ch == 'T';
		if (ch == 'j')
			b->json = 1;
		else if (ch == 'g')
			b->svg = optarg;
		else if (ch == 'q')
			b->quiet = 1;
		else if (ch == 'i')
			b->ro.co.identity = optarg;
		else if (ch == 'k')
			b->ro.co.known_hosts = optarg;
		else if (ch == 'l')
			b->ro.local = optarg;
		else if (ch == 'a')
			b->ro.co.accept_new = 1;
		else if (ch != 'p' && ch != 'P' && ch != 'T')
			return die_msg("%s", BENCH_USAGE), -1;
	}
	b->what = optind < argc ? argv[optind++] : "";
	b->remote = remote_is(b->what);
	if (!strcmp(b->what, "disk") && optind < argc)
		b->path = argv[optind++];
	if ((strcmp(b->what, "crypto") && !b->path && !b->remote) || optind != argc ||
	    (!strcmp(b->what, "crypto") && b->o.size) || (remote_only && !b->remote))
		return die_msg("%s", BENCH_USAGE), -1;
	return 0;
}

static int run_remote(struct bench_cli *b, struct bench_report *r)
{
	struct remote rm;

	if (remote_parse(b->what, b->port ? b->port : FERRY_DEFAULT_PORT, &rm) < 0)
		return die_msg("bench: %s", err_msg()), EXIT_USAGE;
	if (rm.path[0])
		return die_msg("bench: HOST:MODULE measures a module, not a path in it"), EXIT_USAGE;
	struct stat st;
	if (stat(b->ro.local, &st) < 0 || !S_ISDIR(st.st_mode) || access(b->ro.local, W_OK) < 0)
		return die_msg("bench: --local %s: not a directory this user can write (this side's "
			       "test file goes there)", b->ro.local), EXIT_LOCAL;
	b->ro.size = b->o.size ? b->o.size : BENCH_REMOTE_SIZE;
	b->ro.seconds = b->o.seconds ? b->o.seconds : BENCH_REMOTE_SECONDS;
	b->ro.progress = b->o.progress != NULL;
	b->ro.stop = b->o.stop;
	return bench_remote_run(&rm, &b->ro, r);
}

static int write_svg(const char *file, const struct bench_report *r)
{
	FILE *f = fopen(file, "w");
	int rc;

	if (!f)
		return err_sys(-errno, "--svg %s", file);
	rc = bench_write_svg(f, r);
	if (fclose(f) != 0 && rc == 0)
		rc = err_sys(-errno, "--svg %s", file);
	return rc;
}

static int outputs(const struct bench_cli *b, const struct bench_report *r)
{
	int rc = b->json ? bench_write_json(stdout, r) : bench_write_table(stdout, r);

	if (rc == 0 && b->svg)
		rc = write_svg(b->svg, r);
	if (rc < 0)
		return die_msg("%s", err_msg()), EXIT_LOCAL;
	return EXIT_OK;
}

int cmd_bench(int argc, char **argv)
{
	struct bench_cli b = { .o = { .stop = &stop_flag },
			       .ro = { .co = { .protection = PROT_ENCRYPT, .timeout_ms = 30000 },
				       .local = "." } };
	struct bench_report *r;
	int rc;

	if (!(r = calloc(1, sizeof *r)))
		return die_msg("out of memory"), EXIT_LOCAL;
	/* Before getopt reorders argv: the header shows the command as typed. */
	bench_env_collect(&r->env, argc, argv);
	if (parse(argc, argv, &b) < 0) {
		free(r);
		return EXIT_USAGE;
	}
	if (!b.quiet && isatty(STDERR_FILENO))
		b.o.progress = show_progress;
	catch_signals();
	if (b.remote) {
		if ((rc = run_remote(&b, r)) == EXIT_OK)
			rc = outputs(&b, r);
		free(r);
		return rc;
	}
	rc = b.path ? bench_disk_run(b.path, &b.o, r) : bench_crypto_run(&b.o, r);
	if (b.o.progress)
		fputs("\r\033[K", stderr);
	if (rc == -EINTR) {
		free(r);
		return die_msg("bench stopped by a signal (its files are removed)"), EXIT_SIGNAL;
	}
	if (rc < 0) {
		die_msg("bench %s: %s", b.what, err_msg());
		free(r);
		return EXIT_LOCAL;
	}
	rc = outputs(&b, r);
	free(r);
	return rc;
}
