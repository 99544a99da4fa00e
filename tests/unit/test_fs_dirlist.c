/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fs/dirlist.h"
#include "fs/meta.h"

struct fx {
	char top[64];
	int dfd;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);

	if (!f)
		return -1;
	snprintf(f->top, sizeof f->top, "/tmp/ferry-dirlist-XXXXXX");
	if (!mkdtemp(f->top))
		return -1;
	f->dfd = open(f->top, O_RDONLY | O_DIRECTORY);
	*state = f;
	return f->dfd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	int fd = open("/tmp", O_PATH | O_DIRECTORY);

	close(f->dfd);
	fs_remove_tree(fd, f->top + strlen("/tmp/"));
	close(fd);
	free(f);
	return 0;
}

static void mkfile(int dfd, const char *name, size_t size)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0640);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	close(fd);
}

static void test_sorted_with_types(void **state)
{
	struct fx *f = *state;
	static const char *const want[] = {
		"A", "B.dir", "Z", "a", "b", "link", "z", "\xc3\xa9",
	};
	struct dirlist l;
	const struct dirent_info *e;
	char buf[8];

	mkfile(f->dfd, "z", 3);
	mkfile(f->dfd, "a", 0);
	mkfile(f->dfd, "Z", 1);
	mkfile(f->dfd, "\xc3\xa9", 2);
	mkfile(f->dfd, "A", 0);
	mkfile(f->dfd, "b", 5);
	assert_int_equal(mkdirat(f->dfd, "B.dir", 0700), 0);
	assert_int_equal(symlinkat("B.dir", f->dfd, "link"), 0);

	assert_int_equal(dirlist_read(f->dfd, &l), 0);
	assert_int_equal(l.n, sizeof want / sizeof want[0]);
	for (size_t i = 0; i < l.n; i++)
		assert_string_equal(l.ents[i].name, want[i]);
	e = dirlist_find(&l, "link");
	assert_non_null(e);
	assert_true(S_ISLNK(e->st.st_mode));   /* lstat, not stat */
	e = dirlist_find(&l, "B.dir");
	assert_non_null(e);
	assert_true(S_ISDIR(e->st.st_mode));
	e = dirlist_find(&l, "b");
	assert_non_null(e);
	assert_true(S_ISREG(e->st.st_mode));
	assert_int_equal(e->st.st_size, 5);
	assert_null(dirlist_find(&l, "c"));
	assert_null(dirlist_find(&l, ""));
	assert_non_null(dirlist_find(&l, "A"));
	assert_non_null(dirlist_find(&l, "\xc3\xa9"));
	dirlist_free(&l);
	dirlist_free(&l);   /* idempotent */

	/* The caller's fd is untouched: its own readdir offset, still usable. */
	assert_int_equal(lseek(f->dfd, 0, SEEK_CUR), 0);
	assert_int_equal(readlinkat(f->dfd, "link", buf, sizeof buf), 5);
	assert_int_equal(dirlist_read(f->dfd, &l), 0);
	assert_int_equal(l.n, sizeof want / sizeof want[0]);
	dirlist_free(&l);
}

static void test_empty_and_opath(void **state)
{
	struct fx *f = *state;
	struct dirlist l;
	int pfd;

	assert_int_equal(dirlist_read(f->dfd, &l), 0);
	assert_int_equal(l.n, 0);
	dirlist_free(&l);
	mkfile(f->dfd, "x", 0);
	pfd = openat(f->dfd, ".", O_PATH | O_DIRECTORY);
	assert_true(pfd >= 0);
	assert_int_equal(dirlist_read(pfd, &l), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.ents[0].name, "x");
	dirlist_free(&l);
	close(pfd);
	assert_true(dirlist_read(-1, &l) < 0);
	assert_null(l.ents);
}

static void test_many(void **state)
{
	struct fx *f = *state;
	struct dirlist l;
	char name[32];

	for (int i = 999; i >= 0; i--) {
		snprintf(name, sizeof name, "f%04d", i);
		mkfile(f->dfd, name, 0);
	}
	assert_int_equal(dirlist_read(f->dfd, &l), 0);
	assert_int_equal(l.n, 1000);
	for (size_t i = 1; i < l.n; i++)
		assert_true(strcmp(l.ents[i - 1].name, l.ents[i].name) < 0);
	assert_non_null(dirlist_find(&l, "f0500"));
	dirlist_free(&l);
}

/* fs_dir_is_empty: what lets a receiver skip a stat per entry, so "empty"
 * must never be said of a directory that holds something */
static void test_dir_is_empty(void **state)
{
	struct fx *f = *state;
	char longname[256];
	int fd;

	assert_int_equal(fs_dir_is_empty(f->dfd), 1);
	memset(longname, 'n', 255);
	longname[255] = '\0';
	mkfile(f->dfd, longname, 0);   /* the longest name: still seen in one call */
	fd = openat(AT_FDCWD, f->top, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	assert_int_equal(fs_dir_is_empty(fd), 0);
	close(fd);
	assert_int_equal(unlinkat(f->dfd, longname, 0), 0);
	assert_int_equal(mkdirat(f->dfd, "sub", 0700), 0);   /* a directory counts */
	fd = openat(AT_FDCWD, f->top, O_RDONLY | O_DIRECTORY);
	assert_int_equal(fs_dir_is_empty(fd), 0);
	close(fd);
	assert_int_equal(unlinkat(f->dfd, "sub", AT_REMOVEDIR), 0);
	for (int i = 0; i < 300; i++) {   /* more than one call's worth */
		char n[32];
		snprintf(n, sizeof n, "f%03d", i);
		mkfile(f->dfd, n, 0);
	}
	fd = openat(AT_FDCWD, f->top, O_RDONLY | O_DIRECTORY);
	assert_int_equal(fs_dir_is_empty(fd), 0);
	close(fd);
	fd = openat(f->dfd, "f000", O_RDONLY);   /* not a directory: "no" */
	assert_int_equal(fs_dir_is_empty(fd), 0);
	close(fd);
	assert_int_equal(fs_dir_is_empty(-1), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sorted_with_types, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_and_opath, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_is_empty, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
