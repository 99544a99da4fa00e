/* SPDX-License-Identifier: MIT */
/* What a verify pass shows, run on the box (ferry admin verify) or asked by
 * a client (ferry verify HOST:MODULE): a line per damaged file, a progress
 * line on a terminal, the summary and the exit code. */
#ifndef FERRY_CLI_VERIFY_OUT_H
#define FERRY_CLI_VERIFY_OUT_H

#include "session/snapverify.h"

void verify_print_bad(void *ctx, const char *where, const char *path);
void verify_print_progress(void *ctx, const struct verify_report *r, double secs);
/* 0, or EXIT_PARTIAL when something was damaged. */
int verify_print_summary(const struct verify_report *r);

#endif
