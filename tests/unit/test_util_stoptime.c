/* SPDX-License-Identifier: MIT */
/* --stop-after and --stop-at: the minutes, and the next local time each
 * spelling names (here in UTC, from a fixed "now"). test_resume stops a
 * real transfer with --stop-after. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

#include "util/stoptime.h"

#define NOW ((time_t)1796461830)   /* 2026-12-05T09:10:30Z */

static void test_after(void **state)
{
	double s;

	(void)state;
	assert_int_equal(stop_after_parse("1", &s), 0);
	assert_true(s == 60);
	assert_int_equal(stop_after_parse("0.05", &s), 0);
	assert_true(s > 2.99 && s < 3.01);
	assert_int_equal(stop_after_parse("527040", &s), 0);
	static const char *const bad[] = { "0", "-1", "+1", " 1", "", "1x", "abc", "nan", "inf",
					   "527041", "1e9" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (stop_after_parse(bad[i], &s) != -EINVAL)
			fail_msg("\"%s\" was taken", bad[i]);
}

static time_t at(const char *s)
{
	time_t t = 0;
	int rc = stop_at_parse(s, NOW, &t);
	if (rc != 0)
		fail_msg("\"%s\": %d", s, rc);
	return t;
}

static void test_at(void **state)
{
	time_t t;

	(void)state;
	setenv("TZ", "UTC", 1);
	tzset();
	assert_int_equal(at("2026-12-31T23:59"), 1798761540);
	assert_int_equal(at("2026/12/31t23:59"), 1798761540);
	assert_int_equal(at("26-12-31T23:59"), 1798761540);
	assert_int_equal(at("2026-12-31"), 1798675200);
	assert_int_equal(at("12-31"), 1798675200);
	assert_int_equal(at("12-05"), 1827964800);        /* today's midnight is past: next year */
	assert_int_equal(at("02-29"), 1835395200);        /* the next one that exists */
	assert_int_equal(at("23:59"), 1796515140);
	assert_int_equal(at("09:10"), 1796548200);        /* now is past it: tomorrow */
	assert_int_equal(at("T09:11"), 1796461860);
	assert_int_equal(at("9:11"), 1796461860);
	assert_int_equal(at(":05"), 1796465100);          /* the next hour's */
	assert_int_equal(at(":11"), 1796461860);
	/* rsync's other spellings: a bare day of the month, a date ending in
	 * T, a minute of one digit */
	assert_int_equal(at("14"), 1797206400);           /* 2026-12-14 */
	assert_int_equal(at("5"), 1799107200);            /* today's is past: 2027-01-05 */
	assert_int_equal(at("31"), 1798675200);           /* 2026-12-31 */
	assert_int_equal(at("12-31T"), 1798675200);
	assert_int_equal(at("2026-12-31T"), 1798675200);
	assert_int_equal(at(":5"), 1796465100);
	assert_int_equal(at("9:11"), 1796461860);
	assert_int_equal(at("10:5"), 1796465100);
	assert_int_equal(stop_at_parse("2026-12-05T09:10", NOW, &t), -ERANGE);
	assert_int_equal(stop_at_parse("2025-01-01", NOW, &t), -ERANGE);
	static const char *const bad[] = { "24:00", "12:60", "13-01", "2026-02-30", "2027-02-29",
					   "x", "0", "32", "123", "T", "", "12-31T:05", "12-31:05",
					   "123-12-01", "2026-12-31T23:59:00", "12-31 23:59", "-12-31" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (stop_at_parse(bad[i], NOW, &t) != -EINVAL)
			fail_msg("\"%s\" was taken", bad[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_after),
		cmocka_unit_test(test_at),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
