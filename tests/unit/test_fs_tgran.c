/* SPDX-License-Identifier: MIT */
/* The precision a file system keeps mtimes at: what a probe concludes from
 * the time it reads back, the truncation, and both probes on this machine's
 * /tmp (exact there): the unnamed file's leaves the directory's times alone.
 * test_coarse_times runs a push and a pull on a file system that keeps
 * seconds only. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fs/tgran.h"

#define S 1600000001
#define NS 999999999u

static struct tgran from(int64_t sec, long ns, int want_rc)
{
	struct tgran g;
	struct timespec got = { .tv_sec = (time_t)sec, .tv_nsec = ns };

	assert_int_equal(tgran_from(S, NS, &got, &g), want_rc);
	return g;
}

static void test_from(void **state)
{
	struct tgran g;

	(void)state;
	g = from(S, NS, 0);                 /* ext4, xfs, btrfs, tmpfs */
	assert_int_equal(g.ns, 1);
	assert_int_equal(g.sec, 1);
	g = from(S, 999999900, 0);          /* NTFS */
	assert_int_equal(g.ns, 100);
	g = from(S, 990000000, 0);          /* exFAT */
	assert_int_equal(g.ns, 10000000);
	assert_int_equal(g.sec, 1);
	g = from(S, 0, 0);                  /* ext3, ext4 with 128-byte inodes */
	assert_int_equal(g.ns, 1000000000);
	assert_int_equal(g.sec, 1);
	g = from(S - 1, 0, 0);              /* FAT */
	assert_int_equal(g.ns, 1000000000);
	assert_int_equal(g.sec, 2);
	/* not a truncation: rounded up, another time, a stray digit */
	g = from(S + 1, 0, -EINVAL);
	assert_int_equal(g.ns, 1);
	assert_int_equal(g.sec, 1);
	from(S - 3, 0, -EINVAL);
	from(S, 123, -EINVAL);
	from(S - 1, NS, -EINVAL);           /* 2 s with nanoseconds kept */
}

static void test_trunc(void **state)
{
	struct tgran fat = { .ns = 1000000000u, .sec = 2 }, ntfs = { .ns = 100, .sec = 1 };
	struct tgran exact = TGRAN_EXACT;
	struct timespec t;

	(void)state;
	t = tgran_trunc(&fat, 1700000001, 5);
	assert_int_equal(t.tv_sec, 1700000000);
	assert_int_equal(t.tv_nsec, 0);
	t = tgran_trunc(&fat, 1700000000, 999);
	assert_int_equal(t.tv_sec, 1700000000);
	t = tgran_trunc(&fat, -3, 0);       /* before 1970: still down */
	assert_int_equal(t.tv_sec, -4);
	t = tgran_trunc(&ntfs, 5, 123456789);
	assert_int_equal(t.tv_sec, 5);
	assert_int_equal(t.tv_nsec, 123456700);
	t = tgran_trunc(&exact, 5, 123456789);
	assert_int_equal(t.tv_nsec, 123456789);
}

/* probe(dirfd, g) on a fresh directory: a precision found (tmpfs and ext4
 * here keep nanoseconds), no file left; *same_times: the directory's own
 * mtime and ctime are what they were. */
static void run_probe(int (*probe)(int, struct tgran *), int *same_times)
{
	char dir[] = "/tmp/ferry-tgran-XXXXXX";
	struct timespec t[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_sec = 1234567890, .tv_nsec = 42 } };
	struct tgran g = { 7, 7 };
	struct stat before, st;

	assert_non_null(mkdtemp(dir));
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	assert_int_equal(futimens(fd, t), 0);
	assert_int_equal(fstat(fd, &before), 0);
	int rc = probe(fd, &g);
	assert_true(rc == 0 || rc == -EINVAL || rc == -EOPNOTSUPP);
	assert_true(g.ns >= 1 && g.sec >= 1);
	if (rc == 0)
		assert_int_equal(g.sec, 1);
	assert_int_equal(fstat(fd, &st), 0);
	*same_times = st.st_mtim.tv_sec == before.st_mtim.tv_sec &&
		      st.st_mtim.tv_nsec == before.st_mtim.tv_nsec &&
		      st.st_ctim.tv_sec == before.st_ctim.tv_sec &&
		      st.st_ctim.tv_nsec == before.st_ctim.tv_nsec;
	close(fd);
	assert_int_equal(rmdir(dir), 0);   /* empty: the probe left nothing */
}

static void test_probe(void **state)
{
	int same;

	(void)state;
	run_probe(tgran_probe, &same);
	assert_true(same);   /* an unnamed file: not even the directory's times change */
}

static void test_probe_file(void **state)
{
	int same;

	(void)state;
	run_probe(tgran_probe_file, &same);
	assert_false(same);   /* a named one comes and goes: the directory's times do */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_from),
		cmocka_unit_test(test_trunc),
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_probe_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
