/* SPDX-License-Identifier: MIT */
/* A snapshot increment's index (fs/snapidx.h) against a brute-force oracle:
 * records logged in random order, with repeats (the first touch of a path
 * wins) and log-only P records, sorted into runs (several, past
 * SNAPIDX_RUN), then every lookup and every directory's children; and the
 * names and selectors of fs/snapstore.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "fs/snapidx.h"
#include "fs/snapstore.h"
#include "fs_fixture.h"

static int setup(void **state) { return fx_setup(state, "snapidx"); }
static int teardown(void **state) { return fx_teardown(state); }

static void test_order(void **state)
{
	(void)state;
	assert_true(snapidx_cmp("a", "a/x") < 0);
	assert_true(snapidx_cmp("a/x", "a-b") < 0);   /* a's subtree before its sibling a-b */
	assert_true(snapidx_cmp("a/x", "a/x") == 0);
	assert_true(snapidx_cmp("a/z", "a0") < 0);
	assert_true(snapidx_cmp("\xff", "a") > 0);
}

#define N 24000   /* about 1.3 MB of log: more than one run */

struct truth {
	char path[96];
	char kind;
	uint32_t obj;   /* also the order it was logged in */
};

static int by_path(const void *a, const void *b)
{
	const struct truth *x = a, *y = b;
	int c = strcmp(x->path, y->path);
	return c ? c : x->obj < y->obj ? -1 : x->obj > y->obj;
}


struct kids { char names[64][48]; int n; };

static int add_kid(void *ctx, const char *name, size_t len)
{
	struct kids *k = ctx;
	for (int i = 0; i < k->n; i++)
		if (strlen(k->names[i]) == len && !memcmp(k->names[i], name, len))
			return 0;
	if (k->n == 64)
		return 1;
	snprintf(k->names[k->n++], sizeof k->names[0], "%.*s", (int)len, name);
	return 0;
}

static void test_build_and_find(void **state)
{
	struct fx *f = *state;
	int dir = openat(f->odfd, ".", O_RDONLY | O_DIRECTORY);
	int log = openat(dir, "log", O_RDWR | O_CREAT | O_TRUNC, 0600);
	struct truth *t = calloc(N, sizeof *t);
	char buf[128];
	unsigned runs;
	size_t nt = 0;

	assert_true(dir >= 0 && log >= 0 && t);
	srand(13);
	/* paths d<i>/e<j>/f<k> and the directories above them, every one
	 * logged once or twice, in random order, P records between */
	for (int i = 0; i < N; i++) {
		char p[96];
		int depth = rand() % 3;
		int n = snprintf(p, sizeof p, "d%d", rand() % 40);
		if (depth > 0)
			n += snprintf(p + n, sizeof p - (size_t)n, "/e%d-with-a-longer-name", rand() % 30);
		if (depth > 1)
			snprintf(p + n, sizeof p - (size_t)n, "/f-%d.and-a-long-extension", rand() % 50);
		char kind = "AOM"[rand() % 3];
		uint32_t obj = (uint32_t)i;
		if (rand() % 5 == 0) {
			size_t len = snapidx_encode(buf, SNAP_PARENT, 7, p);
			assert_int_equal(write(log, buf, len), (ssize_t)len);
		}
		size_t len = snapidx_encode(buf, kind, obj, p);
		assert_int_equal(write(log, buf, len), (ssize_t)len);
		snprintf(t[i].path, sizeof t[i].path, "%s", p);
		t[i].kind = kind;
		t[i].obj = obj;
	}
	assert_int_equal(snapidx_build(dir, log, &runs), 0);
	assert_true(runs >= 2);
	/* the oracle: the first record of a path is the one that counts */
	qsort(t, N, sizeof *t, by_path);
	for (size_t i = 0; i < N; i++)
		if (!nt || strcmp(t[nt - 1].path, t[i].path))
			t[nt++] = t[i];

	struct snapidx x;
	assert_int_equal(snapidx_open(&x, dir), 0);
	/* a path logged twice within one run keeps its first record; across
	 * runs the earlier run answers first: the same thing, since runs are in
	 * log order */
	for (size_t i = 0; i < nt; i++) {
		struct snaprec r;
		assert_int_equal(snapidx_find(&x, t[i].path, &r), 1);
		assert_int_equal(r.kind, t[i].kind);
		assert_int_equal(r.obj, t[i].obj);
		assert_string_equal(r.path, t[i].path);
	}
	struct snaprec r;
	assert_int_equal(snapidx_find(&x, "d999", &r), 0);
	assert_int_equal(snapidx_find(&x, "d1/e1/f-1/deeper", &r), 0);
	assert_int_equal(snapidx_find(&x, "", &r), 0);
	/* children: each directory's direct children, from the oracle */
	const char *dirs[] = { "", "d1", "d7/e3-with-a-longer-name", "d39",
			       "d5/e29-with-a-longer-name/f-0.and-a-long-extension" };
	for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++) {
		struct kids k = { .n = 0 }, want = { .n = 0 };
		size_t dl = strlen(dirs[d]);
		assert_int_equal(snapidx_children(&x, dirs[d], add_kid, &k), 0);
		for (size_t i = 0; i < nt; i++) {
			const char *p = t[i].path;
			if (dl && (strncmp(p, dirs[d], dl) || p[dl] != '/'))
				continue;
			const char *rest = dl ? p + dl + 1 : p, *sl = strchr(rest, '/');
			add_kid(&want, rest, sl ? (size_t)(sl - rest) : strlen(rest));
		}
		assert_int_equal(k.n, want.n);
		for (int i = 0; i < want.n; i++) {
			int found = 0;
			for (int j = 0; j < k.n; j++)
				found |= !strcmp(k.names[j], want.names[i]);
			assert_true(found);
		}
	}
	snapidx_close(&x);
	free(t);
	close(log);
	close(dir);
}

static void test_damaged(void **state)
{
	struct fx *f = *state;
	int dir = openat(f->odfd, ".", O_RDONLY | O_DIRECTORY);
	struct snapidx x;
	struct snaprec r;

	/* an index cut short is refused; one with garbage records finds nothing */
	int fd = openat(dir, "idx.0", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_int_equal(write(fd, "A00000000abc", 12), 12);
	close(fd);
	assert_true(snapidx_open(&x, dir) < 0);
	fd = openat(dir, "idx.0", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_int_equal(write(fd, "Zzzzzzzzzabc\0A0000000g../x\0", 28), 28);
	close(fd);
	assert_int_equal(snapidx_open(&x, dir), 0);
	assert_int_equal(snapidx_find(&x, "abc", &r), 0);
	assert_int_equal(snapidx_find(&x, "../x", &r), 0);
	snapidx_close(&x);
	assert_true(snapidx_decode("A00000001a/../b", 16, &r) < 0);
	assert_true(snapidx_decode("A00000001/abs", 14, &r) < 0);
	assert_true(snapidx_decode("A00000000", 10, &r) < 0);   /* an empty path (fuzzer) */
	assert_int_equal(snapidx_decode("O0000000aok", 12, &r), 0);
	assert_int_equal(r.obj, 10);
	close(dir);
}

static void test_names(void **state)
{
	char a[SNAP_NAME_MAX], b[SNAP_NAME_MAX];
	struct snapinfo s[4];

	(void)state;
	snapstore_name(a, 1764720000, "abcdEFGH", NULL);   /* 2025-12-03 00:00:00 */
	assert_string_equal(a, "2025-12-03T000000Z-abcdEFGH");
	assert_true(snapstore_name_ok(a));
	/* a clock set back still names the next snapshot after the last */
	snapstore_name(b, 1764720000 - 86400, "x", a);
	assert_string_equal(b, "2025-12-03T000001Z-x");
	assert_false(snapstore_name_ok("new.tmp"));
	assert_false(snapstore_name_ok("2025-12-03T000000Z-"));
	assert_false(snapstore_name_ok("2025-12-03T000000Z-a/b"));
	assert_false(snapstore_name_ok("2025-12-03T000000Z-.."));
	/* a time that is not one (a name made by hand): it would sort before
	 * the next snapshot's name, which comes from its normalised time */
	assert_false(snapstore_name_ok("2026-00-15T000000Z-a"));
	assert_false(snapstore_name_ok("2026-02-31T000000Z-a"));
	assert_false(snapstore_name_ok("2026-12-03T246000Z-a"));
	assert_true(snapstore_name_ok("2024-02-29T235959Z-a"));
	/* the last second a four-digit year names: the next name stays valid */
	snapstore_name(b, 1764720000, "x", "9999-12-31T235959Z-a");
	assert_string_equal(b, "9999-12-31T235959Z-x");
	const char *names[] = { "2026-11-29T230000Z-a", "2026-11-30T080000Z-a",
				"2026-11-30T200000Z-b", "2026-12-02T010000Z-a" };
	for (int i = 0; i < 4; i++)
		snprintf(s[i].name, sizeof s[i].name, "%s", names[i]);
	assert_int_equal(snapstore_select(s, 4, ""), 3);
	assert_int_equal(snapstore_select(s, 4, "latest"), 3);
	assert_int_equal(snapstore_select(s, 4, "-0"), 3);
	assert_int_equal(snapstore_select(s, 4, "-3"), 0);
	assert_true(snapstore_select(s, 4, "-4") < 0);
	assert_true(snapstore_select(s, 4, "-x") < 0);
	assert_int_equal(snapstore_select(s, 4, names[1]), 1);
	assert_int_equal(snapstore_select(s, 4, "2026-11-30"), 2);   /* newest that day */
	assert_int_equal(snapstore_select(s, 4, "2026-12-01"), 2);   /* newest before it */
	assert_int_equal(snapstore_select(s, 4, "2026-11-30T1"), 1);
	/* ISO 8601 with colons, or a blank for the T: the same times */
	assert_int_equal(snapstore_select(s, 4, "2026-11-30T08:00:00"), 1);
	assert_int_equal(snapstore_select(s, 4, "2026-11-30T19:59"), 1);
	assert_int_equal(snapstore_select(s, 4, "2026-11-30 20:00"), 2);
	assert_true(snapstore_select(s, 4, "2026-11-29T22:59:59") < 0);
	assert_true(snapstore_select(s, 4, "2026-11-30T08:00:00trailing junk") < 0);
	assert_true(snapstore_select(s, 4, "2026-11-28") < 0);
	assert_true(snapstore_select(s, 4, "nosuch") < 0);
	assert_true(snapstore_select(s, 0, "") < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order),
		cmocka_unit_test_setup_teardown(test_build_and_find, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged, setup, teardown),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
