/* SPDX-License-Identifier: MIT */
#include "util/sizearg.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int unit_power(char c)
{
	switch (tolower((unsigned char)c)) {
	case 'b': return 0;
	case 'k': return 1;
	case 'm': return 2;
	case 'g': return 3;
	case 't': return 4;
	case 'p': return 5;
	default: return -1;
	}
}

/* The number's text: digits, a '.' and digits (either part may be empty,
 * not both, unless a unit follows: rsync reads "k" as 0 KiB). */
static size_t number_len(const char *s)
{
	size_t n = strspn(s, "0123456789");
	if (s[n] == '.')
		n += 1 + strspn(s + n + 1, "0123456789");
	return n;
}

int size_arg_parse(const char *s, uint64_t *out)
{
	char num[64];
	size_t n = s ? number_len(s) : 0;
	const char *p = s ? s + n : NULL;
	uint64_t unit = 1, base = 1024;
	int power = 0;

	if (!s || n >= sizeof num || (n == 1 && s[0] == '.'))
		return -EINVAL;
	if (*p && *p != '+' && *p != '-') {
		if ((power = unit_power(*p++)) < 0)
			return -EINVAL;
		if (*p == 'b' || *p == 'B')
			base = 1000, p++;
		else if (!strncasecmp(p, "ib", 2))
			p += 2;
	} else if (!n) {
		return -EINVAL;
	}
	for (int i = 0; i < power; i++)
		unit *= base;
	memcpy(num, s, n);
	num[n] = '\0';
	/* as rsync: the unit times the number in double, truncated (so
	 * "2.01kb" is 2009 bytes, as rsync makes it, not 2010) */
	double v = (double)unit * (n ? strtod(num, NULL) : 0.0);
	if (v >= 9223372036854775807.0)
		return -EINVAL;
	uint64_t b = (uint64_t)v;
	if ((p[0] == '+' || p[0] == '-') && p[1] == '1' && p != s) {
		if (p[0] == '-' && b == 0)
			return -EINVAL;
		b = p[0] == '+' ? b + 1 : b - 1;
		p += 2;
	}
	if (*p || b > INT64_MAX)
		return -EINVAL;
	*out = b;
	return 0;
}
