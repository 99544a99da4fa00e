/* SPDX-License-Identifier: MIT */
/* The open hard-link groups: found by key while open, gone once their last
 * link was seen (whatever the probe order after deletions), and the limits
 * both ends count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "proto/msg.h"
#include "session/hlink.h"

static void test_open_and_close(void **state)
{
	(void)state;
	struct hlinks h;

	assert_int_equal(hlinks_init(&h), 0);
	/* keys that collide a lot: consecutive inodes of one device */
	for (uint32_t i = 0; i < 3000; i++)
		assert_int_equal(hlinks_add(&h, 7, i, i, 1 + i % 3, 10, i % 2 ? "p" : NULL), 0);
	assert_int_equal(h.n, 3000);
	/* close every group whose inode is even: 1, 2 or 3 members seen */
	for (uint32_t i = 0; i < 3000; i += 2)
		for (uint32_t k = 0; k < 1 + i % 3; k++) {
			struct hlink_group *g = hlinks_find(&h, 7, i);
			assert_non_null(g);
			hlinks_seen(&h, g);
		}
	for (uint32_t i = 0; i < 3000; i++) {
		struct hlink_group *g = hlinks_find(&h, 7, i);
		if (i % 2 == 0) {
			assert_null(g);
		} else {
			assert_non_null(g);
			assert_int_equal(g->first, i);
			assert_string_equal(g->path, "p");
		}
	}
	assert_int_equal(h.n, 1500);
	assert_int_equal(h.path_bytes, 15000);
	hlinks_free(&h);
}

static void test_limits(void **state)
{
	(void)state;
	struct hlinks h;

	assert_int_equal(hlinks_init(&h), 0);
	for (uint32_t i = 0; i < PROTO_LINK_GROUPS; i++)
		assert_int_equal(hlinks_add(&h, 0, i, i, 5, 1, NULL), 0);
	assert_false(hlinks_room(&h, 1));
	assert_true(hlinks_add(&h, 0, 99999, 1, 1, 1, NULL) < 0);
	hlinks_free(&h);
	assert_int_equal(hlinks_init(&h), 0);
	assert_int_equal(hlinks_add(&h, 0, 1, 1, 1, PROTO_LINK_PATH_BYTES - 10, NULL), 0);
	assert_true(hlinks_room(&h, 10));
	assert_false(hlinks_room(&h, 11));
	hlinks_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_and_close),
		cmocka_unit_test(test_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
