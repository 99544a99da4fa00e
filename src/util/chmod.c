/* SPDX-License-Identifier: MIT */
#include "util/chmod.h"

#include <errno.h>
#include <string.h>

#include "util/err.h"

enum { ONLY_ALL, ONLY_DIRS, ONLY_FILES };

/* The bits of `who` (u, g, o as 0700 / 0070 / 0007 masks) that `perm`
 * letters name; X: execute if a directory or already executable by anyone. */
static uint32_t perm_bits(char c, uint32_t mode, int is_dir)
{
	switch (c) {
	case 'r': return 0444;
	case 'w': return 0222;
	case 'x': return 0111;
	case 'X': return is_dir || (mode & 0111) ? 0111 : 0;
	case 's': return 06000;
	case 't': return 01000;
	default: return 0;
	}
}

/* "u=g": the bits of class `src` copied to every class. */
static uint32_t copy_bits(char src, uint32_t mode)
{
	uint32_t b = src == 'u' ? (mode >> 6) & 7 : src == 'g' ? (mode >> 3) & 7 : mode & 7;
	return b * 0111;
}

static uint32_t who_mask(const char *p, size_t n)
{
	uint32_t m = 0;
	for (size_t i = 0; i < n; i++)
		m |= p[i] == 'u' ? 04700 : p[i] == 'g' ? 02070 : p[i] == 'o' ? 01007 : 07777;
	return n ? m : 07777;
}

/* One clause (without its D/F prefix) applied to mode; -1 if malformed. */
static int clause(const char *p, size_t n, uint32_t *mode, int is_dir)
{
	size_t w = strspn(p, "ugoa");
	uint32_t who, cur = *mode;

	if (n && strspn(p, "01234567") == n) {
		if (n > 4)
			return -1;
		uint32_t v = 0;
		for (size_t i = 0; i < n; i++)
			v = v * 8 + (uint32_t)(p[i] - '0');
		*mode = v;
		return 0;
	}
	if (w > n)
		w = n;
	who = who_mask(p, w);
	if (w == n)
		return -1;   /* no operator */
	for (size_t i = w; i < n;) {
		char op = p[i++];
		uint32_t bits = 0;
		if (op != '+' && op != '-' && op != '=')
			return -1;
		if (i < n && strchr("ugo", p[i]) && (i + 1 == n || strchr("+-=", p[i + 1]))) {
			bits = copy_bits(p[i++], cur);
		} else {
			for (; i < n && !strchr("+-=", p[i]); i++) {
				if (!strchr("rwxXst", p[i]))
					return -1;
				bits |= perm_bits(p[i], cur, is_dir);
			}
		}
		bits &= who;
		if (op == '+')
			cur |= bits;
		else if (op == '-')
			cur &= ~bits;
		else
			cur = (cur & ~who) | bits;
	}
	*mode = cur & 07777;
	return 0;
}

/* Walks the clauses; with `check` only validates. */
static int walk(const char *spec, uint32_t *mode, int is_dir, int check)
{
	const char *p = spec;

	if (strlen(spec) > CHMOD_MAX_SPEC)
		return err_set(-EINVAL, "longer than %d bytes", CHMOD_MAX_SPEC);
	for (;;) {
		size_t n = strcspn(p, ",");
		int only = ONLY_ALL;
		const char *c = p;
		if (n && (c[0] == 'D' || c[0] == 'F')) {
			only = c[0] == 'D' ? ONLY_DIRS : ONLY_FILES;
			c++;
		}
		size_t cn = n - (size_t)(c - p);
		uint32_t m = *mode;
		if (!cn || clause(c, cn, &m, is_dir) < 0)
			return err_set(-EINVAL, "'%.*s' is not a chmod clause (like u+w, go-rwx, D755, F644)",
				       (int)n, p);
		if (!check && (only == ONLY_ALL || (only == ONLY_DIRS) == !!is_dir))
			*mode = m;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

int chmod_check(const char *spec)
{
	uint32_t m = 0644;
	return walk(spec, &m, 0, 1);
}

uint32_t chmod_apply(const char *spec, uint32_t mode, int is_dir)
{
	uint32_t m = mode & 07777;
	walk(spec, &m, is_dir, 0);
	return m;
}
