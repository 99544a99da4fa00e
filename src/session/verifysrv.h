/* SPDX-License-Identifier: MIT */
/* ferry verify HOST:MODULE, the server's side (PROTOCOL.md section 10): the
 * module's verify pass (snapverify.h), run for a client at the lowest
 * priority, each damaged file and the progress sent as they come. */
#ifndef FERRY_SESSION_VERIFYSRV_H
#define FERRY_SESSION_VERIFYSRV_H

#include "fs/jail.h"
#include "session/conn.h"

/* Reads the client's VERIFY, runs the pass, ends with a final
 * VERIFY_STATUS: 0, or <0 (a bad message, the pass failed). */
int verifysrv_run(struct conn *c, const struct jail *mod);

#endif
