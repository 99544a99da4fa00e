/* SPDX-License-Identifier: MIT */
/* rsync's size spellings (--max-size, --min-size); test_size_limits checks
 * the same spellings against the real rsync's transfers. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "util/sizearg.h"

static uint64_t size_of(const char *s)
{
	uint64_t v = 12345;
	assert_int_equal(size_arg_parse(s, &v), 0);
	return v;
}

static void test_units(void **state)
{
	(void)state;
	assert_int_equal(size_of("0"), 0);
	assert_int_equal(size_of("100"), 100);
	assert_int_equal(size_of("100b"), 100);
	assert_int_equal(size_of("1k"), 1024);
	assert_int_equal(size_of("1K"), 1024);
	assert_int_equal(size_of("1KiB"), 1024);
	assert_int_equal(size_of("1kib"), 1024);
	assert_int_equal(size_of("1kb"), 1000);
	assert_int_equal(size_of("1KB"), 1000);
	assert_int_equal(size_of("2g"), 2147483648ull);
	assert_int_equal(size_of("2g+1"), 2147483649ull);
	assert_int_equal(size_of("1.5mb-1"), 1499999);
	assert_int_equal(size_of("1.5m"), 1572864);
	assert_int_equal(size_of("0.1k"), 102);   /* a fraction of a byte is dropped */
	assert_int_equal(size_of(".5k"), 512);
	assert_int_equal(size_of("1.5"), 1);
	assert_int_equal(size_of("1t"), 1ull << 40);
	assert_int_equal(size_of("1p"), 1ull << 50);
	assert_int_equal(size_of("8191p"), 8191ull << 50);
	assert_int_equal(size_of("1k-1"), 1023);
	/* rsync's double arithmetic, truncated */
	assert_int_equal(size_of("2.01kb"), 2009);
	assert_int_equal(size_of("4.06kb"), 4059);
	/* a unit alone is 0 of it, as rsync reads it */
	assert_int_equal(size_of("k"), 0);
	assert_int_equal(size_of("kb+1"), 1);
}

static void test_refused(void **state)
{
	static const char *bad[] = { "", "x", "-1", "+1", "1q", "1kk", "1kbb", "1k+2", "1k-",
				     "0-1", "8192p", "9999999999P", "1.5.5", "1e3", " 1", "1 ", ".",
				     "k-1" };
	uint64_t v = 7;

	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (size_arg_parse(bad[i], &v) != -EINVAL)
			fail_msg("\"%s\" was taken as %llu", bad[i], (unsigned long long)v);
	assert_int_equal(size_arg_parse(NULL, &v), -EINVAL);
	assert_int_equal(v, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
