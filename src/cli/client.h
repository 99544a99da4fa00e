/* SPDX-License-Identifier: MIT */
/* The client's side of a connection: connect, handshake, check the server's
 * host key against known hosts (ssh's habits), send the REQUEST. */
#ifndef FERRY_CLI_CLIENT_H
#define FERRY_CLI_CLIENT_H

#include "cli/remote.h"
#include "proto/msg.h"
#include "session/conn.h"

struct xfilter;

struct client_opts {
	const char *identity;      /* -i; NULL = ferry's default id_ferry */
	const char *known_hosts;   /* NULL = ferry's default known_hosts */
	int accept_new;
	int protection;            /* enum protection */
	unsigned cipher_mask;      /* 0 = all */
	int verbose, quiet;
	int timeout_ms;
	uint64_t bwlimit;          /* bytes/s */
	int family;                /* -4 / -6: 4 or 6; 0 = either */
	int compress_level;        /* -z: what this side compresses with; 0 = the default */
	const struct xfilter *filter;   /* sent after the REQUEST when it has REQ_FILTER */
	/* ferry pair: an unknown host key is not asked about or added (the code
	 * proves it; the caller pins it after); a changed one is still refused */
	int pairing;
	uint8_t *host_pub;         /* when set: the server's key, KEY_LEN bytes */
	int partial_delete;        /* a push -R or --files-from with --delete: only to a server
				      that knows DIRB_PARTIAL (HELLO_PARTIAL) */
	int missing_ok;            /* --ignore-missing-args: a source the server says does
				      not exist is CLIENT_NO_SOURCE, in silence */
};

/* client_open's answer when o->missing_ok and the source does not exist */
enum { CLIENT_NO_SOURCE = -1 };

/* Connects and authenticates; on success c->ch is set and the server's
 * ACCEPT is in *acc. Returns 0, CLIENT_NO_SOURCE, or an exit code, the
 * failure already printed: a pull's or a listing's source that does not
 * exist is rsync's 23 (a file not transferred). */
int client_open(const struct remote *r, const struct client_opts *o, const struct m_request *rq,
		struct conn *c, struct m_accept *acc);

/* A string from the peer, fit for the terminal: returned as it is when it is
 * printable ASCII and valid UTF-8, else quoted into buf with control bytes,
 * C1 and invalid UTF-8 as \xHH (cap >= 16). */
const char *peer_quote(char *buf, size_t cap, const char *s);

#endif
