/* SPDX-License-Identifier: MIT */
/* Remote arguments: HOST:MODULE[/PATH] (default port) or
 * ferry://HOST[:PORT]/MODULE[/PATH], IPv6 addresses in brackets. */
#ifndef FERRY_CLI_REMOTE_H
#define FERRY_CLI_REMOTE_H

struct remote {
	char host[256];          /* without brackets */
	unsigned port;
	char module[256];
	char path[4097];         /* inside the module, no leading or trailing '/' */
	int slash;               /* the path was written with a trailing '/' */
	char display[300];       /* HOST or [V6]:PORT: the known-hosts name */
};

/* 1 if arg names a remote (a ':' before any '/', or ferry://), else 0. */
int remote_is(const char *arg);
/* Parses arg; -EINVAL with err_msg() naming what is wrong. */
int remote_parse(const char *arg, unsigned default_port, struct remote *r);

#endif
