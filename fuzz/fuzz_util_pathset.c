/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for --files-from's list (the user's file, or a pipe):
 * parsed in both separators, then every entry and a few of its prefixes
 * asked for, as a walk asks; then -R's and -m's questions (sent whole?
 * listed? a link on the way?) of each, whose answers must agree. */
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

/* A listed path is listed; one sent whole is wanted; once a link on the
 * way, it is only a directory on the way: not listed, not sent whole, and
 * still wanted. */
static void check_ways(struct pathset *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		const char *p = ps->e[i].path;
		size_t n = strlen(p);
		if (!pathset_is_listed(ps, p, n))
			abort();
		if (n && pathset_complete(ps, p) && !pathset_wants(ps, p, 1))
			abort();
		if (!n || !(i % 3 == 0) || !pathset_link_on_way(ps, p))
			continue;
		if (pathset_is_listed(ps, p, n) || pathset_wants(ps, p, 1) != PATHSET_IMPLIED)
			abort();
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
		check_ways(&ps);
		pathset_free(&ps);
	}
	return 0;
}
