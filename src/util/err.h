/* SPDX-License-Identifier: MIT */
/* One error line per failure: the function that fails records what and where,
 * returns a negative errno, and the caller that gives up prints err_msg(). */
#ifndef FERRY_UTIL_ERR_H
#define FERRY_UTIL_ERR_H

#include <stdarg.h>

/* Records the message (printf-style) and returns `code` (a negative errno),
 * so that failure sites read `return err_set(-EINVAL, "path %s: ...", p);`. */
int err_set(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Like err_set, with ": <strerror(-code)>" appended. */
int err_sys(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prepends context to the recorded message ("context: old message"), returns code. */
int err_wrap(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The last recorded message of this thread ("" if none). */
const char *err_msg(void);
void err_clear(void);

#endif
