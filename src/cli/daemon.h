/* SPDX-License-Identifier: MIT */
#ifndef FERRY_CLI_DAEMON_H
#define FERRY_CLI_DAEMON_H

#include "channel/keys.h"
#include "util/config.h"
#include "util/sandbox.h"

struct daemon {
	struct ferry_config cfg;          /* owned; replaced by reload */
	struct keypair host_key;
	/* Re-reads the configuration into cfg (SIGHUP); on error cfg is unchanged. */
	int (*reload)(struct daemon *d);
	void *ctx;
	struct sandbox_caps sandbox;      /* what sessions get: probed at start */
};

/* Listens on cfg.global.listen and serves until SIGTERM/SIGINT. */
int daemon_run(struct daemon *d);

#endif
