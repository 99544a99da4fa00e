/* SPDX-License-Identifier: MIT */
#ifndef FERRY_UTIL_PATH_H
#define FERRY_UTIL_PATH_H

#include <stddef.h>

/* dst = a "/" b, or just the other when one is "". Returns 0, or
 * -ENAMETOOLONG (dst then holds "") when it does not fit in cap. */
int path_join(char *dst, size_t cap, const char *a, const char *b);

#endif
