/* SPDX-License-Identifier: MIT */
/* What the daemon does with one authenticated connection: reads the client's
 * REQUEST, checks the module, the client's key and the protection level
 * before it touches the file system, answers ACCEPT or REFUSE, then runs the
 * sending or receiving role on the module's jail. */
#ifndef FERRY_SESSION_SERVER_H
#define FERRY_SESSION_SERVER_H

#include "channel/channel.h"
#include "fs/afile.h"
#include "util/config.h"
#include "util/sandbox.h"

struct server_ctx {
	const struct ferry_config *cfg;
	const struct chan_peer *peer;   /* the client's authenticated static key */
	const char *addr;               /* the client's address, for the box's logs */
	struct writer_opts writer;
	/* Told once whether the client's key was accepted for the module (the
	 * daemon counts unauthenticated connections and failing addresses). */
	void (*on_auth)(void *ctx, int ok);
	void *ctx;
	/* The daemon's: confine the session once its module is open (NULL: not). */
	const struct sandbox_caps *sandbox;
};

/* 0 when the session ran (file errors included), 1 when the request was
 * refused (the client's key or request was not acceptable), <0 on failure. */
int server_session(struct channel *ch, const struct server_ctx *sc);
/* What a session leaves until its connection is closed, so that its client
 * does not wait for it: removing the view an older snapshot was read from. */
void server_session_after(void);

#endif
