/* SPDX-License-Identifier: MIT */
/* Paths in error messages come from the network: they are shown quoted, cut
 * short, with control bytes escaped, so a peer cannot forge log lines. */
#ifndef FERRY_FS_QUOTE_H
#define FERRY_FS_QUOTE_H

#include <stddef.h>

#define FS_QUOTE_MAX 200   /* bytes of the path shown before "..." */
#define FS_QUOTE_BUF (FS_QUOTE_MAX * 4 + 8)

/* Writes `"path"` (escaped, truncated) into buf[FS_QUOTE_BUF]; returns buf. */
const char *fs_quote(char *buf, const char *p, size_t len);

#endif
