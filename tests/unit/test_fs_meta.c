/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fs/dirlist.h"
#include "fs/meta.h"
#include "util/err.h"

#include "fs_fixture.h"

static int setup(void **state)
{
	return fx_setup(state, "meta");
}

static int teardown(void **state)
{
	return fx_teardown(state);
}

static void touch(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	close(fd);
}

static size_t count(int dfd)
{
	struct dirlist l;
	size_t n;

	assert_int_equal(dirlist_read(dfd, &l), 0);
	n = l.n;
	dirlist_free(&l);
	return n;
}

static void test_tmp_name(void **state)
{
	char a[256], b[256], longname[300];

	(void)state;
	assert_int_equal(fs_tmp_name(a, "photo.jpg"), 0);
	assert_int_equal(fs_tmp_name(b, "photo.jpg"), 0);
	assert_int_equal(strlen(a), strlen(".ferry-XXXXXXCCCC.photo.jpg"));
	assert_int_equal(strncmp(a, ".ferry-", 7), 0);
	assert_string_equal(a + 17, ".photo.jpg");
	assert_string_not_equal(a, b);
	/* only a name it made is a temporary: a user's look-alikes are not */
	assert_true(fs_is_tmp_name(a) && fs_is_tmp_name(b));
	assert_false(fs_is_tmp_name(".ferry-backup.tar"));
	assert_false(fs_is_tmp_name(".ferry-abc123.x"));
	assert_false(fs_is_tmp_name(".ferry-abcdef1234.x"));
	assert_false(fs_is_tmp_name(".ferry-"));
	char c[256];
	memcpy(c, a, sizeof c);
	c[20] ^= 1;   /* the rest of the name changed: the check no longer agrees */
	assert_false(fs_is_tmp_name(c));
	memset(longname, 'x', 255);
	longname[255] = '\0';
	assert_int_equal(fs_tmp_name(a, longname), 0);
	assert_int_equal(strlen(a), 255);
	longname[256] = '\0';
	longname[255] = 'x';
	assert_int_equal(fs_tmp_name(a, longname), -EINVAL);
	assert_int_equal(fs_tmp_name(a, "a/b"), -EINVAL);
	assert_int_equal(fs_tmp_name(a, ".."), -EINVAL);
}

/* Names come from a pool of random bytes filled a batch at a time; a forked
 * child must not draw the same names as its parent (both would then walk
 * into each other's O_EXCL, a retry per file). 50 names from each side,
 * after the parent's pool was filled: none shared. */
static void test_tmp_name_after_fork(void **state)
{
	char mine[50][256], theirs[50][256];
	int p[2];

	(void)state;
	assert_int_equal(fs_tmp_name(mine[0], "f"), 0);   /* fills the pool */
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char n[256] = { 0 };
		for (int i = 0; i < 50; i++)
			if (fs_tmp_name(n, "f") < 0 || write(p[1], n, sizeof n) != sizeof n)
				_exit(1);
		_exit(0);
	}
	close(p[1]);
	for (int i = 0; i < 50; i++)
		assert_int_equal(fs_tmp_name(mine[i], "f"), 0);
	for (int i = 0; i < 50; i++)
		assert_int_equal(read(p[0], theirs[i], sizeof theirs[i]), sizeof theirs[i]);
	close(p[0]);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	for (int i = 0; i < 50; i++)
		for (int j = 0; j < 50; j++)
			if (strcmp(mine[i], theirs[j]) == 0)
				fail_msg("parent and child both drew %s", mine[i]);
}

static void test_set_meta(void **state)
{
	struct fx *f = *state;
	struct timespec mt = { .tv_sec = 1600000000, .tv_nsec = 987654321 };
	struct stat st, tst;

	touch(f->dfd, "file");
	assert_int_equal(mkdirat(f->dfd, "dir", 0755), 0);
	assert_int_equal(fs_set_meta(f->dfd, "file", 0600, &mt), 0);
	assert_int_equal(fstatat(f->dfd, "file", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_mtim.tv_sec, mt.tv_sec);
	assert_int_equal(st.st_mtim.tv_nsec, mt.tv_nsec);
	assert_int_equal(fs_set_meta(f->dfd, "dir", 0711, NULL), 0);
	assert_int_equal(fstatat(f->dfd, "dir", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(st.st_mode & 07777, 0711);

	/* A symlink to a file outside: the link gets the mtime, the target
	 * keeps its mode and mtime. */
	touch(f->odfd, "target");
	assert_int_equal(fchmodat(f->odfd, "target", 0644, 0), 0);
	assert_int_equal(fstatat(f->odfd, "target", &tst, 0), 0);
	assert_int_equal(symlinkat("../outside/target", f->dfd, "link"), 0);
	assert_int_equal(fs_set_meta(f->dfd, "link", 0777 | 04000, &mt), 0);
	assert_int_equal(fstatat(f->dfd, "link", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(st.st_mtim.tv_sec, mt.tv_sec);
	assert_int_equal(fstatat(f->odfd, "target", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(st.st_mtim.tv_sec, tst.st_mtim.tv_sec);
	assert_int_equal(st.st_mtim.tv_nsec, tst.st_mtim.tv_nsec);

	assert_int_equal(fs_set_meta(f->dfd, "missing", 0644, NULL), -ENOENT);
	assert_non_null(strstr(err_msg(), "\"missing\""));
}

static void test_symlink_atomic(void **state)
{
	struct fx *f = *state;
	struct timespec mt = { .tv_sec = 1500000000, .tv_nsec = 5 };
	struct stat st;
	char buf[64];
	ssize_t n;

	assert_int_equal(fs_symlink_atomic(f->dfd, "l", "first", NULL), 0);
	n = readlinkat(f->dfd, "l", buf, sizeof buf);
	assert_int_equal(n, 5);
	assert_memory_equal(buf, "first", 5);
	/* replaces an existing link, and a regular file */
	assert_int_equal(fs_symlink_atomic(f->dfd, "l", "second/target", &mt), 0);
	n = readlinkat(f->dfd, "l", buf, sizeof buf);
	assert_int_equal(n, 13);
	assert_int_equal(fstatat(f->dfd, "l", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(st.st_mtim.tv_sec, mt.tv_sec);
	assert_int_equal(st.st_mtim.tv_nsec, mt.tv_nsec);
	touch(f->dfd, "wasfile");
	assert_int_equal(fs_symlink_atomic(f->dfd, "wasfile", "x", NULL), 0);
	assert_int_equal(fstatat(f->dfd, "wasfile", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISLNK(st.st_mode));
	/* never a directory: refused, and no temporary left behind */
	assert_int_equal(mkdirat(f->dfd, "dir", 0755), 0);
	assert_true(fs_symlink_atomic(f->dfd, "dir", "x", NULL) < 0);
	assert_int_equal(fstatat(f->dfd, "dir", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(count(f->dfd), 3);   /* l, wasfile, dir */
	assert_int_equal(fs_symlink_atomic(f->dfd, "a/b", "x", NULL), -EINVAL);
}

static int keep_f2(void *ctx, const char *path, int is_dir)
{
	(void)ctx;
	(void)is_dir;
	return !strcmp(path, "tree/a/b/f2");
}

static void test_remove_tree(void **state)
{
	struct fx *f = *state;
	int d;

	/* mod/tree/{a/{f1,b/f2,b/c/}, lnk -> ../../outside, abs -> /outside} */
	assert_int_equal(mkdirat(f->dfd, "tree", 0755), 0);
	d = openat(f->dfd, "tree", O_PATH | O_DIRECTORY);
	assert_true(d >= 0);
	assert_int_equal(mkdirat(d, "a", 0755), 0);
	assert_int_equal(mkdirat(d, "a/b", 0755), 0);
	assert_int_equal(mkdirat(d, "a/b/c", 0500), 0);   /* still removable: we own the parent */
	touch(d, "a/f1");
	touch(d, "a/b/f2");
	assert_int_equal(symlinkat("../../outside", d, "lnk"), 0);
	assert_int_equal(symlinkat("../../outside", d, "a/lnk2"), 0);
	close(d);
	touch(f->odfd, "precious");
	assert_int_equal(mkdirat(f->odfd, "sub", 0755), 0);
	touch(f->odfd, "sub/precious2");

	/* what its removal would take (--max-delete): 8 entries; the walk stops
	 * past a limit; what keep() keeps is not counted, nor the directories
	 * holding it */
	assert_int_equal(fs_count_tree(f->dfd, "tree", NULL, NULL, UINT64_MAX), 8);
	assert_int_equal(fs_count_tree(f->dfd, "tree", NULL, NULL, 8), 8);
	int64_t some = fs_count_tree(f->dfd, "tree", NULL, NULL, 3);
	assert_true(some > 3 && some < 8);
	assert_int_equal(fs_count_tree(f->dfd, "tree", keep_f2, NULL, UINT64_MAX), 4);
	assert_int_equal(fs_count_tree(f->dfd, "nothing", NULL, NULL, 5), 0);
	assert_int_equal(fs_count_tree(f->dfd, "..", NULL, NULL, 5), -EINVAL);
	assert_int_equal(count(f->dfd), 1);   /* nothing was removed */
	assert_int_equal(fs_remove_tree(f->dfd, "tree"), 0);
	assert_int_equal(count(f->dfd), 0);
	assert_int_equal(faccessat(f->odfd, "precious", F_OK, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(faccessat(f->odfd, "sub/precious2", F_OK, AT_SYMLINK_NOFOLLOW), 0);

	/* A symlink to a directory outside, given as the top name itself. */
	assert_int_equal(symlinkat("../outside", f->dfd, "toplink"), 0);
	assert_int_equal(fs_remove_tree(f->dfd, "toplink"), 0);
	assert_int_equal(count(f->dfd), 0);
	assert_int_equal(count(f->odfd), 2);
	/* a plain file, a missing name, a bad name */
	touch(f->dfd, "plain");
	assert_int_equal(fs_remove_tree(f->dfd, "plain"), 0);
	assert_int_equal(fs_remove_tree(f->dfd, "plain"), 0);
	assert_int_equal(fs_remove_tree(f->dfd, ".."), -EINVAL);
	assert_int_equal(fs_remove_tree(f->dfd, "a/b"), -EINVAL);
	assert_int_equal(count(f->odfd), 2);
}

/* Deeper than the number of fds it may keep, with a low fd limit. */
static void test_remove_deep_tree(void **state)
{
	struct fx *f = *state;
	struct rlimit old, lim;
	int d = dup(f->dfd);
	const int depth = 200;

	assert_true(d >= 0);
	for (int i = 0; i < depth; i++) {
		char name[16];
		int nd;
		snprintf(name, sizeof name, "d%d", i);
		assert_int_equal(mkdirat(d, name, 0755), 0);
		touch(d, "file");
		assert_int_equal(symlinkat("/", d, "rootlink"), 0);
		nd = openat(d, name, O_PATH | O_DIRECTORY);
		assert_true(nd >= 0);
		close(d);
		d = nd;
	}
	close(d);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	lim = old;
	lim.rlim_cur = 64;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &lim), 0);
	/* 200 directories, a file and a link in each but the last */
	assert_int_equal(fs_count_tree(f->dfd, "d0", NULL, NULL, UINT64_MAX), 200 + 2 * 199);
	assert_int_equal(fs_remove_tree(f->dfd, "d0"), 0);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	assert_int_equal(faccessat(f->dfd, "d0", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	assert_int_equal(count(f->dfd), 2);   /* the top level's file and rootlink */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tmp_name),
		cmocka_unit_test(test_tmp_name_after_fork),
		cmocka_unit_test_setup_teardown(test_set_meta, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlink_atomic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remove_tree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remove_deep_tree, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
