/* SPDX-License-Identifier: MIT */
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

#include "fs/afile.h"
#include "fs/dirlist.h"
#include "fs/meta.h"
#include "fs/sync.h"
#include "util/err.h"

#include "fs_fixture.h"

static int setup(void **state)
{
	return fx_setup(state, "afile");
}

static int teardown(void **state)
{
	return fx_teardown(state);
}

static void put(int dfd, const char *name, const char *s)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
	close(fd);
}

/* Reads a whole (small) file; the caller frees. */
static char *slurp(int dfd, const char *name, size_t *len)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW);
	struct stat st;
	char *b;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	b = malloc((size_t)st.st_size + 1);
	assert_non_null(b);
	assert_int_equal(pread(fd, b, (size_t)st.st_size, 0), st.st_size);
	b[st.st_size] = '\0';
	*len = (size_t)st.st_size;
	close(fd);
	return b;
}

static size_t count_temps(int dfd)
{
	struct dirlist l;
	size_t n = 0;

	assert_int_equal(dirlist_read(dfd, &l), 0);
	for (size_t i = 0; i < l.n; i++)
		if (strncmp(l.ents[i].name, FS_TMP_PREFIX, strlen(FS_TMP_PREFIX)) == 0)
			n++;
	dirlist_free(&l);
	return n;
}

static void test_commit_content_mode_mtime(void **state)
{
	struct fx *f = *state;
	struct timespec mt = { .tv_sec = 1234567890, .tv_nsec = 123456789 };
	struct afile a;
	struct stat st;
	size_t len;
	char *b;

	put(f->dfd, "file", "old contents");
	assert_int_equal(afile_open(&a, f->dfd, "file", 0, NULL), 0);
	assert_int_equal(strncmp(a.tmp, ".ferry-", 7), 0);
	assert_non_null(strstr(a.tmp, ".file"));
	assert_int_equal(fstatat(f->dfd, a.tmp, &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(afile_write(&a, "new ", 4), 0);
	assert_int_equal(afile_write(&a, "contents!", 9), 0);
	/* Until commit, the old file is what readers see. */
	b = slurp(f->dfd, "file", &len);
	assert_string_equal(b, "old contents");
	free(b);
	assert_int_equal(count_temps(f->dfd), 1);
	assert_int_equal(afile_commit(&a, 0640, &mt), 0);
	b = slurp(f->dfd, "file", &len);
	assert_int_equal(len, 13);
	assert_string_equal(b, "new contents!");
	free(b);
	assert_int_equal(fstatat(f->dfd, "file", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_int_equal(st.st_mtim.tv_sec, mt.tv_sec);
	assert_int_equal(st.st_mtim.tv_nsec, mt.tv_nsec);
	assert_int_equal(count_temps(f->dfd), 0);
	afile_abort(&a);   /* after commit: a no-op, must not unlink anything */
	assert_int_equal(fstatat(f->dfd, "file", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(afile_write(&a, "x", 1), -EBADF);
	assert_int_equal(afile_commit(&a, 0644, NULL), -EBADF);
}

static void test_abort_keeps_old(void **state)
{
	struct fx *f = *state;
	struct afile a;
	size_t len;
	char *b;

	put(f->dfd, "keep", "precious");
	assert_int_equal(afile_open(&a, f->dfd, "keep", 100, NULL), 0);
	assert_int_equal(afile_write(&a, "garbage", 7), 0);
	afile_abort(&a);
	afile_abort(&a);
	assert_int_equal(count_temps(f->dfd), 0);
	b = slurp(f->dfd, "keep", &len);
	assert_string_equal(b, "precious");
	free(b);

	/* A new file that is aborted leaves nothing at all. */
	assert_int_equal(afile_open(&a, f->dfd, "never", 0, NULL), 0);
	afile_abort(&a);
	assert_int_equal(faccessat(f->dfd, "never", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	assert_int_equal(count_temps(f->dfd), 0);
}

static void test_sparse_skip(void **state)
{
	struct fx *f = *state;
	const off_t hole = (off_t)64 << 20;
	struct writer_opts o;
	struct afile a;
	struct stat st;
	char blk[4096];
	int fd;

	writer_opts_default(&o);
	o.flush_behind = 1 << 20;
	memset(blk, 'S', sizeof blk);
	assert_int_equal(afile_open(&a, f->dfd, "sparse", 0, &o), 0);
	assert_int_equal(afile_write(&a, blk, sizeof blk), 0);
	assert_int_equal(afile_skip(&a, hole), 0);
	assert_int_equal(afile_write(&a, blk, sizeof blk), 0);
	assert_int_equal(afile_skip(&a, hole), 0);   /* a trailing hole */
	assert_int_equal(afile_skip(&a, 0), 0);
	assert_int_equal(afile_skip(&a, -1), -EINVAL);
	assert_int_equal(afile_commit(&a, 0644, NULL), 0);
	assert_int_equal(fstatat(f->dfd, "sparse", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(st.st_size, 2 * hole + 2 * (off_t)sizeof blk);
	assert_true((intmax_t)st.st_blocks * 512 < (intmax_t)1 << 20);
	fd = openat(f->dfd, "sparse", O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, blk, 4, (off_t)sizeof blk + hole), 4);
	assert_memory_equal(blk, "SSSS", 4);
	assert_int_equal(pread(fd, blk, 4, 5000), 4);
	assert_memory_equal(blk, "\0\0\0\0", 4);
	close(fd);
}

/* Many writes of awkward sizes through a small buffer and a small
 * writeback window, with preallocation; the bytes must come out exact. */
static void test_big_buffered(void **state)
{
	struct fx *f = *state;
	const size_t total = 24u << 20;
	struct writer_opts o = { .buf_size = 64 << 10, .flush_behind = 256 << 10 };
	uint8_t *src, *back;
	struct afile a;
	struct stat st;
	size_t off = 0, step = 1;
	int fd;

	src = malloc(total);
	back = malloc(total);
	assert_non_null(src);
	assert_non_null(back);
	for (size_t i = 0; i < total; i++)
		src[i] = (uint8_t)(i * 2654435761u >> 13);
	assert_int_equal(afile_open(&a, f->dfd, "big", (off_t)total + 12345, &o), 0);
	while (off < total) {
		/* 1 byte up to ~300 KiB: below, at and above the buffer size */
		size_t n = (step * 7919) % (300 << 10) + 1;
		if (n > total - off)
			n = total - off;
		assert_int_equal(afile_write(&a, src + off, n), 0);
		off += n;
		step++;
	}
	assert_true(a.synced > 0);            /* writeback ran behind */
	assert_true(a.dropped > 0);           /* and the cache was dropped */
	assert_true(a.synced <= a.pos);
	assert_int_equal(afile_commit(&a, 0600, NULL), 0);
	assert_int_equal(fstatat(f->dfd, "big", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(st.st_size, (off_t)total);   /* preallocation trimmed */
	fd = openat(f->dfd, "big", O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, back, total, 0), (ssize_t)total);
	close(fd);
	assert_memory_equal(src, back, total);
	free(src);
	free(back);

	/* fsync_each path */
	o.fsync_each = 1;
	assert_int_equal(afile_open(&a, f->dfd, "synced", 0, &o), 0);
	assert_int_equal(afile_write(&a, "durable", 7), 0);
	assert_int_equal(afile_commit(&a, 0644, NULL), 0);
	assert_int_equal(fs_syncfs(f->dfd), 0);      /* O_PATH fd */
	assert_int_equal(fs_syncfs(f->odfd), 0);     /* O_RDONLY fd */
}

/* The final name is a symlink pointing outside: commit replaces the link
 * itself and never writes through it. */
static void test_commit_over_symlink(void **state)
{
	struct fx *f = *state;
	struct afile a;
	struct stat st;
	size_t len;
	char *b;

	put(f->odfd, "target", "outside, untouched");
	assert_int_equal(symlinkat("../outside/target", f->dfd, "link"), 0);
	assert_int_equal(afile_open(&a, f->dfd, "link", 0, NULL), 0);
	assert_int_equal(afile_write(&a, "replaced", 8), 0);
	assert_int_equal(afile_commit(&a, 0644, NULL), 0);
	assert_int_equal(fstatat(f->dfd, "link", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISREG(st.st_mode));
	b = slurp(f->dfd, "link", &len);
	assert_string_equal(b, "replaced");
	free(b);
	b = slurp(f->odfd, "target", &len);
	assert_string_equal(b, "outside, untouched");
	free(b);

	/* A dangling link to a would-be file outside: nothing appears there. */
	assert_int_equal(symlinkat("../outside/newfile", f->dfd, "dangling"), 0);
	assert_int_equal(afile_open(&a, f->dfd, "dangling", 10, NULL), 0);
	assert_int_equal(afile_write(&a, "x", 1), 0);
	assert_int_equal(afile_commit(&a, 0644, NULL), 0);
	assert_int_equal(faccessat(f->odfd, "newfile", F_OK, AT_SYMLINK_NOFOLLOW), -1);
}

static void test_commit_over_directory_fails(void **state)
{
	struct fx *f = *state;
	struct afile a;

	assert_int_equal(mkdirat(f->dfd, "adir", 0755), 0);
	assert_int_equal(afile_open(&a, f->dfd, "adir", 0, NULL), 0);
	assert_int_equal(afile_write(&a, "x", 1), 0);
	assert_true(afile_commit(&a, 0644, NULL) < 0);
	assert_non_null(strstr(err_msg(), "\"adir\""));
	assert_int_equal(count_temps(f->dfd), 0);
	afile_abort(&a);
}

static void test_names(void **state)
{
	struct fx *f = *state;
	static const char *const bad[] = { "", ".", "..", "a/b", "/x" };
	char longname[256];
	struct afile a;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(afile_open(&a, f->dfd, bad[i], 0, NULL), -EINVAL);
		afile_abort(&a);   /* safe after a failed open */
	}
	memset(longname, 'L', 255);
	longname[255] = '\0';
	assert_int_equal(afile_open(&a, f->dfd, longname, 0, NULL), 0);
	assert_true(strlen(a.tmp) <= 255);
	assert_int_equal(afile_write(&a, "y", 1), 0);
	assert_int_equal(afile_commit(&a, 0644, NULL), 0);
	assert_int_equal(faccessat(f->dfd, longname, F_OK, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(count_temps(f->dfd), 0);
}

/* A temporary is born with its final mode only where that changes nothing:
 * the umask (022 here, set before the first afile call) leaves the mode
 * whole, no set-id or sticky bit, owner read and write. Every final mode is
 * exact either way. */
static void test_create_mode(void **state)
{
	static const struct { mode_t want, tmp; } cases[] = {
		{ 0644, 0644 }, { 0755, 0755 }, { 0600, 0600 }, { 0640, 0640 },
		{ 0664, 0600 },   /* the umask takes 020 */
		{ 0444, 0600 },   /* owner cannot write: a partial could not be tagged */
		{ 0200, 0600 },   /* owner cannot read it back */
		{ 04755, 0600 }, { 02755, 0600 }, { 01777, 0600 },
		{ 0, 0600 },
	};
	struct fx *f = *state;
	struct stat st;

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct afile a;
		char name[16];
		snprintf(name, sizeof name, "m%zu", i);
		assert_int_equal(afile_open_as(&a, f->dfd, name, 0, NULL, cases[i].want), 0);
		assert_int_equal(fstatat(f->dfd, a.tmp, &st, AT_SYMLINK_NOFOLLOW), 0);
		if ((st.st_mode & 07777) != cases[i].tmp)
			fail_msg("want %04o: temporary %04o, not %04o", (unsigned)cases[i].want,
				 (unsigned)(st.st_mode & 07777), (unsigned)cases[i].tmp);
		assert_int_equal(afile_write(&a, "x", 1), 0);
		assert_int_equal(afile_commit(&a, cases[i].want, NULL), 0);
		assert_int_equal(fstatat(f->dfd, name, &st, AT_SYMLINK_NOFOLLOW), 0);
		if ((st.st_mode & 07777) != cases[i].want)
			fail_msg("want %04o: committed as %04o", (unsigned)cases[i].want,
				 (unsigned)(st.st_mode & 07777));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_commit_content_mode_mtime, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort_keeps_old, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sparse_skip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_big_buffered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_over_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_over_directory_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_mode, setup, teardown),
	};
	umask(022);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
