/* SPDX-License-Identifier: MIT */
/* ferry known-hosts --remove HOST [--known-hosts FILE]: ssh-keygen -R for
 * ferry, the one step after a server's key was replaced on purpose. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "channel/keys.h"
#include "cli/cli.h"
#include "cli/remote.h"
#include "util/config.h"
#include "util/err.h"

/* HOST or HOST:PORT as ferry's messages show it ("nas", "nas:7883"), or a
 * ferry:// URL: the name the known-hosts file uses. */
static void host_key_name(const char *arg, char *out, size_t cap)
{
	struct remote r;

	if (!strncmp(arg, "ferry://", 8) && remote_parse(arg, FERRY_DEFAULT_PORT, &r) == 0)
		snprintf(out, cap, "%s", r.display);
	else
		snprintf(out, cap, "%s", arg);
}

int cmd_known_hosts(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "remove", required_argument, NULL, 'R' },
		{ "known-hosts", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	const char *host = NULL, *file = NULL;
	char path[4096], name[300];
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "R:", opts, NULL)) != -1) {
		if (ch == 'R')
			host = optarg;
		else if (ch == 'k')
			file = optarg;
		else
			return EXIT_USAGE;
	}
	if (!host || optind != argc)
		return die_msg("usage: ferry known-hosts --remove HOST [--known-hosts FILE]"), EXIT_USAGE;
	if (file)
		snprintf(path, sizeof path, "%s", file);
	else if (ferry_path(path, sizeof path, "known_hosts") < 0)
		return die_msg("%s", err_msg()), EXIT_LOCAL;
	host_key_name(host, name, sizeof name);
	int n = known_hosts_remove(path, name);
	if (n < 0)
		return die_msg("%s", err_msg()), EXIT_LOCAL;
	if (n == 0)
		return die_msg("no key for %s in %s", name, path), EXIT_USAGE;
	fprintf(stderr, "ferry: removed the key of %s from %s; the next connection asks again\n",
		name, path);
	return EXIT_OK;
}
