/* SPDX-License-Identifier: MIT */
/* fs_move_merge on a scratch directory: a tree onto nothing, a tree merged
 * into an older one (what only the older held stays, a newer file replaces
 * the older), a directory over a file and a file over a directory, a
 * symlink never followed, and a merge deeper than FS_MERGE_DEPTH refused
 * with everything still somewhere. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fs/merge.h"

static char root[64];
static int rfd = -1;

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof root, "/tmp/ferry-merge.XXXXXX");
	if (!mkdtemp(root))
		return -1;
	rfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return rfd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	close(rfd);
	snprintf(cmd, sizeof cmd, "rm -rf %s", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void put(const char *path, const char *text)
{
	int fd = openat(rfd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void dir(const char *path)
{
	assert_int_equal(mkdirat(rfd, path, 0755), 0);
}

/* the file's contents, "" when it is not there */
static const char *get(const char *path)
{
	static char buf[64];
	int fd = openat(rfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n = fd < 0 ? 0 : read(fd, buf, sizeof buf - 1);

	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
	return buf;
}

static int there(const char *path)
{
	struct stat st;
	return fstatat(rfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static void test_onto_nothing(void **state)
{
	(void)state;
	dir("a1");
	dir("a1/sub");
	put("a1/sub/f", "f");
	assert_int_equal(fs_move_merge(rfd, "a1", rfd, "b1"), 0);
	assert_false(there("a1"));
	assert_string_equal(get("b1/sub/f"), "f");
}

static void test_merge(void **state)
{
	(void)state;
	dir("a2");
	dir("a2/d");
	put("a2/d/new", "new");
	put("a2/d/both", "newer");
	put("a2/top", "top");
	dir("b2");
	dir("b2/d");
	put("b2/d/old", "old");
	put("b2/d/both", "older");
	put("b2/keep", "keep");
	assert_int_equal(fs_move_merge(rfd, "a2", rfd, "b2"), 0);
	assert_false(there("a2"));
	assert_string_equal(get("b2/d/new"), "new");
	assert_string_equal(get("b2/d/both"), "newer");
	assert_string_equal(get("b2/d/old"), "old");
	assert_string_equal(get("b2/keep"), "keep");
	assert_string_equal(get("b2/top"), "top");
}

static void test_kinds(void **state)
{
	struct stat st;

	(void)state;
	/* a directory over a file, a file over a directory */
	dir("a3");
	dir("a3/x");
	put("a3/x/in", "in");
	put("a3/y", "y");
	dir("b3");
	put("b3/x", "file");
	dir("b3/y");
	dir("b3/y/deep");
	put("b3/y/deep/z", "z");
	/* a link at the destination is replaced, never followed */
	dir("outside");
	assert_int_equal(symlinkat("../outside", rfd, "b3/l"), 0);
	dir("a3/l");
	put("a3/l/into", "into");
	assert_int_equal(fs_move_merge(rfd, "a3", rfd, "b3"), 0);
	assert_string_equal(get("b3/x/in"), "in");
	assert_string_equal(get("b3/y"), "y");
	assert_int_equal(fstatat(rfd, "b3/l", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_string_equal(get("b3/l/into"), "into");
	assert_false(there("outside/into"));
}

static void test_too_deep(void **state)
{
	char a[4096] = "a4", b[4096] = "b4";

	(void)state;
	dir(a);
	dir(b);
	for (int i = 0; i < FS_MERGE_DEPTH + 2; i++) {
		strcat(a, "/d");
		strcat(b, "/d");
		dir(a);
		dir(b);
	}
	strcat(a, "/leaf");
	put(a, "leaf");
	put("a4/top", "top");
	int rc = fs_move_merge(rfd, "a4", rfd, "b4");
	assert_int_equal(rc, -ELOOP);
	/* nothing lost: the leaf is where it was, the top moved or not */
	assert_string_equal(get(a), "leaf");
	assert_true(there("a4/top") || there("b4/top"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_onto_nothing),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_too_deep),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
