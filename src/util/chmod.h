/* SPDX-License-Identifier: MIT */
/* rsync's --chmod: a comma-separated list of chmod(1) symbolic modes
 * ("u+w", "go-rwx", "a=rX", "u=g") or octal modes ("644"), each optionally
 * prefixed with D (directories only) or F (files only). A clause without
 * u/g/o/a applies to all (the umask plays no part, as in rsync). */
#ifndef FERRY_UTIL_CHMOD_H
#define FERRY_UTIL_CHMOD_H

#include <stdint.h>

#define CHMOD_MAX_SPEC 255

/* 0 if spec is valid, else -EINVAL with err_msg() naming the bad clause. */
int chmod_check(const char *spec);
/* The mode (07777 bits) after spec, for a directory (is_dir) or anything
 * else. spec must have passed chmod_check. */
uint32_t chmod_apply(const char *spec, uint32_t mode, int is_dir);

#endif
