/* SPDX-License-Identifier: MIT */
#include "util/path.h"

#include <errno.h>
#include <string.h>

int path_join(char *dst, size_t cap, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t sep = la && lb ? 1 : 0;

	if (la + sep + lb >= cap) {
		if (cap)
			dst[0] = '\0';
		return -ENAMETOOLONG;
	}
	memmove(dst, a, la);
	if (sep)
		dst[la] = '/';
	memmove(dst + la + sep, b, lb);
	dst[la + sep + lb] = '\0';
	return 0;
}
