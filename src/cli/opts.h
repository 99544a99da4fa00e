/* SPDX-License-Identifier: MIT */
/* push / pull / ls options. The rule for rsync's users: a flag rsync has
 * keeps rsync's meaning here, or is refused with one line that says why;
 * none gets a bare getopt error (the table in opts.c lists every flag of
 * rsync's OPTIONS SUMMARY; ferry(1) shows it). */
#ifndef FERRY_CLI_OPTS_H
#define FERRY_CLI_OPTS_H

#include <stdint.h>

#include "cli/client.h"

/* A filter rule as given, in command-line order (cli/filter_args.c). */
enum filter_arg_kind { FA_RULE, FA_EXCLUDE, FA_INCLUDE, FA_EXCLUDE_FROM, FA_INCLUDE_FROM, FA_F };
struct filter_arg {
	enum filter_arg_kind kind;
	const char *arg;            /* argv's; NULL for -F */
};

struct xfer_cli {
	struct client_opts co;
	uint32_t flags;             /* REQ_* */
	int progress;               /* -P / --progress / --info=progress2 */
	int progress_mode;          /* PROGRESS_* */
	int human;                  /* -h level */
	int itemize;                /* -i */
	int stats;                  /* --stats */
	int ignore_missing;         /* --ignore-missing-args */
	const char *log_file;       /* --log-file */
	const char *backup_dir;     /* --backup-dir (implies --backup) */
	const char *suffix;         /* --suffix */
	const char *chmod;          /* --chmod, checked: every one given, joined by ',' (chmod_buf) */
	char chmod_buf[MSG_MAX_NAME + 1];   /* as rsync, each --chmod adds to the ones before */
	unsigned port;              /* --port; 0 = as the remote path says */
	int recursive;              /* -r or -a given: ls lists the whole tree */
	int zlevel, zlevel_set;     /* --compress-level */
	const struct filter_arg *fargs;   /* the rules in order (the parser's, for the process) */
	size_t nfargs;
	int delete_excluded;        /* --delete-excluded (implies --delete) */
	int del_when;               /* the --delete-WHEN option given (O_DEL_*), 0 = none */
	uint32_t max_delete;        /* --max-delete, with REQ_MAX_DELETE */
	uint32_t flags2;            /* REQ2_* */
	uint64_t max_size, min_size;   /* --max-size, --min-size, with REQ2_* */
	int follow;                 /* -L, -k: enum follow (fs/dirlist.h); push only */
	int explicit_r;             /* -r itself (-a's does not count with --files-from) */
	const char *files_from;     /* --files-from FILE ("-": stdin); push only */
	int from0;                  /* -0, --from0: its entries end at a NUL */
	int relative;               /* -R: each source's path (after a "/./") is kept; push only */
	int prune;                  /* -m: --prune-empty-dirs; push only */
	int mkpath;                 /* --mkpath: a pull creates its destination's missing
				       parents (a push always creates them on the box) */
	uint32_t modify_window;     /* --modify-window=N (N >= 0), with REQ2_MODIFY_WINDOW */
	long long stop_at_ms;       /* --stop-after, --stop-at: when to stop, in ms of the wall
				       clock (CLOCK_REALTIME); 0 = never */
};

/* Parses argv (argv[0] is the subcommand); returns the index of the first
 * operand, or -1 after printing the one line that says what was wrong. */
int xfer_opts_parse(int argc, char **argv, struct xfer_cli *x);

/* ferry help --rsync: each rsync flag and what ferry does with it. */
void xfer_opts_print_rsync(void);

#endif
