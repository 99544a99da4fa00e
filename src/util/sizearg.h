/* SPDX-License-Identifier: MIT */
/* rsync's size arguments (--max-size, --min-size): a number, a fraction
 * allowed ("1.5"), then a unit B, K, M, G, T or P (powers of 1024; with
 * "iB" too), or KB, MB ... (powers of 1000), in any case, then optionally
 * "+1" or "-1" (one byte more or less). A bare number is bytes, a bare unit
 * 0. "1.5mb-1" is 1499999, "2g+1" 2147483649; a fraction is rounded down
 * in double arithmetic, as rsync does ("2.01kb" is 2009). */
#ifndef FERRY_UTIL_SIZEARG_H
#define FERRY_UTIL_SIZEARG_H

#include <stdint.h>

/* 0 and *out, or -EINVAL (not a size, or past 2^63 - 1). */
int size_arg_parse(const char *s, uint64_t *out);

#endif
