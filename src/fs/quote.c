/* SPDX-License-Identifier: MIT */
#include "fs/quote.h"

#include <stdio.h>

const char *fs_quote(char *buf, const char *p, size_t len)
{
	size_t o = 0;
	size_t shown = len > FS_QUOTE_MAX ? FS_QUOTE_MAX : len;

	buf[o++] = '"';
	for (size_t i = 0; i < shown; i++) {
		unsigned char c = (unsigned char)p[i];
		if (c < 0x20 || c == 0x7f || c == '"' || c == '\\') {
			snprintf(buf + o, 5, "\\x%02x", c);
			o += 4;
		} else {
			buf[o++] = (char)c;
		}
	}
	buf[o++] = '"';
	if (shown < len) {
		buf[o++] = '.';
		buf[o++] = '.';
		buf[o++] = '.';
	}
	buf[o] = '\0';
	return buf;
}
