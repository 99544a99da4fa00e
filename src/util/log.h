/* SPDX-License-Identifier: MIT */
/* Logging to stderr (or syslog for the daemon). Levels: 0 quiet .. 3 debug. */
#ifndef FERRY_UTIL_LOG_H
#define FERRY_UTIL_LOG_H

enum log_level { LOG_ERR = 0, LOG_WARN = 1, LOG_INFO = 2, LOG_DEBUG = 3 };

void log_init(const char *prog, int level, int use_syslog);
void log_set_prefix(const char *prefix);   /* e.g. "[pid 123 127.0.0.1]" in the daemon */
int log_level(void);
/* Called before a line goes to stderr: the client clears its progress line,
 * so that an error never lands on top of it. */
void log_set_before(void (*fn)(void *), void *ctx);
/* Every line that goes to stderr (log_msg's, and what log_tee is given)
 * also goes to fn, without the program's name: the client's --log-file. */
void log_set_tee(void (*fn)(void *, const char *line), void *ctx);
void log_tee(const char *line);
void log_msg(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_err(...)   log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
