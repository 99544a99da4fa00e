/* SPDX-License-Identifier: MIT */
/* ferry: one binary, a table of subcommands. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "channel/channel.h"
#include "cli/cli.h"
#include "cli/opts.h"

static int cmd_version(int argc, char **argv);
static int cmd_help(int argc, char **argv);

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;
} commands[] = {
	{ "serve", cmd_serve, "serve [DIR] [--config FILE] [--listen ADDR[:PORT]] [--host-key FILE]\n"
	  "                [--authorized-keys FILE] [--check-config] [-v|-q]" },
	{ "push", cmd_push, "push [OPTIONS] SRC... HOST:MODULE[/PATH]" },
	{ "pull", cmd_pull, "pull [OPTIONS] HOST:MODULE[/PATH] DEST" },
	{ "ls", cmd_ls, "ls [OPTIONS] HOST:MODULE[/PATH]" },
	{ "keygen", cmd_keygen, "keygen [-f FILE] [-C COMMENT] [--force]" },
	{ "pair", cmd_pair, "pair MODULE [--config FILE] [--valid DURATION]   (on the box)\n"
	  "  ferry pair HOST[:MODULE] CODE [--identity FILE] [--known-hosts FILE]   (on the PC)" },
	{ "known-hosts", cmd_known_hosts, "known-hosts --remove HOST [--known-hosts FILE]" },
	{ "admin", cmd_admin, "admin list|prune|delete|verify MODULE|DIR [SNAPSHOT] [--config FILE]\n"
	  "                [--dry-run] [--if-older D] [--restart]\n"
	  "                [--keep-last|hourly|daily|weekly|monthly|yearly N] [--keep-within D]\n"
	  "                [--protect-within D]" },
	{ "verify", cmd_verify, "verify HOST:MODULE|MODULE|DIR [--if-older D] [--restart]" },
	{ "bench", cmd_bench, "bench disk PATH | crypto | HOST:MODULE [--size SIZE] [--seconds N] [--json] [--svg FILE]" },
	{ "version", cmd_version, "version" },
	{ "help", cmd_help, "help" },
};

static int cmd_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("ferry %s (protocol FERRY/1, bulk cipher backend %s, hardware AES %s)\n",
	       FERRY_VERSION, chan_backend_name(), chan_have_hw_aes() ? "yes" : "no");
	return EXIT_OK;
}

static int cmd_help(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--rsync")) {
		xfer_opts_print_rsync();
		return EXIT_OK;
	}
	printf("ferry %s: fast, encrypted file transfer for small NAS boxes\n\nUsage:\n",
	       FERRY_VERSION);
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		printf("  ferry %s\n", commands[i].usage);
	printf("\nRemote paths: HOST:MODULE[/PATH] or HOST::MODULE[/PATH] (port 7873, or --port), or\n"
	       "ferry://HOST[:PORT]/MODULE[/PATH].\n"
	       "A source ending in '/' sends the directory's contents, as rsync does.\n\n"
	       "push/pull/ls options (rsync's, with rsync's meaning):\n"
	       "  -v, --verbose           list changes; -vv for debug output\n"
	       "  -i, --itemize-changes   list changes as rsync does (>f+++++++++ name)\n"
	       "  -q, --quiet             errors only\n"
	       "  -n, --dry-run           show what would change, change nothing\n"
	       "  -c, --checksum          compare contents, not size and modification time\n"
	       "      --size-only         equal size is up to date, whatever the mtime\n"
	       "  -I, --ignore-times      send every file, even when size and mtime match\n"
	       "  -u, --update            keep files that are newer on the receiver\n"
	       "      --existing          create nothing new on the receiver\n"
	       "      --ignore-existing   leave alone what exists on the receiver\n"
	       "      --delete            delete files on the receiver that the sender lacks\n"
	       "      --delete-after      ...only once every file is in (--delete-delay too)\n"
	       "  -b, --backup            keep what is replaced or deleted as NAME~ (--suffix)\n"
	       "      --backup-dir DIR    ...or under DIR of the destination\n"
	       "      --chmod CHMOD       modes as chmod(1) would make them (D/F prefixes)\n"
	       "  -P, --progress          progress line (default on a terminal)\n"
	       "      --info=progress2    one progress line for the whole transfer\n"
	       "  -h, --human-readable    sizes in K, M, G (-hh: powers of 1024)\n"
	       "      --stats             counts and bytes at the end\n"
	       "      --log-file FILE     append what was done to FILE\n"
	       "  -z, --compress          zstd-compress file data when the module allows it\n"
	       "      --compress-level=N  1..19 (default 3; 0: do not compress)\n"
	       "      --bwlimit RATE      KiB/s, or with a K/M/G suffix\n"
	       "      --timeout SECS      I/O timeout (default 30)\n"
	       "      --port PORT         the daemon's port (default 7873)\n"
	       "  -4, -6                  IPv4 or IPv6 only\n"
	       "      --fsync             fdatasync every file (default: one syncfs at the end)\n"
	       "  -a, -r                  accepted: ferry always recurses and keeps links, modes and\n"
	       "                          times (-rlpt); ls -r lists the whole tree\n"
	       "  'ferry help --rsync' lists every rsync flag and what ferry does with it.\n\n"
	       "ferry's own:\n"
	       "      --identity FILE     private key (default ~/.config/ferry/id_ferry)\n"
	       "      --known-hosts FILE  known server keys (default ~/.config/ferry/known_hosts)\n"
	       "      --accept-new        trust and remember an unknown server key\n"
	       "      --protection LEVEL  encrypt (default), integrity or none\n"
	       "      --cipher NAME       aesgcm, chachapoly or auto (default)\n"
	       "      --no-verify         with --protection none: skip the whole-file hash and let the\n"
	       "                          kernel move the data (sendfile/splice); corruption in\n"
	       "                          transit is then not detected\n"
	       "      --no-resume         an interrupted transfer keeps nothing (by default it keeps\n"
	       "                          what arrived as .ferry-part.NAME and the next run resumes)\n\n"
	       "Exit codes: 0 ok, 1 usage or config, 2 handshake/protocol, 3 local file error,\n"
	       "5 refused by the server, 6 host key unknown or changed, 10 connection,\n"
	       "12 corrupt or tampered stream, 20 stopped by a signal, 23 some files failed,\n"
	       "30 timeout.\n"
	       "See ferry(1).\n");
	return EXIT_OK;
}

/* `ferry push --help`, as rsync and scp users type it: the options end at
 * "--". As in rsync, -h alone is help, anywhere else --human-readable. */
static int wants_help(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[2], "-h"))
		return 1;
	for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help"))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		cmd_help(0, NULL);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_help(0, NULL);
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))
		return cmd_version(0, NULL);
	/* A peer that goes away must be an error return, not a silent death. */
	signal(SIGPIPE, SIG_IGN);
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (!strcmp(argv[1], commands[i].name))
			return wants_help(argc, argv) ? cmd_help(0, NULL)
						      : commands[i].fn(argc - 1, argv + 1);
	die_msg("unknown command '%s' (try 'ferry help')", argv[1]);
	return EXIT_USAGE;
}
