/* SPDX-License-Identifier: MIT */
/* A connection after the handshake: protocol messages over the channel. */
#ifndef FERRY_SESSION_CONN_H
#define FERRY_SESSION_CONN_H

#include <stdint.h>

#include "channel/channel.h"
#include "proto/msg.h"
#include "util/ratelimit.h"

struct zdata;

struct conn {
	struct channel *ch;             /* owned */
	enum protection prot;           /* data protection in use */
	int verify;                     /* whole-file hash: at PROT_NONE unless REQ_NO_VERIFY */
	struct ratelimit rl;            /* file data rate; rate 0 = unlimited */
	uint16_t peer_code;             /* the code of the peer's ERROR, once one came */
	struct zdata *z;                /* compression, when negotiated (session/zdata.h); else NULL */
	int check_stored;               /* a sender in a snapshot module: each file's bytes are
					   checked against the hash recorded when it was stored */
	int fake_super;                 /* a sender in a fake-super module: a file's mode is the
					   one stored with it (session/xmeta.h) */
	int noop;                       /* the peer skips NOOP (its REQUEST had REQ2_NOOP):
					   conn_keepalive sends them */
	uint64_t ka_out;                /* conn_keepalive: the channel's bytes out when */
	double ka_at;                   /* ... it last saw them change (0: not yet) */
	uint8_t out[MSG_MAX_ENCODED];
};

/* Sets the data protection of the connection and its channel; the
 * whole-file hash is used at PROT_NONE unless the request said NO_VERIFY. */
void conn_set_protection(struct conn *c, int prot, uint32_t req_flags);

/* Encodes and queues one message (chan_flush sends it). */
int conn_send(struct conn *c, const struct msg *m);
/* Sends a message with one u64/u32 field quickly: DATA, HOLE, WANT, DECIDED. */
int conn_send_len(struct conn *c, uint8_t type, uint64_t v);
/* Receives and decodes the next message, NOOPs skipped. A peer's MSG_ERROR
 * becomes -ECONNABORTED with err_msg() "peer reported: <reason>". A clean
 * EOF is -EPIPE. */
int conn_recv(struct conn *c, struct msg *m);
/* 1 if a message can be received without waiting. */
int conn_pending(struct conn *c);
/* Refuses the request: a REFUSE with `code` and the formatted reason,
 * logged as a warning, flushed (best effort). Returns 1, a session's
 * "refused" result. */
int conn_refuse(struct conn *c, uint16_t code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Best effort: tells the peer why we stop (MSG_ERROR) and flushes. */
void conn_fail(struct conn *c, uint16_t code, const char *reason);
int conn_flush(struct conn *c);
/* In a long piece of work that sends nothing (a hash of a large file, many
 * deletions): a NOOP, flushed, when nothing was written for a second and the
 * peer skips them, so that its I/O timeout (the client's: 30 s by default)
 * does not end the session. The peer's conn_recv skips NOOPs, and each NOOP
 * comes before a message of the work's result, so no wait is changed.
 * c may be NULL. */
int conn_keepalive(struct conn *c);

#endif
