/* SPDX-License-Identifier: MIT */
/* The server's side of `ferry bench HOST:MODULE` (docs/BENCH.md, PROTOCOL.md
 * section 9): the client asks for one step at a time (BENCH), the server
 * does it, bounded in bytes and time by its own limits, and answers
 * BENCH_DONE with its elapsed time, CPU and TCP_INFO. */
#ifndef FERRY_SESSION_BENCHSRV_H
#define FERRY_SESSION_BENCHSRV_H

#include <stdint.h>

#include "session/conn.h"

/* What one step may cost the box, whatever the client asks. */
/* A network step moves memory only (nothing is written), so time bounds
 * it: an upload still running after BENCHSRV_MAX_SECONDS ends the session,
 * a download stops there. Its size cap lets a fast link run for seconds
 * (1 GiB lasted 0.3 s on loopback, too short to agree with iperf3). */
#define BENCHSRV_MAX_NET (64ull << 30)     /* bytes through the network, one step */
#define BENCHSRV_MAX_FILE (256ull << 20)   /* bytes written to the module, one step */
#define BENCHSRV_MAX_SECONDS 20.0          /* a network step, a download, the disk stages */
#define BENCHSRV_MAX_SESSION_S 300.0       /* the steps of one session */
#define BENCHSRV_MAX_WRITTEN (1ull << 30)  /* bytes one session may write, at most */

struct benchsrv {
	struct conn *c;
	int root_fd;            /* the module's directory (borrowed) */
	const char *module;     /* its name, for the report */
	int writable;           /* not a read-only module */
	int schedstat;          /* /proc/self/schedstat, opened before the sandbox (-1: none) */
};

/* Serves steps until the client closes the connection: 0, or <0 (a bad
 * step, the connection lost). Removes its files on every return. */
int benchsrv_run(const struct benchsrv *b);

#endif
