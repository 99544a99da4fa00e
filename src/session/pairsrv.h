/* SPDX-License-Identifier: MIT */
/* The box's side of `ferry pair HOST CODE` (PROTOCOL.md section 11): a
 * connection whose key no module knows yet asks to be paired. The session
 * takes the one-time code from the `ferry pair MODULE` process waiting on
 * the box (over its unix socket, the "pair socket"), runs CPace with the
 * client inside the Noise session, and on a match hands the client's key
 * to that process, which adds it to the module's authorized keys. The
 * waiting process, not the daemon, writes the keys file, counts the wrong
 * tries (three end the code) and ends the code after one success. */
#ifndef FERRY_SESSION_PAIRSRV_H
#define FERRY_SESSION_PAIRSRV_H

#include "proto/msg.h"
#include "session/conn.h"
#include "session/server.h"

/* Runs the pairing after the REQUEST (op OP_PAIR). 0 when paired, 1 when
 * refused (no pairing waiting, wrong code, another module), <0 on failure. */
int pairsrv_run(struct conn *c, const struct server_ctx *sc, const struct m_request *rq);

/* The lines on the pair socket, shared with the waiting process:
 *   waiting process -> session:  "PAIR <module> <code>\n"
 *   session -> waiting process:  "OK <addr> <key base64>\n" | "WRONG <addr>\n" | "ABORT <addr>\n"
 *   waiting process -> session:  after OK "ADDED\n" or "FAILED <reason>\n",
 *                                after WRONG "LEFT <n>\n" */
#define PAIR_LINE_MAX 512
/* One line from the pair socket within timeout_ms, NUL-terminated without
 * its '\n'. 0, or <0 (timeout, the other end gone, too long a line). */
int pair_read_line(int fd, char *line, size_t cap, int timeout_ms);
/* CPace's channel identifier: what the shares are for */
#define PAIR_CI "ferry/1 pair"

#endif
