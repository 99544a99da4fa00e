/* SPDX-License-Identifier: MIT */
#include "util/sizearg.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <strings.h>

/* the number's digits, with a fraction: an exact integer part and up to 18
 * digits of fraction (more cannot change a byte count of 2^63) */
static const char *number(const char *s, uint64_t *whole, uint64_t *frac, uint64_t *frac_div)
{
	*whole = 0;
	*frac = 0;
	*frac_div = 1;
	if (!isdigit((unsigned char)*s) && !(*s == '.' && isdigit((unsigned char)s[1])))
		return NULL;
	for (; isdigit((unsigned char)*s); s++) {
		if (*whole > (UINT64_MAX - 9) / 10)
			return NULL;
		*whole = *whole * 10 + (uint64_t)(*s - '0');
	}
	if (*s != '.')
		return s;
	for (s++; isdigit((unsigned char)*s); s++)
		if (*frac_div < 1000000000000000000ull) {
			*frac = *frac * 10 + (uint64_t)(*s - '0');
			*frac_div *= 10;
		}
	return s;
}

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

int size_arg_parse(const char *s, uint64_t *out)
{
	uint64_t whole, frac, fdiv, unit = 1, base = 1024;
	const char *p = s ? number(s, &whole, &frac, &fdiv) : NULL;
	int power = 0;

	if (!p)
		return -EINVAL;
	if (*p && *p != '+' && *p != '-') {
		if ((power = unit_power(*p++)) < 0)
			return -EINVAL;
		if (*p == 'b' || *p == 'B')
			base = 1000, p++;
		else if (!strncasecmp(p, "ib", 2))
			p += 2;
	}
	for (int i = 0; i < power; i++)
		unit *= base;
	if (whole > INT64_MAX / unit)
		return -EINVAL;
	/* the fraction of a unit, rounded down to whole bytes, as rsync's */
	uint64_t v = whole * unit + (uint64_t)((long double)frac * (long double)unit / (long double)fdiv);
	if ((p[0] == '+' || p[0] == '-') && p[1] == '1') {
		if (p[0] == '+' && v >= INT64_MAX)
			return -EINVAL;
		if (p[0] == '-' && v == 0)
			return -EINVAL;
		v = p[0] == '+' ? v + 1 : v - 1;
		p += 2;
	}
	if (*p || v > INT64_MAX)
		return -EINVAL;
	*out = v;
	return 0;
}
