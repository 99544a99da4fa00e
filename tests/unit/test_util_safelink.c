/* SPDX-License-Identifier: MIT */
/* --safe-links: which targets are unsafe, as rsync 3.5 judged each of these
 * (test_safe_links runs the real rsync on a tree of them). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "util/safelink.h"

static void test_depth(void **state)
{
	(void)state;
	/* at the root: nothing above it */
	assert_false(safelink_unsafe("x", "l"));
	assert_false(safelink_unsafe("d/x", "l"));
	assert_true(safelink_unsafe("../x", "l"));
	assert_true(safelink_unsafe("..", "l"));
	/* one directory down */
	assert_false(safelink_unsafe("../x", "src/l"));
	assert_true(safelink_unsafe("../../x", "src/l"));
	/* three down */
	assert_false(safelink_unsafe("../../../x", "src/d/e/l"));
	assert_true(safelink_unsafe("../../../../x", "src/d/e/l"));
	assert_false(safelink_unsafe("..", "src/d/e/l"));
	assert_false(safelink_unsafe("../.", "src/d/e/l"));
	assert_false(safelink_unsafe(".././x", "src/d/e/l"));
	assert_false(safelink_unsafe("../src/x", "src/d/e/l"));
	assert_false(safelink_unsafe("a//b", "src/d/e/l"));
	assert_false(safelink_unsafe(".", "src/d/e/l"));
	assert_false(safelink_unsafe("./././.", "src/l"));
}

static void test_unsafe_forms(void **state)
{
	(void)state;
	assert_true(safelink_unsafe("", "src/l"));
	assert_true(safelink_unsafe("/etc", "src/d/e/l"));
	assert_true(safelink_unsafe("//x", "src/d/e/l"));
	/* a ".." after another component, wherever it would lead */
	assert_true(safelink_unsafe("d/../x", "src/d/e/l"));
	assert_true(safelink_unsafe("d/e/../../x", "src/d/e/l"));
	assert_true(safelink_unsafe("./../x", "src/d/e/l"));
	assert_true(safelink_unsafe("x/..", "src/d/e/l"));
	assert_true(safelink_unsafe("../x/../y", "src/d/e/l"));
	assert_true(safelink_unsafe("d/../../x", "src/l"));
	/* a last ".." after anything, even within the tree; not with a '/' */
	assert_true(safelink_unsafe("../..", "src/d/e/l"));
	assert_true(safelink_unsafe("..//..", "src/d/e/l"));
	assert_false(safelink_unsafe("../../", "src/d/e/l"));
	assert_false(safelink_unsafe("../../../.", "src/d/e/l"));
	assert_false(safelink_unsafe("..", "src/l"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_unsafe_forms),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
