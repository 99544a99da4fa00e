/* SPDX-License-Identifier: MIT */
/* A push's increment (fs/snapinc.h) undone after a kill, and the undo itself
 * killed half-way and run again: a directory that became a file is logged
 * as kept, then added, so an undo that replayed records it had already
 * undone would remove the directory it had just put back. And the undo of a
 * replaced file never removes its name first: a client listing the latest
 * tree during the undo saw the file missing (the fault campaign caught it). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/inotify.h>
#include <sys/wait.h>

#include "fs/jail.h"
#include "fs/snapinc.h"
#include "fs/snapstore.h"
#include "fs_fixture.h"

static int setup(void **state) { return fx_setup(state, "snapinc"); }
static int teardown(void **state) { return fx_teardown(state); }

static void put(int dirfd, const char *name, const char *text)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* What a killed process leaves: the increment's files, no undo. */
static void leave(struct snapinc *s)
{
	int *fds[] = { &s->dirs, &s->log, &s->obj, &s->dir, &s->snaps, &s->hist, &s->lock };
	for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
		if (*fds[i] >= 0)
			close(*fds[i]);
	free(s->below);   /* (what the process's end would take) */
}

static void recover(const struct jail *mod)
{
	int hist, snaps;
	assert_int_equal(snapstore_open(mod->root_fd, 0, &hist, &snaps), 0);
	assert_int_equal(snapinc_recover(mod, snaps, "new.tmp"), 0);
	close(snaps);
	close(hist);
}

static void test_undo_twice(void **state)
{
	struct fx *f = *state;
	char root[128], buf[16] = { 0 };
	struct jail mod;
	struct snapinc s;
	struct stat st;

	snprintf(root, sizeof root, "%s/outside", f->top);
	int rfd = open(root, O_RDONLY | O_DIRECTORY);
	assert_true(rfd >= 0);
	assert_int_equal(mkdirat(rfd, "d", 0755), 0);
	int dfd = openat(rfd, "d", O_RDONLY | O_DIRECTORY);
	put(dfd, "f", "keep");
	close(dfd);
	assert_int_equal(jail_open(&mod, root), 0);

	/* snapshot 1 (the first records nothing), then a push that replaces
	 * directory d with a file d, killed before its commit */
	assert_int_equal(snapinc_begin(&s, &mod, "t"), 0);
	assert_int_equal(snapinc_added(&s, "x"), 0);
	put(rfd, "x", "x");
	assert_int_equal(snapinc_commit(&s), 0);
	assert_true(s.made);
	assert_int_equal(snapinc_begin(&s, &mod, "t"), 0);
	assert_true(s.record);
	assert_int_equal(snapinc_keep(&s, rfd, "d", "d", 1), 0);
	assert_int_equal(snapinc_added(&s, "d"), 0);
	put(rfd, "d", "new");
	leave(&s);

	/* the undo killed after two records (test builds), then run again */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setenv("FERRY_TEST_UNDO_KILL", "2", 1);
		recover(&mod);
		_exit(0);   /* a build without test hooks: the undo ran whole */
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && (WEXITSTATUS(status) == 99 || WEXITSTATUS(status) == 0));
	recover(&mod);

	assert_int_equal(fstatat(rfd, "d", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISDIR(st.st_mode));
	int ffd = openat(rfd, "d/f", O_RDONLY);
	assert_true(ffd >= 0);
	assert_int_equal(read(ffd, buf, sizeof buf - 1), 4);
	assert_string_equal(buf, "keep");
	close(ffd);
	assert_true(fstatat(rfd, ".ferry-history/snaps/new.tmp", &st, AT_SYMLINK_NOFOLLOW) < 0);
	jail_close(&mod);
	close(rfd);
}

/* Undoing a replaced file renames the kept version over the new one: the
 * name is never deleted on the way (inotify would see IN_DELETE). */
static void test_undo_never_hides(void **state)
{
	struct fx *f = *state;
	char root[128], buf[16] = { 0 };
	struct jail mod;
	struct snapinc s;

	snprintf(root, sizeof root, "%s/outside", f->top);
	int rfd = open(root, O_RDONLY | O_DIRECTORY);
	assert_true(rfd >= 0);
	put(rfd, "f", "old");
	assert_int_equal(jail_open(&mod, root), 0);
	assert_int_equal(snapinc_begin(&s, &mod, "t"), 0);
	assert_int_equal(snapinc_added(&s, "x"), 0);
	put(rfd, "x", "x");
	assert_int_equal(snapinc_commit(&s), 0);

	/* a push that replaces f as the receiver does (kept by a link, the new
	 * version renamed over it), killed before its commit */
	assert_int_equal(snapinc_begin(&s, &mod, "t"), 0);
	assert_int_equal(snapinc_keep(&s, rfd, "f", "f", 0), 0);
	put(rfd, ".ferry-tmp", "new");
	assert_int_equal(renameat(rfd, ".ferry-tmp", rfd, "f"), 0);
	leave(&s);

	int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	assert_true(in >= 0);
	assert_true(inotify_add_watch(in, root, IN_DELETE) >= 0);
	recover(&mod);
	char ev[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n = read(in, ev, sizeof ev);
	for (ssize_t at = 0; n > 0 && at < n;) {
		const struct inotify_event *e = (const void *)(ev + at);
		if (e->len && strcmp(e->name, "f") == 0)
			fail_msg("the undo deleted f before putting its old version back");
		at += (ssize_t)sizeof *e + e->len;
	}
	close(in);

	int ffd = openat(rfd, "f", O_RDONLY);
	assert_true(ffd >= 0);
	assert_int_equal(read(ffd, buf, sizeof buf - 1), 3);
	assert_string_equal(buf, "old");
	close(ffd);
	jail_close(&mod);
	close(rfd);
}

/* A daemon that is not root removes a 0555 directory from its history
 * (fs_remove_tree_force), where a plain removal fails: run as nobody. */
static void test_force_removal(void **state)
{
	struct fx *f = *state;
	char root[128];

	if (geteuid() != 0)
		skip();   /* it needs to become another user */
	snprintf(root, sizeof root, "%s/outside", f->top);
	int rfd = open(root, O_RDONLY | O_DIRECTORY);
	assert_true(rfd >= 0);
	for (int i = 0; i < 2; i++) {
		char d[16];
		snprintf(d, sizeof d, "v%d", i);
		assert_int_equal(mkdirat(rfd, d, 0755), 0);
		int dfd = openat(rfd, d, O_RDONLY | O_DIRECTORY);
		assert_int_equal(mkdirat(dfd, "ro", 0755), 0);
		int rofd = openat(dfd, "ro", O_RDONLY | O_DIRECTORY);
		put(rofd, "file", "x");
		assert_int_equal(fchown(rofd, 65534, 65534), 0);
		assert_int_equal(fchownat(rofd, "file", 65534, 65534, 0), 0);
		assert_int_equal(fchmod(rofd, 0555), 0);
		assert_int_equal(fchown(dfd, 65534, 65534), 0);
		close(rofd);
		close(dfd);
	}
	assert_int_equal(fchmod(rfd, 0777), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
			_exit(2);
		if (fs_remove_tree(rfd, "v0") == 0)
			_exit(3);   /* the plain removal should have failed */
		_exit(fs_remove_tree_force(rfd, "v1") == 0 ? 0 : 4);
	}
	int status;
	struct stat st;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_true(fstatat(rfd, "v1", &st, AT_SYMLINK_NOFOLLOW) < 0);
	close(rfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_undo_twice, setup, teardown),
		cmocka_unit_test_setup_teardown(test_undo_never_hides, setup, teardown),
		cmocka_unit_test_setup_teardown(test_force_removal, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
