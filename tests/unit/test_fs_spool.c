/* SPDX-License-Identifier: MIT */
/* --delete-delay's spool: records come back as written, in order, however
 * many (more than stdio's buffer holds); the file has no name (the directory
 * stays empty, with either way of opening it); a path over the limit is
 * refused; a record cut short reads as -EBADMSG; a callback's error stops
 * the reading. fuzz_fs_spool reads any bytes as a spool. */
#include <dirent.h>
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

#include "fs/spool.h"

static char dir[] = "/tmp/ferry-spool-XXXXXX";
static int dfd = -1;

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir) || (dfd = open(dir, O_RDONLY | O_DIRECTORY)) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	close(dfd);
	return rmdir(dir);   /* fails if a spool left a name behind */
}

struct seen {
	uint64_t n;
	int stop_at;
};

static int check(void *arg, uint8_t kind, const char *path)
{
	struct seen *s = arg;
	char want[64];

	snprintf(want, sizeof want, "dir/%llu", (unsigned long long)s->n);
	assert_int_equal(kind, s->n % 3 ? 'f' : 'D');
	assert_string_equal(path, want);
	if ((int)++s->n == s->stop_at)
		return -EINTR;
	return 0;
}

static int check_long(void *arg, uint8_t kind, const char *path)
{
	(void)kind;
	assert_int_equal(strlen(path), SPOOL_MAX_PATH);
	++((struct seen *)arg)->n;
	return 0;
}

static void round_trip(enum spool_how how)
{
	struct spool s;
	struct seen seen = { 0 };
	char path[64];

	assert_int_equal(spool_open(&s, dfd, how), 0);
	for (uint64_t i = 0; i < 20000; i++) {   /* ~250 KB: through stdio's buffer */
		snprintf(path, sizeof path, "dir/%llu", (unsigned long long)i);
		assert_int_equal(spool_add(&s, i % 3 ? 'f' : 'D', path), 0);
	}
	assert_int_equal(spool_each(&s, check, &seen), 0);
	assert_int_equal(seen.n, 20000);
	assert_int_equal(spool_add(&s, 'f', "late"), -EINVAL);   /* read: closed to writes */
	spool_close(&s);
}

static void test_round_trip(void **state)
{
	(void)state;
	round_trip(SPOOL_UNNAMED);
	round_trip(SPOOL_NAMED);
}

/* entries in the test's directory, . and .. aside */
static int entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* both ways leave no name in the directory, even while the spool is open
 * (the named way unlinks its file at once) */
static void test_no_name_left(void **state)
{
	struct spool s;

	(void)state;
	for (int how = SPOOL_UNNAMED; how <= SPOOL_NAMED; how++) {
		assert_int_equal(spool_open(&s, dfd, (enum spool_how)how), 0);
		assert_int_equal(spool_add(&s, 'f', "x"), 0);
		assert_int_equal(entries(), 0);
		spool_close(&s);
	}
}

static void test_limits(void **state)
{
	struct spool s;
	struct seen seen = { .stop_at = 2 };
	char *longp = malloc(SPOOL_MAX_PATH + 2);

	(void)state;
	assert_non_null(longp);
	memset(longp, 'a', SPOOL_MAX_PATH + 1);
	longp[SPOOL_MAX_PATH + 1] = '\0';
	assert_int_equal(spool_open(&s, dfd, SPOOL_UNNAMED), 0);
	assert_int_equal(spool_add(&s, 'f', longp), -EINVAL);
	longp[SPOOL_MAX_PATH] = '\0';   /* exactly the limit: taken */
	assert_int_equal(spool_add(&s, 'D', "dir/0"), 0);
	assert_int_equal(spool_add(&s, 'f', "dir/1"), 0);
	assert_int_equal(spool_add(&s, 'f', "dir/2"), 0);
	/* a callback's error stops the reading, and is what it returns */
	assert_int_equal(spool_each(&s, check, &seen), -EINTR);
	assert_int_equal(seen.n, 2);
	spool_close(&s);

	assert_int_equal(spool_open(&s, dfd, SPOOL_UNNAMED), 0);
	assert_int_equal(spool_add(&s, 'f', longp), 0);
	s.n++;   /* one more record than the file holds: cut short */
	seen = (struct seen){ 0 };
	assert_int_equal(spool_each(&s, check_long, &seen), -EBADMSG);
	assert_int_equal(seen.n, 1);   /* the whole record first */
	spool_close(&s);
	free(longp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_no_name_left),
		cmocka_unit_test(test_limits),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
