/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for --files-from's list (the user's file, or a pipe):
 * parsed in both separators, then every entry and a few of its prefixes
 * asked for, as a walk asks. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/pathset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(struct pathset *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		const char *p = ps->e[i].path;
		size_t n = strlen(p);
		/* resolved: no leading or trailing '/', no "//", sorted, unique */
		if (n > PATHSET_MAX_PATH || (n && (p[0] == '/' || p[n - 1] == '/')) || strstr(p, "//"))
			abort();
		if (i && strcmp(ps->e[i - 1].path, p) >= 0)
			abort();
		if (n && !pathset_wants(ps, p, i & 1))
			abort();   /* a listed path is always wanted */
		if (!ps->e[i].seen && n)
			abort();
		const char *slash = strrchr(p, '/');
		if (slash) {
			char *dir = strndup(p, (size_t)(slash - p));
			if (!dir)
				return;
			if (dir[0] && !pathset_wants(ps, dir, 1))
				abort();   /* nor is a directory on the way to one */
			free(dir);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pathset ps;

	for (int nul = 0; nul < 2; nul++) {
		if (pathset_parse(&ps, (const char *)data, size, nul, "fuzz") < 0) {
			if (ps.e || ps.arena || ps.n)
				abort();   /* an error leaves nothing allocated */
			continue;
		}
		ps.recursive = (int)(size & 1);
		check(&ps);
		pathset_free(&ps);
	}
	return 0;
}
