/* SPDX-License-Identifier: MIT */
/* Retention rules (util/retention.h) on made-up receive times: what each
 * rule keeps, how they combine (a union, as restic's), protect within, and
 * the parser's durations and refusals. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "util/retention.h"

#define DAY 86400
#define T0 1764547200   /* 2025-12-01 00:00:00 UTC, a Monday */

/* three snapshots a day (01:00, 09:00, 17:00) for 30 days */
static size_t month(int64_t *t)
{
	size_t n = 0;
	for (int d = 0; d < 30; d++)
		for (int h = 1; h < 24; h += 8)
			t[n++] = T0 + (int64_t)d * DAY + h * 3600;
	return n;
}

static size_t kept(const unsigned *why, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += why[i] != 0;
	return k;
}

static void test_rules(void **state)
{
	int64_t t[90];
	unsigned why[90];
	size_t n = month(t);
	int64_t now = t[n - 1] + 60;
	struct retention r;

	(void)state;
	memset(&r, 0, sizeof r);
	retention_apply(&r, t, n, now, why);   /* no rules: nothing goes */
	assert_int_equal(kept(why, n), n);
	assert_true(why[0] & KEEP_NO_RULES);

	r.daily = 7;   /* the last snapshot of each of the newest 7 days */
	retention_apply(&r, t, n, now, why);
	assert_int_equal(kept(why, n), 7);
	for (size_t i = n - 1; i + 21 > n; i -= 3)
		assert_true(why[i] & KEEP_DAILY);
	assert_int_equal(why[n - 2], 0);   /* 09:00 of the last day */
	assert_true(why[n - 1] & KEEP_LATEST);

	r.last = 5;   /* a union: the 5 newest, plus the daily ones */
	retention_apply(&r, t, n, now, why);
	assert_int_equal(kept(why, n), 5 + 7 - 2);

	memset(&r, 0, sizeof r);
	r.weekly = 2;   /* ISO weeks: 2025-12-29 (Mon) starts the newest */
	retention_apply(&r, t, n, now, why);
	assert_int_equal(kept(why, n), 2);
	assert_true(why[n - 1] & KEEP_WEEKLY);
	assert_true(why[(size_t)(28 * 3 - 1)] & KEEP_WEEKLY);   /* Sunday 12-28, 17:00 */

	memset(&r, 0, sizeof r);
	r.monthly = 3;
	r.yearly = 3;
	retention_apply(&r, t, n, now, why);
	assert_int_equal(kept(why, n), 1);   /* all in one month and year: its newest */

	memset(&r, 0, sizeof r);
	r.last = 1;
	r.protect_within = 2 * DAY;   /* nothing younger than two days goes */
	retention_apply(&r, t, n, now, why);
	assert_int_equal(kept(why, n), 6);
	assert_true(why[n - 6] & KEEP_PROTECTED);
	assert_int_equal(why[n - 7], 0);

	memset(&r, 0, sizeof r);
	r.within = 3 * DAY;
	retention_apply(&r, t, n, now, why);
	assert_int_equal(kept(why, n), 9);

	/* 1,000 forged snapshots in the last hour do not push the real days out */
	int64_t f[1030];
	unsigned fw[1030];
	for (int i = 0; i < 30; i++)
		f[i] = T0 + (int64_t)i * DAY;
	for (int i = 30; i < 1030; i++)
		f[i] = T0 + 30 * DAY + i;
	memset(&r, 0, sizeof r);
	r.last = 3;
	r.daily = 7;
	r.protect_within = 10 * DAY;
	retention_apply(&r, f, 1030, f[1029] + 1, fw);
	for (int i = 21; i < 30; i++)
		assert_true(fw[i] != 0);   /* the 9 real days younger than 10 days */
	assert_int_equal(fw[20], 0);

	char b[128];
	assert_string_equal(retention_reasons(KEEP_DAILY | KEEP_WITHIN, b, sizeof b), "daily,within");
}

static void test_parse(void **state)
{
	struct retention r;
	int64_t s;

	(void)state;
	memset(&r, 0, sizeof r);
	assert_int_equal(retention_set(&r, "keep daily", "7"), 1);
	assert_int_equal(r.daily, 7);
	assert_int_equal(retention_set(&r, "keep within", "1y6m"), 1);
	assert_int_equal(r.within, (365 + 180) * (int64_t)DAY);
	assert_int_equal(retention_set(&r, "protect within", "36h"), 1);
	assert_int_equal(r.protect_within, 36 * 3600);
	assert_int_equal(retention_set(&r, "path", "/x"), 0);
	assert_true(retention_set(&r, "keep daily", "-1") < 0);
	assert_true(retention_set(&r, "keep daily", "7x") < 0);
	assert_true(retention_set(&r, "keep daily", "") < 0);
	assert_true(retention_set(&r, "keep within", "7") < 0);
	assert_true(retention_set(&r, "keep within", "d") < 0);
	assert_true(retention_duration("99999999d", &s) < 0);
	assert_int_equal(retention_duration("2w", &s), 0);
	assert_int_equal(s, 14 * DAY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
