/* SPDX-License-Identifier: MIT */
/* path_check rules, and escape attempts against the jail, each run twice:
 * through openat2 and through the O_NOFOLLOW walk. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fs/jail.h"
#include "fs/meta.h"
#include "util/err.h"

/* ---- path_check ---- */

static void test_path_check_table(void **state)
{
	static const char *const good[] = {
		"", "a", "a/b", "a/b/c.txt", ".hidden", "..x", "x..", "a/...", "a b/ c",
	};
	static const char *const bad[] = {
		"/", "/abs", "/a/b", ".", "..", "./a", "a/.", "a/..", "../a", "a/../b",
		"a//b", "a/", "//", "a/b/",
	};
	char name256[257], name255[256];
	char *longp;

	(void)state;
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
		assert_int_equal(path_check(good[i], strlen(good[i])), 0);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err_clear();
		assert_int_equal(path_check(bad[i], strlen(bad[i])), -EINVAL);
		assert_non_null(strstr(err_msg(), "path \""));
	}
	assert_int_equal(path_check("a\0b", 3), -EINVAL);
	assert_non_null(strstr(err_msg(), "NUL"));
	assert_int_equal(path_check("/abs", 4), -EINVAL);
	assert_non_null(strstr(err_msg(), "\"/abs\""));
	assert_non_null(strstr(err_msg(), "absolute"));
	assert_int_equal(path_check("a/../b", 6), -EINVAL);
	assert_non_null(strstr(err_msg(), ".."));
	assert_int_equal(path_check("a//b", 4), -EINVAL);
	assert_non_null(strstr(err_msg(), "empty component"));

	memset(name255, 'n', 255);
	name255[255] = '\0';
	memset(name256, 'n', 256);
	name256[256] = '\0';
	assert_int_equal(path_check(name255, 255), 0);
	assert_int_equal(path_check(name256, 256), -EINVAL);
	assert_non_null(strstr(err_msg(), "255"));

	/* 4096 bytes: 16 components of 255 plus separators, then padding. */
	longp = malloc(4098);
	assert_non_null(longp);
	for (size_t i = 0; i < 4097; i++)
		longp[i] = (i % 200 == 199) ? '/' : 'p';
	longp[4097] = '\0';
	assert_int_equal(path_check(longp, 4096), 0);
	assert_int_equal(path_check(longp, 4097), -EINVAL);
	assert_non_null(strstr(err_msg(), "4096"));
	/* a control byte is shown escaped, not raw */
	assert_int_equal(path_check("/a\nb", 4), -EINVAL);
	assert_null(strchr(err_msg(), '\n'));
	free(longp);
}

/* ---- jail ---- */

struct fx {
	char top[64];
	char root[96];
	char outside[96];
	struct jail j;
	int mode_openat2;
};

static int modes[2] = { 1, 0 };

static void touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	char p[256];

	if (!f)
		return -1;
	f->mode_openat2 = *(int *)*state;
	snprintf(f->top, sizeof f->top, "/tmp/ferry-jail-XXXXXX");
	if (!mkdtemp(f->top))
		return -1;
	snprintf(f->root, sizeof f->root, "%s/module", f->top);
	snprintf(f->outside, sizeof f->outside, "%s/outside", f->top);
	if (mkdir(f->root, 0755) || mkdir(f->outside, 0755))
		return -1;
	snprintf(p, sizeof p, "%s/sub", f->root);
	mkdir(p, 0755);
	snprintf(p, sizeof p, "%s/sub/file", f->root);
	touch(p);
	snprintf(p, sizeof p, "%s/link_out", f->root);
	if (symlink("../outside", p))
		return -1;
	snprintf(p, sizeof p, "%s/sub/link_abs", f->root);
	if (symlink(f->outside, p))
		return -1;
	snprintf(p, sizeof p, "%s/leaf_link", f->root);
	if (symlink("../outside/victim", p))
		return -1;
	snprintf(p, sizeof p, "%s/sub/uplink", f->root);
	if (symlink("..", p))
		return -1;
	if (jail_open(&f->j, f->root) < 0)
		return -1;
	if (!f->mode_openat2)
		f->j.have_openat2 = 0;
	else if (!f->j.have_openat2)
		fprintf(stderr, "note: openat2 unavailable here; both runs use the fallback\n");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	int fd;

	jail_close(&f->j);
	fd = open("/tmp", O_PATH | O_DIRECTORY);
	fs_remove_tree(fd, f->top + strlen("/tmp/"));
	close(fd);
	free(f);
	return 0;
}

/* The directory outside the module must never get anything. */
static void assert_outside_empty(const struct fx *f)
{
	char p[256];
	struct stat st;

	snprintf(p, sizeof p, "%s/victim", f->outside);
	assert_int_not_equal(lstat(p, &st), 0);
	snprintf(p, sizeof p, "%s/newdir", f->outside);
	assert_int_not_equal(lstat(p, &st), 0);
	snprintf(p, sizeof p, "%s/x", f->outside);
	assert_int_not_equal(lstat(p, &st), 0);
	assert_int_equal(lstat(f->outside, &st), 0);
	assert_int_equal(st.st_nlink, 2);   /* no subdirectories either */
}

static void test_good_paths(void **state)
{
	struct fx *f = *state;
	const char *leaf;
	struct stat st;
	int fd;

	fd = jail_open_dir(&f->j, "", O_RDONLY);
	assert_true(fd >= 0);
	close(fd);
	fd = jail_open_dir(&f->j, "sub", O_PATH);
	assert_true(fd >= 0);
	assert_int_equal(fstatat(fd, "file", &st, AT_SYMLINK_NOFOLLOW), 0);
	close(fd);
	assert_int_equal(jail_mkdir(&f->j, "sub/a", 0755), 0);
	assert_int_equal(jail_mkdir(&f->j, "sub/a", 0755), 0);   /* exists: fine */
	assert_int_equal(jail_mkdir(&f->j, "sub/a/b", 0700), 0);
	assert_int_equal(jail_mkdir(&f->j, "", 0755), 0);
	fd = jail_open_parent(&f->j, "sub/a/b/newfile", &leaf);
	assert_true(fd >= 0);
	assert_string_equal(leaf, "newfile");
	assert_int_equal(fstatat(fd, ".", &st, 0), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);
	close(fd);
	fd = jail_open_parent(&f->j, "top", &leaf);
	assert_true(fd >= 0);
	assert_string_equal(leaf, "top");
	close(fd);
	assert_int_equal(jail_open_parent(&f->j, "", &leaf), -EINVAL);
	assert_int_equal(jail_open_dir(&f->j, "missing", O_RDONLY), -ENOENT);
	assert_non_null(strstr(err_msg(), "\"missing\""));
}

static void test_symlinked_dir_refused(void **state)
{
	struct fx *f = *state;
	const char *leaf;

	err_clear();
	assert_int_equal(jail_open_dir(&f->j, "link_out", O_RDONLY), -ELOOP);
	assert_non_null(strstr(err_msg(), "\"link_out\" is a symlink (not followed)"));
	assert_int_equal(jail_open_dir(&f->j, "link_out", O_PATH), -ELOOP);
	assert_int_equal(jail_open_dir(&f->j, "sub/link_abs", O_RDONLY), -ELOOP);
	assert_non_null(strstr(err_msg(), "\"sub/link_abs\" is a symlink"));
	assert_int_equal(jail_open_dir(&f->j, "sub/uplink/sub", O_RDONLY), -ELOOP);
	assert_non_null(strstr(err_msg(), "\"sub/uplink\" is a symlink"));
	assert_int_equal(jail_open_parent(&f->j, "link_out/victim", &leaf), -ELOOP);
	assert_int_equal(jail_open_parent(&f->j, "sub/link_abs/victim", &leaf), -ELOOP);
	assert_int_equal(jail_mkdir(&f->j, "link_out/newdir", 0755), -ELOOP);
	assert_int_equal(jail_mkdir(&f->j, "sub/link_abs/newdir", 0755), -ELOOP);
	assert_int_equal(jail_mkdir(&f->j, "link_out", 0755), -ENOTDIR);
	assert_non_null(strstr(err_msg(), "symlink"));
	assert_outside_empty(f);
}

static void test_symlink_leaf(void **state)
{
	struct fx *f = *state;
	const char *leaf;
	int fd, wfd;

	fd = jail_open_parent(&f->j, "leaf_link", &leaf);
	assert_true(fd >= 0);
	assert_string_equal(leaf, "leaf_link");
	/* What callers do with a leaf: O_NOFOLLOW refuses the link. */
	wfd = openat(fd, leaf, O_WRONLY | O_CREAT | O_NOFOLLOW, 0644);
	assert_int_equal(wfd, -1);
	assert_int_equal(errno, ELOOP);
	close(fd);
	assert_int_equal(jail_open_dir(&f->j, "leaf_link", O_RDONLY), -ELOOP);
	assert_outside_empty(f);
}

/* Where a symlink the user named leads, read one step inside the jail. */
static void test_link_may_be_dir(void **state)
{
	struct fx *f = *state;
	char p[256];
	static const struct { const char *name, *target; int dir; } links[] = {
		{ "to_sub", "sub", 1 }, { "to_file", "sub/file", 0 }, { "dangling", "nowhere", 0 },
		{ "chain", "to_sub", 1 }, { "through_file", "sub/file/x", 0 },
		{ "slash", "sub/", 1 }, { "dot", "./sub", 1 },
	};

	for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
		snprintf(p, sizeof p, "%s/%s", f->root, links[i].name);
		assert_int_equal(symlink(links[i].target, p), 0);
	}
	for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
		assert_int_equal(jail_link_may_be_dir(&f->j, links[i].name), links[i].dir);
	assert_int_equal(jail_link_may_be_dir(&f->j, "link_out"), 1);      /* ".." */
	assert_int_equal(jail_link_may_be_dir(&f->j, "sub/link_abs"), 1);  /* absolute */
	assert_int_equal(jail_link_may_be_dir(&f->j, "sub/uplink"), 1);
	assert_int_equal(jail_link_may_be_dir(&f->j, "leaf_link"), 1);     /* "..", to a file */
	assert_int_equal(jail_link_may_be_dir(&f->j, "sub"), 0);           /* not links */
	assert_int_equal(jail_link_may_be_dir(&f->j, "sub/file"), 0);
	assert_int_equal(jail_link_may_be_dir(&f->j, "missing"), 0);
	assert_int_equal(jail_link_may_be_dir(&f->j, "link_out/x"), 0);    /* no way there */
	assert_int_equal(jail_link_may_be_dir(&f->j, ""), 0);
	assert_outside_empty(f);
}

static void test_dotdot_and_absolute(void **state)
{
	struct fx *f = *state;
	const char *leaf;
	char abs[200];

	assert_int_equal(jail_open_dir(&f->j, "..", O_RDONLY), -EINVAL);
	assert_int_equal(jail_open_dir(&f->j, "../outside", O_RDONLY), -EINVAL);
	assert_int_equal(jail_open_dir(&f->j, "sub/../..", O_RDONLY), -EINVAL);
	assert_int_equal(jail_open_parent(&f->j, "../outside/x", &leaf), -EINVAL);
	assert_int_equal(jail_mkdir(&f->j, "../outside/newdir", 0755), -EINVAL);
	snprintf(abs, sizeof abs, "%s/newdir", f->outside);
	assert_int_equal(jail_mkdir(&f->j, abs, 0755), -EINVAL);
	assert_int_equal(jail_open_dir(&f->j, f->outside, O_RDONLY), -EINVAL);
	assert_outside_empty(f);
}

static void test_not_a_directory(void **state)
{
	struct fx *f = *state;

	assert_int_equal(jail_open_dir(&f->j, "sub/file", O_RDONLY), -ENOTDIR);
	assert_non_null(strstr(err_msg(), "not a directory"));
	assert_int_equal(jail_open_dir(&f->j, "sub/file/x", O_RDONLY), -ENOTDIR);
	assert_int_equal(jail_mkdir(&f->j, "sub/file", 0755), -ENOTDIR);
	assert_non_null(strstr(err_msg(), "not a directory"));
}

/* The admin may point the module at a symlink; that one is followed. */
static void test_root_may_be_symlink(void **state)
{
	struct fx *f = *state;
	struct jail j2;
	char p[256];
	int fd;

	snprintf(p, sizeof p, "%s/rootlink", f->top);
	assert_int_equal(symlink("module", p), 0);
	assert_int_equal(jail_open(&j2, p), 0);
	if (!f->mode_openat2)
		j2.have_openat2 = 0;
	fd = jail_open_dir(&j2, "sub", O_RDONLY);
	assert_true(fd >= 0);
	close(fd);
	jail_close(&j2);
	jail_close(&j2);   /* twice is harmless */
	assert_int_equal(jail_open(&j2, "/nonexistent/ferry"), -ENOENT);
	assert_non_null(strstr(err_msg(), "/nonexistent/ferry"));
}

static void test_env_forces_fallback(void **state)
{
	struct fx *f = *state;
	const char *env = getenv("FERRY_NO_OPENAT2");
	char *orig = env ? strdup(env) : NULL;
	struct jail j2;

	setenv("FERRY_NO_OPENAT2", "1", 1);
	assert_int_equal(jail_open(&j2, f->root), 0);
	assert_int_equal(j2.have_openat2, 0);
	jail_close(&j2);
	unsetenv("FERRY_NO_OPENAT2");
	assert_int_equal(jail_open(&j2, f->root), 0);
	/* Without the variable, the probe decides (as it did in setup, unless
	 * the whole run was started with the variable set). */
	if (f->mode_openat2 && !orig)
		assert_int_equal(j2.have_openat2, f->j.have_openat2);
	jail_close(&j2);
	if (orig)
		setenv("FERRY_NO_OPENAT2", orig, 1);
	free(orig);
}

#define BOTH(fn) \
	{ #fn "/openat2", fn, setup, teardown, &modes[0] }, \
	{ #fn "/fallback", fn, setup, teardown, &modes[1] }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_check_table),
		BOTH(test_good_paths),
		BOTH(test_symlinked_dir_refused),
		BOTH(test_symlink_leaf),
		BOTH(test_link_may_be_dir),
		BOTH(test_dotdot_and_absolute),
		BOTH(test_not_a_directory),
		BOTH(test_root_may_be_symlink),
		BOTH(test_env_forces_fallback),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
