/* SPDX-License-Identifier: MIT */
/* Resume's files (fs/partial.h, afile_make_partial/afile_keep): names, the
 * identity tag, the lock, what is kept and what is removed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/file.h>
#include <sys/xattr.h>

#include "fs/afile.h"
#include "fs/partial.h"
#include "fs_fixture.h"

static int setup(void **state) { return fx_setup(state, "partial"); }
static int teardown(void **state) { return fx_teardown(state); }

static void test_names(void **state)
{
	char a[256], b[256], fin[256], longa[256], longb[256];

	(void)state;
	assert_int_equal(fs_partial_name(a, "big.bin"), 0);
	assert_string_equal(a, ".ferry-part.big.bin");
	assert_true(fs_is_partial_name(a));
	assert_false(fs_is_partial_name(".ferry-part."));
	assert_false(fs_is_partial_name(".ferry-Ab12Cd.big.bin"));   /* a temporary */
	assert_false(fs_is_tmp_name(a));
	assert_int_equal(fs_partial_final(a, fin), 1);
	assert_string_equal(fin, "big.bin");
	/* long names are cut to 255 bytes and end in a hash of the whole name */
	memset(longa, 'x', 255);
	longa[255] = '\0';
	memcpy(longb, longa, sizeof longb);
	longb[254] = 'y';
	assert_int_equal(fs_partial_name(a, longa), 0);
	assert_int_equal(fs_partial_name(b, longb), 0);
	assert_int_equal(strlen(a), 255);
	assert_string_not_equal(a, b);
	assert_int_equal(fs_partial_final(a, fin), 0);   /* not known from a cut name */
	assert_true(fs_partial_name(a, "a/b") < 0);
	assert_true(fs_partial_name(a, "..") < 0);
	assert_true(fs_partial_name(a, "") < 0);
}

static const struct fs_part_id ID = { .size = 300000, .mtime_s = 1700000000, .mtime_ns = 5 };

/* Writes n bytes of f through a partial and keeps it; returns what was kept. */
static off_t write_partial(struct fx *f, const char *name, size_t n, off_t min)
{
	struct afile a;
	static uint8_t buf[200000];

	memset(buf, 0x5a, sizeof buf);
	assert_int_equal(afile_open(&a, f->dfd, name, 0, NULL), 0);
	assert_int_equal(afile_make_partial(&a, &ID), 1);
	assert_int_equal(afile_write(&a, buf, n), 0);
	return afile_keep(&a, min);
}

static void test_keep_and_reopen(void **state)
{
	struct fx *f = *state;
	struct fs_part_id other = ID;
	uint64_t size = 0;
	int discarded = -1;
	struct stat st;

	assert_int_equal(write_partial(f, "f", 100000, 65536), 100000);
	assert_int_equal(fstatat(f->dfd, ".ferry-part.f", &st, 0), 0);
	assert_int_equal(st.st_size, 100000);
	assert_int_equal(fstatat(f->dfd, "f", &st, 0), -1);   /* never the final name */
	int fd = fs_partial_open(f->dfd, "f", &ID, &size, &discarded);
	assert_true(fd >= 0);
	assert_int_equal(size, 100000);
	assert_int_equal(discarded, 0);
	/* while one holds it, nobody else gets it (and nothing is removed) */
	int fd2 = fs_partial_open(f->dfd, "f", &ID, &size, &discarded);
	assert_int_equal(fd2, -1);
	assert_int_equal(discarded, 0);
	close(fd);
	/* a partial of another version of the source is removed */
	other.mtime_ns = 6;
	assert_int_equal(fs_partial_open(f->dfd, "f", &other, &size, &discarded), -1);
	assert_int_equal(discarded, 1);
	assert_int_equal(fstatat(f->dfd, ".ferry-part.f", &st, 0), -1);
}

/* A user's file that only looks like a partial (no tag) is not ferry's:
 * never taken as one, never discarded; a tagged one is ours. */
static void test_user_lookalike(void **state)
{
	struct fx *f = *state;
	uint64_t size = 0;
	int discarded = -1;
	struct stat st;

	int fd = openat(f->dfd, ".ferry-part.notes", O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "mine", 4), 4);
	close(fd);
	assert_false(fs_partial_ours(f->dfd, ".ferry-part.notes"));
	assert_int_equal(fs_partial_open(f->dfd, "notes", &ID, &size, &discarded), -1);
	assert_int_equal(discarded, 0);
	assert_int_equal(fstatat(f->dfd, ".ferry-part.notes", &st, 0), 0);
	assert_int_equal(mkdirat(f->dfd, ".ferry-part.d", 0700), 0);
	assert_false(fs_partial_ours(f->dfd, ".ferry-part.d"));
	assert_int_equal(write_partial(f, "g", 100000, 65536), 100000);
	assert_true(fs_partial_ours(f->dfd, ".ferry-part.g"));
}

static void test_small_and_commit(void **state)
{
	struct fx *f = *state;
	struct afile a;
	struct stat st;
	char v[64];
	static uint8_t buf[1000];

	/* less than the minimum is not worth keeping */
	assert_int_equal(write_partial(f, "s", 1000, 65536), 0);
	assert_int_equal(fstatat(f->dfd, ".ferry-part.s", &st, 0), -1);
	/* a partial that completes lands under its name, without the tag */
	assert_int_equal(afile_open(&a, f->dfd, "c", 0, NULL), 0);
	assert_int_equal(afile_make_partial(&a, &ID), 1);
	assert_int_equal(afile_write(&a, buf, sizeof buf), 0);
	assert_int_equal(afile_commit(&a, 0644, NULL), 0);
	assert_int_equal(fstatat(f->dfd, "c", &st, 0), 0);
	assert_int_equal(st.st_size, sizeof buf);
	assert_int_equal(fstatat(f->dfd, ".ferry-part.c", &st, 0), -1);
	int fd = openat(f->dfd, "c", O_RDONLY);
	assert_true(fd >= 0);
	assert_true(fgetxattr(fd, FS_PART_XATTR, v, sizeof v) < 0);
	close(fd);
	/* another session's partial keeps its name: this one stays a temporary */
	assert_int_equal(write_partial(f, "d", 70000, 65536), 70000);
	assert_int_equal(afile_open(&a, f->dfd, "d", 0, NULL), 0);
	int lock = openat(f->dfd, ".ferry-part.d", O_RDONLY);
	assert_int_equal(flock(lock, LOCK_EX), 0);
	assert_int_equal(afile_make_partial(&a, &ID), 0);
	assert_true(fs_is_tmp_name(a.tmp));
	afile_abort(&a);
	close(lock);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test_setup_teardown(test_keep_and_reopen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_small_and_commit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_user_lookalike, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
