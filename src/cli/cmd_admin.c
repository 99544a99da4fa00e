/* SPDX-License-Identifier: MIT */
/* ferry admin: a module's snapshots, managed on the box itself, with no
 * client and no key (cron, procd, a person at the console):
 *   ferry admin list   MODULE|DIR
 *   ferry admin prune  MODULE|DIR [--dry-run] [--keep-last N] ... [--protect-within D]
 *   ferry admin delete MODULE|DIR SNAPSHOT
 *   ferry admin verify MODULE|DIR [--if-older D] [--restart]
 * MODULE is a module of the config (--config, default /etc/ferry/ferry.conf),
 * whose retention rules prune applies; DIR (anything with a '/') is a
 * module's path, whose rules come from the options alone. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "fs/jail.h"
#include "fs/snapstore.h"
#include "session/snapshots.h"
#include "session/snapverify.h"
#include "cli/verify_out.h"
#include "util/config.h"
#include "util/err.h"
#include "util/priority.h"
#include "util/retention.h"

#define DEFAULT_CONFIG "/etc/ferry/ferry.conf"

static const char USAGE[] =
	"usage: ferry admin list|prune|delete|verify MODULE|DIR [SNAPSHOT] [--config FILE]\n"
	"       [--dry-run] [--if-older D] [--restart]\n"
	"       [--keep-last N] [--keep-hourly N] [--keep-daily N] [--keep-weekly N]\n"
	"       [--keep-monthly N] [--keep-yearly N] [--keep-within D] [--protect-within D]";

static void print_snap(const struct snapinfo *s, const char *what)
{
	char when[32];
	time_t t = (time_t)s->time;
	struct tm tm;

	strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime_r(&t, &tm));
	printf("%-34s %-19s %-16s %10llu %15llu%s%s", s->name, when, s->client,
	       (unsigned long long)s->files, (unsigned long long)s->bytes, what[0] ? "  " : "",
	       what);
	if (s->failed)
		printf("  partial: %llu failed", (unsigned long long)s->failed);
	putchar('\n');
}

static void header(void)
{
	printf("%-34s %-19s %-16s %10s %15s\n", "SNAPSHOT", "TIME", "CLIENT", "CHANGED",
	       "BYTES ADDED");
}

struct plan { size_t keep, drop; };   /* the header goes before the first decision */

static void on_decision(void *ctx, const struct snapinfo *s, unsigned why)
{
	struct plan *p = ctx;
	char reasons[128], what[160];

	if (!p->keep && !p->drop)
		header();
	if (why) {
		snprintf(what, sizeof what, "keep (%s)", retention_reasons(why, reasons, sizeof reasons));
		p->keep++;
	} else {
		snprintf(what, sizeof what, "delete");
		p->drop++;
	}
	print_snap(s, what);
}

/* The module's path (and its rules) from the config, or the directory. */
static int resolve(const char *target, const char *config, char *path, size_t cap,
		   struct retention *keep)
{
	struct ferry_config cfg;

	if (strchr(target, '/')) {
		snprintf(path, cap, "%s", target);
		return 0;
	}
	if (config_load(config, &cfg) < 0)
		return die_msg("%s", err_msg()), EXIT_USAGE;
	const struct module_cfg *m = config_module(&cfg, target);
	int rc = EXIT_OK;
	if (!m)
		rc = (die_msg("%s: no module '%s'", config, target), EXIT_USAGE);
	else if (!m->snapshots && !m->append_only)
		rc = (die_msg("module '%s' keeps no snapshots ('snapshots = yes' in %s)", target,
			      config), EXIT_USAGE);
	else {
		snprintf(path, cap, "%s", m->path);
		*keep = m->keep;
	}
	config_free(&cfg);
	return rc;
}

int cmd_admin(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "keep-last", required_argument, NULL, 1 },
		{ "keep-hourly", required_argument, NULL, 2 },
		{ "keep-daily", required_argument, NULL, 3 },
		{ "keep-weekly", required_argument, NULL, 4 },
		{ "keep-monthly", required_argument, NULL, 5 },
		{ "keep-yearly", required_argument, NULL, 6 },
		{ "keep-within", required_argument, NULL, 7 },
		{ "protect-within", required_argument, NULL, 8 },
		{ "if-older", required_argument, NULL, 'o' },
		{ "restart", no_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *keys[] = { "", "keep last", "keep hourly", "keep daily", "keep weekly",
				      "keep monthly", "keep yearly", "keep within", "protect within" };
	struct retention keep = { 0 }, given = { 0 };
	struct verify_opts vo = { .bad = verify_print_bad, .progress = verify_print_progress };
	const char *config = DEFAULT_CONFIG;
	int dry = 0, ch, any_given = 0;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "n", opts, NULL)) != -1) {
		if (ch == 'c') {
			config = optarg;
		} else if (ch == 'n') {
			dry = 1;
		} else if (ch == 'o') {
			if (retention_duration(optarg, &vo.if_older) < 0)
				return die_msg("--if-older: %s", err_msg()), EXIT_USAGE;
		} else if (ch == 'r') {
			vo.restart = 1;
		} else if (ch >= 1 && ch <= 8) {
			if (retention_set(&given, keys[ch], optarg) < 0)
				return die_msg("--%s: %s", opts[ch + 1].name, err_msg()), EXIT_USAGE;
			any_given = 1;
		} else {
			return die_msg("%s", USAGE), EXIT_USAGE;
		}
	}
	if (argc - optind < 2)
		return die_msg("%s", USAGE), EXIT_USAGE;
	const char *cmd = argv[optind], *target = argv[optind + 1];
	int want_args = !strcmp(cmd, "delete") ? 3 : 2;
	if ((strcmp(cmd, "list") && strcmp(cmd, "prune") && strcmp(cmd, "delete") &&
	     strcmp(cmd, "verify")) ||
	    argc - optind != want_args)
		return die_msg("%s", USAGE), EXIT_USAGE;

	char path[4096];
	int rc = resolve(target, config, path, sizeof path, &keep);
	if (rc)
		return rc;
	if (any_given)   /* the options replace the config's rules */
		keep = given;
	struct jail j;
	if (jail_open(&j, path) < 0)
		return die_msg("%s", err_msg()), EXIT_LOCAL;

	if (!strcmp(cmd, "list")) {
		struct snapinfo *list;
		size_t n;
		if ((rc = snap_list(&j, &list, &n)) == 0) {
			header();
			for (size_t i = 0; i < n; i++)
				print_snap(&list[i], "");
			free(list);
		}
	} else if (!strcmp(cmd, "verify")) {
		struct verify_report r;
		lowest_priority("admin");
		if ((rc = snap_verify(&j, &vo, &r)) == 0)
			rc = verify_print_summary(&r);
		if (rc > 0) {
			jail_close(&j);
			return rc;
		}
	} else if (!strcmp(cmd, "delete")) {
		if ((rc = snap_delete(&j, argv[optind + 2])) == 0)
			printf("deleted snapshot %s\n", argv[optind + 2]);
	} else {
		struct plan p = { 0, 0 };
		if (!retention_any(&keep))
			fprintf(stderr, "ferry: no retention rule is set: every snapshot is kept\n");
		if (!dry)
			lowest_priority("admin");
		rc = snap_prune(&j, &keep, dry, on_decision, &p);
		if (rc >= 0)
			printf("%zu snapshot(s) kept, %zu %s\n", p.keep, p.drop,
			       dry ? "would be deleted (--dry-run)" : "deleted");
	}
	jail_close(&j);
	if (rc < 0)
		return die_msg("%s: %s", target, err_msg()), EXIT_LOCAL;
	return EXIT_OK;
}
