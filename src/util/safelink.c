/* SPDX-License-Identifier: MIT */
#include "util/safelink.h"

#include <string.h>

int safelink_unsafe(const char *target, const char *path)
{
	long depth = 0;
	int climbed_all = 0;   /* a component other than ".." has come */

	if (!target[0] || target[0] == '/')
		return 1;
	for (const char *p = strchr(path, '/'); p; p = strchr(p + 1, '/'))
		depth++;   /* the directories the link is in, below the root */
	for (const char *c = target; *c;) {
		const char *end = strchr(c, '/');
		size_t n = end ? (size_t)(end - c) : strlen(c);
		if (n == 2 && c[0] == '.' && c[1] == '.') {
			/* a last ".." after anything is unsafe too ("../..", but
			 * not "../../"), as rsync 3.5 has it */
			if (climbed_all || --depth < 0 || (!end && c != target))
				return 1;
		} else if (n) {
			climbed_all = 1;
		}
		c += n + (end ? 1 : 0);
	}
	return 0;
}
