/* SPDX-License-Identifier: MIT */
/* Internal: one-line files of /proc and /sys. */
#ifndef FERRY_BENCH_SYSFS_H
#define FERRY_BENCH_SYSFS_H

#include <stddef.h>

/* Reads the file named by the printf-style path into out (at most cap-1
 * bytes), NULs (device-tree strings) and runs of white space made one space,
 * none at either end. 0, or <0 with out = "" (missing or unreadable files
 * are normal here: no caller reports them). */
int sysfs_read(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Reads a whole file into a malloc'ed, NUL-terminated buffer (at most max
 * bytes); NULL when it cannot. */
char *sysfs_slurp(const char *path, size_t max, size_t *len);

#endif
