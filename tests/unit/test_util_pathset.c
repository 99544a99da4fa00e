/* SPDX-License-Identifier: MIT */
/* --files-from's list: parsing as rsync reads it, and which paths a walk
 * sends (test_files_from checks the same against the real rsync). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "util/pathset.h"

static void parse(struct pathset *ps, const char *text)
{
	assert_int_equal(pathset_parse(ps, text, strlen(text), 0, "--files-from t"), 0);
}

static void test_parse(void **state)
{
	struct pathset ps;

	(void)state;
	parse(&ps, "b\n/a/x\r\n# c\n;d\n\n./q/../r/\n../../../up\n//s//t//\na/x\nr\n.\n");
	/* sorted, one each: "", "a/x", "b", "r" (a "dir/" once), "s/t", "up" */
	assert_int_equal(ps.n, 6);
	assert_string_equal(ps.e[0].path, "");
	assert_string_equal(ps.e[1].path, "a/x");
	assert_string_equal(ps.e[2].path, "b");
	assert_string_equal(ps.e[3].path, "r");
	assert_true(ps.e[3].contents);
	assert_string_equal(ps.e[4].path, "s/t");
	assert_true(ps.e[4].contents);
	assert_string_equal(ps.e[5].path, "up");
	assert_false(ps.e[5].contents);
	pathset_free(&ps);

	/* --from0: a newline is part of a name; '#' starts a comment still */
	static const char z[] = "new\nline\0#c\0dir/x\0";
	assert_int_equal(pathset_parse(&ps, z, sizeof z - 1, 1, "t"), 0);
	assert_int_equal(ps.n, 2);
	assert_string_equal(ps.e[0].path, "dir/x");
	assert_string_equal(ps.e[1].path, "new\nline");
	pathset_free(&ps);

	assert_int_equal(pathset_parse(&ps, "", 0, 0, "t"), 0);
	assert_int_equal(ps.n, 0);
	pathset_free(&ps);

	/* contents as rsync spells them: "dir/.", "dir/x/..", "." and "/" */
	parse(&ps, "d/.\ne/x/..\nf\n");
	assert_int_equal(ps.n, 3);
	assert_true(ps.e[0].contents && ps.e[1].contents && !ps.e[2].contents);
	pathset_free(&ps);
	parse(&ps, "/\n");
	assert_int_equal(ps.n, 1);
	assert_string_equal(ps.e[0].path, "");
	assert_true(ps.e[0].contents);
	pathset_free(&ps);

	/* a NUL in a line ends its entry and drops the rest of the line */
	static const char nl[] = "a.txt\0garbage\nb\n";
	assert_int_equal(pathset_parse(&ps, nl, sizeof nl - 1, 0, "t"), 0);
	assert_int_equal(ps.n, 2);
	assert_string_equal(ps.e[0].path, "a.txt");
	assert_string_equal(ps.e[1].path, "b");
	pathset_free(&ps);

	/* rsync's --relative anchor inside an entry is refused; a leading one is none */
	assert_int_equal(pathset_parse(&ps, "ok\na/./b\n", 10, 0, "t"), -EINVAL);
	assert_null(ps.e);
	assert_int_equal(pathset_parse(&ps, "a/./\n", 5, 0, "t"), -EINVAL);
	parse(&ps, "/./a\n./b\n");
	assert_int_equal(ps.n, 2);
	pathset_free(&ps);
}

static void test_too_long(void **state)
{
	static char big[PATHSET_MAX_PATH + 10];
	struct pathset ps;

	(void)state;
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	assert_int_equal(pathset_parse(&ps, big, strlen(big), 0, "t"), -ENAMETOOLONG);
	assert_null(ps.e);
	/* PATHSET_MAX_PATH exactly is fine, and ".." may bring one back under it */
	big[PATHSET_MAX_PATH] = '\0';
	assert_int_equal(pathset_parse(&ps, big, PATHSET_MAX_PATH, 0, "t"), 0);
	assert_int_equal(strlen(ps.e[0].path), PATHSET_MAX_PATH);
	pathset_free(&ps);
}

static void test_wants(void **state)
{
	struct pathset ps;

	(void)state;
	parse(&ps, "a.txt\ndir1/sub/y\ndir2/\nd3/q\nd3-x\n");
	assert_true(pathset_wants(&ps, "a.txt", 0));
	assert_false(pathset_wants(&ps, "b.txt", 0));
	/* implied directories, and only directories */
	assert_true(pathset_wants(&ps, "dir1", 1));
	assert_true(pathset_wants(&ps, "dir1/sub", 1));
	assert_false(pathset_wants(&ps, "dir1", 0));
	assert_false(pathset_wants(&ps, "dir1/x", 0));
	assert_false(pathset_wants(&ps, "dir1/su", 1));
	assert_true(pathset_wants(&ps, "d3", 1));
	assert_false(pathset_wants(&ps, "d3/r", 0));
	assert_false(pathset_wants(&ps, "d", 1));
	/* "dir2/": its immediate entries, not deeper without -r */
	assert_true(pathset_wants(&ps, "dir2", 1));
	assert_true(pathset_wants(&ps, "dir2/z", 0));
	assert_true(pathset_wants(&ps, "dir2/deep", 1));
	assert_false(pathset_wants(&ps, "dir2/deep/w", 0));
	assert_false(pathset_wants(&ps, "dir1/sub/y/z", 0));
	/* what kind: filter rules are not asked of an implied directory */
	assert_int_equal(pathset_wants(&ps, "a.txt", 0), PATHSET_LISTED);
	assert_int_equal(pathset_wants(&ps, "dir2", 1), PATHSET_LISTED_DIR);
	assert_int_equal(pathset_wants(&ps, "dir2/z", 0), PATHSET_WITHIN);
	assert_int_equal(pathset_wants(&ps, "dir1/sub", 1), PATHSET_IMPLIED);
	/* seen: what was asked for and listed */
	for (size_t i = 0; i < ps.n; i++)
		assert_int_equal(ps.e[i].seen, !strcmp(ps.e[i].path, "a.txt") ||
					       !strcmp(ps.e[i].path, "dir2"));
	ps.recursive = 1;
	assert_true(pathset_wants(&ps, "dir2/deep/w", 0));
	assert_true(pathset_wants(&ps, "d3/q/inner", 0));
	assert_false(pathset_wants(&ps, "d3/r", 0));
	assert_false(pathset_wants(&ps, "dir1/x", 0));
	pathset_free(&ps);

	/* ".": the source's immediate entries; with -r, the whole source */
	parse(&ps, ".\n");
	assert_true(pathset_wants(&ps, "x", 0));
	assert_false(pathset_wants(&ps, "x/y", 0));
	ps.recursive = 1;
	assert_true(pathset_wants(&ps, "x/y", 0));
	pathset_free(&ps);
}

/* Where --delete may mirror: a directory whose entries are all listed */
static void test_complete(void **state)
{
	struct pathset ps;

	(void)state;
	parse(&ps, "a.txt\ndir1/sub/y\ndir2/\nd3\n");
	assert_false(pathset_complete(&ps, ""));       /* the source, on the way */
	assert_false(pathset_complete(&ps, "dir1"));   /* on the way */
	assert_false(pathset_complete(&ps, "dir1/sub"));
	assert_true(pathset_complete(&ps, "dir2"));    /* "dir2/": its entries */
	assert_false(pathset_complete(&ps, "dir2/deep"));   /* within, not its entries */
	assert_false(pathset_complete(&ps, "d3"));     /* listed alone, without -r */
	ps.recursive = 1;
	assert_true(pathset_complete(&ps, "d3"));
	assert_true(pathset_complete(&ps, "d3/deeper/still"));
	assert_true(pathset_complete(&ps, "dir2/deep"));
	assert_false(pathset_complete(&ps, "dir1"));
	assert_false(pathset_complete(&ps, "d"));
	assert_false(pathset_complete(&ps, "d3x"));
	/* nothing marked seen */
	for (size_t i = 0; i < ps.n; i++)
		assert_int_equal(ps.e[i].seen, 0);
	pathset_free(&ps);

	parse(&ps, ".\n");
	assert_true(pathset_complete(&ps, ""));
	assert_false(pathset_complete(&ps, "x"));
	ps.recursive = 1;
	assert_true(pathset_complete(&ps, "x/y"));
	pathset_free(&ps);
}

/* A link listed with a path through it: the directory on the way wins */
static void test_link_on_way(void **state)
{
	struct pathset ps;

	(void)state;
	parse(&ps, "ln\nln/d\nlone\n");
	ps.recursive = 1;
	assert_true(pathset_is_listed(&ps, "ln", 2));
	assert_int_equal(pathset_wants(&ps, "ln/x", 0), PATHSET_WITHIN);
	assert_false(pathset_link_on_way(&ps, "lone"));   /* nothing below it */
	assert_false(pathset_link_on_way(&ps, "none"));
	assert_true(pathset_link_on_way(&ps, "ln"));
	assert_false(pathset_is_listed(&ps, "ln", 2));
	assert_int_equal(pathset_wants(&ps, "ln", 1), PATHSET_IMPLIED);
	assert_int_equal(pathset_wants(&ps, "ln/x", 0), PATHSET_NO);
	assert_int_equal(pathset_wants(&ps, "ln/d", 1), PATHSET_LISTED);
	assert_int_equal(pathset_wants(&ps, "ln/d/y", 0), PATHSET_WITHIN);
	assert_false(pathset_complete(&ps, "ln"));
	assert_true(pathset_complete(&ps, "ln/d"));
	assert_true(pathset_is_listed(&ps, "lone", 4));
	assert_true(pathset_is_listed(&ps, "ln/d/zz", 4));   /* a prefix's length */
	pathset_free(&ps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_wants),
		cmocka_unit_test(test_complete),
		cmocka_unit_test(test_link_on_way),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
