/* SPDX-License-Identifier: MIT */
/* The command line: one function per subcommand, shared helpers, exit codes. */
#ifndef FERRY_CLI_CLI_H
#define FERRY_CLI_CLI_H

#include <stddef.h>
#include <stdint.h>

/* Exit codes (documented in ferry(1) and README); rsync's numbers where they exist. */
enum exit_code {
	EXIT_OK = 0,
	EXIT_USAGE = 1,          /* bad command line or config */
	EXIT_PROTOCOL = 2,       /* incompatible peer / handshake failure */
	EXIT_LOCAL = 3,          /* a local source or destination cannot be used */
	EXIT_REFUSED = 5,        /* the server refused: key, module, read-only, protection */
	EXIT_HOSTKEY = 6,        /* server host key unknown or changed */
	EXIT_SOCKET = 10,        /* cannot connect, or the connection broke */
	EXIT_STREAM = 12,        /* corrupt or tampered data stream */
	EXIT_SIGNAL = 20,        /* stopped by SIGINT/SIGTERM (no partial file is left) */
	EXIT_PARTIAL = 23,       /* some files failed; the others were transferred */
	EXIT_VANISHED = 24,      /* the only failures were source files gone before their read */
	EXIT_DEL_LIMIT = 25,     /* --max-delete left deletions undone (and nothing failed) */
	EXIT_TIMEOUT = 30,
};

int cmd_serve(int argc, char **argv);
int cmd_push(int argc, char **argv);
int cmd_pull(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_keygen(int argc, char **argv);
int cmd_known_hosts(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_admin(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_pair(int argc, char **argv);

/* ferry's own directory: $FERRY_HOME, else $XDG_CONFIG_HOME/ferry, else
 * ~/.config/ferry. Writes "dir/name" into out. */
int ferry_path(char *out, size_t cap, const char *name);
/* The daemon's host key when the config names none (beside the config file
 * if one is there, else in ferry's directory), and the pair socket's. */
int default_host_key(const char *config, char *out, size_t cap);
int default_pair_socket(const char *host_key, char *out, size_t cap);
/* Creates ferry's directory (0700) if missing. */
int ferry_dir_ensure(void);

/* Prints "ferry: <msg>" to stderr: the one line a failure gets. */
void die_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
